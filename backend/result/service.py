"""Storing an engine result: the document whole, key figures in columns, the series in rows."""

import uuid
from datetime import datetime
from typing import Any

from iowatt_workload import parse_size as parse_fio_size
from pydantic import ValidationError
from sqlalchemy.orm import Session

from backend.auth.principal import AgentPrincipal
from backend.device import service as device_service
from backend.errors import Conflict, Invalid
from backend.jobs import enqueue
from backend.kit.time import utcnow
from backend.models import ResultJob, ResultSeriesPoint, Run, RunResult, RunStatus, RunTarget
from backend.power import service as power_service
from backend.result import pagecache, repository, summary
from backend.result.combine import combine
from backend.result.schemas import (
    BIGINT,
    DirStats,
    EngineDocument,
    EngineJob,
    JobSeries,
    RunSeries,
    SeriesPointRead,
)
from backend.run import repository as run_repo
from backend.run import service as run_service
from backend.run.schemas import JobSummary, ResultStored, ResultUpload

_MAX_POINTS = 2000
HEAP_BTREE_PAGE_BYTES = 8192


def store(
    session: Session, *, principal: AgentPrincipal, run_id: uuid.UUID, body: ResultUpload
) -> ResultStored:
    """Idempotent by upload_id: a retried upload answers 200 with the stored result."""
    run = run_service.leased_run(session, principal=principal, run_id=run_id, lease_id=body.lease_id)
    stored_upload = repository.upload_id_of(session, run_id)  # after the lock: see upload_id_of
    if stored_upload is not None:
        if stored_upload == body.upload_id:
            return ResultStored(run_id=run_id, upload_id=body.upload_id, status=run.status, duplicate=True)
        raise Conflict("another result is already stored for this run", code="result_exists")
    # the states `succeed` moves on (run/service.py's one table), and a cancelled run, which keeps
    # its status and its result
    if run.status not in run_service.TRANSITIONS["succeed"][0] | {RunStatus.cancelled}:
        raise Conflict(f"run is {run.status.value}; it was never started", code="lease_lost")
    targets = run_repo.targets_of(session, [run_id])[run_id]
    engine_result, opened = _uploaded_document(session, run_id, body, targets)
    doc = validate_document(engine_result)
    store_document(
        session,
        run_id=run_id,
        upload_id=body.upload_id,
        engine_result=engine_result,
        doc=doc,
        engine_exit_code=body.engine_exit_code,
        agent_version=body.agent_version,
        started_at=body.started_at,
        finished_at=body.finished_at,
    )
    if body.power is not None:
        power_service.ingest(session, run_id=run_id, power=body.power)
    run_service.succeed(
        session,
        run=run,
        engine_started_at=body.started_at,
        engine_finished_at=body.finished_at,
        targets=targets,
    )
    device_service.confirm_opened(session, run=run, engine_result=opened)
    for t in targets:  # a multi-target run: each target's device from what its engine opened
        t.device_id = (
            run.device_id
            if t.target_index == 0
            else device_service.opened_target_device(
                session,
                run=run,
                target_path=t.target_path,
                engine_result=t.engine_result,
                current=t.device_id,
            )
        )
    return ResultStored(run_id=run_id, upload_id=body.upload_id, status=run.status, duplicate=False)


