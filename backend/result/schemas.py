"""What the server needs from an engine document (fio JSON + the `iowatt` extension).

Only the fields extracted into columns are modelled; the document itself is stored whole.
"""

import uuid
from datetime import datetime
from typing import Annotated, Any, Literal

from iowatt_workload import TPCH_LABEL
from pydantic import BaseModel, ConfigDict, Field

from backend.kit.schema import OutputSchema
from backend.result.pagecache import MemorySeries, PageCacheDoc


class _Loose(BaseModel):
    # numbers land in bigint / float8 columns: finite and within bigint, or a 422 (never a 500)
    model_config = ConfigDict(extra="allow", populate_by_name=True, allow_inf_nan=False)


BIGINT = 2**63 - 1
MAX_RUNTIME_MS = BIGINT // 1_000_000  # stored as ns
Ns = Annotated[float, Field(ge=0, le=BIGINT)]
Count = Annotated[int, Field(ge=0, le=BIGINT)]
MAX_SERIES_POINTS = 200_000  # per job: 55 h at one point a second
MAX_JOBS = 4096


class LatStats(_Loose):
    N: Count | None = None  # samples; 0 = no latency measured (postmark's jobs[0]: see `postmark.ops`)
    min: Ns | None = None
    max: Ns | None = None
    mean: Ns | None = None
    percentile: dict[Annotated[str, Field(max_length=20)], Ns] = Field(default_factory=dict, max_length=200)


class DirStats(_Loose):
    io_bytes: Count
    bw_bytes: Count
    iops: float = Field(ge=0)
    runtime: int = Field(ge=0, le=MAX_RUNTIME_MS, description="ms, as fio")
    total_ios: Count
    clat_ns: LatStats = Field(default_factory=LatStats)
    lat_ns: LatStats = Field(default_factory=LatStats)


class SeriesPoint(_Loose):
    t_ns: Count
    read_iops: float = 0.0
    read_bw_bytes: Count = 0
    read_clat_p99_ns: Count | None = None
    write_iops: float = 0.0
    write_bw_bytes: Count = 0
    write_clat_p99_ns: Count | None = None


class IoUringExt(_Loose):
    """The engine's `iowatt.io_uring` (io_uring jobs only)."""

    target_nowait: bool | None = None
    kernel_worker_cpu_ns: int | None = Field(None, ge=0, description="ns over the measured time")
    kernel_worker_cpu: float | None = Field(None, ge=0, description="% of one CPU over the measured time")


class JobExt(_Loose):
    runtime_ns: Count | None = None
    series: list[SeriesPoint] = Field(default_factory=list, max_length=MAX_SERIES_POINTS)
    options: dict[str, Any] = Field(default_factory=dict)
    io_uring: IoUringExt | None = None


class EngineJob(_Loose):
    jobname: str = Field(max_length=200)
    job_options: dict[str, Any] = Field(default_factory=dict, alias="job options")
    read: DirStats
    write: DirStats
    usr_cpu: float = 0.0
    sys_cpu: float = 0.0
    job_runtime: int = Field(0, ge=0, le=MAX_RUNTIME_MS, description="ms, as fio")
    iowatt: JobExt = Field(default_factory=JobExt)


Rate = Annotated[float, Field(ge=0)]
Pct = Annotated[float, Field(ge=0, le=1e6)]
Name = Annotated[str, Field(max_length=200)]
MAX_OPS = 32  # vdbench has 12 operations, postmark 4


class FileOpDoc(_Loose):
    """One operation of a file workload: `postmark.ops.<op>` (`lat_ns`) or `fileset.*.ops.<op>`
    (`rate`, `bytes`, `resp_ns`)."""

    ops: Count = 0
    rate: Rate | None = None
    bytes: Count | None = None
    lat_ns: LatStats | None = None
    resp_ns: LatStats | None = None

    def latency(self) -> LatStats:
        return self.resp_ns or self.lat_ns or LatStats()


class PostmarkParams(_Loose):
    number: Count | None = None
    size_low_bytes: Count | None = None
    size_high_bytes: Count | None = None
    subdirectories: Count | None = None
    read_block_bytes: Count | None = None
    write_block_bytes: Count | None = None
    transactions: Count | None = None
    bias_read: int | None = None
    bias_create: int | None = None
    buffering: bool | None = None
    seed: int | None = None
    fsync: bool | None = None
    fsync_note: str | None = Field(None, max_length=500)


