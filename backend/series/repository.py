"""All SQL of the series domain."""

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import case, func, literal, select, text, tuple_, update
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.orm import Session

from backend.models import (
    Device,
    Environment,
    ResultJob,
    Run,
    RunResult,
    RunTarget,
    Series,
    SeriesDetection,
    SeriesRun,
    SeriesTeamSettings,
    Workload,
)
from backend.series.stats import METRICS


@dataclass(frozen=True)
class StoredResult:
    """What a series reads of a run's stored result: its start, and of the engine's document the
    parts `service.run_facts` reads (a document of the same shape holding only those), never the
    whole document: its jobs' histograms were most of a new series' gathering (the JSON decoded for
    every earlier run examined)."""

    started_at: datetime
    engine_result: dict[str, Any]


# the engine document's values run_facts reads, each by its JSON path (NULL where a step is missing
# or is not an object, as run_facts reads such a part as {})
_FACT_PATHS = (
    ("iowatt", "host", "kernel"),
    ("iowatt", "target", "fs", "type"),
    ("iowatt", "target", "fs", "mount_options"),
    ("iowatt", "version"),
    ("fio version",),
)


def run_with_result(session: Session, run_id: uuid.UUID) -> tuple[Run, StoredResult] | None:
    """The run and what a series reads of its stored result (None: no result stored)."""
    doc = RunResult.engine_result
    row = session.execute(
        select(Run, RunResult.started_at, *(doc[path] for path in _FACT_PATHS))
        .join(RunResult, RunResult.run_id == Run.id)
        .where(Run.id == run_id)
    ).first()
    if row is None:
        return None
    kernel, fstype, mount_options, version, fio_version = row[2:]
    facts = {
        "iowatt": {
            "host": {"kernel": kernel},
            "target": {"fs": {"type": fstype, "mount_options": mount_options}},
            "version": version,
        },
        "fio version": fio_version,
    }
    return row[0], StoredResult(started_at=row[1], engine_result=facts)


def targets(session: Session, run_id: uuid.UUID) -> list[RunTarget]:
    return list(
        session.scalars(select(RunTarget).where(RunTarget.run_id == run_id).order_by(RunTarget.target_index))
    )


def names(session: Session, run: Run) -> tuple[str | None, str | None, str | None]:
    """The run's workload, device and environment names (for a series' default name)."""
    w = session.get(Workload, run.workload_id) if run.workload_id else None
    d = session.get(Device, run.device_id) if run.device_id else None
    e = session.get(Environment, run.environment_id) if run.environment_id else None
    return (w.name if w else None, d.name if d else None, e.name if e else None)


def device(session: Session, device_id: uuid.UUID | None) -> Device | None:
    return session.get(Device, device_id) if device_id else None


def by_key(session: Session, *, team_id: uuid.UUID, key: str) -> Series | None:
    return session.scalars(select(Series).where(Series.team_id == team_id, Series.key == key)).first()


def get_or_create(
    session: Session, *, team_id: uuid.UUID, key: str, values: dict[str, Any]
) -> tuple[Series, bool]:
    """The team's series of that key, and whether this call made it (of two transactions making
    it at once, one inserts and the other waits for it and finds it)."""
    made = session.execute(
        insert(Series)
        .values(id=uuid.uuid4(), team_id=team_id, key=key, **values)
        .on_conflict_do_nothing(constraint="uq_series_team_key")
        .returning(Series.id)
    ).scalar()
    series = session.scalars(select(Series).where(Series.team_id == team_id, Series.key == key)).one()
    return series, made is not None


def earlier_runs(
    session: Session, series: Series, *, after: tuple[datetime, uuid.UUID] | None, limit: int
) -> list[tuple[uuid.UUID, datetime, dict[str, Any]]]:
    """Runs with a stored result that may be the series' and are not in it yet (its team, its
    environment, its device or else its agent: the workload's fingerprint and the exact target
    are the caller's to check), in (created_at, id) order after `after`; (id, created_at, workload
    spec): the spec, so a run of another workload is passed over without reading more of it."""
    q = (
        select(Run.id, Run.created_at, Run.workload_spec)
        .join(RunResult, RunResult.run_id == Run.id)
        .where(
            Run.team_id == series.team_id,
            Run.environment_id.is_not_distinct_from(series.environment_id),
            ~select(SeriesRun.run_id)
            .where(SeriesRun.series_id == series.id, SeriesRun.run_id == Run.id)
            .exists(),
        )
    )
    if series.target_kind == "device":
        q = q.where(Run.device_id == series.device_id)
    else:
        q = q.where(Run.agent_id == series.agent_id)
    if series.target_kind == "path":
        q = q.where(Run.target_path == series.target_path)
    if after is not None:
        q = q.where(tuple_(Run.created_at, Run.id) > tuple_(literal(after[0]), literal(after[1])))
    rows = session.execute(q.order_by(Run.created_at, Run.id).limit(limit)).tuples()
    return [(i, at, spec) for i, at, spec in rows]


