"""On-disk spool: nothing the engine measured is lost while the server is unreachable.

Every result or failure report is written to `<state>/spool/<name>.json` atomically (tmp file,
fsync, rename, directory fsync) BEFORE the first upload attempt, and deleted only after the
server acknowledged it (200/201). Each entry carries a stable `upload_id`, so an upload whose
answer was lost can be retried safely: the server stores it once and answers 200 the second time.
A permanent 4xx moves the entry to `spool/rejected/` together with the reason; it is kept for a
human, never retried forever.
"""

from __future__ import annotations

import json
import logging
import os
import random
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from enum import Enum
from functools import partial
from pathlib import Path
from typing import Any, Literal
from uuid import UUID, uuid4

from pydantic import ValidationError

from .client import ApiClient, ApiError, PermanentError, ServerUnreachable
from .config import write_private_file
from .schemas import FailureReport, ResultUpload

log = logging.getLogger("iowatt_agent.spool")

Kind = Literal["result", "failure"]


class Delivery(Enum):
    DELIVERED = "delivered"
    RETRY = "retry"
    REJECTED = "rejected"


@dataclass
class SpoolEntry:
    path: Path
    kind: Kind
    run_id: UUID
    upload_id: UUID
    payload: dict[str, Any]
    created_at: str
    attempts: int = 0
    last_error: str | None = field(default=None)


class Spool:
    def __init__(self, state_dir: Path) -> None:
        self.dir = state_dir / "spool"
        self.rejected_dir = self.dir / "rejected"
        self.rejected_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
        self._lock = threading.Lock()  # one delivery of an entry at a time
        self.last_retry_error: ApiError | None = None  # why the latest RETRY could not deliver

    # --- writing -------------------------------------------------------------------------------

    def put_result(self, upload: ResultUpload, run_id: UUID) -> SpoolEntry:
        return self._put("result", run_id, upload.upload_id, upload.model_dump(mode="json"))

    def put_failure(self, report: FailureReport, run_id: UUID) -> SpoolEntry:
        return self._put("failure", run_id, report.upload_id, report.model_dump(mode="json"))

    def _put(self, kind: Kind, run_id: UUID, upload_id: UUID, payload: dict[str, Any]) -> SpoolEntry:
        created = datetime.now(UTC)
        created_at = created.isoformat()
        # Sortable by creation time, unique by upload_id.
        name = f"{created.strftime('%Y%m%dT%H%M%S%fZ')}-{kind}-{upload_id}.json"
        doc = {
            "kind": kind,
            "run_id": str(run_id),
            "upload_id": str(upload_id),
            "created_at": created_at,
            "payload": payload,
        }
        path = self.dir / name
        write_private_file(path, json.dumps(doc).encode())
        return SpoolEntry(path, kind, run_id, upload_id, payload, created_at)

    # --- reading -------------------------------------------------------------------------------

    def pending(self) -> list[SpoolEntry]:
        entries = []
        for path in sorted(self.dir.glob("*.json")):
            try:
                doc = json.loads(path.read_text())
                entries.append(
                    SpoolEntry(
                        path=path,
                        kind=doc["kind"],
                        run_id=UUID(doc["run_id"]),
                        upload_id=UUID(doc["upload_id"]),
                        payload=doc["payload"],
                        created_at=doc["created_at"],
                    )
                )
            except FileNotFoundError:
                continue  # delivered by another thread meanwhile
            except (ValueError, KeyError, TypeError) as exc:
                self._move_to_rejected(path, None, f"unreadable spool file: {exc}")
        return entries

    def rejected(self) -> list[Path]:
        return sorted(self.rejected_dir.glob("*.json"))

    # --- delivering ----------------------------------------------------------------------------

    def deliver(self, entry: SpoolEntry, client: ApiClient, *, attempts: int | None = 1) -> Delivery:
        with self._lock:
            if not entry.path.exists():
                return Delivery.DELIVERED
            entry.attempts += 1
            try:
                if entry.kind == "result":
                    status = client.put_result(
                        entry.run_id, ResultUpload.model_validate(entry.payload), attempts=attempts
                    )
                else:
                    status = client.post_failure(
                        entry.run_id, FailureReport.model_validate(entry.payload), attempts=attempts
                    )
            except PermanentError as exc:
                log.error(
                    "spool.rejected run_id=%s upload_id=%s reason=%s", entry.run_id, entry.upload_id, exc
                )
                self._move_to_rejected(entry.path, exc.status_code, str(exc))
                return Delivery.REJECTED
            except ValidationError as exc:
                self._move_to_rejected(entry.path, None, f"spool payload no longer valid: {exc}")
                return Delivery.REJECTED
            except ApiError as exc:
                entry.last_error = str(exc)
                self.last_retry_error = exc
                log.warning(
                    "spool.retry_later kind=%s run_id=%s upload_id=%s error=%s",
                    entry.kind,
                    entry.run_id,
                    entry.upload_id,
                    exc,
                )
                return Delivery.RETRY
            log.info(
                "spool.delivered kind=%s run_id=%s upload_id=%s status=%s",
                entry.kind,
                entry.run_id,
                entry.upload_id,
                status,
            )
            entry.path.unlink(missing_ok=True)
            _fsync_dir(entry.path.parent)
            return Delivery.DELIVERED

    def flush(self, client: ApiClient) -> dict[Delivery, int]:
        """Try every pending entry once, oldest first. Stops at the first RETRY: the server is
        unreachable, no point hammering it with the rest."""
        counts = {d: 0 for d in Delivery}
        for entry in self.pending():
            outcome = self.deliver(entry, client)
            counts[outcome] += 1
            if outcome is Delivery.RETRY:
                break
        return counts

    def _move_to_rejected(self, path: Path, status: int | None, reason: str) -> None:
        try:
            doc = json.loads(path.read_text())
        except (OSError, ValueError):
            doc = {"raw": path.read_text(errors="replace") if path.exists() else None}
        doc["rejected"] = {"at": datetime.now(UTC).isoformat(), "status_code": status, "reason": reason}
        write_private_file(self.rejected_dir / path.name, json.dumps(doc).encode())
        path.unlink(missing_ok=True)
        _fsync_dir(path.parent)


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


