"""All SQL of the result domain: the stored engine document, its job rows and series points."""

import uuid
from typing import Any

from sqlalchemy import insert, select
from sqlalchemy.orm import Session

from backend.models import ResultJob, ResultSeriesPoint, RunResult


def get(session: Session, run_id: uuid.UUID) -> RunResult | None:
    return session.get(RunResult, run_id)


def add(session: Session, result: RunResult, jobs: list[ResultJob], points: list[dict[str, Any]]) -> None:
    """The result, its job rows and its series points (one multi-row insert)."""
    session.add(result)
    session.add_all(jobs)
    session.flush()
    if points:
        session.execute(insert(ResultSeriesPoint), points)


def job_names(session: Session, run_id: uuid.UUID) -> dict[int, str]:
    rows = session.execute(select(ResultJob.job_index, ResultJob.name).where(ResultJob.run_id == run_id))
    return {index: name for index, name in rows}


def series_points(session: Session, run_id: uuid.UUID) -> list[ResultSeriesPoint]:
    return list(
        session.scalars(
            select(ResultSeriesPoint)
            .where(ResultSeriesPoint.run_id == run_id)
            .order_by(ResultSeriesPoint.job_index, ResultSeriesPoint.t_ns)
        )
    )


def by_upload_id(session: Session, upload_id: uuid.UUID) -> RunResult | None:
    return session.scalar(select(RunResult).where(RunResult.upload_id == upload_id))