def _uploaded_document(
    session: Session, run_id: uuid.UUID, body: ResultUpload, targets: list[RunTarget]
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The run's document and the one its device is confirmed from: the upload's own for a
    single-target run; for a multi-target run the targets' documents combined (combine.py; each
    target's stored in its run_targets row with its key figures) and the first target's."""
    if not targets:
        if body.targets is not None:
            raise Invalid("targets", "the run has one target: upload engine_result")
        if body.engine_result is None:
            raise Invalid("engine_result", "field required")
        return body.engine_result, body.engine_result
    if body.targets is None:
        raise Invalid("targets", f"the run has {len(targets)} targets: upload one result per target")
    if body.engine_result is not None:
        raise Invalid("engine_result", "a multi-target run's results are in targets: leave this null")
    given = sorted(t.target_index for t in body.targets)
    if given != list(range(len(targets))):
        raise Invalid("targets", f"one result per target, target_index 0…{len(targets) - 1}, each once")
    uploads = sorted(body.targets, key=lambda t: t.target_index)
    docs = [validate_document(u.engine_result, f"targets.{u.target_index}.engine_result") for u in uploads]
    try:
        combined = combine([u.engine_result for u in uploads])
    except ValueError as exc:
        raise Invalid("targets", str(exc)) from exc
    for row, upload, doc in zip(targets, uploads, docs, strict=True):
        row.engine_result = upload.engine_result
        row.engine_exit_code = upload.engine_exit_code
        row.jobs = [
            run_service.job_summary(_job_row(run_id, i, job, doc)).model_dump(mode="json")
            for i, job in enumerate(doc.jobs)
        ]
    return combined, uploads[0].engine_result


def validate_document(engine_result: dict[str, Any], field: str = "engine_result") -> EngineDocument:
    """What the server reads of an engine (or fio) JSON document; 422 naming the field inside it."""
    try:
        return EngineDocument.model_validate(engine_result)
    except ValidationError as exc:
        err = exc.errors()[0]
        raise Invalid(".".join(str(p) for p in (field, *err["loc"])), err["msg"]) from exc


def store_document(
    session: Session,
    *,
    run_id: uuid.UUID,
    upload_id: uuid.UUID,
    engine_result: dict[str, Any],
    doc: EngineDocument,
    engine_exit_code: int,
    agent_version: str,
    started_at: datetime,
    finished_at: datetime,
) -> None:
    """The document whole, its key figures per job in columns and its series in rows (an agent's
    upload and an imported result alike)."""
    result = RunResult(
        run_id=run_id,
        upload_id=upload_id,
        engine_result=engine_result,
        engine_exit_code=engine_exit_code,
        agent_version=agent_version,
        started_at=started_at,
        finished_at=finished_at,
        uploaded_at=utcnow(),
    )
    jobs = [_job_row(run_id, i, job, doc) for i, job in enumerate(doc.jobs)]
    points = [_point_row(run_id, i, p) for i, job in enumerate(doc.jobs) for p in job.iowatt.series]
    repository.add(session, result, jobs, points)
    # after commit: the run joins its series (backend/series) and is tested against the runs before it
    enqueue(session, "series.track_run", run_id=str(run_id))


def by_upload_id(session: Session, upload_id: uuid.UUID) -> RunResult | None:
    return repository.by_upload_id(session, upload_id)


def parse_size(value: Any, kb_base: Any = 1024) -> int | None:
    """A size the engine echoed, read as the engine reads it (libs/workload's parse_size, fio's
    syntax); None when it is not one size (bs given as R,W, say)."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    try:
        return parse_fio_size(str(value), int(str(kb_base)))
    except ValueError:
        return None


def _pct(stats: Any, key: str) -> int | None:
    v = stats.clat_ns.percentile.get(key)
    return int(v) if v is not None else None


def _dir_cols(prefix: str, d: DirStats) -> dict[str, Any]:
    if d.total_ios == 0:
        return {}
    # N = 0 with I/Os done: no latency was measured (postmark's jobs[0] counts system calls; its
    # latencies are per operation in `postmark.ops`): unknown, never a latency of 0 ns
    clat = d.clat_ns.N != 0
    lat = d.lat_ns.N != 0
    return {
        f"{prefix}_iops": d.iops,
        f"{prefix}_bw_bytes": d.bw_bytes,
        f"{prefix}_io_bytes": d.io_bytes,
        f"{prefix}_total_ios": d.total_ios,
        f"{prefix}_lat_mean_ns": d.lat_ns.mean if lat else None,
        f"{prefix}_clat_p50_ns": _pct(d, "50.000000") if clat else None,
        f"{prefix}_clat_p99_ns": _pct(d, "99.000000") if clat else None,
        f"{prefix}_clat_p999_ns": _pct(d, "99.900000") if clat else None,
        f"{prefix}_clat_max_ns": int(d.clat_ns.max) if clat and d.clat_ns.max is not None else None,
    }


def _rw(value: object) -> str:
    """fio's rw as the engine reported it; anything else (another type, a long string) is unknown."""
    return value if isinstance(value, str) and len(value) <= 20 else ""


def _file_bs(doc: EngineDocument) -> int | None:
    """A file workload's one transfer size: postmark's read and write block when equal, vdbench's
    xfersize when every fwd has the same single one, heap-btree's page; else None (several sizes,
    or TPC-H's DBMS)."""
    if doc.postmark is not None:
        p = doc.postmark.parameters
        return p.read_block_bytes if p.read_block_bytes == p.write_block_bytes else None
    if doc.heap_btree is not None:  # every device read and write is one 8 KiB page
        return HEAP_BTREE_PAGE_BYTES
    if doc.tpch is not None:  # the DBMS's own transfers: not one size
        return None
    sizes = set()
    for fwd in doc.fileset.fwd if doc.fileset is not None else []:
        if len(fwd.xfersize) != 1:
            return None
        sizes.add(fwd.xfersize[0].bytes)
    return sizes.pop() if len(sizes) == 1 else None


def _job_row(run_id: uuid.UUID, index: int, job: EngineJob, doc: EngineDocument) -> ResultJob:
    opts = job.iowatt.options or {}
    mode = doc.file_mode
    if mode is not None and index == 0:
        # a file workload's jobs[0]: read/write = the read and write calls (postmark) or operations
        # (vdbench); rw names the mode (no fio rw applies); runtime from the engine's exact runtime_ns
        rw = mode
        bs = _file_bs(doc)
        runtime_ns = (
            job.iowatt.runtime_ns if job.iowatt.runtime_ns is not None else job.job_runtime * 1_000_000
        )
    else:
        rw = _rw(opts.get("rw") or job.job_options.get("rw", ""))
        bs = (
            opts.get("bs_bytes")
            if type(opts.get("bs_bytes")) is int  # not a bool
            else parse_size(job.job_options.get("bs", ""), job.job_options.get("kb_base", 1024))
        )
        # the engine's exact runtime (with group_reporting the longest clone's; fio's job_runtime is
        # then the clones' sum); fio's milliseconds for a document from fio itself
        runtime_ns = (
            job.iowatt.runtime_ns
            if job.iowatt.runtime_ns is not None
            else int(job.job_runtime or max(job.read.runtime, job.write.runtime)) * 1_000_000
        )
    if bs is not None and not 0 < bs <= BIGINT:
        bs = None  # not a block size a bigint holds: unknown rather than a 500
    uring = job.iowatt.io_uring
    return ResultJob(
        run_id=run_id,
        job_index=index,
        name=job.jobname,
        rw=rw,
        bs_bytes=bs,
        runtime_ns=int(runtime_ns),
        usr_cpu_pct=job.usr_cpu,
        sys_cpu_pct=job.sys_cpu,
        kernel_worker_cpu_pct=uring.kernel_worker_cpu if uring else None,
        target_nowait=uring.target_nowait if uring else None,
        **_dir_cols("read", job.read),
        **_dir_cols("write", job.write),
    )


def _point_row(run_id: uuid.UUID, index: int, p: Any) -> dict[str, Any]:
    return {
        "run_id": run_id,
        "job_index": index,
        "t_ns": p.t_ns,
        "read_iops": p.read_iops,
        "read_bw_bytes": p.read_bw_bytes,
        "read_clat_p99_ns": p.read_clat_p99_ns,
        "write_iops": p.write_iops,
        "write_bw_bytes": p.write_bw_bytes,
        "write_clat_p99_ns": p.write_clat_p99_ns,
    }


def get_result(session: Session, *, run: Run) -> RunResult | None:
    return repository.get(session, run.id)


def series(session: Session, *, run: Run) -> RunSeries:
    """Per-job series, downsampled on the server to at most ~2k points per job (bucket means)."""
    names = repository.job_names(session, run.id)
    rows = repository.series_points(session, run.id)
    by_job: dict[int, list[ResultSeriesPoint]] = {}
    for r in rows:
        by_job.setdefault(r.job_index, []).append(r)
    jobs = [
        JobSeries(job_index=i, name=names.get(i, str(i)), points=_downsample(pts))
        for i, pts in sorted(by_job.items())
    ]
    return RunSeries(
        run_id=run.id,
        jobs=jobs,
        file_intervals=summary.file_intervals(session, run),
        memory=pagecache.series(pagecache.read_doc(repository.page_cache(session, run.id))),
    )


def _downsample(points: list[ResultSeriesPoint]) -> list[SeriesPointRead]:
    step = max(1, -(-len(points) // _MAX_POINTS))
    out = []
    for k in range(0, len(points), step):
        chunk = points[k : k + step]
        n = len(chunk)

        def worst(attr: str, c: list[ResultSeriesPoint] = chunk) -> int | None:
            vals = [getattr(p, attr) for p in c if getattr(p, attr) is not None]
            return max(vals) if vals else None

        out.append(
            SeriesPointRead(
                t_s=chunk[-1].t_ns / 1e9,
                read_iops=sum(p.read_iops for p in chunk) / n,
                read_bw_bytes=sum(p.read_bw_bytes for p in chunk) // n,
                read_clat_p99_ns=worst("read_clat_p99_ns"),
                write_iops=sum(p.write_iops for p in chunk) / n,
                write_bw_bytes=sum(p.write_bw_bytes for p in chunk) // n,
                write_clat_p99_ns=worst("write_clat_p99_ns"),
            )
        )
    return out


def job_summaries(run_id: uuid.UUID, engine_result: dict[str, Any]) -> list[JobSummary]:
    """An engine document's key figures per job, as a run's `jobs` shows them (a group run's
    combined figure, which is stored nowhere: it is rebuilt from its members' results)."""
    doc = validate_document(engine_result)
    return [run_service.job_summary(_job_row(run_id, i, job, doc)) for i, job in enumerate(doc.jobs)]