class PostmarkPhases(_Loose):
    creation_ns: Count = 0
    transactions_ns: Count = 0
    deletion_ns: Count = 0


class PostmarkDoc(_Loose):
    """The engine's `postmark` object (agent/engine/README.md § PostMark)."""

    parameters: PostmarkParams = Field(default_factory=PostmarkParams)
    files_created: Count = 0
    files_created_alone: Count = 0
    files_created_mixed: Count = 0
    files_read: Count = 0
    files_appended: Count = 0
    files_deleted: Count = 0
    files_deleted_alone: Count = 0
    files_deleted_mixed: Count = 0
    transactions: Count = 0
    out_of_files: bool = False
    bytes_read: Count = 0
    bytes_written: Count = 0
    elapsed_ns: Count = 0
    phases: PostmarkPhases = Field(default_factory=PostmarkPhases)
    rates: dict[Annotated[str, Field(max_length=40)], Rate] = Field(default_factory=dict, max_length=40)
    ops: dict[Name, FileOpDoc] = Field(default_factory=dict, max_length=MAX_OPS)
    error: str | None = Field(None, max_length=2000)


class FileCpu(_Loose):
    total_pct: Pct | None = None
    system_pct: Pct | None = None
    process_user_s: Annotated[float, Field(ge=0)] | None = None
    process_system_s: Annotated[float, Field(ge=0)] | None = None
    process_ns_per_op: Annotated[float, Field(ge=0)] | None = None


class FilesetTotals(_Loose):
    """`fileset.total` and each of `fileset.intervals[]`."""

    index: int | None = None
    end_ns: Count | None = None
    warmup: bool = False
    duration_ns: Count = 0
    ops: dict[Name, FileOpDoc] = Field(default_factory=dict, max_length=MAX_OPS)
    read_bytes: Count = 0
    write_bytes: Count = 0
    read_bw_bytes: Rate = 0.0
    write_bw_bytes: Rate = 0.0
    ops_total: Count = 0
    rate_total: Rate = 0.0
    cpu: FileCpu = Field(default_factory=FileCpu)


class FsdDoc(_Loose):
    name: Name = ""
    depth: Count = 0
    width: Count = 0
    files: Count = 0
    total_files: Count = 0
    total_directories: Count = 0
    total_bytes: Count = 0
    o_direct: bool = False


class SizePct(_Loose):
    bytes: Count
    pct: Annotated[float, Field(ge=0, le=100)] = 100.0


class FwdDoc(_Loose):
    name: Name = ""
    xfersize: list[SizePct] = Field(default_factory=list, max_length=1000)
    fsd: Name = ""
    operation: Name = ""
    rdpct: int | None = None
    fileselect: Name | None = None
    fileio: Name | None = None
    threads: Count = 0


class RdDoc(_Loose):
    name: Name = ""
    fwdrate: float | str | None = None
    format: Name | None = None
    elapsed_ns: Count | None = None
    interval_ns: Count | None = None
    warmup_ns: Count | None = None
    maxdata_reached: bool = False


class FormatDoc(_Loose):
    elapsed_ns: Count = 0
    files_created: Count = 0
    directories_created: Count = 0
    bytes_written: Count = 0


class FilesetDoc(_Loose):
    """The engine's `fileset` object (agent/engine/README.md § File sets)."""

    scale: Annotated[float, Field(gt=0)] | None = None
    fsd: list[FsdDoc] = Field(default_factory=list, max_length=1000)
    fwd: list[FwdDoc] = Field(default_factory=list, max_length=1000)
    rd: RdDoc = Field(default_factory=RdDoc)
    format: FormatDoc | None = None
    elapsed_ns: Count = 0
    measured_ns: Count = 0
    warmup_intervals: Count = 0
    files_created: Count = 0
    directories_created: Count = 0
    files_deleted: Count = 0
    directories_removed: Count = 0
    exhausted: bool = False
    total: FilesetTotals = Field(default_factory=FilesetTotals)
    intervals: list[FilesetTotals] = Field(default_factory=list, max_length=MAX_SERIES_POINTS)
    error: str | None = Field(None, max_length=2000)


