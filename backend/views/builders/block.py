"""Block views: the DiskSpd block-size sweep, kernel help off and on, latency against threads, and
disk against flash against memory."""

from collections.abc import Callable

from backend.models import ResultJob
from backend.views.builders.common import (
    View,
    _cell,
    _col,
    _grouped,
    _num,
    _ratio,
    _ratio_col,
    _ratio_pair,
    _side,
    _table,
)
from backend.views.loading import MAX_RUNS, Loaded
from backend.views.schemas import (
    ChartAxis,
    ChartPoint,
    ChartSeries,
    ViewChart,
    ViewInfo,
    ViewRow,
    ViewTable,
)
from backend.workload.schemas import JobSpec

# --- 3. the P3608 report's Table 2 and Figure 1: DiskSpd block-size sweep -------------------------


def _bytes(n: int | None) -> float:
    return float(n or 0)


def _series_by_spec(
    r: Loaded, pick: Callable[[JobSpec], float | None], value: Callable[[JobSpec, ResultJob], float | None]
) -> list[ChartPoint]:
    pts = []
    for j in r.spec:
        x = pick(j)
        job = r.jobs.get(j.name)
        y = value(j, job) if job is not None else None
        if x is not None and y is not None and y > 0:
            pts.append(ChartPoint(x=x, y=y))
    return sorted(pts, key=lambda p: p.x)


def _bw(direction: str) -> Callable[[JobSpec, ResultJob], float | None]:
    return lambda _j, job: _num(_side(job, direction, "bw_bytes"))


def _bs_sweep(info: ViewInfo, runs: list[Loaded], baseline: Loaded | None) -> ViewTable:
    cols = [
        _col(
            "bs_kib",
            "Block size (KiB)",
            "B",
            "the block size of each random read in KiB (1 KiB = 1024 B; DiskSpd's -b writes it kB)",
        )
    ]
    cols += [
        _col(
            f"run_{i}",
            f"{r.info.label} throughput (MB/s)",
            "B/s",
            f"random-read bandwidth of {r.info.name}, shown in MB/s = 10^6 B/s (DiskSpd itself prints "
            "MiB/s = 1.048576 MB/s)",
            run_id=r.run.id,
        )
        for i, r in enumerate(runs)
    ]
    sizes = sorted({j.bs_bytes or 0 for r in runs for j in r.spec})
    rows = []
    for bs in sizes:
        cells = [_cell(_bytes(bs))]
        for r in runs:
            j = next((s for s in r.spec if s.bs_bytes == bs), None)
            cells.append(_cell(_num(_side(r.jobs.get(j.name), "read", "bw_bytes")) if j else None))
        rows.append(ViewRow(group=None, cells=cells))
    chart = ViewChart(
        key="bs-sweep",
        title="Random reads: throughput by block size (the P3608 report, Figure 1)",
        x=ChartAxis(label="Block size", unit="B", log=True),
        y=ChartAxis(label="Throughput", unit="B/s", log=False),
        series=[
            ChartSeries(
                label=r.info.label,
                run_id=r.run.id,
                dashed=False,
                points=_series_by_spec(r, lambda j: _bytes(j.bs_bytes), _bw("read")),
            )
            for r in runs
        ],
    )
    notes = [
        "One random-read job per block size, QD1, one thread, direct I/O (diskspd -b<bs> -o1 -t1 -r -h).",
        "MB/s = 10^6 bytes per second; block sizes in KiB.",
    ]
    return _table(info, runs, cols, rows, notes, charts=[chart])


# --- 4. Oh's kernel-help report: kernel help off/on side by side, with the ratio ------------------

KH_OPS = [
    ("read", "Sequential read"),
    ("write", "Sequential write"),
    ("randread", "Random read"),
    ("randwrite", "Random write"),
]


def _kh_mode(j: JobSpec) -> str:
    if j.direct:
        return "off"
    return "on-nora" if j.readahead == "off" else "on"


def _kh_figure(r: Loaded, rw: str, bs: int, mode: str) -> float | None:
    j = next((s for s in r.spec if s.rw == rw and s.bs_bytes == bs and _kh_mode(s) == mode), None)
    if j is None:
        return None
    direction = "write" if "write" in rw else "read"
    return _num(_side(r.jobs.get(j.name), direction, "bw_bytes"))


