"""Celery tasks enqueued during a transaction, sent only after it commits.

`enqueue(session, "run.dispatch", run_id=...)` buffers the task on the session; an
`after_commit` hook sends the buffer, `after_rollback` drops it. A task can therefore never
see a row its producer did not commit.
"""

from typing import Any

from sqlalchemy import event
from sqlalchemy.orm import Session

_KEY = "iowatt_jobs"


def enqueue(session: Session, name: str, **kwargs: Any) -> None:
    session.info.setdefault(_KEY, []).append((name, kwargs))


def _send(name: str, kwargs: dict[str, Any]) -> None:
    from worker.app import celery_app  # the worker package owns the Celery app

    celery_app.send_task(name, kwargs=kwargs)


@event.listens_for(Session, "after_commit")
def _flush_after_commit(session: Session) -> None:
    pending = session.info.pop(_KEY, [])
    for name, kwargs in pending:
        _send(name, kwargs)


@event.listens_for(Session, "after_soft_rollback")
def _drop_after_rollback(session: Session, previous_transaction: Any) -> None:
    if previous_transaction.parent is None:
        session.info.pop(_KEY, None)
