"""`iowatt-agent upload`: send a finished engine or fio JSON result from a CI job to the server
(POST /api/v1/results with a user's upload-scoped token; docs/teams.md § Uploads from CI).

No enrolment and no agent state: the host is named on the command line and becomes an external
host of the team on the server. The same --upload-id again (a retried CI job) adds nothing: the
server answers with the run it made the first time, so a lost answer is simply retried."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # httpx is imported by `upload`: the CLI imports this module for its help text
    import httpx

UPLOAD_TOKEN_ENV = "IOWATT_UPLOAD_TOKEN"
ATTEMPTS = 3


class UploadError(Exception):
    """Refused or undeliverable; `code` is the command's exit status (1 server away, 2 bad input,
    3 refused by the server)."""

    def __init__(self, message: str, code: int) -> None:
        super().__init__(message)
        self.code = code


@dataclass
class UploadArgs:
    server: str
    token: str
    result: Path
    team_id: str
    host: str
    device_model: str
    upload_id: str
    name: str | None = None
    serial: str | None = None
    capacity_bytes: int | None = None
    media: str | None = None
    environment_id: str | None = None
    started_at: datetime | None = None
    finished_at: datetime | None = None
    tags: list[str] = field(default_factory=list)


def _runtime_s(doc: dict[str, Any]) -> float:
    """The longest job's runtime in the document (fio's job_runtime, ms), seconds."""
    ms = [j.get("job_runtime") for j in doc.get("jobs") or [] if isinstance(j, dict)]
    return max((float(m) for m in ms if isinstance(m, int | float)), default=0.0) / 1000


def payload(args: UploadArgs, doc: dict[str, Any]) -> dict[str, Any]:
    """The POST /results body. Without --started-at/--finished-at the run ends now (or at the
    document's own `time` stamp) and started its longest job's runtime earlier."""
    end = args.finished_at
    if end is None:
        stamp = doc.get("timestamp")
        end = datetime.fromtimestamp(stamp, UTC) if isinstance(stamp, int) else datetime.now(UTC)
    start = args.started_at or end - timedelta(seconds=_runtime_s(doc))
    device: dict[str, Any] = {"model": args.device_model}
    for key, value in (
        ("serial", args.serial),
        ("capacity_bytes", args.capacity_bytes),
        ("media", args.media),
    ):
        if value is not None:
            device[key] = value
    body: dict[str, Any] = {
        "team_id": args.team_id,
        "upload_id": args.upload_id,
        "host": args.host,
        "device": device,
        "name": args.name or f"{args.result.stem} on {args.host}",
        "engine_result": doc,
        "started_at": start.isoformat(),
        "finished_at": end.isoformat(),
        "tags": args.tags,
    }
    if args.environment_id:
        body["environment_id"] = args.environment_id
    return body


def _message(r: httpx.Response) -> str:
    try:
        data = r.json()
        return str(data.get("message") or data)
    except ValueError:
        return r.text[:500]


def upload(
    args: UploadArgs, *, transport: httpx.BaseTransport | None = None, sleep_s: float = 2.0
) -> dict[str, Any]:
    """Send the result; the server's answer ({run_id, url, duplicate}). Connection failures and
    5xx are retried with the same upload_id (the server stores it once)."""
    import httpx

    try:
        doc = json.loads(args.result.read_text())
    except (OSError, ValueError) as e:
        raise UploadError(f"{args.result}: not a readable JSON document ({e})", 2) from e
    if not isinstance(doc, dict):
        raise UploadError(
            f"{args.result}: not a JSON object (an engine or fio --output-format=json document)", 2
        )
    body = payload(args, doc)
    url = f"{args.server.rstrip('/')}/api/v1/results"
    headers = {"Authorization": f"Bearer {args.token}"}
    last = ""
    with httpx.Client(transport=transport, timeout=120) as client:
        for attempt in range(ATTEMPTS):
            try:
                r = client.post(url, json=body, headers=headers)
            except httpx.HTTPError as e:
                last = f"{url}: {e}"
            else:
                if r.status_code in (200, 201):
                    answer: dict[str, Any] = r.json()
                    return answer
                if r.status_code in (401, 403):
                    raise UploadError(f"refused ({r.status_code}): {_message(r)}", 3)
                if r.status_code < 500:
                    raise UploadError(f"the server refused the upload ({r.status_code}): {_message(r)}", 2)
                last = f"server error {r.status_code}: {_message(r)}"
            if attempt + 1 < ATTEMPTS:
                time.sleep(sleep_s * (attempt + 1))
    raise UploadError(f"not delivered after {ATTEMPTS} attempts: {last}", 1)
