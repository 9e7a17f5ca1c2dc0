"""The views' own queries: which of the runs' workloads are built-in presets (by name), and the
stored documents of imported runs that stand for a preset (their tests as the tool printed them).
Runs, jobs and devices are read through backend/run/repository.py."""

import uuid
from typing import Any

from sqlalchemy import cast, func, literal, select
from sqlalchemy.dialects.postgresql import JSONPATH
from sqlalchemy.orm import Session

from backend.models import RunResult, Workload


def builtin_names(session: Session, workload_ids: set[uuid.UUID]) -> dict[uuid.UUID, str]:
    if not workload_ids:
        return {}
    rows = session.execute(
        select(Workload.id, Workload.name).where(Workload.id.in_(workload_ids), Workload.builtin.is_(True))
    )
    return {wid: name for wid, name in rows}


def documents(session: Session, run_ids: list[uuid.UUID]) -> dict[uuid.UUID, dict[str, Any]]:
    """The stored documents of these runs (imported text results: a few dozen jobs each)."""
    if not run_ids:
        return {}
    rows = session.execute(
        select(RunResult.run_id, RunResult.engine_result).where(RunResult.run_id.in_(run_ids))
    )
    return {rid: doc for rid, doc in rows if isinstance(doc, dict)}


def latency_depths(session: Session, run_ids: list[uuid.UUID]) -> dict[uuid.UUID, dict[str, int]]:
    """The depth each latency_target job settled on (the engine's `latency_depth`), by job name."""
    if not run_ids:
        return {}
    doc = RunResult.engine_result
    has = "$.jobs[*] ? (exists(@.latency_depth))"
    rows = session.execute(
        select(
            RunResult.run_id,
            func.jsonb_path_query_array(doc, cast(literal(f"{has}.jobname"), JSONPATH)),
            func.jsonb_path_query_array(doc, cast(literal(f"{has}.latency_depth"), JSONPATH)),
        ).where(RunResult.run_id.in_(run_ids))
    )
    out: dict[uuid.UUID, dict[str, int]] = {}
    for rid, names, depths in rows:
        if isinstance(names, list) and isinstance(depths, list) and len(names) == len(depths):
            out[rid] = {str(n): int(d) for n, d in zip(names, depths, strict=True) if isinstance(d, int)}
    return out


def innodb_documents(session: Session, run_ids: list[uuid.UUID]) -> dict[uuid.UUID, dict[str, Any]]:
    """The stored `innodb_flush` object of these runs' documents (six settings at most)."""
    if not run_ids:
        return {}
    rows = session.execute(
        select(RunResult.run_id, RunResult.engine_result["innodb_flush"]).where(RunResult.run_id.in_(run_ids))
    )
    return {rid: doc for rid, doc in rows if isinstance(doc, dict)}
