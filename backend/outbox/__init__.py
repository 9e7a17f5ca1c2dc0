"""Transactional outbox: a task is a row written in its producer's transaction (ADR 0012).

`enqueue(session, "run.dispatch", run_id=...)` adds an `outbox_tasks` row to the session: the
task exists exactly when the transaction commits, whatever savepoints came and went. Two senders
publish unsent rows by task name with a producer-only Celery app built here from settings (the
backend never imports `worker/`):

- right after the outermost commit, a best-effort send of this transaction's rows; it reads them
  back on a connection of its own (so it only ever sees committed rows) and never raises;
- `send_pending`, run by the worker every second (beat `outbox-send`), for everything else:
  rows whose immediate send failed (Redis down), or whose process died before sending.

Rows are claimed with `FOR UPDATE SKIP LOCKED` and marked sent in the same transaction after the
broker accepted them (the send after commit marks them as it claims them, in one statement, and
marks those the broker refused unsent again before its commit): delivery is at-least-once, so
every task must be idempotent.

The request id of the request (or task) that queued a row rides along in its kwargs under
`_request_id` and is sent as the message header `iowatt_request_id`, not as a task argument: the
worker logs the task under that id, so a run's dispatch can be traced from its `POST /runs`.
"""

from collections.abc import Iterable
from datetime import timedelta
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from sqlalchemy import delete, event, select, update
from sqlalchemy.orm import Session

from backend.config import get_settings
from backend.kit.time import utcnow
from backend.logs import current_request_id, log
from backend.models import OutboxTask

if TYPE_CHECKING:
    from celery import Celery

# The broker's order (ADR 0012, amended): the tasks that put a queued run on its agent go ahead
# of everything the worker computes after a run (energy, series, alerts, schedules). kombu's Redis
# transport keeps a list per priority step and a worker takes the next message from the first
# non-empty one, 0 first; a worker busy with derived data (a series' tracking is a second of CPU
# under load) otherwise left `run.dispatch` behind a queue of them: seconds before a run reached
# its idle agent (docs/benchmarks.md § A thousand agents, "dispatch waited behind derived data").
DISPATCH_PRIORITY = 0
BACKGROUND_PRIORITY = 6
DISPATCH_TASKS = frozenset(
    {
        "run.dispatch",
        "run.dispatch_pending",
        "run.expire_stale_leases",
        "agent.mark_silent_offline",
        "outbox.send",  # the sender of last resort for an unsent run.dispatch
    }
)


def priority_of(name: str) -> int:
    """The broker priority of task `name` (kombu's Redis transport: lower first)."""
    return DISPATCH_PRIORITY if name in DISPATCH_TASKS else BACKGROUND_PRIORITY


_KEY = "iowatt_outbox"
REQUEST_ID_KWARG = "_request_id"
REQUEST_ID_HEADER = "iowatt_request_id"
BATCH = 200
_KEEP_SENT = timedelta(days=1)


def enqueue(session: Session, name: str, **kwargs: Any) -> None:
    """Queue task `name` with keyword ids, in the session's transaction (sent after it commits)."""
    request_id = current_request_id()
    row = OutboxTask(name=name, kwargs={**kwargs, REQUEST_ID_KWARG: request_id} if request_id else kwargs)
    session.add(row)
    session.flush([row])
    session.info.setdefault(_KEY, []).append(row.id)


@lru_cache
def producer() -> "Celery":
    """Sends by task name only (no task code here); serialisation matches the worker's app.
    Celery is imported here, at the first send: an API process that queues nothing (and the
    `iowatt-server` commands) never pays for it (tests/backend/test_startup_imports.py)."""
    from celery import Celery

    app = Celery("iowatt-producer", broker=get_settings().redis_url)
    app.conf.update(
        task_serializer="json",
        accept_content=["json"],
        broker_connection_retry=False,
        broker_connection_timeout=3,
        # fail a publish at once when Redis is down (kombu otherwise retries for seconds, which
        # the request would wait out); the row stays unsent and the beat sender tries again
        broker_transport_options={
            "visibility_timeout": 3600,
            "socket_connect_timeout": 3,
            "socket_timeout": 5,
            "max_retries": 0,
        },
    )
    return app


