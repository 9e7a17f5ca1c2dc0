"""Find runs whose derived data is missing and queue their task again (beat `repair-derived`).

The outbox already guarantees the task was sent; this catches what delivery cannot: a task that
ran and failed (a bug since fixed, a database restart mid-task) or rows from before the outbox.

The age that counts is the result's upload (`RunResult.uploaded_at`), when the power samples
arrived and the energy task was queued, not the run's `finished_at` (the engine's end, which a
result spooled on the host can bring long before its upload): a late result gets its task's own
time, not a second energy computation queued beside it.
"""

import uuid
from datetime import timedelta

from sqlalchemy import String, and_, exists, select
from sqlalchemy.orm import Session

from backend.kit.time import utcnow
from backend.models import OutboxTask, Run, RunEnergy, RunPower, RunResult
from backend.outbox import enqueue

REPAIR_AFTER = timedelta(minutes=5)
_BATCH = 100


def runs_missing_energy(session: Session, older_than: timedelta = REPAIR_AFTER) -> list[uuid.UUID]:
    """Runs whose result was uploaded more than `older_than` ago with usable power samples, no
    energy row, and no energy task still unsent."""
    pending = exists().where(
        and_(
            OutboxTask.sent_at.is_(None),
            OutboxTask.name == "energy.compute_run",
            OutboxTask.kwargs["run_id"].astext == Run.id.cast(String),
        )
    )
    query = (
        select(Run.id)
        .join(RunResult, RunResult.run_id == Run.id)
        .join(RunPower, RunPower.run_id == Run.id)
        .outerjoin(RunEnergy, RunEnergy.run_id == Run.id)
        .where(
            RunEnergy.run_id.is_(None),
            RunPower.status == "ok",
            RunPower.samples > 0,
            RunResult.uploaded_at < utcnow() - older_than,
            ~pending,
        )
        .order_by(RunResult.uploaded_at)
        .limit(_BATCH)
    )
    return list(session.scalars(query))


def repair_missing_energy(session: Session, older_than: timedelta = REPAIR_AFTER) -> list[uuid.UUID]:
    ids = runs_missing_energy(session, older_than)
    for run_id in ids:
        enqueue(session, "energy.compute_run", run_id=str(run_id))
    return ids
