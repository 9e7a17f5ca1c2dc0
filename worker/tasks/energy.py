"""Derived energy and carbon: computed after a result lands, recomputed when context changes."""

import uuid

from backend.db import unit_of_work
from backend.logs import log
from backend.outbox import enqueue
from backend.power import service as power_service
from worker.app import celery_app
from worker.observe import retry_transient


def compute_run(run_id: str) -> bool:
    with unit_of_work() as session:
        row = power_service.compute(session, run_id=uuid.UUID(run_id))
    if row is not None:
        log.info("energy.computed", run_id=run_id, total_j=row.total_j, gco2e=row.operational_gco2e)
    return row is not None


# Runs recomputed by one task, the next batch then queued as a task of its own: a task stays
# bounded (worker/app.py's time limits) whatever the environment's or device's history. Each run
# is one energy.compute_run (~12 ms of the worker's CPU, 0.2-0.6 s wall on a loaded machine:
# docs/benchmarks.md), so a batch is seconds, a minute at worst, against the 240 s soft limit.
RECOMPUTE_BATCH = 100


def recompute_environment(environment_id: str, after_id: str | None = None) -> int:
    """The environment's runs with power after `after_id` (all from the first), a batch."""
    return _recompute("energy.recompute_environment", "environment_id", environment_id, after_id)


def recompute_device(device_id: str, after_id: str | None = None) -> int:
    return _recompute("energy.recompute_device", "device_id", device_id, after_id)


def _recompute(task: str, key: str, subject: str, after_id: str | None) -> int:
    after = uuid.UUID(after_id) if after_id else None
    with unit_of_work() as session:
        ids = power_service.runs_to_recompute(
            session, **{key: uuid.UUID(subject)}, after=after, limit=RECOMPUTE_BATCH
        )
    done = sum(compute_run(str(rid)) for rid in ids)
    if len(ids) == RECOMPUTE_BATCH:  # maybe more: the next batch, after this one's last run
        with unit_of_work() as session:
            enqueue(session, task, **{key: subject, "after_id": str(ids[-1])})
    return done


celery_app.task(name="energy.compute_run")(retry_transient(compute_run))
celery_app.task(name="energy.recompute_environment")(retry_transient(recompute_environment))
celery_app.task(name="energy.recompute_device")(retry_transient(recompute_device))
