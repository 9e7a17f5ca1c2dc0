"""All SQL of the result domain: the stored engine document, its job rows and series points."""

import uuid
from functools import cache
from typing import Any

from sqlalchemy import Select, bindparam, case, func, insert, select
from sqlalchemy.orm import Session

from backend.counters import ingested
from backend.models import ResultJob, ResultSeriesPoint, RunResult


def get(session: Session, run_id: uuid.UUID) -> RunResult | None:
    return session.get(RunResult, run_id)


def upload_id_of(session: Session, run_id: uuid.UUID) -> uuid.UUID | None:
    """The upload id of the result stored for the run (None: none yet), without loading the row.
    A statement of its own after the run's lock is held, never a column of the locking read: in
    READ COMMITTED a `SELECT ... FOR UPDATE` that waited for the lock sees the run's new version
    but reads everything else from the snapshot it took before waiting, so a subquery there misses
    the result the concurrent upload that held the lock just committed (tests/faults scenario 8:
    the same upload id sent eight times at once answered 409 instead of 200 "duplicate")."""
    return session.scalar(select(RunResult.upload_id).where(RunResult.run_id == run_id))


def add(session: Session, result: RunResult, jobs: list[ResultJob], points: list[dict[str, Any]]) -> None:
    """The result, its job rows and its series points (one multi-row insert)."""
    session.add(result)
    session.add_all(jobs)
    session.flush()
    if points:
        session.execute(insert(ResultSeriesPoint), points)
    ingested(session, "results")
    ingested(session, "result_jobs", len(jobs))
    ingested(session, "series_points", len(points))


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


def file_docs(session: Session, run_ids: list[uuid.UUID]) -> dict[uuid.UUID, dict[str, Any]]:
    """The file-workload parts of the runs' engine documents (those that have one), without the
    per-interval records (`fileset.intervals`: read by `file_intervals` for one run only): a runs
    page does not pull every interval of every run. `document_parts`' statement, its first part."""
    return document_parts(session, run_ids)[0]


@cache
def _document_parts_query() -> Select[Any]:
    """document_parts' statement, made once: the run ids are an expanding parameter. Made anew per
    call, its ~60 JSON operators were built and walked for SQLAlchemy's cache key at every run read
    (a third of the function's CPU: each RunRead reads it, a run's page, start and creation too)."""
    doc = RunResult.engine_result
    intervals = doc["fileset"]["intervals"]
    count = case((func.jsonb_typeof(intervals) == "array", func.jsonb_array_length(intervals)), else_=0)
    pts = doc["pts"]
    return select(
        RunResult.run_id,
        doc.has_key("postmark") | doc.has_key("fileset"),
        doc["postmark"],
        doc["fileset"].op("-")("intervals"),
        doc["jobs"][0]["usr_cpu"],
        doc["jobs"][0]["sys_cpu"],
        doc["iowatt"]["host"]["mem_bytes"],
        count,
        doc.has_key("tpch") | doc.has_key("heap_btree"),
        doc["tpch"],
        doc["heap_btree"],
        doc["heap_btree_run"],
        doc.has_key("pts"),
        pts["test"],
        pts["profile"],
        pts["compliant"],
        pts["deviations"],
        pts["steady_state"],
    ).where(
        RunResult.run_id.in_(bindparam("run_ids", expanding=True)),
        doc.has_key("postmark")
        | doc.has_key("fileset")
        | doc.has_key("tpch")
        | doc.has_key("heap_btree")
        | doc.has_key("pts"),
    )


def document_parts(
    session: Session, run_ids: list[uuid.UUID]
) -> tuple[dict[uuid.UUID, dict[str, Any]], dict[uuid.UUID, dict[str, Any]], dict[uuid.UUID, dict[str, Any]]]:
    """`file_docs`, `db_docs` and the PTS verdict's parts (pts.repository.verdict_parts) of the runs
    in one query, each document read once: what a list of RunReads needs (one round trip, not three:
    docs/benchmarks.md § A million runs)."""
    if not run_ids:
        return {}, {}, {}
    rows = session.execute(_document_parts_query(), {"run_ids": list(run_ids)}).tuples()
    files: dict[uuid.UUID, dict[str, Any]] = {}
    dbs: dict[uuid.UUID, dict[str, Any]] = {}
    verdicts: dict[uuid.UUID, dict[str, Any]] = {}
    for rid, is_file, pm, fs, usr, sys, mem, n, is_db, t, h, hr, is_pts, test, prof, ok, dev, ss in rows:
        if is_file:
            files[rid] = {
                "postmark": pm,
                "fileset": fs,
                "usr_cpu": usr,
                "sys_cpu": sys,
                "mem_bytes": mem,
                "intervals": n,
            }
        if is_db:
            dbs[rid] = {"tpch": t, "heap_btree": h, "heap_btree_run": hr}
        if is_pts:
            verdicts[rid] = {
                "test": test,
                "profile": prof,
                "compliant": ok,
                "deviations": dev,
                "steady_state": ss,
            }
    return files, dbs, verdicts


def file_intervals(session: Session, run_id: uuid.UUID) -> list[Any] | None:
    """A vdbench run's `fileset.intervals` (null for others)."""
    value = session.scalar(
        select(RunResult.engine_result["fileset"]["intervals"]).where(RunResult.run_id == run_id)
    )
    return value if isinstance(value, list) else None


def db_docs(session: Session, run_ids: list[uuid.UUID]) -> dict[uuid.UUID, dict[str, Any]]:
    """The TPC-H (`tpch`) and heap/B-tree (`heap_btree`, `heap_btree_run`) parts of the runs'
    documents, for the runs that have one: one query."""
    if not run_ids:
        return {}
    doc = RunResult.engine_result
    rows = session.execute(
        select(RunResult.run_id, doc["tpch"], doc["heap_btree"], doc["heap_btree_run"]).where(
            RunResult.run_id.in_(run_ids), doc.has_key("tpch") | doc.has_key("heap_btree")
        )
    ).tuples()
    return {rid: {"tpch": t, "heap_btree": h, "heap_btree_run": r} for rid, t, h, r in rows}


def page_cache(session: Session, run_id: uuid.UUID) -> Any:
    """The stored document's `page_cache` (the agent's page cache record, result/pagecache.py), as
    stored: None when there is none."""
    return session.scalar(select(RunResult.engine_result["page_cache"]).where(RunResult.run_id == run_id))
