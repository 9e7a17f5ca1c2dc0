"""The stored `pts` section of runs' results (run_results.engine_result, JSONB)."""

from __future__ import annotations

import uuid
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from backend.models import RunResult


def pts_section(session: Session, run_id: uuid.UUID) -> Any:
    return session.scalar(select(RunResult.engine_result["pts"]).where(RunResult.run_id == run_id))


def pts_sections(session: Session, run_ids: list[uuid.UUID]) -> dict[uuid.UUID, Any]:
    """The `pts` sections of those runs that have one: one query."""
    if not run_ids:
        return {}
    rows = session.execute(
        select(RunResult.run_id, RunResult.engine_result["pts"]).where(
            RunResult.run_id.in_(run_ids), RunResult.engine_result.has_key("pts")
        )
    ).all()
    return {rid: section for rid, section in rows}


def verdict_parts(session: Session, run_ids: list[uuid.UUID]) -> dict[uuid.UUID, dict[str, Any]]:
    """The verdict's parts of the runs that have a `pts` section (not its rounds): one query."""
    if not run_ids:
        return {}
    pts = RunResult.engine_result["pts"]
    rows = session.execute(
        select(
            RunResult.run_id,
            pts["test"],
            pts["profile"],
            pts["compliant"],
            pts["deviations"],
            pts["steady_state"],
        ).where(RunResult.run_id.in_(run_ids), RunResult.engine_result.has_key("pts"))
    ).all()
    return {
        rid: {"test": t, "profile": pr, "compliant": c, "deviations": d, "steady_state": s}
        for rid, t, pr, c, d, s in rows
    }
