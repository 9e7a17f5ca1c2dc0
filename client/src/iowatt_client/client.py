"""`Client`: one httpx client with a bearer token, every operation of the API by its OpenAPI id.

- `call(operation_id, path params..., params=, json=, ...)` sends any operation of the document
  (`_operations.py`, generated from it); the named methods below are the ones the `iowatt` command
  uses, with typed answers (`models.py`, checked against the document by the tests).
- Retries: 429 and 503 are sent again after the server's `Retry-After` (seconds or an HTTP date),
  at most `retries` times and never waiting more than `max_wait_s` at once (else the error is
  raised); connection failures are not retried (a POST may have been applied).
- Errors: any other 4xx/5xx raises the `ApiError` subclass of its status with the server's
  `{"error", "message", "detail", "request_id"}` (errors.py).
- Pagination: `pages(operation_id, ...)` / `paginate(...)` walk `limit`/`offset` pages until `total`."""

from __future__ import annotations

import email.utils
import re
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any
from urllib.parse import quote

import httpx

from . import models
from ._operations import OPERATIONS
from .errors import ApiError, TransportError, ValidationFailed, error_class

RETRY_STATUSES = (429, 503)
DEFAULT_PAGE = 200


def retry_after_s(value: str | None, now: float | None = None) -> float | None:
    """Retry-After as seconds to wait: a number of seconds or an HTTP date; None if absent or unreadable."""
    if not value:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    current = datetime.fromtimestamp(time.time() if now is None else now, UTC)
    return max(0.0, (when - current).total_seconds())


