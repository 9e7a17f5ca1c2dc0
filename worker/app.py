"""The Celery app: Redis broker, no result backend (state lives in PostgreSQL), JSON only.

Start a worker: `celery -A worker.app worker`; beat: `celery -A worker.app beat`.
"""

from celery import Celery

from backend.config import get_settings
from backend.logs import configure_logging
from worker.beat import BEAT_SCHEDULE

settings = get_settings()
configure_logging()

celery_app = Celery(
    "iowatt",
    broker=settings.redis_url,
    include=[
        "worker.tasks.run",
        "worker.tasks.agent",
        "worker.tasks.system",
        "worker.tasks.energy",
        "worker.tasks.outbox",
        "worker.tasks.schedule",
        "worker.tasks.alert",
        "worker.tasks.series",
    ],
)
celery_app.conf.update(
    task_serializer="json",
    accept_content=["json"],
    task_ignore_result=True,
    task_acks_late=True,
    task_reject_on_worker_lost=True,
    worker_prefetch_multiplier=1,
    # Tasks are short (milliseconds): an hour of visibility is ample and avoids spurious redelivery.
    broker_transport_options={"visibility_timeout": 3600},
    broker_connection_retry_on_startup=True,
    beat_schedule=BEAT_SCHEDULE,
    timezone="UTC",
    worker_hijack_root_logger=False,
    # our structured lines (backend.logs, one JSON object each) go to stderr as they are, not
    # wrapped by Celery's logger as "[time: WARNING/MainProcess] {...}"
    worker_redirect_stdouts=False,
)
app = celery_app

import worker.observe  # noqa: E402, F401 - connects the task log, failure counter and liveness beat