def untracked_runs(
    session: Session,
    *,
    team_id: uuid.UUID | None,
    since: datetime | None,
    after: tuple[datetime, uuid.UUID] | None,
    limit: int,
) -> list[tuple[uuid.UUID, datetime]]:
    """Runs with a stored result that are in no series (stored before series existed, or whose
    `series.track_run` was lost), in (created_at, id) order after `after`: one batch of the bulk
    backfill, ids only (a million runs are never loaded at once)."""
    q = (
        select(Run.id, Run.created_at)
        .join(RunResult, RunResult.run_id == Run.id)
        .where(~select(SeriesRun.run_id).where(SeriesRun.run_id == Run.id).exists())
    )
    if team_id is not None:
        q = q.where(Run.team_id == team_id)
    if since is not None:
        q = q.where(Run.created_at >= since)
    if after is not None:
        q = q.where(tuple_(Run.created_at, Run.id) > tuple_(literal(after[0]), literal(after[1])))
    return [(i, at) for i, at in session.execute(q.order_by(Run.created_at, Run.id).limit(limit)).tuples()]


def add_run(session: Session, *, series: Series, run_id: uuid.UUID, at: datetime, **values: Any) -> bool:
    """Adds the run to the series once; True when it was new."""
    done = session.execute(
        insert(SeriesRun)
        .values(series_id=series.id, run_id=run_id, at=at, **values)
        .on_conflict_do_nothing()
        .returning(SeriesRun.run_id)
    ).first()
    if done is None:
        return False
    session.execute(
        update(Series)
        .where(Series.id == series.id)
        .values(
            run_count=Series.run_count + 1,
            last_run_at=func.greatest(func.coalesce(Series.last_run_at, at), at),
        )
    )
    session.refresh(series)
    return True


def list_series(
    session: Session,
    team_ids: Sequence[uuid.UUID],
    *,
    device_id: uuid.UUID | None,
    agent_id: uuid.UUID | None,
    workload_id: uuid.UUID | None,
    run_id: uuid.UUID | None,
    archived: bool | None,
    limit: int,
    offset: int,
) -> tuple[list[Series], int]:
    q = select(Series).where(Series.team_id.in_(team_ids))
    if device_id is not None:
        q = q.where(Series.device_id == device_id)
    if agent_id is not None:
        q = q.where(Series.agent_id == agent_id)
    if workload_id is not None:
        q = q.where(Series.workload_id == workload_id)
    if run_id is not None:
        q = q.where(Series.id.in_(select(SeriesRun.series_id).where(SeriesRun.run_id == run_id)))
    if archived is not None:
        q = q.where(Series.archived_at.is_not(None) if archived else Series.archived_at.is_(None))
    total = session.scalar(select(func.count()).select_from(q.subquery())) or 0
    rows = session.scalars(
        q.order_by(Series.pinned.desc(), Series.last_run_at.desc().nulls_last(), Series.id)
        .limit(limit)
        .offset(offset)
    )
    return list(rows), total


def get(session: Session, series_id: uuid.UUID) -> Series | None:
    return session.get(Series, series_id)


def open_regressions(session: Session, series_ids: Sequence[uuid.UUID]) -> dict[uuid.UUID, int]:
    rows = session.execute(
        select(SeriesDetection.series_id, func.count())
        .where(
            SeriesDetection.series_id.in_(series_ids),
            SeriesDetection.status == "open",
            SeriesDetection.direction == "regression",
        )
        .group_by(SeriesDetection.series_id)
    )
    return {sid: n for sid, n in rows.tuples()}


def team_thresholds(session: Session, team_id: uuid.UUID) -> dict[str, Any]:
    row = session.get(SeriesTeamSettings, team_id)
    return dict(row.thresholds) if row else {}


def set_team_thresholds(session: Session, team_id: uuid.UUID, thresholds: dict[str, Any]) -> None:
    session.execute(
        insert(SeriesTeamSettings)
        .values(team_id=team_id, thresholds=thresholds)
        .on_conflict_do_update(index_elements=["team_id"], set_={"thresholds": thresholds})
    )


