"""The views' own query: which of the runs' workloads are built-in presets (by name). Runs, jobs
and devices are read through backend/run/repository.py."""

import uuid

from sqlalchemy import select
from sqlalchemy.orm import Session

from backend.models import Workload


def builtin_names(session: Session, workload_ids: set[uuid.UUID]) -> dict[uuid.UUID, str]:
    if not workload_ids:
        return {}
    rows = session.execute(
        select(Workload.id, Workload.name).where(Workload.id.in_(workload_ids), Workload.builtin.is_(True))
    )
    return {wid: name for wid, name in rows}
