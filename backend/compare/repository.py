"""Compare's queries: the compared runs' context (agents, devices, environments) and the json+
histograms the latency curves merge. Runs and their result jobs come from backend/run/repository.py."""

import uuid
from collections.abc import Iterable
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from backend.models import Agent, Device, Environment, RunResult, Workload


def agents_by_id(session: Session, ids: Iterable[uuid.UUID]) -> dict[uuid.UUID, Agent]:
    wanted = set(ids)
    if not wanted:
        return {}
    return {a.id: a for a in session.scalars(select(Agent).where(Agent.id.in_(wanted)))}


def devices_by_id(session: Session, ids: Iterable[uuid.UUID]) -> dict[uuid.UUID, Device]:
    wanted = set(ids)
    if not wanted:
        return {}
    return {d.id: d for d in session.scalars(select(Device).where(Device.id.in_(wanted)))}


def environments_by_id(session: Session, ids: Iterable[uuid.UUID]) -> dict[uuid.UUID, Environment]:
    wanted = set(ids)
    if not wanted:
        return {}
    return {e.id: e for e in session.scalars(select(Environment).where(Environment.id.in_(wanted)))}


def workload_names(session: Session, ids: Iterable[uuid.UUID]) -> dict[uuid.UUID, str]:
    wanted = set(ids)
    if not wanted:
        return {}
    rows = session.execute(select(Workload.id, Workload.name).where(Workload.id.in_(wanted))).tuples()
    return {wid: name for wid, name in rows}  # not dict(rows): a Result has keys() (its columns)


def result_jobs_docs(
    session: Session, run_ids: list[uuid.UUID]
) -> dict[uuid.UUID, list[dict[str, Any]] | None]:
    """Each run's engine `jobs` array (json+, with the clat_ns histogram bins), by run id."""
    rows = session.execute(
        select(RunResult.run_id, RunResult.engine_result["jobs"]).where(RunResult.run_id.in_(run_ids))
    ).tuples()
    return dict(rows.all())