# --- TPC-H (the agent's tpch object) and heap/B-tree (the engine's heap_btree list) ----------------

Seconds = Annotated[float, Field(ge=0, le=1e9)]
Short = Annotated[str, Field(max_length=200)]
MAX_TPCH_QUERIES = 22 * 65  # the power test and up to 64 throughput streams
MAX_HB_ROWS = 64 * 2 * 2  # fractions × structures × operations


class TpchQueryDoc(_Loose):
    test: Literal["power", "throughput"]
    stream: int = Field(ge=0, le=64, description="0 = the power test")
    query: int = Field(ge=1, le=22)
    seconds: Seconds | None = None
    answer_ok: bool | None = None
    timed_out: bool = False
    error: Annotated[str, Field(max_length=2000)] | None = None


class TpchRefreshTiming(_Loose):
    test: Literal["power", "throughput"]
    function: Literal["RF1", "RF2"]
    set: int = Field(0, ge=0, le=10_000)
    seconds: Seconds


class TpchRefreshDoc(_Loose):
    timings: list[TpchRefreshTiming] = Field(default_factory=list, max_length=2 * 65 * 2)


class TpchBufferPool(_Loose):
    bytes: Count | None = None
    note: Annotated[str, Field(max_length=500)] | None = None


class TpchDoc(_Loose):
    """The agent's `tpch` object (docs/tpch.md § Output): what the server reads of it."""

    label: Short = TPCH_LABEL
    dbms: Literal["postgresql", "mariadb"]
    dbms_version: Short | None = None
    scale_factor: float = Field(gt=0, le=1000)
    streams: int = Field(ge=1, le=64)
    streams_minimum: int | None = Field(None, ge=1, le=64)
    generate_s: Seconds | None = None
    load_s: Seconds | None = None
    power_at_size: Annotated[float, Field(ge=0)] | None = None
    throughput_at_size: Annotated[float, Field(ge=0)] | None = None
    qphh_at_size: Annotated[float, Field(ge=0)] | None = None
    metrics_note: Annotated[str, Field(max_length=2000)] | None = None
    throughput_s: Seconds | None = None
    queries: list[TpchQueryDoc] = Field(default_factory=list, max_length=MAX_TPCH_QUERIES)
    refresh: TpchRefreshDoc = Field(default_factory=TpchRefreshDoc)
    query_timeout_s: Seconds | None = None
    timeouts: Count = 0
    buffer_pool: TpchBufferPool = Field(default_factory=TpchBufferPool)
    settings: dict[Annotated[str, Field(max_length=100)], Any] = Field(default_factory=dict, max_length=100)


class HeapBtreeRowDoc(_Loose):
    """One entry of the engine's `heap_btree` list (agent/engine/README.md § Heap and B-tree)."""

    structure: Literal["heap", "btree"]
    operation: Literal["insert", "point_query"]
    cache_fraction: float = Field(gt=0, le=1)
    cache_pages: Count = 0
    data_pages: Count = 0
    ops: Count = 0
    ops_per_s: Rate = 0.0
    elapsed_ns: Count = 0
    cpu_ns: Count | None = None
    device_reads: Count = 0
    device_writes: Count = 0
    hits: Count = 0
    misses: Count = 0
    hit_ratio: Annotated[float, Field(ge=0, le=1)] | None = None
    lat_ns: LatStats | None = None
    checkpoint_writes: Count | None = None
    checkpoint_ns: Count | None = None
    height: Count | None = None
    splits: Count | None = None


class InnodbLatencyDoc(_Loose):
    min: Count | None = None
    avg: Count
    max: Count | None = None
    sysbench_p95: Count | None = None
    p95: Count | None = None
    p99: Count | None = None