def _kernel_help(info: ViewInfo, runs: list[Loaded], baseline: Loaded | None) -> ViewTable:
    cols = [
        _col("run", "Run", None, "the run: its device (or target) on its agent", "text"),
        _col("bs_kib", "I/O size (KiB)", "B", "bytes per read or write call, shown in KiB"),
    ]
    for rw, name in KH_OPS:
        cols += [
            _col(
                f"{rw}_off",
                f"{name}, help off (MB/s)",
                "B/s",
                f"{name}: O_DIRECT, no page cache (the report's 'off'), shown in MB/s = 10^6 B/s",
            ),
            _col(
                f"{rw}_on",
                f"{name}, help on (MB/s)",
                "B/s",
                f"{name}: buffered, page cache and the kernel's default readahead (the report's 'on'), "
                "shown in MB/s = 10^6 B/s",
            ),
            _col(
                f"{rw}_ratio",
                f"{name}, on ÷ off",
                "×",
                f"{name}: help on divided by help off (the report's ratio chart); above 1 the kernel helps",
                "ratio",
            ),
        ]
        if "read" in rw:
            cols.append(
                _col(
                    f"{rw}_nora",
                    f"{name}, on without readahead (MB/s)",
                    "B/s",
                    f"{name}: buffered with readahead off (iowatt's extra mode; not in the report), shown "
                    "in MB/s = 10^6 B/s",
                )
            )
    cols = _grouped(cols, dict(KH_OPS))
    rows = []
    charts: dict[str, list[ChartSeries]] = {rw: [] for rw, _ in KH_OPS}
    ratio_series: list[ChartSeries] = []
    for r in runs:
        sizes = sorted({j.bs_bytes or 0 for j in r.spec})
        for bs in sizes:
            cells = [_cell(r.info.label), _cell(_bytes(bs))]
            for rw, _ in KH_OPS:
                off, on = _kh_figure(r, rw, bs, "off"), _kh_figure(r, rw, bs, "on")
                v, note = _ratio(on, off)
                cells += [_cell(off), _cell(on), _cell(v, note)]
                if "read" in rw:
                    cells.append(_cell(_kh_figure(r, rw, bs, "on-nora")))
            rows.append(ViewRow(group=str(r.run.id), cells=cells))
        for rw, name in KH_OPS:
            for mode, label in (("off", "help off"), ("on", "help on")):
                pts = [ChartPoint(x=_bytes(bs), y=y) for bs in sizes if (y := _kh_figure(r, rw, bs, mode))]
                charts[rw].append(
                    ChartSeries(
                        label=f"{r.info.label}, {label}", run_id=r.run.id, dashed=mode == "on", points=pts
                    )
                )
            rpts = []
            for bs in sizes:
                v, _ = _ratio(_kh_figure(r, rw, bs, "on"), _kh_figure(r, rw, bs, "off"))
                if v is not None:
                    rpts.append(ChartPoint(x=_bytes(bs), y=v))
            ratio_series.append(
                ChartSeries(
                    label=f"{r.info.label}, {name.lower()}", run_id=r.run.id, dashed=False, points=rpts
                )
            )
    size_axis = ChartAxis(label="I/O size", unit="B", log=True)
    out_charts = [
        ViewChart(
            key=f"kh-{rw}",
            title=f"{name}: throughput by I/O size, kernel help off and on",
            x=size_axis,
            y=ChartAxis(label="Throughput", unit="B/s", log=False),
            series=charts[rw],
        )
        for rw, name in KH_OPS
    ]
    out_charts.append(
        ViewChart(
            key="kh-ratio",
            title="Kernel help: throughput on ÷ off by I/O size",
            x=size_axis,
            y=ChartAxis(label="On ÷ off", unit="×", log=True),
            series=ratio_series,
        )
    )
    notes = [
        "Help off = O_DIRECT (no page cache); help on = buffered I/O with the kernel's default readahead, "
        "as the report's C program opens the device with or without O_DIRECT.",
        "Each point does 64 MiB of I/O at QD1 in a 1 GiB region; writes are timed through a final fsync.",
        "MB/s = 10^6 bytes per second; On ÷ off above 1 means the page cache made it faster.",
    ]
    return _table(info, runs, cols, rows, notes, charts=out_charts)


