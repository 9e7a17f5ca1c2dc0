"""Series: a run joins its series after its result is stored, and changes are looked for."""

import uuid

from backend.db import unit_of_work
from backend.logs import log
from backend.series import service
from worker.app import celery_app
from worker.observe import retry_transient


def track_run(run_id: str) -> int:
    with unit_of_work() as session:
        found = service.track_run(session, run_id=uuid.UUID(run_id))
    return len(found)


def detection_stored(detection_id: str) -> None:
    """Where notifications of a change will be sent from; today it logs the change."""
    log.info("series.detection_stored", detection_id=detection_id)


celery_app.task(name="series.track_run")(retry_transient(track_run))
celery_app.task(name="series.detection_stored")(retry_transient(detection_stored))
