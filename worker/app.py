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
# A task is acknowledged when it ends (acks_late): every task is idempotent and takes ids, so a task
# whose worker died runs again. A pool process that dies is noticed by its worker, which requeues
# the task at once (reject_on_worker_lost). A whole worker that dies (SIGKILL, OOM, a node or pod
# lost) tells nobody: Redis keeps the task as unacknowledged, and another worker puts it back on the
# queue once it has been so for the visibility timeout (kombu looks every 10 s: interval 10 s,
# throttle 1; its default throttle, 10, looks every 100 s). Celery's default, 1 h, left such a task
# (a dispatch, an energy computation, a change's alert) waiting an hour. A live task that outlasts
# the timeout would be handed to a second worker while it runs, so every task's time limits derive
# from it: soft at 0.8x (SoftTimeLimitExceeded: the task's transaction rolls back, task.failed is
# logged), hard at 0.9x (prefork kills the pool process; the task is acknowledged as failed, never
# requeued in a loop). The longest tasks are bounded batches (energy.recompute_*: RECOMPUTE_BATCH
# runs, then the next batch as a task of its own; series.gather likewise); the default, 300 s, is
# minutes of margin over them (docs/operations.md § Faults the server rides out).
VISIBILITY_TIMEOUT_S = settings.task_visibility_timeout_s
celery_app.conf.update(
    task_serializer="json",
    accept_content=["json"],
    task_ignore_result=True,
    task_acks_late=True,
    task_reject_on_worker_lost=True,
    worker_prefetch_multiplier=1,
    broker_transport_options={
        "visibility_timeout": VISIBILITY_TIMEOUT_S,
        "unacked_restore_interval": 10,
        "unacked_restore_throttle": 1,
    },
    task_soft_time_limit=0.8 * VISIBILITY_TIMEOUT_S,
    task_time_limit=0.9 * VISIBILITY_TIMEOUT_S,
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
