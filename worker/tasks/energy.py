"""Derived energy and carbon: computed after a result lands, recomputed when context changes."""

import uuid

from backend.db import unit_of_work
from backend.logs import log
from backend.power import service as power_service
from worker.app import celery_app
from worker.observe import retry_transient


def compute_run(run_id: str) -> bool:
    with unit_of_work() as session:
        row = power_service.compute(session, run_id=uuid.UUID(run_id))
    if row is not None:
        log.info("energy.computed", run_id=run_id, total_j=row.total_j, gco2e=row.operational_gco2e)
    return row is not None


def recompute_environment(environment_id: str) -> int:
    with unit_of_work() as session:
        ids = power_service.runs_to_recompute(session, environment_id=uuid.UUID(environment_id))
    return sum(compute_run(str(rid)) for rid in ids)


def recompute_device(device_id: str) -> int:
    with unit_of_work() as session:
        ids = power_service.runs_to_recompute(session, device_id=uuid.UUID(device_id))
    return sum(compute_run(str(rid)) for rid in ids)


celery_app.task(name="energy.compute_run")(retry_transient(compute_run))
celery_app.task(name="energy.recompute_environment")(retry_transient(recompute_environment))
celery_app.task(name="energy.recompute_device")(retry_transient(recompute_device))
