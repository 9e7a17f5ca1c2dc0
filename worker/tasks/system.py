from worker.app import celery_app
from worker.observe import beat_once


def heartbeat() -> None:
    """The liveness beat as a task (kept for messages still queued by an older beat schedule; the
    beat itself is a thread of the worker, worker/observe.py)."""
    beat_once()


celery_app.task(name="system.heartbeat")(heartbeat)
