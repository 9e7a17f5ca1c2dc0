import time
from typing import Any

from celery.signals import worker_ready

from backend.agent.wake import get_redis
from backend.health.router import WORKER_SEEN_KEY
from worker.app import celery_app


def heartbeat() -> None:
    """Lets /health tell whether a worker is consuming tasks (runs on a worker, scheduled by beat)."""
    get_redis().set(WORKER_SEEN_KEY, str(time.time()), ex=3600)


celery_app.task(name="system.heartbeat")(heartbeat)


@worker_ready.connect  # type: ignore[misc]
def _on_ready(**_: Any) -> None:
    heartbeat()