class InnodbCellDoc(_Loose):
    """One setting of the InnoDB flushing matrix as the agent measured it (docs/innodb-flush.md)."""

    innodb_flush_log_at_trx_commit: int = Field(ge=0, le=2)
    sync_binlog: int = Field(ge=0, le=1)
    start_utc_ns: Count
    duration_ns: Count
    transactions: Count
    queries: Count = 0
    errors: Count = 0
    reconnects: Count = 0
    tps: Rate
    qps: Rate = 0.0
    latency_ns: InnodbLatencyDoc
    histogram: list[tuple[Count, Count]] = Field(default_factory=list, max_length=4096)
    status_delta: dict[Annotated[str, Field(max_length=64)], int | None] = Field(
        default_factory=dict, max_length=64
    )
    device_delta: dict[Annotated[str, Field(max_length=64)], int | None] | None = Field(None, max_length=16)
    binlog_fsyncs: Count | None = None
    per_tx: dict[Annotated[str, Field(max_length=64)], Annotated[float, Field(ge=0)] | None] = Field(
        default_factory=dict, max_length=32
    )


class InnodbFlushDoc(_Loose):
    """The InnoDB flushing matrix's result (agent/src/iowatt_agent/innodb/worker.py run_matrix)."""

    label: str = Field(max_length=200)
    test: str = Field(max_length=40)
    dbms_version: str = Field("", max_length=200)
    sysbench_version: str = Field("", max_length=200)
    tables: Count
    table_size: Count
    threads: Count
    seconds: Count
    warmup_s: Count = 0
    buffer_pool_bytes: Count | None = None
    device: str | None = Field(None, max_length=100)
    variables: dict[Annotated[str, Field(max_length=100)], Annotated[str, Field(max_length=500)]] = Field(
        default_factory=dict, max_length=50
    )
    cells: list[InnodbCellDoc] = Field(min_length=1, max_length=6)


class TopExt(_Loose):
    mode: str | None = Field(None, max_length=20)


class EngineDocument(_Loose):
    jobs: list[EngineJob] = Field(min_length=1, max_length=MAX_JOBS)
    iowatt: TopExt | None = None
    postmark: PostmarkDoc | None = None
    fileset: FilesetDoc | None = None
    tpch: TpchDoc | None = None
    heap_btree: list[HeapBtreeRowDoc] | None = Field(None, min_length=1, max_length=MAX_HB_ROWS)
    innodb_flush: InnodbFlushDoc | None = None
    # the agent's record of the host's page cache around the run (result/pagecache.py)
    page_cache: PageCacheDoc | None = None

    @property
    def file_mode(self) -> str | None:
        """ "postmark", "vdbench", "tpch" or "heap-btree" for a file or database workload's
        document, else None (a block job)."""
        if self.postmark is not None:
            return "postmark"
        if self.fileset is not None:
            return "vdbench"
        if self.tpch is not None:
            return "tpch"
        if self.heap_btree is not None:
            return "heap-btree"
        return None


class ResultRead(OutputSchema):
    run_id: uuid.UUID
    upload_id: uuid.UUID
    uploaded_at: datetime
    engine_exit_code: int
    engine_result: dict[str, Any]


class SeriesPointRead(OutputSchema):
    t_s: float
    read_iops: float
    read_bw_bytes: int
    read_clat_p99_ns: int | None
    write_iops: float
    write_bw_bytes: int
    write_clat_p99_ns: int | None


class JobSeries(OutputSchema):
    job_index: int
    name: str
    points: list[SeriesPointRead]


# --- file workloads (postmark, vdbench file sets): what the run read and the series carry ----------

FileMode = Literal["postmark", "vdbench"]


class FileOpSummary(OutputSchema):
    """One operation of a file workload over the measured time, base units."""

    name: str = Field(description="postmark: create, read, append, delete; vdbench: read, write, open, ...")
    ops: int = Field(description="operations done, count")
    rate_per_s: float = Field(
        description="operations per second, 1/s (postmark: PostMark's report rate of the operation — "
        "create and delete over the whole run, read and append over the transaction phase; vdbench: over "
        "the measured intervals)"
    )
    bytes: int | None = Field(description="bytes moved by this operation, B (vdbench; null for postmark)")
    resp_mean_ns: float | None = Field(description="response time, mean, ns")
    resp_p50_ns: int | None = Field(description="response time, 50th percentile (histogram), ns")
    resp_p99_ns: int | None
    resp_p999_ns: int | None
    resp_max_ns: int | None