def points(
    session: Session,
    series_id: uuid.UUID,
    job_index: int,
    *,
    last: int | None = None,
    metrics: Sequence[str] = tuple(METRICS),
    campaigns: bool = False,
) -> list[Any]:
    """The series' runs in order (the `last` ones only, when given) with that job's key figures:
    rows of run_id, at, excluded (null when none), segment and one column per metric (None: no
    such job or figure), and with `campaigns` the run's campaign_id. Core rows, not ORM objects,
    and only the columns asked for: a history of 10,000 runs is read in one pass."""
    q = (
        select(
            SeriesRun.run_id,
            SeriesRun.at,
            case((SeriesRun.excluded != text("'[]'::jsonb"), SeriesRun.excluded)).label("excluded"),
            SeriesRun.segment,
            *(getattr(ResultJob, m) for m in metrics),
            *((Run.campaign_id,) if campaigns else ()),
        )
        .outerjoin(ResultJob, (ResultJob.run_id == SeriesRun.run_id) & (ResultJob.job_index == job_index))
        .where(SeriesRun.series_id == series_id)
    )
    if campaigns:
        q = q.join(Run, Run.id == SeriesRun.run_id)
    conn = session.connection()
    if last is None:
        return list(conn.execute(q.order_by(SeriesRun.at, SeriesRun.run_id)))
    rows = list(conn.execute(q.order_by(SeriesRun.at.desc(), SeriesRun.run_id.desc()).limit(last)))
    return rows[::-1]


def segment_changes(session: Session, series_id: uuid.UUID) -> list[Any]:
    """The runs whose segment differs from the run before them, with both runs' facts (the
    database finds them: a 10,000-run history sends back only the few changes)."""
    order = (SeriesRun.at, SeriesRun.run_id)
    inner = (
        select(
            SeriesRun.run_id,
            SeriesRun.at,
            SeriesRun.segment,
            SeriesRun.facts,
            func.lag(SeriesRun.segment).over(order_by=order).label("prev_segment"),
            func.lag(SeriesRun.facts).over(order_by=order).label("prev_facts"),
        )
        .where(SeriesRun.series_id == series_id)
        .subquery()
    )
    return list(
        session.execute(
            select(inner.c.run_id, inner.c.at, inner.c.facts, inner.c.prev_facts)
            .where(inner.c.prev_segment.is_not(None), inner.c.prev_segment != inner.c.segment)
            .order_by(inner.c.at)
        )
    )


def series_jobs(session: Session, series_id: uuid.UUID) -> list[int]:
    """The job indexes any run of the series has."""
    return list(
        session.scalars(
            select(ResultJob.job_index)
            .join(SeriesRun, SeriesRun.run_id == ResultJob.run_id)
            .where(SeriesRun.series_id == series_id)
            .distinct()
            .order_by(ResultJob.job_index)
        )
    )


def team_series_ids(session: Session, team_id: uuid.UUID) -> list[uuid.UUID]:
    return list(
        session.scalars(select(Series.id).where(Series.team_id == team_id, Series.archived_at.is_(None)))
    )


def job_indexes(session: Session, run_id: uuid.UUID) -> list[tuple[int, str]]:
    rows = session.execute(
        select(ResultJob.job_index, ResultJob.name)
        .where(ResultJob.run_id == run_id)
        .order_by(ResultJob.job_index)
    )
    return [(i, n) for i, n in rows.tuples()]


def series_run(session: Session, series_id: uuid.UUID, run_id: uuid.UUID) -> SeriesRun | None:
    return session.get(SeriesRun, (series_id, run_id))


def add_detection(session: Session, values: dict[str, Any]) -> uuid.UUID | None:
    """Stores a detection once (series, metric, job, kind, run); its id when it was new."""
    return session.execute(
        insert(SeriesDetection)
        .values(id=uuid.uuid4(), **values)
        .on_conflict_do_nothing(constraint="uq_series_detections_change")
        .returning(SeriesDetection.id)
    ).scalar()


def detections(
    session: Session, series_id: uuid.UUID, *, metric: str | None = None, job_index: int | None = None
) -> list[SeriesDetection]:
    q = select(SeriesDetection).where(SeriesDetection.series_id == series_id)
    if metric is not None:
        q = q.where(SeriesDetection.metric == metric)
    if job_index is not None:
        q = q.where(SeriesDetection.job_index == job_index)
    return list(session.scalars(q.order_by(SeriesDetection.at, SeriesDetection.id)))


def detection(session: Session, detection_id: uuid.UUID) -> SeriesDetection | None:
    return session.get(SeriesDetection, detection_id)


def review_detection(
    session: Session, d: SeriesDetection, *, status: str, comment: str, by: uuid.UUID, at: datetime
) -> None:
    session.execute(
        update(SeriesDetection)
        .where(SeriesDetection.id == d.id)
        .values(status=status, comment=comment, status_by=by, status_at=at)
    )
    session.refresh(d)
