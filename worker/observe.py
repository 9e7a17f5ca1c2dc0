"""What the worker tells about itself: a log line per task, failure counters, a liveness beat,
and bounded retries of transient errors.

- Every task runs with `task`, `task_id`, `run_id` (when it has one) and `request_id` (the id of
  the API request or task that queued it, carried by the outbox as the message header
  `iowatt_request_id`) bound to the log context, and ends with one `task.done` line (outcome,
  duration_ms) or `task.failed` (plus the error); a failure also adds 1 to
  `iowatt_task_failures_total{task}` (backend.counters, a Redis hash shared by all workers).
- Liveness: a daemon thread in the worker's main process writes the time to
  `iowatt:worker:last_seen` every `HEARTBEAT_EVERY_S`; /health calls the worker down when the
  beat is older than `backend.health.router.WORKER_STALE_S` (12 s), so a dead worker shows within
  about 12 s. A thread rather than a beat-scheduled task: it keeps beating while beat is down and
  while the worker runs a long task, and it stops exactly when the process dies. Rather than
  Celery's own heartbeat events: those need `-E` on every worker and an event receiver in the
  API; the key is one GET for any API process.
- `retry_transient(fn)`: a task body re-run after a transient error (PostgreSQL restarting or
  shutting connections, `AdminShutdown`; a broken connection; Redis unreachable) with backoff
  0.5, 1, 2, 4, 8 s (about 15 s in all, longer than a fast PostgreSQL restart), then the error
  is raised and the task fails (beat's periodic tasks catch up). Tasks are idempotent (ADR 0012),
  so re-running a body that failed half-way is safe. In the process rather than Celery's
  `self.retry`: a retry message needs Redis, which may be the thing that is down, and a
  countdown message would wait behind the queue.
"""

import functools
import os
import socket
import threading
import time
from collections.abc import Callable
from typing import Any, ParamSpec, TypeVar

import psycopg
import redis
import sqlalchemy.exc
import structlog
from celery import Task
from celery.signals import task_failure, task_postrun, task_prerun, worker_ready, worker_shutdown

from backend.counters import count
from backend.health import WORKER_SEEN_KEY, WORKERS_FORGET_S, WORKERS_SEEN_KEY
from backend.logs import log
from backend.outbox import REQUEST_ID_HEADER

P = ParamSpec("P")
R = TypeVar("R")

HEARTBEAT_EVERY_S = 5.0
BACKOFF_S = (0.5, 1.0, 2.0, 4.0, 8.0)

TRANSIENT: tuple[type[BaseException], ...] = (
    sqlalchemy.exc.OperationalError,  # psycopg's OperationalError (AdminShutdown, refused) wrapped
    sqlalchemy.exc.InterfaceError,  # a connection closed under us
    psycopg.OperationalError,
    redis.ConnectionError,
    redis.TimeoutError,
)


def is_transient(exc: BaseException) -> bool:
    if isinstance(exc, TRANSIENT):
        return True
    return isinstance(exc, sqlalchemy.exc.DBAPIError) and exc.connection_invalidated


def retry_transient(
    fn: Callable[P, R],
    *,
    backoff_s: tuple[float, ...] = BACKOFF_S,
    sleep: Callable[[float], None] = time.sleep,
) -> Callable[P, R]:
    """fn re-run after each transient error, waiting backoff_s[i] before attempt i + 2."""

    @functools.wraps(fn)
    def run(*args: P.args, **kwargs: P.kwargs) -> R:
        for attempt, pause in enumerate((*backoff_s, None), start=1):
            try:
                return fn(*args, **kwargs)
            except Exception as exc:
                if pause is None or not is_transient(exc):
                    raise
                log.warning(
                    "task.transient_error",
                    attempt=attempt,
                    retry_in_s=pause,
                    error=f"{type(exc).__name__}: {str(exc).splitlines()[0][:200] if str(exc) else ''}",
                )
                sleep(pause)
        raise AssertionError("unreachable")

    return run


# --- per-task log context and outcome ------------------------------------------------------------

_started: dict[str, float] = {}


def _request_id(task: Task) -> str | None:
    req = task.request
    value = getattr(req, REQUEST_ID_HEADER, None) or (getattr(req, "headers", None) or {}).get(
        REQUEST_ID_HEADER
    )
    return value if isinstance(value, str) else None


@task_prerun.connect  # type: ignore[misc]
def _on_prerun(task_id: str, task: Task, kwargs: dict[str, Any] | None = None, **_: Any) -> None:
    structlog.contextvars.clear_contextvars()
    bound: dict[str, Any] = {"task": task.name, "task_id": task_id}
    run_id = (kwargs or {}).get("run_id")
    if run_id is not None:
        bound["run_id"] = str(run_id)
    request_id = _request_id(task)
    if request_id is not None:
        bound["request_id"] = request_id
    structlog.contextvars.bind_contextvars(**bound)
    _started[task_id] = time.monotonic()


@task_postrun.connect  # type: ignore[misc]
def _on_postrun(task_id: str, task: Task, state: str | None = None, **_: Any) -> None:
    t0 = _started.pop(task_id, None)
    duration_ms = round((time.monotonic() - t0) * 1000, 2) if t0 is not None else None
    outcome = "ok" if state == "SUCCESS" else (state or "unknown").lower()
    if outcome == "ok":
        log.info("task.done", outcome=outcome, duration_ms=duration_ms)
    structlog.contextvars.clear_contextvars()


@task_failure.connect  # type: ignore[misc]
def _on_failure(task_id: str, exception: BaseException, sender: Task | None = None, **_: Any) -> None:
    t0 = _started.get(task_id)
    name = sender.name if sender is not None else "unknown"
    log.error(
        "task.failed",
        outcome="failure",
        duration_ms=round((time.monotonic() - t0) * 1000, 2) if t0 is not None else None,
        error=f"{type(exception).__name__}: {str(exception)[:300]}",
    )
    count("task_failures", name)


# --- liveness ------------------------------------------------------------------------------------

_stop = threading.Event()


WORKER_NAME = f"{socket.gethostname()}/{os.getpid()}"


def beat_once(name: str | None = None) -> None:
    """Write the worker's liveness time (best-effort: Redis down shows as a stale beat): the
    newest of any worker (/health) and this worker's own (/metrics counts the live ones)."""
    from backend.agent.wake import get_redis

    now = time.time()
    try:
        r = get_redis()
        with r.pipeline(transaction=False) as p:
            p.set(WORKER_SEEN_KEY, str(now), ex=3600)
            p.hset(WORKERS_SEEN_KEY, name or WORKER_NAME, str(now))
            p.expire(WORKERS_SEEN_KEY, WORKERS_FORGET_S)
            p.execute()
    except (redis.RedisError, OSError) as exc:
        log.warning("worker.heartbeat_failed", error=str(exc).splitlines()[0][:200])


def _beat_forever() -> None:
    while not _stop.is_set():
        beat_once()
        _stop.wait(HEARTBEAT_EVERY_S)


@worker_ready.connect  # type: ignore[misc]
def _start_beating(**_: Any) -> None:
    _stop.clear()
    threading.Thread(target=_beat_forever, name="iowatt-worker-heartbeat", daemon=True).start()


@worker_shutdown.connect  # type: ignore[misc]
def _stop_beating(**_: Any) -> None:
    _stop.set()