class PostmarkReport(OutputSchema):
    """PostMark's report lines: counts, the three phases' times, and the settings that ran."""

    transactions: int = Field(description="done, count")
    transactions_per_s: float = Field(description="PostMark's transaction rate (transaction phase), 1/s")
    files_created: int
    files_created_alone: int
    files_created_mixed: int
    files_read: int
    files_appended: int
    files_deleted: int
    files_deleted_alone: int
    files_deleted_mixed: int
    out_of_files: bool
    creation_ns: int = Field(description="creation phase, ns")
    transactions_ns: int = Field(description="transaction phase, ns")
    deletion_ns: int = Field(description="deletion phase, ns")
    number: int | None = Field(description="files created first (set number)")
    transactions_asked: int | None = Field(description="set transactions")
    subdirectories: int | None
    size_low_bytes: int | None
    size_high_bytes: int | None
    read_block_bytes: int | None
    write_block_bytes: int | None
    buffering: bool | None
    seed: int | None
    fsync: bool | None = Field(description="fsync after each file written: not in PostMark")


class FilesetFsd(OutputSchema):
    name: str
    depth: int
    width: int
    files: int = Field(description="files per lowest-level directory, after scale")
    total_files: int
    total_directories: int
    total_bytes: int = Field(description="B")
    o_direct: bool


class FilesetFwd(OutputSchema):
    name: str
    fsd: str
    operation: str
    rdpct: int | None
    fileselect: str | None
    fileio: str | None
    threads: int


class VdbenchReport(OutputSchema):
    """The file set's shape and the run's frame (vdbench's rd)."""

    fsd: list[FilesetFsd]
    fwd: list[FilesetFwd]
    fwdrate: str = Field(description='"max" or operations per second')
    format: str | None = Field(description="yes, no or restart")
    format_ns: int | None = Field(description="time spent formatting (laying out) the file set, ns")
    interval_ns: int | None
    warmup_ns: int | None
    intervals: int = Field(description="intervals reported (warm-up ones included)")
    warmup_intervals: int
    ops_total: int = Field(description="operations over the measured intervals, open and close excluded")
    rate_total: float = Field(description="ops_total per second, 1/s")
    files_created: int
    directories_created: int
    files_deleted: int
    directories_removed: int
    exhausted: bool
    maxdata_reached: bool


class FileWorkloadSummary(OutputSchema):
    """A file workload's result in brief (GET /runs/{id}, the runs list, compare): base units on the
    wire. Per-interval figures are in GET /runs/{id}/series (`file_intervals`)."""

    mode: FileMode
    scale: float | None = Field(
        description="the scale the run ran at (1 = as written); vdbench: the engine's, postmark: the run "
        "spec's; null when not recorded"
    )
    elapsed_ns: int = Field(
        description="postmark: PostMark's elapsed time (creation + transactions + deletion); vdbench: the "
        "measured time (after the warm-up, format excluded), ns"
    )
    ops: list[FileOpSummary]
    read_bytes: int
    write_bytes: int
    read_bw_bytes: float = Field(description="B/s over elapsed_ns")
    write_bw_bytes: float = Field(description="B/s over elapsed_ns")
    usr_cpu_pct: float | None = Field(description="the engine process, % of one CPU")
    sys_cpu_pct: float | None = Field(description="the engine process, % of one CPU")
    host_cpu_total_pct: float | None = Field(
        description="vdbench's CPU total: the whole host busy, % of all CPUs (null for postmark)"
    )
    host_cpu_system_pct: float | None = Field(description="vdbench's CPU sys, % of all CPUs")
    cpu_ns_per_op: float | None = Field(
        description="the engine process's CPU time per operation, ns (vdbench: open/close excluded)"
    )
    dataset_bytes: int | None = Field(
        description="the file set's bytes as laid out (vdbench: the fsds' total; postmark: number × "
        "mean size of the initial files), B"
    )
    files: int | None = Field(description="files of the file set as laid out")
    directories: int | None
    o_direct: bool = Field(description="any file set opened O_DIRECT")
    host_mem_bytes: int | None = Field(description="the host's RAM as the engine read it, B")
    error: str | None
    postmark: PostmarkReport | None
    vdbench: VdbenchReport | None


class FileIntervalOp(OutputSchema):
    name: str
    rate_per_s: float = Field(description="1/s")
    resp_mean_ns: float | None
    resp_p99_ns: int | None = Field(description="ns; the worst p99 of the intervals merged into the point")
    resp_max_ns: int | None


