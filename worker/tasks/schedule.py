"""Thin task: claim and queue every due schedule slot in one transaction (the campaign's runs
are dispatched by the outbox after it commits)."""

from backend.db import unit_of_work
from backend.schedule import service as schedule_service
from worker.app import celery_app
from worker.observe import retry_transient


def tick() -> int:
    with unit_of_work() as session:
        return len(schedule_service.tick(session))


celery_app.task(name="schedule.tick")(retry_transient(tick))