class Client:
    def __init__(
        self,
        url: str,
        token: str | None = None,
        *,
        timeout_s: float = 60,
        retries: int = 3,
        max_wait_s: float = 30,
        transport: httpx.BaseTransport | None = None,
        sleep: Callable[[float], None] = time.sleep,
        verify: bool | str = True,
    ) -> None:
        self.url = url.rstrip("/")
        headers = {"User-Agent": "iowatt-client/0.1"}
        if token:
            headers["Authorization"] = f"Bearer {token}"
        self.retries, self.max_wait_s, self._sleep = retries, max_wait_s, sleep
        self.http = httpx.Client(
            base_url=self.url, headers=headers, timeout=timeout_s, transport=transport, verify=verify
        )

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self.http.close()

    # --- any operation ---------------------------------------------------------------------------

    def request(self, method: str, path: str, **kw: Any) -> httpx.Response:
        """Send, retrying 429/503 after Retry-After (bounded); raise ApiError on 4xx/5xx."""
        attempt = 0
        while True:
            try:
                r = self.http.request(method, path, **kw)
            except httpx.TransportError as e:
                raise TransportError(f"{method} {self.url}{path}: {e}") from e
            if r.status_code in RETRY_STATUSES and attempt < self.retries:
                wait = retry_after_s(r.headers.get("Retry-After"))
                if wait is None:
                    wait = min(self.max_wait_s, 2.0**attempt)
                if wait <= self.max_wait_s:
                    attempt += 1
                    r.close()
                    self._sleep(wait)
                    _rewind(kw)
                    continue
            if r.status_code >= 400:
                raise _error(r)
            return r

    def call(
        self,
        operation_id: str,
        *,
        params: dict[str, Any] | None = None,
        stream: bool = False,
        **kw: Any,
    ) -> Any:
        """Call an operation by its id. Path parameters as keywords (`run_id=...`), the query as
        `params` (checked against the operation's parameters), the body as `json=`, `content=` or
        `files=`. Answers the decoded JSON (None for 204), or the response with `stream=True`/non-JSON."""
        try:
            method, template, query_names = OPERATIONS[operation_id]
        except KeyError:
            raise ValueError(f"no operation {operation_id!r} in the API") from None
        path_params = {k: kw.pop(k) for k in list(kw) if "{" + k + "}" in template}
        missing = [n for n in re.findall(r"{(\w+)}", template) if n not in path_params]
        if missing:
            raise ValueError(f"{operation_id}: missing path parameters {missing} of {template}")
        path = template.format(**{k: quote(str(v), safe="") for k, v in path_params.items()})
        if params:
            unknown = set(params) - set(query_names)
            if unknown:
                raise ValueError(f"{operation_id}: unknown query parameters {sorted(unknown)}")
            params = {k: v for k, v in params.items() if v is not None}
        r = self.request(method, path, params=params, **kw)
        if stream:
            return r
        if r.status_code == 204 or not r.content:
            return None
        if r.headers.get("content-type", "").startswith("application/json"):
            return r.json()
        return r

    def pages(
        self,
        operation_id: str,
        *,
        params: dict[str, Any] | None = None,
        page_size: int = DEFAULT_PAGE,
        **kw: Any,
    ) -> Iterator[dict[str, Any]]:
        """Each page ({"items", "total"}) of a list operation, by limit/offset, until total (one
        page for a list operation without limit/offset)."""
        params = dict(params or {})
        if "offset" not in OPERATIONS[operation_id][2]:
            yield self.call(operation_id, params=params, **kw)
            return
        offset = int(params.pop("offset", 0) or 0)
        limit = int(params.pop("limit", page_size) or page_size)
        while True:
            page = self.call(operation_id, params={**params, "limit": limit, "offset": offset}, **kw)
            yield page
            offset += len(page["items"])
            # a bounded total (GET /runs' total_exact false) is a lower bound: more pages follow
            if not page["items"] or (offset >= page["total"] and page.get("total_exact", True)):
                return

    def paginate(self, operation_id: str, **kw: Any) -> Iterator[dict[str, Any]]:
        """Every item of a list operation, across its pages."""
        for page in self.pages(operation_id, **kw):
            yield from page["items"]

    # --- what the command uses, typed ------------------------------------------------------------

    def me(self) -> models.User:
        return models.User.model_validate(self.call("me"))

    def list_runs(self, *, limit: int = 50, offset: int = 0, **filters: Any) -> models.RunPage:
        return models.RunPage.model_validate(
            self.call("list_runs", params={**filters, "limit": limit, "offset": offset})
        )

    def iter_runs(self, **filters: Any) -> Iterator[models.Run]:
        for item in self.paginate("list_runs", params=filters):
            yield models.Run.model_validate(item)

    def get_run(self, run_id: str) -> models.Run:
        return models.Run.model_validate(self.call("get_run", run_id=run_id))

    def cancel_run(self, run_id: str) -> models.Run:
        return models.Run.model_validate(self.call("cancel_run", run_id=run_id))

    def delete_run(self, run_id: str) -> None:
        self.call("delete_run", run_id=run_id)

    def create_run(self, body: dict[str, Any]) -> models.Run:
        return models.Run.model_validate(self.call("create_run", json=body))

    def get_result(self, run_id: str) -> dict[str, Any]:
        return self.call("get_result", run_id=run_id)  # type: ignore[no-any-return]

    def list_agents(self, team_id: str | None = None) -> list[models.Agent]:
        return [
            models.Agent.model_validate(a) for a in self.paginate("list_agents", params={"team_id": team_id})
        ]

    def list_workloads(self, team_id: str | None = None) -> list[models.Workload]:
        return [
            models.Workload.model_validate(w)
            for w in self.paginate("list_workloads", params={"team_id": team_id})
        ]

    def compare(self, runs: list[str], *, baseline: str | None = None, **params: Any) -> dict[str, Any]:
        return self.call(  # type: ignore[no-any-return]
            "compare", params={"runs": ",".join(runs), "baseline": baseline, **params}
        )

    def compare_csv(self, runs: list[str], *, baseline: str | None = None) -> str:
        r = self.call(
            "compare", params={"runs": ",".join(runs), "baseline": baseline, "format": "csv"}, stream=True
        )
        return r.text  # type: ignore[no-any-return]

    def import_formats(self) -> list[models.ImportFormat]:
        return [models.ImportFormat.model_validate(f) for f in self.call("list_import_formats")]

    def import_files(
        self,
        files: list[Path | tuple[str, bytes]],
        *,
        team_id: str,
        dry_run: bool = False,
        format: str | None = None,
        host: str | None = None,
        device: str | None = None,
        name: str | None = None,
        environment_id: str | None = None,
    ) -> list[models.ImportResult]:
        """POST /imports as multipart/form-data: one transaction for all the files (one bad file
        stores none). Each answer says whether it was stored, a dry run or a duplicate."""
        data = {
            k: str(v)
            for k, v in {
                "team_id": team_id,
                "format": format,
                "host": host,
                "device": device,
                "name": name,
                "environment_id": environment_id,
            }.items()
            if v is not None
        }
        handles: list[IO[bytes]] = []
        parts: list[tuple[str, tuple[str, Any, str]]] = []
        try:
            for f in files:
                if isinstance(f, tuple):
                    parts.append(("file", (f[0], f[1], "application/octet-stream")))
                else:
                    fh = open(f, "rb")  # noqa: SIM115 - closed below
                    handles.append(fh)
                    parts.append(("file", (f.name, fh, "application/octet-stream")))
            answer = self.call(
                "create_import", params={"dry_run": "true" if dry_run else None}, data=data, files=parts
            )
        finally:
            for opened in handles:
                opened.close()
        docs = answer["files"] if isinstance(answer, dict) and "files" in answer else [answer]
        return [models.ImportResult.model_validate(d) for d in docs]

    def run_source(self, run_id: str, file: str | None = None) -> bytes:
        """The imported file of a run; `file`: one of a vdbench directory's files, by name."""
        answer = self.call("run_source", run_id=run_id, params={"file": file}, stream=True)
        return answer.content  # type: ignore[no-any-return]

    def export_team(self, team_id: str) -> httpx.Response:
        return self.call("export_team", team_id=team_id, stream=True)  # type: ignore[no-any-return]

    def views(self, runs: list[str] | None = None) -> dict[str, Any]:
        return self.call("catalog", params={"runs": ",".join(runs) if runs else None})  # type: ignore[no-any-return]

    def view_table(
        self, view: str, runs: list[str], *, baseline: str | None = None, csv: bool = False
    ) -> Any:
        params = {
            "view": view,
            "runs": ",".join(runs),
            "baseline": baseline,
            "format": "csv" if csv else None,
        }
        if csv:
            return self.call("table", params=params, stream=True).text
        return self.call("table", params=params)


def _rewind(kw: dict[str, Any]) -> None:
    """Before a retry: file bodies start again from their beginning."""
    for _, part in kw.get("files") or []:
        fh = part[1]
        if hasattr(fh, "seek"):
            fh.seek(0)


def _error(r: httpx.Response) -> ApiError:
    code, message, detail, request_id = "http_error", r.reason_phrase or str(r.status_code), None, None
    try:
        body = r.json()
    except ValueError:
        body = None
    if isinstance(body, dict):
        code = str(body.get("error") or code)
        message = str(body.get("message") or message)
        detail = body.get("detail")
        request_id = body.get("request_id")
    request_id = request_id or r.headers.get("X-Request-ID")
    cls = error_class(r.status_code)
    if cls is ValidationFailed and r.status_code < 400:  # pragma: no cover - only 4xx/5xx get here
        cls = ApiError
    return cls(
        r.status_code, code, message, detail, request_id, method=r.request.method, url=str(r.request.url)
    )