class FileIntervalPoint(OutputSchema):
    t_s: float = Field(description="end of the interval, s since the run's start (format excluded)")
    warmup: bool = Field(description="a warm-up interval, left out of the totals")
    read_bw_bytes: float = Field(description="B/s")
    write_bw_bytes: float = Field(description="B/s")
    host_cpu_total_pct: float | None
    ops: list[FileIntervalOp]


class FileIntervals(OutputSchema):
    """vdbench's per-interval figures, at most MAX_FILE_POINTS points: longer runs are merged into
    equal buckets of consecutive intervals (rates averaged, response means weighted by operations,
    p99 and max the worst)."""

    mode: FileMode
    interval_ns: int | None = Field(description="the engine's interval, ns")
    intervals: int = Field(description="intervals the engine reported")
    merged: int = Field(description="intervals per point: 1 unless downsampled")
    points: list[FileIntervalPoint]


class TpchQuerySummary(OutputSchema):
    query: int = Field(description="1-22")
    stream: int = Field(description="0 = the power test; 1..S the throughput streams")
    seconds: float | None = Field(description="s; null when it did not finish")
    answer_ok: bool | None = Field(description="the answer matched the reference; null when timed out")
    timed_out: bool
    error: str | None


class TpchSummary(OutputSchema):
    """A TPC-H-derived run's result (TPC-H-derived, not audited: docs/tpch.md)."""

    label: str = Field(description=f"always '{TPCH_LABEL}'")
    dbms: str
    dbms_version: str | None
    scale_factor: float
    streams: int
    streams_minimum: int | None
    generate_s: float | None = Field(description="data generation, s (not in the metric)")
    load_s: float | None = Field(description="the DBMS load, s (not in the metric)")
    power_at_size: float | None = Field(description="Power@Size (null when a query timed out or failed)")
    throughput_at_size: float | None
    qphh_at_size: float | None = Field(description="QphH@Size = √(Power@Size × Throughput@Size)")
    metrics_note: str | None
    throughput_s: float | None = Field(description="the throughput test's elapsed seconds (Ts)")
    power_s: float | None = Field(description="the power test's query and refresh seconds, summed")
    query_timeout_s: float | None
    timeouts: int
    answers_ok: int = Field(description="queries whose answer matched")
    answers_checked: int = Field(description="queries with an answer to check")
    queries: list[TpchQuerySummary] = Field(description="every query: power (stream 0) then the streams")
    buffer_pool_bytes: int | None
    settings: dict[str, Any] = Field(description="the DBMS's settings as the run reported them")
    database_bytes: int | None = Field(
        description="the database's estimated size on disk (libs/workload's TPC-H bound for SF), B"
    )


class HeapBtreeRow(OutputSchema):
    structure: Literal["heap", "btree"]
    operation: Literal["insert", "point_query"]
    cache_fraction: float
    cache_pages: int
    data_pages: int
    ops: int
    ops_per_s: float = Field(description="1/s")
    elapsed_ns: int
    device_reads: int
    device_writes: int
    hit_ratio: float | None
    lat_mean_ns: float | None
    lat_p99_ns: int | None
    checkpoint_ns: int | None
    height: int | None


class HeapBtreeSummary(OutputSchema):
    """A heap/B-tree sweep's result (the P3608 report's Table 3): one row per fraction × structure ×
    operation, in run order."""

    records: int | None
    queries: int | None
    heap_queries: int | None
    randseed: int | None
    direct: bool | None = Field(description="the files were opened O_DIRECT")
    page_bytes: int | None
    rows: list[HeapBtreeRow]
    error: str | None


class RunSeries(OutputSchema):
    run_id: uuid.UUID
    jobs: list[JobSeries]
    file_intervals: FileIntervals | None = Field(
        description="a vdbench file-set run's per-interval operation rates and response times; null "
        "otherwise (postmark reports its three phases in the run's file_workload)"
    )
    memory: MemorySeries | None = Field(
        description="the page cache while the engine ran (Dirty, Writeback and the kernel's dirty "
        "limits each second; docs/writeback.md); null when the run's agent sampled none (direct I/O "
        "only, older agents, imports)"
    )
