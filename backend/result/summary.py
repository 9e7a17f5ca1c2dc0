"""A file workload's result in brief (postmark, vdbench file sets): what the run read, the runs list,
compare and the views show of the engine's `postmark` / `fileset` objects, in base units.

The engine document is stored whole (result/service.py); this module reads its file-workload parts
through result/repository.py (never the per-interval records for a list) and shapes them. It knows
nothing about runs beyond their id and stored spec, so backend/run can import it without a cycle."""

import uuid
from collections.abc import Sequence
from typing import Any

from iowatt_workload import tpch_facts
from pydantic import ValidationError
from sqlalchemy.orm import Session

from backend.models import Run
from backend.result import repository
from backend.result.schemas import (
    FileIntervalOp,
    FileIntervalPoint,
    FileIntervals,
    FileOpDoc,
    FileOpSummary,
    FilesetDoc,
    FilesetFsd,
    FilesetFwd,
    FilesetTotals,
    FileWorkloadSummary,
    HeapBtreeRow,
    HeapBtreeRowDoc,
    HeapBtreeSummary,
    PostmarkDoc,
    PostmarkReport,
    TpchDoc,
    TpchQuerySummary,
    TpchSummary,
    VdbenchReport,
)

MAX_FILE_POINTS = 2000  # a 10 h run at 30 s intervals is 1,200 points: whole; longer runs are merged
POSTMARK_OPS = ("create", "read", "append", "delete")
# PostMark's report rate of each operation (its `rates` keys)
POSTMARK_RATE = {
    "create": "created_per_s",
    "read": "read_per_s",
    "append": "appended_per_s",
    "delete": "deleted_per_s",
}
# vdbench's operations in its report's order; others after them by name
VDBENCH_ORDER = ("read", "write", "open", "close", "create", "delete", "getattr", "setattr", "mkdir", "rmdir")
NOT_COUNTED = ("open", "close")  # vdbench's ops_total and CPU per op leave these out


def _pct(lat: Any, key: str) -> int | None:
    v = lat.percentile.get(key) if lat is not None else None
    return int(v) if v is not None else None


def _op(name: str, op: FileOpDoc, rate: float | None) -> FileOpSummary:
    lat = op.latency()
    measured = (lat.N or 0) > 0 or (lat.N is None and lat.mean is not None and op.ops > 0)
    return FileOpSummary(
        name=name,
        ops=op.ops,
        rate_per_s=float(rate if rate is not None else (op.rate or 0.0)),
        bytes=op.bytes,
        resp_mean_ns=float(lat.mean) if measured and lat.mean is not None else None,
        resp_p50_ns=_pct(lat, "50.000000") if measured else None,
        resp_p99_ns=_pct(lat, "99.000000") if measured else None,
        resp_p999_ns=_pct(lat, "99.900000") if measured else None,
        resp_max_ns=int(lat.max) if measured and lat.max is not None else None,
    )


def _ordered(ops: dict[str, FileOpDoc], order: Sequence[str]) -> list[str]:
    return [k for k in order if k in ops] + sorted(k for k in ops if k not in order)