# --- 5. the storage-methods article: latency against threads (a chart and its table) --------------

LAT_FIELDS = [
    ("lat_mean_ns", "Mean latency (µs)", "mean completion-to-submission latency (fio's lat), shown in µs"),
    ("clat_p50_ns", "p50 latency (µs)", "median completion latency (clat), shown in µs"),
    ("clat_p99_ns", "p99 latency (µs)", "99th percentile completion latency (clat), shown in µs"),
    ("clat_p999_ns", "p99.9 latency (µs)", "99.9th percentile completion latency (clat), shown in µs"),
]


def _threads(info: ViewInfo, runs: list[Loaded], baseline: Loaded | None) -> ViewTable:
    cols = [
        _col("run", "Run", None, "the run: its device (or target) on its agent", "text"),
        _col("threads", "Threads", "threads", "threads issuing 4 KiB random reads (pread), each at QD1"),
        _col("iops", "IOPS", "IO/s", "read I/Os per second, all threads together"),
        _col("mbps", "Throughput (MB/s)", "B/s", "read bandwidth, shown in MB/s = 10^6 B/s"),
    ]
    cols += [_col(k, label, "ns", desc) for k, label, desc in LAT_FIELDS]
    rows = []
    for r in runs:
        for j in sorted(r.spec, key=lambda s: s.numjobs):
            job = r.jobs.get(j.name)
            cells = [_cell(r.info.label), _cell(float(j.numjobs))]
            cells += [
                _cell(_num(_side(job, "read", "iops"))),
                _cell(_num(_side(job, "read", "bw_bytes"))),
            ]
            cells += [_cell(_num(_side(job, "read", k))) for k, _, _ in LAT_FIELDS]
            rows.append(ViewRow(group=str(r.run.id), cells=cells))
    threads_axis = ChartAxis(label="Threads", unit="threads", log=True)

    def lat(field: str) -> Callable[[JobSpec, ResultJob], float | None]:
        return lambda _j, job: _num(_side(job, "read", field))

    lat_series = []
    for r in runs:
        for field, suffix, dashed in (("lat_mean_ns", "mean", False), ("clat_p99_ns", "p99", True)):
            lat_series.append(
                ChartSeries(
                    label=f"{r.info.label}, {suffix}",
                    run_id=r.run.id,
                    dashed=dashed,
                    points=_series_by_spec(r, lambda j: float(j.numjobs), lat(field)),
                )
            )
    charts = [
        ViewChart(
            key="threads-latency",
            title="Random-read latency by thread count (mean solid, p99 dashed)",
            x=threads_axis,
            y=ChartAxis(label="Latency", unit="ns", log=True),
            series=lat_series,
        ),
        ViewChart(
            key="threads-iops",
            title="Random-read IOPS by thread count",
            x=threads_axis,
            y=ChartAxis(label="IOPS", unit="IO/s", log=False),
            series=[
                ChartSeries(
                    label=r.info.label,
                    run_id=r.run.id,
                    dashed=False,
                    points=_series_by_spec(
                        r, lambda j: float(j.numjobs), lambda _j, job: _num(job.read_iops)
                    ),
                )
                for r in runs
            ],
        ),
    ]
    notes = [
        "4 KiB random reads with pread (psync), direct I/O; each thread keeps one I/O in flight.",
        "Latencies in µs: mean of fio's lat (submission to completion), percentiles of clat from the "
        "engine's merged histogram.",
    ]
    return _table(info, runs, cols, rows, notes, charts=charts)


# --- 6. the storage-methods article: disk vs flash vs memory --------------------------------------

DFM_ROWS = [
    ("read", "MiB", "Sequential read"),
    ("randread", "4KiB", "Random read (4 KiB)"),
    ("write", "MiB", "Sequential write"),
    ("randwrite", "4KiB", "Random write (4 KiB)"),
]


DFM_BUFFERED = "seq-rand-table-buffered"