class SpoolRetrier:
    """Background thread: flush the spool, backing off (with jitter) while the server is away.

    Wake-ups: `kick()` (a new entry, or the agent stops) flushes at once. `server_reachable()`
    is the success hook of the agent's other API clients (`ApiClient.on_success`): when the
    last flush found the server unreachable (no HTTP answer: refused, reset, timed out), the
    first request that gets through again (a heartbeat, a lease poll) ends the backoff, so a
    spooled result follows the network's return within moments, not up to `max_s` later. A
    server that answered (5xx, 429, a certificate refusal) keeps its backoff: other requests
    succeeding do not make the agent re-send a large upload to a server that just failed it.
    """

    def __init__(
        self,
        spool: Spool,
        client: ApiClient,
        stop: threading.Event,
        *,
        base_s: float = 2.0,
        max_s: float = 300.0,
        idle_s: float = 30.0,
        rng: Callable[[], float] | None = None,
    ) -> None:
        self.spool, self.client, self.stop = spool, client, stop
        self.base_s, self.max_s, self.idle_s = base_s, max_s, idle_s
        self._rng = rng or random.random
        self._thread: threading.Thread | None = None
        self._cond = threading.Condition()
        self._kicked = False
        self._successes = 0  # requests that got through, counted by server_reachable()

    def next_delay(self, failures: int) -> float:
        if failures == 0:
            return self.idle_s
        ceiling: float = min(self.max_s, self.base_s * 2.0 ** (failures - 1))
        return ceiling / 2 + ceiling / 2 * self._rng()

    def run(self) -> None:
        failures = 0
        while not self.stop.is_set():
            with self._cond:
                self._kicked = False
                seen = self._successes  # a success from here on counts, also one during the flush
            counts = self.spool.flush(self.client)
            retry = counts[Delivery.RETRY] > 0
            failures = failures + 1 if retry else 0
            unreachable = retry and isinstance(self.spool.last_retry_error, ServerUnreachable)
            delay = self.next_delay(failures)
            with self._cond:
                self._cond.wait_for(partial(self._wake_now, seen, unreachable), timeout=delay)
                by_success = unreachable and self._successes != seen and not self._kicked
            if by_success:
                log.info("spool.server_reachable: retrying now, not after the %.1f s backoff", delay)

    def _wake_now(self, seen: int, unreachable: bool) -> bool:
        """With `_cond` held: kicked, stopping, or (after an unreachable server) a request that
        got through since the flush began."""
        return self._kicked or self.stop.is_set() or (unreachable and self._successes != seen)

    def start(self) -> None:
        self._thread = threading.Thread(target=self.run, name="spool-retrier", daemon=True)
        self._thread.start()

    def kick(self) -> None:
        with self._cond:
            self._kicked = True
            self._cond.notify_all()

    def server_reachable(self) -> None:
        """A request to the server succeeded (ApiClient.on_success of the other clients)."""
        with self._cond:
            self._successes += 1
            self._cond.notify_all()


def new_upload_id() -> UUID:
    return uuid4()