def _cpu_pct(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def spec_scale(spec: dict[str, Any]) -> float | None:
    """The scale a run's stored spec records (run creation's `scale`), if any."""
    for value in (spec.get("scale"), spec.get("scaled_by"), (spec.get("vdbench") or {}).get("scale")):
        if isinstance(value, int | float) and not isinstance(value, bool) and value > 0:
            return float(value)
    return None


def postmark_summary(
    pm: PostmarkDoc, usr: float | None, sys: float | None, spec: dict[str, Any], mem: int | None = None
) -> FileWorkloadSummary:
    p = pm.parameters
    ops = [_op(k, pm.ops[k], pm.rates.get(POSTMARK_RATE[k], 0.0)) for k in _ordered(pm.ops, POSTMARK_OPS)]
    elapsed = pm.elapsed_ns
    n_ops = sum(o.ops for o in ops)
    cpu_ns = ((usr or 0.0) + (sys or 0.0)) / 100.0 * elapsed if usr is not None or sys is not None else None
    dataset = None
    if p.number is not None and p.size_low_bytes is not None:
        high = p.size_high_bytes if p.size_high_bytes is not None else p.size_low_bytes
        dataset = p.number * (p.size_low_bytes + high) // 2
    return FileWorkloadSummary(
        mode="postmark",
        scale=spec_scale(spec),
        elapsed_ns=elapsed,
        ops=ops,
        read_bytes=pm.bytes_read,
        write_bytes=pm.bytes_written,
        read_bw_bytes=pm.bytes_read / (elapsed / 1e9) if elapsed else 0.0,
        write_bw_bytes=pm.bytes_written / (elapsed / 1e9) if elapsed else 0.0,
        usr_cpu_pct=usr,
        sys_cpu_pct=sys,
        host_cpu_total_pct=None,
        host_cpu_system_pct=None,
        cpu_ns_per_op=cpu_ns / n_ops if cpu_ns is not None and n_ops else None,
        dataset_bytes=dataset,
        files=p.number,
        directories=p.subdirectories if (p.subdirectories or 0) > 1 else 0,
        o_direct=False,  # PostMark reads and writes through the page cache
        host_mem_bytes=mem,
        error=pm.error,
        postmark=PostmarkReport(
            transactions=pm.transactions,
            transactions_per_s=float(pm.rates.get("transactions_per_s", 0.0)),
            files_created=pm.files_created,
            files_created_alone=pm.files_created_alone,
            files_created_mixed=pm.files_created_mixed,
            files_read=pm.files_read,
            files_appended=pm.files_appended,
            files_deleted=pm.files_deleted,
            files_deleted_alone=pm.files_deleted_alone,
            files_deleted_mixed=pm.files_deleted_mixed,
            out_of_files=pm.out_of_files,
            creation_ns=pm.phases.creation_ns,
            transactions_ns=pm.phases.transactions_ns,
            deletion_ns=pm.phases.deletion_ns,
            number=p.number,
            transactions_asked=p.transactions,
            subdirectories=p.subdirectories,
            size_low_bytes=p.size_low_bytes,
            size_high_bytes=p.size_high_bytes,
            read_block_bytes=p.read_block_bytes,
            write_block_bytes=p.write_block_bytes,
            buffering=p.buffering,
            seed=p.seed,
            fsync=p.fsync,
        ),
        vdbench=None,
    )


def fileset_summary(
    fs: FilesetDoc, usr: float | None, sys: float | None, intervals: int, mem: int | None = None
) -> FileWorkloadSummary:
    t = fs.total
    ops = [_op(k, t.ops[k], None) for k in _ordered(t.ops, VDBENCH_ORDER)]
    return FileWorkloadSummary(
        mode="vdbench",
        scale=fs.scale,
        elapsed_ns=fs.measured_ns or t.duration_ns,
        ops=ops,
        read_bytes=t.read_bytes,
        write_bytes=t.write_bytes,
        read_bw_bytes=t.read_bw_bytes,
        write_bw_bytes=t.write_bw_bytes,
        usr_cpu_pct=usr,
        sys_cpu_pct=sys,
        host_cpu_total_pct=t.cpu.total_pct,
        host_cpu_system_pct=t.cpu.system_pct,
        cpu_ns_per_op=t.cpu.process_ns_per_op,
        dataset_bytes=sum(f.total_bytes for f in fs.fsd),
        files=sum(f.total_files for f in fs.fsd),
        directories=sum(f.total_directories for f in fs.fsd),
        o_direct=any(f.o_direct for f in fs.fsd),
        host_mem_bytes=mem,
        error=fs.error,
        postmark=None,
        vdbench=VdbenchReport(
            fsd=[
                FilesetFsd(
                    name=f.name,
                    depth=f.depth,
                    width=f.width,
                    files=f.files,
                    total_files=f.total_files,
                    total_directories=f.total_directories,
                    total_bytes=f.total_bytes,
                    o_direct=f.o_direct,
                )
                for f in fs.fsd
            ],
            fwd=[
                FilesetFwd(
                    name=w.name,
                    fsd=w.fsd,
                    operation=w.operation,
                    rdpct=w.rdpct,
                    fileselect=w.fileselect,
                    fileio=w.fileio,
                    threads=w.threads,
                )
                for w in fs.fwd
            ],
            fwdrate=str(fs.rd.fwdrate if fs.rd.fwdrate is not None else "max"),
            format=fs.rd.format,
            format_ns=fs.format.elapsed_ns if fs.format else None,
            interval_ns=fs.rd.interval_ns,
            warmup_ns=fs.rd.warmup_ns,
            intervals=intervals,
            warmup_intervals=fs.warmup_intervals,
            ops_total=t.ops_total,
            rate_total=t.rate_total,
            files_created=fs.files_created,
            directories_created=fs.directories_created,
            files_deleted=fs.files_deleted,
            directories_removed=fs.directories_removed,
            exhausted=fs.exhausted,
            maxdata_reached=fs.rd.maxdata_reached,
        ),
    )


def summarize(part: dict[str, Any], spec: dict[str, Any]) -> FileWorkloadSummary | None:
    """`part`: repository.file_docs' entry of one run. None when the document has neither object or
    they do not read (a document stored before they were checked): a brief missing, never a 500."""
    usr, sys = _cpu_pct(part.get("usr_cpu")), _cpu_pct(part.get("sys_cpu"))
    m = part.get("mem_bytes")
    mem = m if type(m) is int and m > 0 else None
    try:
        if isinstance(part.get("postmark"), dict):
            return postmark_summary(PostmarkDoc.model_validate(part["postmark"]), usr, sys, spec, mem)
        if isinstance(part.get("fileset"), dict):
            count = part.get("intervals")
            return fileset_summary(
                FilesetDoc.model_validate(part["fileset"]),
                usr,
                sys,
                count if isinstance(count, int) else 0,
                mem,
            )
    except ValidationError:
        return None
    return None


def file_summaries(
    session: Session, runs: Sequence[Run], parts: dict[uuid.UUID, dict[str, Any]] | None = None
) -> dict[uuid.UUID, FileWorkloadSummary | None]:
    """Each run's file-workload brief (None for block runs and runs without a result): one query,
    none when `parts` (repository.document_parts') are given."""
    if parts is None:
        parts = repository.file_docs(session, [r.id for r in runs])
    return {r.id: summarize(parts[r.id], r.workload_spec) if r.id in parts else None for r in runs}


# --- TPC-H and heap/B-tree ----------------------------------------------------------------------


def tpch_summary(t: TpchDoc) -> TpchSummary:
    power = [q.seconds for q in t.queries if q.test == "power" and q.seconds is not None]
    power += [r.seconds for r in t.refresh.timings if r.test == "power"]
    ordered = [q for _, q in sorted(enumerate(t.queries), key=lambda iq: (iq[1].stream, iq[0]))]
    checked = [q for q in t.queries if q.answer_ok is not None]
    return TpchSummary(
        label=t.label,
        dbms=t.dbms,
        dbms_version=t.dbms_version,
        scale_factor=t.scale_factor,
        streams=t.streams,
        streams_minimum=t.streams_minimum,
        generate_s=t.generate_s,
        load_s=t.load_s,
        power_at_size=t.power_at_size,
        throughput_at_size=t.throughput_at_size,
        qphh_at_size=t.qphh_at_size,
        metrics_note=t.metrics_note,
        throughput_s=t.throughput_s,
        power_s=sum(power) if power else None,
        query_timeout_s=t.query_timeout_s,
        timeouts=t.timeouts,
        answers_ok=sum(1 for q in checked if q.answer_ok),
        answers_checked=len(checked),
        queries=[
            TpchQuerySummary(
                query=q.query,
                stream=q.stream,
                seconds=q.seconds,
                answer_ok=q.answer_ok,
                timed_out=q.timed_out,
                error=q.error,
            )
            for q in ordered
        ],
        buffer_pool_bytes=t.buffer_pool.bytes,
        settings={str(k): v for k, v in t.settings.items() if isinstance(v, str | int | float | bool)},
        database_bytes=tpch_facts(t.scale_factor, t.streams)["dataset_bytes"],
    )


def _int(value: Any) -> int | None:
    return value if type(value) is int else None


def heap_btree_summary(rows: list[HeapBtreeRowDoc], run: dict[str, Any]) -> HeapBtreeSummary:
    direct = run.get("direct")
    error = run.get("error")
    return HeapBtreeSummary(
        records=_int(run.get("records")),
        queries=_int(run.get("queries")),
        heap_queries=_int(run.get("heap_queries")),
        randseed=_int(run.get("randseed")),
        direct=direct if isinstance(direct, bool) else None,
        page_bytes=_int(run.get("page_bytes")),
        rows=[
            HeapBtreeRow(
                structure=r.structure,
                operation=r.operation,
                cache_fraction=r.cache_fraction,
                cache_pages=r.cache_pages,
                data_pages=r.data_pages,
                ops=r.ops,
                ops_per_s=r.ops_per_s,
                elapsed_ns=r.elapsed_ns,
                device_reads=r.device_reads,
                device_writes=r.device_writes,
                hit_ratio=r.hit_ratio,
                lat_mean_ns=r.lat_ns.mean if r.lat_ns is not None and r.lat_ns.N != 0 else None,
                lat_p99_ns=_pct(r.lat_ns, "99.000000") if r.lat_ns is not None and r.lat_ns.N != 0 else None,
                checkpoint_ns=r.checkpoint_ns,
                height=r.height,
            )
            for r in rows
        ],
        error=str(error)[:2000] if isinstance(error, str) else None,
    )


def db_summarize(part: dict[str, Any]) -> tuple[TpchSummary | None, HeapBtreeSummary | None]:
    """`part`: repository.db_docs' entry of one run; (None, None) when it does not read (a
    document stored before it was checked): a brief missing, never a 500."""
    try:
        if isinstance(part.get("tpch"), dict):
            return tpch_summary(TpchDoc.model_validate(part["tpch"])), None
        if isinstance(part.get("heap_btree"), list):
            rows = [HeapBtreeRowDoc.model_validate(r) for r in part["heap_btree"]]
            run = part.get("heap_btree_run")
            return None, heap_btree_summary(rows, run if isinstance(run, dict) else {})
    except (ValidationError, ValueError):
        return None, None
    return None, None


def db_summaries(
    session: Session, runs: Sequence[Run], parts: dict[uuid.UUID, dict[str, Any]] | None = None
) -> dict[uuid.UUID, tuple[TpchSummary | None, HeapBtreeSummary | None]]:
    """Each run's TPC-H and heap/B-tree briefs ((None, None) for other runs): one query, none when
    `parts` (repository.document_parts') are given."""
    if parts is None:
        parts = repository.db_docs(session, [r.id for r in runs])
    return {r.id: db_summarize(parts[r.id]) if r.id in parts else (None, None) for r in runs}


# --- per-interval series ------------------------------------------------------------------------


def _merge(chunk: list[FilesetTotals], end_s: float) -> FileIntervalPoint:
    n = len(chunk)
    names = _ordered({k: v for t in chunk for k, v in t.ops.items()}, VDBENCH_ORDER)
    ops = []
    for name in names:
        present = [t.ops[name] for t in chunk if name in t.ops]
        done = sum(o.ops for o in present)
        lats = [
            (o.ops, o.latency()) for o in present if (o.latency().N or o.ops) and o.latency().mean is not None
        ]
        weight = sum(k for k, _ in lats)
        p99s = [_pct(lat, "99.000000") for _, lat in lats]
        maxes = [int(lat.max) for _, lat in lats if lat.max is not None]
        ops.append(
            FileIntervalOp(
                name=name,
                rate_per_s=sum(o.rate or 0.0 for o in present) / n,
                resp_mean_ns=sum(k * float(lat.mean or 0.0) for k, lat in lats) / weight
                if weight and done
                else None,
                resp_p99_ns=max((p for p in p99s if p is not None), default=None),
                resp_max_ns=max(maxes, default=None),
            )
        )
    cpus = [t.cpu.total_pct for t in chunk if t.cpu.total_pct is not None]
    return FileIntervalPoint(
        t_s=end_s,
        warmup=all(t.warmup for t in chunk),
        read_bw_bytes=sum(t.read_bw_bytes for t in chunk) / n,
        write_bw_bytes=sum(t.write_bw_bytes for t in chunk) / n,
        host_cpu_total_pct=sum(cpus) / len(cpus) if cpus else None,
        ops=ops,
    )


def file_intervals(session: Session, run: Run) -> FileIntervals | None:
    """A vdbench run's intervals as chart points, at most MAX_FILE_POINTS: beyond that, consecutive
    intervals are merged into equal buckets (`merged` says how many per point)."""
    raw = repository.file_intervals(session, run.id)
    if raw is None:
        return None
    try:
        items = [FilesetTotals.model_validate(x) for x in raw]
    except ValidationError:
        return None
    step = max(1, -(-len(items) // MAX_FILE_POINTS))
    points = []
    elapsed = 0
    ends = []
    for t in items:  # end of each interval since the start: the engine's end_ns, else the running sum
        elapsed += t.duration_ns
        ends.append(t.end_ns if t.end_ns is not None else elapsed)
    for k in range(0, len(items), step):
        chunk = items[k : k + step]
        points.append(_merge(chunk, ends[k + len(chunk) - 1] / 1e9))
    interval_ns = items[0].duration_ns if items else None
    return FileIntervals(
        mode="vdbench", interval_ns=interval_ns, intervals=len(items), merged=step, points=points
    )