def _disk_flash_memory(info: ViewInfo, runs: list[Loaded], baseline: Loaded | None) -> ViewTable:
    pair = _ratio_pair(runs, baseline)
    cols = [
        _col("operation", "Operation", None, "sequential (1 MiB) or random (4 KiB) reads and writes", "text")
    ]
    for i, r in enumerate(runs):
        buffered = r.info.preset == DFM_BUFFERED
        cols.append(
            _col(
                f"run_{i}",
                f"{r.info.label}{', buffered' if buffered else ''} (MB/s)",
                "B/s",
                f"bandwidth of {r.info.name}, shown in MB/s = 10^6 B/s"
                + (
                    ", buffered: through the page cache (no O_DIRECT), the seq-rand-table-buffered preset"
                    if buffered
                    else ""
                ),
                run_id=r.run.id,
            )
        )
    if pair:
        cols.append(_ratio_col(pair, "bandwidth"))

    def figure(r: Loaded, rw: str) -> float | None:
        j = next((s for s in r.spec if s.rw == rw), None)
        direction = "write" if "write" in rw else "read"
        return _num(_side(r.jobs.get(j.name), direction, "bw_bytes")) if j else None

    rows = []
    for rw, _, label in DFM_ROWS:
        cells = [_cell(label)] + [_cell(figure(r, rw)) for r in runs]
        if pair:
            cells.append(_cell(*_ratio(figure(pair[0], rw), figure(pair[1], rw))))
        rows.append(ViewRow(group=None, cells=cells))
    notes = [
        "MB/s = 10^6 bytes per second; one 5 s job per operation, direct I/O, QD1 "
        "(the seq-rand-table preset)."
    ]
    if any(r.info.preset == DFM_BUFFERED for r in runs):
        notes.append(
            "Columns marked buffered ran seq-rand-table-buffered: the same jobs through the page cache, for "
            "memory (tmpfs) on Linux before 6.6, which has no O_DIRECT. Memory is what the page cache is, "
            "so for tmpfs the figures are comparable; for a disk they would measure the cache, not the disk."
        )
    if pair:
        notes.append(
            f"Ratio = {pair[0].info.label} ÷ {pair[1].info.label}; pick the denominator with baseline=."
        )
    return _table(info, runs, cols, rows, notes, baseline=pair[1].run.id if pair else None)


VIEWS: list[View] = [
    (
        ViewInfo(
            name="diskspd-bs-sweep",
            title="DiskSpd block-size sweep",
            description="Random-read throughput per block size, 4 KiB to 16 MiB, as a table and a chart.",
            seed="the P3608 report, Table 2 and Figure 1",
            presets=["diskspd-bs-sweep"],
            min_runs=1,
            max_runs=MAX_RUNS,
        ),
        _bs_sweep,
    ),
    (
        ViewInfo(
            name="kernel-help",
            title="Kernel help: page cache off and on",
            description="Per I/O size and operation: throughput with the page cache off (O_DIRECT) and "
            "on (buffered), side by side with on ÷ off.",
            seed="Oh's HDD and SSD course report: its C program with the kernel's help off and on",
            presets=["kernel-help"],
            min_runs=1,
            max_runs=8,
        ),
        _kernel_help,
    ),
    (
        ViewInfo(
            name="threads-latency",
            title="Latency against threads",
            description="4 KiB random reads with 1 to 64 threads: IOPS and latency (mean, p50, p99, "
            "p99.9) per thread count, as charts and a table.",
            seed="the storage-methods article, 'Multithread random read, processing speed, response time'",
            presets=["threads-latency"],
            min_runs=1,
            max_runs=MAX_RUNS,
        ),
        _threads,
    ),
    (
        ViewInfo(
            name="disk-flash-memory",
            title="Disk, flash and memory",
            description="Sequential and random read and write MB/s per device side by side, with the "
            "Ratio of the last device to a baseline.",
            seed="the storage-methods article, 'Store test data' (disk, flash, memory)",
            presets=["seq-rand-table", DFM_BUFFERED],
            min_runs=1,
            max_runs=MAX_RUNS,
        ),
        _disk_flash_memory,
    ),
]
