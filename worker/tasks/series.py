"""Series: a run joins its series after its result is stored, and changes are looked for."""

import uuid
from datetime import datetime

from backend.alert import service as alert_service
from backend.db import unit_of_work
from backend.logs import log
from backend.series import service
from worker.app import celery_app
from worker.observe import retry_transient


def track_run(run_id: str) -> int:
    with unit_of_work() as session:
        found = service.track_run(session, run_id=uuid.UUID(run_id))
    return len(found)


def backfill(series_id: str) -> int:
    """The series' thresholds changed: change points over its history at the new ones."""
    with unit_of_work() as session:
        return len(service.backfill(session, series_id=uuid.UUID(series_id)))


def gather(series_id: str, after_at: str, after_id: str) -> int:
    """A series came into being: the next batch of the runs stored before it joins it."""
    with unit_of_work() as session:
        return service.gather_more(
            session,
            series_id=uuid.UUID(series_id),
            after=(datetime.fromisoformat(after_at), uuid.UUID(after_id)),
        )


def detection_stored(detection_id: str) -> int:
    """A change was stored: raise its alert now rather than at the next periodic scan (ADR 0041;
    the scan raises each subject once, so the two never double it)."""
    log.info("series.detection_stored", detection_id=detection_id)
    with unit_of_work() as session:
        return len(alert_service.scan(session))


celery_app.task(name="series.track_run")(retry_transient(track_run))
celery_app.task(name="series.detection_stored")(retry_transient(detection_stored))
celery_app.task(name="series.backfill")(retry_transient(backfill))
celery_app.task(name="series.gather")(retry_transient(gather))