def _publish(name: str, stored_kwargs: dict[str, Any]) -> None:
    kwargs = dict(stored_kwargs)
    request_id = kwargs.pop(REQUEST_ID_KWARG, None)
    headers = {REQUEST_ID_HEADER: request_id} if request_id else None
    producer().send_task(name, kwargs=kwargs, headers=headers, retry=False, priority=priority_of(name))


def send_pending(session: Session, ids: Iterable[int] | None = None, limit: int = BATCH) -> int:
    """Publish unsent rows (only `ids` when given) and mark them sent; stops at the first broker
    error, recording it on the row, so the rest wait for the next pass. Returns how many were sent."""
    query = select(OutboxTask).where(OutboxTask.sent_at.is_(None)).order_by(OutboxTask.id).limit(limit)
    if ids is not None:
        query = query.where(OutboxTask.id.in_(list(ids)))
    rows = session.scalars(query.with_for_update(skip_locked=True)).all()
    sent = 0
    for row in rows:
        try:
            _publish(row.name, row.kwargs)
        except Exception as exc:  # the broker is down or refused: the row stays unsent
            row.attempts += 1
            row.last_error = f"{type(exc).__name__}: {exc}"[:2000]
            log.warning("outbox.send_failed", task=row.name, outbox_id=row.id, error=row.last_error[:200])
            break
        row.sent_at = utcnow()
        sent += 1
    session.flush()
    return sent


def purge_sent(session: Session) -> int:
    """Delete rows sent more than a day ago (kept that long to answer "was it sent?")."""
    result = session.execute(delete(OutboxTask).where(OutboxTask.sent_at < utcnow() - _KEEP_SENT))
    return int(getattr(result, "rowcount", 0) or 0)


def _send_committed(session: Session, ids: list[int]) -> int:
    """`send_pending` for the rows a transaction just committed, in two statements less and
    without the ORM (bench/load/route_cpu.py: the send was about a quarter of a `POST /runs`'
    CPU; docs/benchmarks.md § Session 28). One statement claims the unsent ones a sender does not
    hold (SKIP LOCKED, as `send_pending`) and marks them sent, returning what to publish; a row
    the broker refuses, and those after it, are marked unsent again with the error on that row.
    All in the caller's transaction: a crash before its commit leaves every row unsent (sent
    again: at-least-once, as before)."""
    claimable = (
        select(OutboxTask.id)
        .where(OutboxTask.id.in_(ids), OutboxTask.sent_at.is_(None))
        .with_for_update(skip_locked=True)
        .scalar_subquery()
    )
    returned = session.execute(
        update(OutboxTask)
        .where(OutboxTask.id.in_(claimable))
        .values(sent_at=utcnow())
        .returning(OutboxTask.id, OutboxTask.name, OutboxTask.kwargs)
    ).all()
    claimed = sorted(returned, key=lambda row: row[0])  # RETURNING's order is not the ids
    for sent, (row_id, name, kwargs) in enumerate(claimed):
        try:
            _publish(name, kwargs)
        except Exception as exc:  # the broker is down or refused: this row and the rest stay unsent
            error = f"{type(exc).__name__}: {exc}"[:2000]
            log.warning("outbox.send_failed", task=name, outbox_id=row_id, error=error[:200])
            session.execute(
                update(OutboxTask)
                .where(OutboxTask.id == row_id)
                .values(sent_at=None, attempts=OutboxTask.attempts + 1, last_error=error)
            )
            rest = [r[0] for r in claimed[sent + 1 :]]
            if rest:
                session.execute(update(OutboxTask).where(OutboxTask.id.in_(rest)).values(sent_at=None))
            return sent
    return len(claimed)


def _send_now(ids: list[int]) -> None:
    from backend.db import unit_of_work  # backend.db imports this module for its hooks

    try:
        with unit_of_work() as session:
            _send_committed(session, ids)
    except Exception as exc:  # never fails the request: the beat sender retries every second
        log.warning("outbox.send_now_failed", error=str(exc)[:200])


@event.listens_for(Session, "after_commit")
def _after_commit(session: Session) -> None:
    if session.in_nested_transaction():
        return  # a released savepoint: the rows are not committed yet
    ids = session.info.pop(_KEY, None)
    if ids:
        _send_now(ids)


@event.listens_for(Session, "after_soft_rollback")
def _after_soft_rollback(session: Session, previous_transaction: Any) -> None:
    if previous_transaction.parent is None:
        session.info.pop(_KEY, None)
