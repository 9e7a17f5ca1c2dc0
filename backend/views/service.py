"""Named views (issue 12): a set of runs of one preset laid out as a seed shows it.

Each view is a table whose columns say what they hold (unit, statistic, pass rule) and, where the
seed draws a figure, its charts. The figures come from what the other domains own: a run's jobs
(result rows), its passes (run/service.py pass_summaries: libs/workload's best-of rule), its spec
(the block size, threads, cache mode of each job). Nothing here ranks passes or recomputes a
statistic; a view only picks figures (in base units on the wire: B/s, ns, B, IO/s) and divides for
a Ratio column; the page and the CSV print them in the seed's units (DISPLAY_UNITS: MB/s = 10^6 B/s,
µs, KiB). docs/views.md shows each view beside its seed table.
"""

import io
import math
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from iowatt_workload import pass_of
from sqlalchemy.orm import Session

from backend.auth.principal import UserPrincipal
from backend.compare import repository as compare_repo
from backend.compare.validity import cache_resident_of, inventory_of
from backend.errors import Invalid
from backend.kit import csv as safe_csv
from backend.models import ResultJob, Run, RunStatus
from backend.power import service as power_service
from backend.power.schemas import EnergyRead
from backend.result.schemas import FileWorkloadSummary, HeapBtreeSummary, TpchSummary
from backend.result.summary import db_summaries, file_summaries
from backend.run import repository as run_repo
from backend.run import service as run_service
from backend.run.schemas import PassSummary
from backend.views import repository
from backend.views.schemas import (
    BaseUnit,
    ChartAxis,
    ChartPoint,
    ChartSeries,
    ViewCatalog,
    ViewCell,
    ViewChart,
    ViewColumn,
    ViewInfo,
    ViewName,
    ViewPass,
    ViewRow,
    ViewRun,
    ViewTable,
)
from backend.workload.builtin import BUILTINS
from backend.workload.schemas import JobSpec, load_spec

MB = 1_000_000  # the seeds' and CrystalDiskMark's MB: 10^6 bytes
MAX_RUNS = 30

# How the seeds print a base unit: (their unit, base units per one of it, decimals in the CSV).
# The UI converts the same way (frontend/src/lib/format.ts fromBaseUnit); units not listed print as
# they are, with these decimals.
DISPLAY: dict[str, tuple[str, float, int]] = {
    "B/s": ("MB/s", MB, 2),  # CrystalDiskMark's and the reports' MB/s: 10^6 B/s
    "ns": ("µs", 1_000, 2),
    "B": ("KiB", 1024, 2),  # block and I/O sizes: DiskSpd's and the report's kB are KiB
    "IO/s": ("IO/s", 1, 1),
    "%": ("%", 1, 1),
    "×": ("×", 1, 3),
    "threads": ("threads", 1, 0),
    "op/s": ("op/s", 1, 1),  # file operations (or PostMark transactions) per second
    "W": ("W", 1, 2),
    "J": ("J", 1, 2),  # the seeds' "run time x power W": W·s
    "QphH": ("QphH@Size", 1, 1),  # TPC-H queries per hour at the scale factor
    "SF": ("SF", 1, 2),  # TPC-H scale factor (1 ≈ 1 GB of raw data)
}
DISPLAY_UNITS = {base: shown for base, (shown, factor, _) in DISPLAY.items() if factor != 1}
# the same base unit printed otherwise by a view whose seed does (vdbench's ms, PostMark's seconds)
SHOWN_FACTOR: dict[tuple[str, str], float] = {("ns", "ms"): 1e6, ("ns", "s"): 1e9}

BEST_OF = (
    "best-of: the measured pass with the highest bandwidth, its IOPS from the same pass "
    "(CrystalDiskMark's rule, libs/workload best_of_passes); discarded passes never count"
)


@dataclass(frozen=True)
class Loaded:
    """A run with what a view reads of it."""

    run: Run
    info: ViewRun
    jobs: dict[str, ResultJob]  # by job name
    spec: list[JobSpec]
    passes: list[PassSummary]
    file: FileWorkloadSummary | None = None  # a file workload's result in brief
    energy: EnergyRead | None = None
    mem_bytes: int | None = None  # the host's RAM (the agent's inventory)
    tpch: TpchSummary | None = None  # a TPC-H-derived run's result (issue 15)
    heap_btree: HeapBtreeSummary | None = None  # a heap/B-tree sweep's result (issue 15)
    environment: str | None = None  # the run's environment's name (TPC-H: local vs SAN)


Builder = Callable[[ViewInfo, list[Loaded], Loaded | None], ViewTable]


# --- small helpers ------------------------------------------------------------------------------


def _num(v: float | None) -> float | None:
    return None if v is None else float(v)


def _cell(value: float | str | None, note: str | None = None, unit: BaseUnit | None = None) -> ViewCell:
    """A figure (its unit: the given one, else its column's, filled in by _with_units) or text."""
    figure = isinstance(value, float | int)
    return ViewCell(value=value, unit=unit if figure else None, note=note, passes=None)


def _col(
    key: str,
    label: str,
    unit: BaseUnit | None,
    description: str,
    kind: Literal["text", "number", "ratio", "passes"] = "number",
    run_id: uuid.UUID | None = None,
    group: str | None = None,
) -> ViewColumn:
    return ViewColumn(
        key=key, label=label, unit=unit, description=description, kind=kind, run_id=run_id, group=group
    )


def _table(
    info: ViewInfo,
    runs: list[Loaded],
    cols: list[ViewColumn],
    rows: list[ViewRow],
    notes: list[str],
    *,
    baseline: uuid.UUID | None = None,
    charts: list[ViewChart] | None = None,
    shown: dict[str, str] | None = None,
) -> ViewTable:
    """A view's answer: its figures in base units, the seed's units named in display_units
    (`shown`: this view prints a base unit otherwise, as its seed does: ns as ms or s)."""
    return ViewTable(
        view=info,
        runs=[r.info for r in runs],
        baseline_run_id=baseline,
        columns=cols,
        rows=rows,
        charts=charts or [],
        notes=notes,
        display_units={**DISPLAY_UNITS, **(shown or {})},
    )


def _grouped(cols: list[ViewColumn], groups: dict[str, str]) -> list[ViewColumn]:
    """Columns whose key starts with `prefix_` get the header `groups[prefix]` over them."""
    out = []
    for c in cols:
        g = next((name for prefix, name in groups.items() if c.key.startswith(f"{prefix}_")), None)
        out.append(c.model_copy(update={"group": g}) if g else c)
    return out


def _with_units(t: ViewTable) -> ViewTable:
    """Every figure names its unit: a cell without its own takes its column's."""
    rows = [
        ViewRow(
            group=row.group,
            cells=[
                c.model_copy(update={"unit": col.unit})
                if c.unit is None and isinstance(c.value, float | int)
                else c
                for c, col in zip(row.cells, t.columns, strict=True)
            ],
        )
        for row in t.rows
    ]
    return t.model_copy(update={"rows": rows})


def _side(job: ResultJob | None, direction: str, field: str) -> Any:
    return None if job is None else getattr(job, f"{direction}_{field}")


def _ratio(value: float | None, base: float | None) -> tuple[float | None, str | None]:
    """value ÷ base for a higher-is-better figure, with its direction-aware reading."""
    if value is None or base is None or base <= 0 or value <= 0:
        return None, None
    r = value / base
    if r >= 1:
        return r, f"{r:.3g}× higher"
    return r, f"{1 / r:.3g}× lower"


def _ratio_pair(runs: list[Loaded], baseline: Loaded | None) -> tuple[Loaded, Loaded] | None:
    """(numerator, denominator) of a Ratio column: the last run over the baseline (by default the
    run before it), as seed 002's Ratio is its last device over the one before."""
    if len(runs) < 2:
        return None
    base = baseline or runs[-2]
    other = runs[-1] if runs[-1].run.id != base.run.id else runs[0]
    return other, base


def _ratio_col(pair: tuple[Loaded, Loaded], what: str) -> ViewColumn:
    other, base = pair
    return _col(
        "ratio",
        f"Ratio ({other.info.label} ÷ {base.info.label})",
        "×",
        f"{what} of {other.info.label} divided by that of {base.info.label} (the baseline); "
        "above 1 the first is faster",
        "ratio",
    )


# --- 1. CrystalDiskMark's grid ------------------------------------------------------------------

CDM_SIDES = ("read", "write")


def _split_test(test: str) -> tuple[str, str | None]:
    """('SEQ1M_Q8T1', 'read') for 'SEQ1M_Q8T1-read'."""
    for d in CDM_SIDES:
        if test.endswith(f"-{d}"):
            return test[: -len(d) - 1], d
    return test, None


def _passes(r: Loaded, p: PassSummary) -> list[ViewPass]:
    """Every pass of a test in order (B/s), the discarded ones and the best one marked."""
    out = []
    direction = "write" if p.direction == "write" else "read"
    for name, job in r.jobs.items():
        of = pass_of(name)
        if of is None or of[0] != p.test or of[1] >= p.discarded:
            continue
        bw = _side(job, direction, "bw_bytes")
        if p.direction == "mixed":
            bw = (job.read_bw_bytes or 0) + (job.write_bw_bytes or 0)
        out.append(ViewPass(index=of[1], bw_bytes=float(bw or 0), status="discarded"))
    best = pass_of(p.best_job)
    for i, bw in enumerate(p.bw_bytes):
        k = p.discarded + i
        status: Literal["best", "measured"] = "best" if best is not None and best[1] == k else "measured"
        out.append(ViewPass(index=k, bw_bytes=float(bw), status=status))
    return sorted(out, key=lambda x: x.index)


def _pass_text(passes: list[ViewPass]) -> str:
    """The CSV's pass list in the seed's MB/s: "p0 512.30 (discarded) · p1 530.10 (best) · ..."."""
    marks = {"discarded": " (discarded)", "best": " (best)", "measured": ""}
    return " · ".join(f"p{x.index} {x.bw_bytes / MB:.2f}{marks[x.status]}" for x in passes)


def _cdm_grid(info: ViewInfo, runs: list[Loaded], baseline: Loaded | None) -> ViewTable:
    cols = [
        _col("run", "Run", None, "the run: its device (or target) on its agent", "text"),
        _col(
            "test",
            "Test",
            None,
            "the CrystalDiskMark test: pattern, block size, queue depth Q, threads T",
            "text",
        ),
    ]
    for d in CDM_SIDES:
        D = d.capitalize()
        cols += [
            _col(
                f"{d}_best_mbps",
                f"{D} best (MB/s)",
                "B/s",
                f"{D} bandwidth of the best pass, shown in MB/s = 10^6 B/s; {BEST_OF}",
            ),
            _col(
                f"{d}_median_mbps",
                f"{D} median (MB/s)",
                "B/s",
                f"median {d} bandwidth over the measured passes, shown in MB/s = 10^6 B/s",
            ),
            _col(
                f"{d}_spread_pct",
                f"{D} spread (%)",
                "%",
                "(max - min) / median of the measured passes' bandwidth, in percent",
            ),
            _col(f"{d}_best_iops", f"{D} best (IOPS)", "IO/s", f"{d} I/Os per second of the best pass"),
            _col(
                f"{d}_median_iops", f"{D} median (IOPS)", "IO/s", f"median {d} IOPS over the measured passes"
            ),
            _col(
                f"{d}_passes",
                f"Passes, {d} (MB/s)",
                "B/s",
                "every pass in order, shown in MB/s: the discarded (unmeasured) passes marked "
                "'discarded', the pass reported marked 'best'",
                "passes",
            ),
        ]
    cols = _grouped(cols, {"read": "Read", "write": "Write"})
    rows = []
    for r in runs:
        tests: dict[str, dict[str, PassSummary]] = {}
        for ps in r.passes:
            base, side_of = _split_test(ps.test)
            tests.setdefault(base, {})[side_of or ("write" if ps.direction == "write" else "read")] = ps
        for test, sides in tests.items():
            cells = [_cell(r.info.label), _cell(test.replace("_", " "))]
            for side in CDM_SIDES:
                p = sides.get(side)
                if p is None:
                    cells += [_cell(None)] * 6
                    continue
                cells += [
                    _cell(_num(p.best_bw_bytes)),
                    _cell(_num(p.median_bw_bytes)),
                    _cell(_num(p.spread_pct)),
                    _cell(_num(p.best_iops)),
                    _cell(_num(p.median_iops)),
                    ViewCell(
                        value=None,
                        unit="B/s",
                        note=f"{p.passes} measured, {p.discarded} discarded",
                        passes=_passes(r, p),
                    ),
                ]
            rows.append(ViewRow(group=str(r.run.id), cells=cells))
    # the figures first, Read then Write as CrystalDiskMark; the pass lists (wide) after them
    order = sorted(range(len(cols)), key=lambda i: cols[i].key.endswith("_passes"))
    cols = [
        cols[i].model_copy(update={"group": "Passes"}) if cols[i].key.endswith("_passes") else cols[i]
        for i in order
    ]
    rows = [ViewRow(group=row.group, cells=[row.cells[i] for i in order]) for row in rows]
    npasses = {(p.passes, p.discarded) for r in runs for p in r.passes}
    notes = [
        "MB/s = 10^6 bytes per second, as CrystalDiskMark prints; IOPS = I/Os per second.",
        "Best = " + BEST_OF + ".",
        "Median and spread are over the measured passes only.",
        "Passes per test: " + ", ".join(f"{m} measured + {d} discarded" for m, d in sorted(npasses)) + ".",
    ]
    return _table(info, runs, cols, rows, notes)


# --- 2. seed 002 Table 1: tests as rows, devices as columns, Ratio ------------------------------

# CrystalDiskMark 3.x's test names as the report's rows read (crystaldiskmark-legacy)
LEGACY_LABELS = {
    "Seq": "Sequential {D}",
    "512K": "Random {D} 512kB",
    "4K": "Random {D} 4kB",
    "4K_QD32": "Random {D} 4kB QD32",
}
LEGACY_ORDER = ["Seq", "4K", "512K", "4K_QD32"]  # the report's row order


def _cdm_table(info: ViewInfo, runs: list[Loaded], baseline: Loaded | None) -> ViewTable:
    pair = _ratio_pair(runs, baseline)
    cols = [
        _col("test", "Test", None, "the CrystalDiskMark test and direction", "text"),
        _col("unit", "Unit", None, "the row's unit: MB/s (10^6 B/s) or IOPS", "text"),
    ]
    cols += [
        _col(
            f"run_{i}",
            r.info.label,
            None,
            f"best-of passes of {r.info.name} ({BEST_OF}); B/s shown as MB/s or IO/s, as the Unit column "
            "says",
            run_id=r.run.id,
        )
        for i, r in enumerate(runs)
    ]
    if pair:
        cols.append(_ratio_col(pair, "best-of bandwidth"))
    # row keys in order: (test, direction)
    order: list[tuple[str, str]] = []
    for r in runs:
        for p in r.passes:
            base, d = _split_test(p.test)
            key = (base, d or "read")
            if key not in order:
                order.append(key)
    if all(t in LEGACY_LABELS for t, _ in order):
        order.sort(
            key=lambda k: (LEGACY_ORDER.index(k[0]), CDM_SIDES.index(k[1]) if k[1] in CDM_SIDES else 0)
        )

    def label(test: str, d: str) -> str:
        if test in LEGACY_LABELS:
            return LEGACY_LABELS[test].format(D=d.capitalize())
        return f"{test.replace('_', ' ')} {d.capitalize()}"

    def summary(r: Loaded, test: str, d: str) -> PassSummary | None:
        for p in r.passes:
            if _split_test(p.test) == (test, d) or (p.test == test and d == "read"):
                return p
        return None

    def small_random(r: Loaded, test: str, d: str) -> bool:
        p = summary(r, test, d)
        spec = next((j for j in r.spec if p and j.name == p.best_job), None)
        return spec is not None and spec.rw.startswith("rand") and (spec.bs_bytes or 0) <= 4096

    rows = []
    for test, d in order:
        mb = [summary(r, test, d) for r in runs]
        cells = [_cell(label(test, d)), _cell("MB/s")]
        cells += [_cell(_num(p.best_bw_bytes) if p else None, unit="B/s") for p in mb]
        if pair:
            a, b = (summary(x, test, d) for x in pair)
            v, note = _ratio(a.best_bw_bytes if a else None, b.best_bw_bytes if b else None)
            cells.append(_cell(v, note))
        rows.append(ViewRow(group=test, cells=cells))
        if any(small_random(r, test, d) for r in runs):  # the report adds IOPS under its 4kB rows
            cells = [_cell("IOPS"), _cell("IOPS")]
            cells += [_cell(_num(p.best_iops) if p else None, unit="IO/s") for p in mb]
            if pair:
                cells.append(_cell(None))
            rows.append(ViewRow(group=test, cells=cells))
    notes = [
        "Figures are best-of passes, as CrystalDiskMark reports: " + BEST_OF + ".",
        "MB/s = 10^6 bytes per second (the report's and CrystalDiskMark's MB).",
    ]
    if pair:
        notes.append(
            f"Ratio = {pair[0].info.label} ÷ {pair[1].info.label} (pick the denominator with baseline=), as "
            "the report's Ratio column divides its last device by the one before; IOPS rows have none "
            "(the same ratio as the MB/s row above)."
        )
    return _table(info, runs, cols, rows, notes, baseline=pair[1].run.id if pair else None)


# --- 3. seed 002 Table 2 and Figure 1: DiskSpd block-size sweep ---------------------------------


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
            "Block size (kB)",
            "B",
            "the block size of each random read, shown in KiB (1 kB = 1024 B, as DiskSpd's -b)",
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
        title="Random reads: throughput by block size (seed 002, Figure 1)",
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


# --- 4. seed 003: kernel help off/on side by side, with the ratio -------------------------------

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


# --- 5. seed 004: latency against threads (a chart and its table) ------------------------------

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


# --- 6. seed 004: disk vs flash vs memory -------------------------------------------------------

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


# --- 7. seed 001 Tables 3 and 5: vdbench file sets per device ------------------------------------

VDBENCH_SETS = {  # preset: (row group, the seed's table)
    "vdbench-big": ("Big files", "seed 001 Table 3"),
    "vdbench-small": ("Small files", "seed 001 Table 5"),
}


def _file_op(r: Loaded, name: str, field: str) -> float | None:
    if r.file is None:
        return None
    op = next((o for o in r.file.ops if o.name == name), None)
    return _num(getattr(op, field)) if op is not None else None


def _cache_note(r: Loaded) -> str | None:
    msg = cache_resident_of(r.run.workload_spec, r.file, r.mem_bytes)
    return "cache-resident: " + msg if msg else None


def _vdbench_filesets(info: ViewInfo, runs: list[Loaded], baseline: Loaded | None) -> ViewTable:
    cols = [
        _col(
            "set", "File set", None, "the seed's big-file (Table 3) or small-file (Table 5) workload", "text"
        ),
        _col("run", "Device", None, "the run: its device (or target) on its agent", "text"),
        _col("scale", "Scale", "×", "the file set's scale (1 = the seed's full size and time)"),
        _col(
            "read_rate",
            "Avg. file read rate (op/s)",
            "op/s",
            "read operations (one xfersize block) per second",
        ),
        _col(
            "read_resp",
            "Avg. read resp. time (ms)",
            "ns",
            "mean response time of a read operation, shown in ms",
        ),
        _col("write_rate", "Avg. file write rate (op/s)", "op/s", "write operations per second"),
        _col("write_resp", "Avg. write resp. time (ms)", "ns", "mean response time of a write, shown in ms"),
        _col(
            "cpu_total",
            "Avg. CPU % total",
            "%",
            "the host's CPU busy, % of all CPUs (/proc/stat over the measured intervals), as vdbench's "
            "'CPU total'",
        ),
        _col(
            "cpu_sys",
            "Avg. CPU % system",
            "%",
            "the host's CPU in the kernel, % of all CPUs (vdbench's 'sys')",
        ),
        _col("read_mbps", "Avg. MB/s read", "B/s", "bytes read per second, shown in MB/s = 10^6 B/s"),
        _col("write_mbps", "Avg. MB/s write", "B/s", "bytes written per second, shown in MB/s = 10^6 B/s"),
    ]
    rows = []
    for preset, (group, _) in VDBENCH_SETS.items():
        for r in runs:
            if r.info.preset != preset:
                continue
            f = r.file
            rows.append(
                ViewRow(
                    group=group,
                    cells=[
                        _cell(group),
                        _cell(r.info.label, _cache_note(r)),
                        _cell(_num(f.scale) if f else None),
                        _cell(_file_op(r, "read", "rate_per_s")),
                        _cell(_file_op(r, "read", "resp_mean_ns")),
                        _cell(_file_op(r, "write", "rate_per_s")),
                        _cell(_file_op(r, "write", "resp_mean_ns")),
                        _cell(_num(f.host_cpu_total_pct) if f else None),
                        _cell(_num(f.host_cpu_system_pct) if f else None),
                        _cell(_num(f.read_bw_bytes) if f else None),
                        _cell(_num(f.write_bw_bytes) if f else None),
                    ],
                )
            )
    notes = [
        "One row per run: seed 001 Table 3 (big files: 5 directories × 20 files of 5 GiB, 128 KiB "
        "transfers) then Table 5 (small files: 64 × 25,600 files of 16 KiB, 1 KiB transfers); 90 % "
        "reads, random files, random I/O, 64 threads.",
        "Rates are operations per second over the measured intervals; an operation is one transfer. "
        "Response times are means, shown in ms as vdbench prints them.",
        "MB/s = 10^6 bytes per second (vdbench prints MiB/s: divide ours by 1.048576 to compare).",
    ]
    if any(r.file and r.file.scale not in (None, 1.0) for r in runs):
        notes.append(
            "Scaled runs (Scale below 1) ran a smaller file set for a shorter time: files per directory, "
            "file size and elapsed time times the scale. The seed's runs were 10 h on the full set."
        )
    if any(_cache_note(r) for r in runs):
        notes.append(
            "Rows marked cache-resident: the file set fits in the host's RAM without O_DIRECT, so the "
            "figures may measure the page cache, not the device."
        )
    return _table(info, runs, cols, rows, notes, shown={"ns": "ms"})


# --- 8. seed 000 Tables 3-5: PostMark seconds, power and energy per level -----------------------

POSTMARK_LEVELS = {"postmark-low": "Low", "postmark-medium": "Medium", "postmark-high": "High"}


def _device_key(r: Loaded) -> tuple[str, str]:
    """A column of the PostMark table: the device (or target) on its agent, every level and repeat
    of it together."""
    key = f"{r.run.agent_id}:{r.run.device_id or r.run.target_path}"
    return key, f"{r.info.device_name or r.info.target_path} on {r.info.agent_name}"


def _mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


def energy_ok(r: Loaded) -> EnergyRead | None:
    """A run's energy when it was computed (status ok), else None."""
    return r.energy if r.energy is not None and r.energy.status == "ok" else None


def _device_mean_cell(
    vals: list[float],
    rs: list[Loaded],
    energy_row: bool,
    unit: BaseUnit,
    device: str,
    estimated: list[str],
) -> tuple[float | None, ViewCell]:
    """A device's cell in postmark-levels and tpch-qphh: the mean of its runs' figures, noting how many
    and, on an energy row, that datasheet watts were used (the device is added to `estimated`)."""
    mean = _mean([float(v) for v in vals])
    notes = []
    if len(vals) > 1:
        notes.append(f"mean of {len(vals)} runs")
    if energy_row and any((e := energy_ok(r)) is not None and e.estimated for r in rs):
        notes.append("estimated (datasheet watts, no meter)")
        estimated.append(device)
    return mean, _cell(mean, "; ".join(notes) or None, unit if mean is not None else None)


def _device_columns(
    devices: dict[str, tuple[str, list[Loaded]]],
    keys: list[str],
    base_key: str,
    other_key: str | None,
    where: str,
) -> list[ViewColumn]:
    """A column per device (the mean over its runs `where`), then the seed's Rate column: the other
    device's figure divided by the baseline's (postmark-levels and tpch-qphh)."""
    cols = [
        _col(
            f"device_{i}",
            devices[k][0],
            None,
            f"mean over the runs of {devices[k][0]} {where}; each cell names its unit",
        )
        for i, k in enumerate(keys)
    ]
    if other_key is not None:
        cols.append(
            _col(
                "rate",
                f"Rate ({devices[other_key][0]} ÷ {devices[base_key][0]})",
                "×",
                f"the row's figure of {devices[other_key][0]} divided by that of {devices[base_key][0]} "
                "(the baseline), as the seed's Rate column",
                "ratio",
            )
        )
    return cols


def _postmark_levels(info: ViewInfo, runs: list[Loaded], baseline: Loaded | None) -> ViewTable:
    devices: dict[str, tuple[str, list[Loaded]]] = {}
    for r in runs:
        key, label = _device_key(r)
        devices.setdefault(key, (label, []))[1].append(r)
    keys = list(devices)
    base_key = _device_key(baseline)[0] if baseline is not None else keys[-1]
    other_key = next((k for k in keys if k != base_key), None)
    levels = [lv for p, lv in POSTMARK_LEVELS.items() if any(r.info.preset == p for r in runs)]

    cols = [
        _col(
            "measure",
            "Measure",
            None,
            "what the row holds: run time, transaction rate, power or energy",
            "text",
        ),
        _col("level", "PostMark level", None, "the seed's level (Table 1), or the idle baseline", "text"),
    ]
    cols += _device_columns(devices, keys, base_key, other_key, "at the row's level (the seed averaged 10)")

    def at(k: str, level: str) -> list[Loaded]:
        return [r for r in devices[k][1] if POSTMARK_LEVELS.get(r.info.preset or "") == level]

    def elapsed_s(r: Loaded) -> float | None:
        return r.file.elapsed_ns / 1e9 if r.file is not None else None

    Figure = Callable[[Loaded], float | None]
    measures: list[tuple[str, str, BaseUnit, Figure, bool]] = [
        ("time", "Run time (s)", "ns", lambda r: _num(r.file.elapsed_ns) if r.file else None, False),
        (
            "tps",
            "Transactions per second",
            "op/s",
            lambda r: r.file.postmark.transactions_per_s if r.file and r.file.postmark else None,
            False,
        ),
    ]
    metered = any(energy_ok(r) for r in runs)
    if metered:

        def load_w(r: Loaded) -> float | None:
            e = energy_ok(r)
            return e.load_w_mean if e else None

        def joules(r: Loaded) -> float | None:
            w, t = load_w(r), elapsed_s(r)
            return w * t if w is not None and t is not None else None

        measures += [
            ("power", "Power (W)", "W", load_w, True),
            ("energy", "Energy: run time × power (J)", "J", joules, True),
        ]

    rows = []
    for key, label, unit, figure, energy_row in measures:
        row_levels = (["Non-load"] if key == "power" else []) + levels
        for level in row_levels:
            means: dict[str, float | None] = {}
            estimated: list[str] = []  # devices whose figure of this row comes from datasheet watts
            cells = [_cell(label), _cell(level)]
            for k in keys:
                rs = devices[k][1] if level == "Non-load" else at(k, level)
                if level == "Non-load":
                    vals = [e.idle_w for r in rs if (e := energy_ok(r)) is not None and e.idle_w is not None]
                else:
                    vals = [v for r in rs if (v := figure(r)) is not None]
                means[k], cell = _device_mean_cell(vals, rs, energy_row, unit, devices[k][0], estimated)
                cells.append(cell)
            if other_key is not None:
                cells.append(_cell(*_ratio_any(means[other_key], means[base_key])))
            if estimated:  # in the row's text too, so the CSV (figures only) keeps the label
                cells[0] = _cell(f"{label}, estimated for {', '.join(estimated)}")
            rows.append(ViewRow(group=key, cells=cells))

    notes = [
        "Seed 000 Table 3: PostMark's elapsed time per level (creation + transactions + deletion), shown "
        "in seconds, with the transaction rate beside it; Low, Medium, High as its Table 1 (4 KB blocks, "
        "327 KB files).",
        "Each cell is the mean over the runs of that device and level; the Rate column divides the first "
        "device's figure by the baseline's (pick it with baseline=), as the seed's Rate (HDD ÷ DRAM-SSD).",
    ]
    if metered:
        notes.append(
            "Tables 4-5: power is the wattmeter's mean over the run (Non-load: the idle baseline); energy "
            "is PostMark's run time × that power, in J (W·s), as the seed's 'run time X power W'. Cells "
            "marked estimated come from datasheet watts, not a meter."
        )
    else:
        notes.append("No run has meter data: the power and energy rows (seed 000 Tables 4-5) are left out.")
    if any(r.file and r.file.scale not in (None, 1.0) for r in runs):
        notes.append("Some runs were scaled (files and transactions times the scale): not the seed's level.")
    base_run = devices[base_key][1][0].run.id if other_key is not None else None
    return _table(info, runs, cols, rows, notes, baseline=base_run, shown={"ns": "s"})


def _ratio_any(value: float | None, base: float | None) -> tuple[float | None, str | None]:
    """value ÷ base, plain (the seed's Rate: 4.5 = the first took 4.5 times as long)."""
    if value is None or base is None or base <= 0:
        return None, None
    return value / base, None


# --- 9. seed 000 Figures 8-11, Tables 6-7: TPC-H QphH@Size, power and energy per database size -----

TPCH_PRESETS = ["tpch-postgresql", "tpch-mariadb", "tpch-smoke"]
TPCH_LABEL = "TPC-H-derived, not audited"
NO_ENVIRONMENT = "no environment"


def _sf_text(sf: float, database_bytes: int | None) -> str:
    # below 1 GB in MB (SF 0.01: "about 25.1 MB", not "0.0251 GB")
    size = (
        ""
        if not database_bytes
        else f" (about {database_bytes / 1e9:.3g} GB on disk)"
        if database_bytes >= 1e9
        else f" (about {database_bytes / 1e6:.3g} MB on disk)"
    )
    return f"SF {sf:g}{size}"


def _tpch_qphh(info: ViewInfo, runs: list[Loaded], baseline: Loaded | None) -> ViewTable:
    devices: dict[str, tuple[str, list[Loaded]]] = {}
    for r in runs:
        key, label = _device_key(r)
        devices.setdefault(key, (label, []))[1].append(r)
    keys = list(devices)
    base_key = _device_key(baseline)[0] if baseline is not None else keys[0]
    other_key = next((k for k in keys if k != base_key), None)
    envs = sorted({r.environment or NO_ENVIRONMENT for r in runs})
    # a row per DBMS and scale factor (the seed ran MySQL only; two DBMSs never share a row)
    sfs = sorted({(r.tpch.dbms, r.tpch.scale_factor) for r in runs if r.tpch is not None})
    db_bytes = {r.tpch.scale_factor: r.tpch.database_bytes for r in runs if r.tpch is not None}

    cols = [
        _col("measure", "Measure", None, "what the row holds: QphH@Size, power or energy", "text"),
        _col(
            "environment",
            "Environment",
            None,
            "the runs' environment (the seed's Local and SAN); runs without one together",
            "text",
        ),
        _col(
            "database",
            "Database capacity",
            None,
            "the scale factor (the seed's 1, 5 and 10 GB are SF 1, 5 and 10) and the database's estimated "
            "size on disk (libs/workload's TPC-H bound)",
            "text",
        ),
    ]
    cols += _device_columns(devices, keys, base_key, other_key, "in the row's environment and scale factor")

    Figure = Callable[[Loaded], float | None]
    measures: list[tuple[str, str, BaseUnit, Figure, bool]] = [
        ("qphh", "QphH@Size", "QphH", lambda r: r.tpch.qphh_at_size if r.tpch else None, False),
    ]
    metered = any(energy_ok(r) for r in runs)
    if metered:
        measures += [
            (  # its rows: Non-load (the idle baseline), then under load per SF (seed 000 Table 6)
                "power",
                "Power (W)",
                "W",
                lambda r: e.load_w_mean if (e := energy_ok(r)) else None,
                True,
            ),
            (
                "energy",
                "Energy of the run (J)",
                "J",
                lambda r: e.total_j if (e := energy_ok(r)) else None,
                True,
            ),
        ]

    rows: list[ViewRow] = []
    withheld: list[str] = []
    for key, label, unit, figure, energy_row in measures:
        for env in envs:
            row_sfs: list[tuple[str, float] | None] = ([None] if key == "power" else []) + list(sfs)
            for at in row_sfs:
                means: dict[str, float | None] = {}
                estimated: list[str] = []
                database = "Non-load" if at is None else f"{_sf_text(at[1], db_bytes.get(at[1]))}, {at[0]}"
                cells = [_cell(label), _cell(env), _cell(database)]
                for k in keys:
                    rs = [
                        r
                        for r in devices[k][1]
                        if (r.environment or NO_ENVIRONMENT) == env
                        and (at is None or (r.tpch is not None and (r.tpch.dbms, r.tpch.scale_factor) == at))
                    ]
                    if at is None:
                        vals = [
                            e.idle_w for r in rs if (e := energy_ok(r)) is not None and e.idle_w is not None
                        ]
                    else:
                        vals = [v for r in rs if (v := figure(r)) is not None]
                    if key == "qphh":
                        withheld += [
                            r.info.label for r in rs if r.tpch is not None and r.tpch.qphh_at_size is None
                        ]
                    means[k], cell = _device_mean_cell(vals, rs, energy_row, unit, devices[k][0], estimated)
                    cells.append(cell)
                if other_key is not None:
                    cells.append(_cell(*_ratio_any(means[other_key], means[base_key])))
                if estimated:
                    cells[0] = _cell(f"{label}, estimated for {', '.join(estimated)}")
                if all(m is None for m in means.values()):
                    continue  # no run of this environment at this scale factor
                rows.append(ViewRow(group=f"{key}:{env}", cells=cells))

    charts = []
    # a line by database size needs two sizes: with one SF every point sat on the y axis of a 0-1
    # scale (seen in Z-tpch-qphh.png); the table's rows carry that case
    by_size = len({sf for _, sf in sfs}) > 1
    for env in envs if by_size else []:  # Figures 8 (Local) and 9 (SAN): QphH@Size by SF, a line per device
        charts.append(
            ViewChart(
                key=f"qphh-{env}",
                title=f"QphH@Size in {env} by database size (seed 000, Figures 8-9)",
                x=ChartAxis(label="Scale factor", unit="SF", log=False),
                y=ChartAxis(label="QphH@Size", unit="QphH", log=False),
                series=[
                    ChartSeries(
                        label=devices[k][0],
                        run_id=None,
                        dashed=False,
                        points=_qphh_points(devices[k][1], env),
                    )
                    for k in keys
                ],
            )
        )
    if by_size and len(envs) > 1:  # Figures 10-11: each device in every environment
        for k in keys:
            charts.append(
                ViewChart(
                    key=f"qphh-device-{keys.index(k)}",
                    title=f"QphH@Size of {devices[k][0]} in each environment (seed 000, Figures 10-11)",
                    x=ChartAxis(label="Scale factor", unit="SF", log=False),
                    y=ChartAxis(label="QphH@Size", unit="QphH", log=False),
                    series=[
                        ChartSeries(
                            label=env, run_id=None, dashed=i > 0, points=_qphh_points(devices[k][1], env)
                        )
                        for i, env in enumerate(envs)
                    ],
                )
            )
    notes = [
        f"{TPCH_LABEL}: the TPC-H power and throughput tests on a private DBMS, QphH@Size by the spec's "
        "formulas (docs/tpch.md); not a TPC-H result.",
        "Seed 000 Figures 8-11: QphH@Size per device and database size, in the Local and the SAN "
        "environment (each run's environment); its Table 2's streams are the spec's minimum (2, 2, 3).",
        "Each cell is the mean over the runs of that device, environment and scale factor; the Rate column "
        "divides the other device's figure by the baseline's (pick it with baseline=).",
    ]
    if not by_size:
        notes.append(
            "The charts of QphH@Size by database size (Figures 8-11) need runs at two or more scale "
            "factors; these runs are all at one."
        )
    if metered:
        notes.append(
            "Tables 6-7: power is the wattmeter's mean over the run (Non-load: the idle baseline); energy is "
            "the run's measured energy (generation, load, power and throughput tests), in J (1 Wh = 3600 J; "
            "the seed's Table 7 prints this energy under a power unit). Cells marked estimated come from "
            "datasheet watts, not a meter."
        )
    else:
        notes.append("No run has meter data: the power and energy rows (seed 000 Tables 6-7) are left out.")
    if withheld:
        notes.append(
            "No QphH@Size for " + ", ".join(sorted(set(withheld))) + ": a query timed out or failed, so the "
            "spec's metrics are withheld (the run's page lists the queries)."
        )
    base_run = devices[base_key][1][0].run.id if other_key is not None else None
    return _table(info, runs, cols, rows, notes, baseline=base_run, charts=charts)


def _qphh_points(rs: list[Loaded], env: str) -> list[ChartPoint]:
    by_sf: dict[float, list[float]] = {}
    for r in rs:
        if (
            (r.environment or NO_ENVIRONMENT) == env
            and r.tpch is not None
            and r.tpch.qphh_at_size is not None
        ):
            by_sf.setdefault(r.tpch.scale_factor, []).append(r.tpch.qphh_at_size)
    return [ChartPoint(x=sf, y=sum(v) / len(v)) for sf, v in sorted(by_sf.items())]


# --- 10. seed 002 Table 3: heap and B-tree, insert and point query, per cache fraction ----------

HB_OPS = [  # (structure, operation, the seed's header)
    ("heap", "insert", "Sequential array insert"),
    ("heap", "point_query", "Sequential array point query"),
    ("btree", "insert", "B-tree insert"),
    ("btree", "point_query", "B-tree point query"),
]


def _hb_rate(r: Loaded, structure: str, operation: str, fraction: float) -> float | None:
    if r.heap_btree is None:
        return None
    for row in r.heap_btree.rows:
        if (row.structure, row.operation) == (structure, operation) and abs(
            row.cache_fraction - fraction
        ) < 1e-9:
            return row.ops_per_s
    return None


def _heap_btree_grid(info: ViewInfo, runs: list[Loaded], baseline: Loaded | None) -> ViewTable:
    fractions = sorted({row.cache_fraction for r in runs if r.heap_btree for row in r.heap_btree.rows})
    base = baseline or runs[0]
    other = next((r for r in runs if r is not base), None)
    cols = [
        _col(
            "cache",
            "Cache buffer (% of data blocks)",
            "%",
            "the buffer pool's size as a share of the structure's data pages (8 KiB blocks)",
        )
    ]
    for i, r in enumerate(runs):
        cols += [
            _col(
                f"run{i}_{s}_{o}",
                f"{r.info.label}: {head} (op/s)",
                None,
                f"{head} throughput of {r.info.name}, operations per second over the phase (op/s); the last "
                "row: largest ÷ smallest fraction (×); each cell names its unit",
                run_id=r.run.id,
                group=r.info.label,
            )
            for s, o, head in HB_OPS
        ]
    if other is not None:
        # the runs named once, in the group header: under it each column is the operation (the
        # header repeated the two long run labels in each of the four narrow columns)
        ratio = f"Ratio ({other.info.label} ÷ {base.info.label})"
        cols += [
            _col(
                f"ratio_{s}_{o}",
                f"{ratio}: {head}",
                "×",
                f"the row's {head} throughput of {other.info.label} divided by the baseline's",
                "ratio",
                group=ratio,
            )
            for s, o, head in HB_OPS
        ]
    rows = []
    for f in fractions:
        cells = [_cell(f * 100)]
        for r in runs:
            rates = [_hb_rate(r, s, o, f) for s, o, _ in HB_OPS]
            cells += [_cell(v, unit="op/s" if v is not None else None) for v in rates]
        if other is not None:
            cells += [
                _cell(*_ratio_any(_hb_rate(other, s, o, f), _hb_rate(base, s, o, f))) for s, o, _ in HB_OPS
            ]
        rows.append(ViewRow(group="sweep", cells=cells))
    if len(fractions) > 1:  # the seed's "3× higher with every block cached than with 10 %"
        lo, hi = fractions[0], fractions[-1]
        cells = [_cell(f"{hi * 100:g} % ÷ {lo * 100:g} %")]
        for r in runs:
            for s, o, _ in HB_OPS:
                # text with its ×: in an op/s column a bare 7.29 read as a rate
                v, _note = _ratio_any(_hb_rate(r, s, o, hi), _hb_rate(r, s, o, lo))
                cells.append(
                    _cell(None)
                    if v is None
                    else _cell(
                        f"{v:.2f}×" if v >= 1 else f"{v:.3g}×", f"{v:.6g}: largest ÷ smallest fraction"
                    )
                )
        if other is not None:
            cells += [_cell(None) for _ in HB_OPS]
        rows.append(ViewRow(group="ratio", cells=cells))
    charts = [
        ViewChart(
            key=f"heap-btree-{structure}",
            title=f"{title}: throughput by cache size (seed 002, Figure {figure})",
            x=ChartAxis(label="Cache buffer", unit="%", log=False),
            # log for both: a heap point query (a scan) runs 100-1000× below its inserts, a flat
            # line at 0 on a linear axis
            y=ChartAxis(label="Throughput", unit="op/s", log=True),
            series=[
                ChartSeries(
                    label=f"{r.info.label}: {operation.replace('_', ' ')}",
                    run_id=r.run.id,
                    dashed=operation == "point_query",
                    points=[
                        ChartPoint(x=f * 100, y=v)
                        for f in fractions
                        if (v := _hb_rate(r, structure, operation, f)) is not None
                    ],
                )
                for r in runs
                for operation in ("insert", "point_query")
            ],
        )
        for structure, title, figure in (("heap", "Sequential array (heap)", 2), ("btree", "B-tree", 3))
    ]
    records = sorted({r.heap_btree.records for r in runs if r.heap_btree and r.heap_btree.records})
    notes = [
        "Seed 002 Table 3: insert and point-query throughput (op/s) of a sequential array (heap file) and "
        "a B-tree on 8 KiB pages, with the cache buffer holding 10 % ... 100 % of the data blocks; the "
        "engine's --heap-btree (agent/engine/README.md § Heap and B-tree).",
        f"Records inserted: {', '.join(f'{n:,}' for n in records) or 'unknown'} (the seed: 50,000,000; a "
        "run's scale multiplies the preset's 1,000,000).",
        "A heap point query is a sequential scan until the key is found (the seed gives the heap no index), "
        "so its rate is far below the seed's; the last row divides the largest fraction's figure by the "
        "smallest's, as the seed's '3× higher when all blocks are cached'.",
    ]
    if other is not None:
        notes.append(
            "The Ratio columns divide the other run's figure by the baseline's (pick it with baseline=)."
        )
    base_run = base.run.id if other is not None else None
    return _table(info, runs, cols, rows, notes, baseline=base_run, charts=charts)


# --- the catalogue ------------------------------------------------------------------------------

VIEWS: dict[str, tuple[ViewInfo, Builder]] = {
    v.name: (v, b)
    for v, b in [
        (
            ViewInfo(
                name="crystaldiskmark",
                title="CrystalDiskMark grid",
                description="Per test, read and write: best-of MB/s and IOPS, median, spread, every pass "
                "with the discarded ones marked.",
                seed="CrystalDiskMark's result window (seed 002 used CrystalDiskMark; issue 3)",
                presets=["crystaldiskmark", "crystaldiskmark-legacy"],
                min_runs=1,
                max_runs=MAX_RUNS,
            ),
            _cdm_grid,
        ),
        (
            ViewInfo(
                name="crystaldiskmark-table",
                title="CrystalDiskMark devices side by side",
                description="Tests as rows, one column per device (best-of MB/s, IOPS under the 4 kB rows) "
                "and the Ratio of the last device to a baseline.",
                seed="seed 002, Table 1 (P3608 report)",
                presets=["crystaldiskmark-legacy", "crystaldiskmark"],
                min_runs=1,
                max_runs=MAX_RUNS,
            ),
            _cdm_table,
        ),
        (
            ViewInfo(
                name="diskspd-bs-sweep",
                title="DiskSpd block-size sweep",
                description="Random-read throughput per block size, 4 KiB to 16 MiB, as a table and a chart.",
                seed="seed 002, Table 2 and Figure 1",
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
                seed="seed 003 (the 'kernel help' report)",
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
                seed="seed 004, 'Multithread random read, processing speed, response time'",
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
                seed="seed 004, 'Store test data' (disk, flash, memory)",
                presets=["seq-rand-table", DFM_BUFFERED],
                min_runs=1,
                max_runs=MAX_RUNS,
            ),
            _disk_flash_memory,
        ),
        (
            ViewInfo(
                name="vdbench-filesets",
                title="vdbench file sets per device",
                description="Big and small file sets: file read and write rates and response times, CPU "
                "total and system, read and write MB/s, one row per run.",
                seed="seed 001, Tables 3 (large files) and 5 (small files)",
                presets=list(VDBENCH_SETS),
                min_runs=1,
                max_runs=MAX_RUNS,
            ),
            _vdbench_filesets,
        ),
        (
            ViewInfo(
                name="postmark-levels",
                title="PostMark levels per device",
                description="Seconds per PostMark level (Low, Medium, High) per device with the transaction "
                "rate and the Rate column; with meter data, power and energy per level.",
                seed="seed 000, Table 3 (PostMark run time), Tables 4-5 (power, run time × power)",
                presets=list(POSTMARK_LEVELS),
                min_runs=1,
                max_runs=MAX_RUNS,
            ),
            _postmark_levels,
        ),
        (
            ViewInfo(
                name="tpch-qphh",
                title="TPC-H QphH@Size per device and database size (TPC-H-derived, not audited)",
                description="QphH@Size per device and scale factor, grouped by environment (local vs SAN), "
                "with the Rate column and charts; with meter data, power and energy per database size. "
                "TPC-H-derived, not audited.",
                seed="seed 000, Figures 8-11 (QphH@Size, Local and SAN) and Tables 6-7 (power, energy)",
                presets=TPCH_PRESETS,
                min_runs=1,
                max_runs=MAX_RUNS,
            ),
            _tpch_qphh,
        ),
        (
            ViewInfo(
                name="heap-btree-grid",
                title="Heap and B-tree by cache size",
                description="Insert and point-query throughput of a heap file and a B-tree per cache "
                "fraction (10 % ... 100 % of the data blocks), with ratios between runs and between the "
                "largest and smallest fraction.",
                seed="seed 002, Table 3 and Figures 2-3",
                presets=["heap-btree"],
                min_runs=1,
                max_runs=8,
            ),
            _heap_btree_grid,
        ),
    ]
}


# --- loading runs -------------------------------------------------------------------------------


def _preset_of(run: Run, builtin_names: dict[uuid.UUID, str]) -> str | None:
    """The built-in preset a run ran: its workload row when it is a built-in one, else the built-in
    whose job names the run's spec has (a result uploaded or imported with a preset's layout)."""
    if run.workload_id and run.workload_id in builtin_names:
        return builtin_names[run.workload_id]
    kind = run.workload_spec.get("kind") or "block"
    if kind != "block":  # a file workload: the preset with the same settings (scale aside)
        return _file_preset_of(run.workload_spec, str(kind))
    # names and cache mode: a buffered variant has its preset's job names
    jobs = {(str(j.get("name")), bool(j.get("direct", False))) for j in run.workload_spec.get("jobs", [])}
    for name, (_, spec) in BUILTINS.items():
        if spec.jobs and jobs == {(j.name, j.direct) for j in spec.jobs}:  # file presets: by workload id only
            return name
    return None


DB_SCALED = {"tpch": "scale_factor", "heap_btree": "records"}  # what a run's scale multiplies


def _file_preset_of(spec: dict[str, Any], kind: str) -> str | None:
    """vdbench: the same parameter text; postmark: the same settings, files and transactions in the
    preset's proportion (a run scaled from it)."""
    mine = spec.get(kind)
    if not isinstance(mine, dict):
        return None
    for name, (_, preset) in BUILTINS.items():
        theirs = preset.model_dump(mode="json").get(kind)
        if preset.kind != kind or not isinstance(theirs, dict):
            continue
        if kind == "vdbench" and mine.get("parameters") == theirs.get("parameters"):
            return name
        # TPC-H, heap/B-tree: the same settings but the one a run's scale multiplies
        if kind in DB_SCALED and all(mine.get(k) == v for k, v in theirs.items() if k != DB_SCALED[kind]):
            return name
        if kind == "postmark":
            counted = ("number", "transactions")
            same = all(mine.get(k) == v for k, v in theirs.items() if k not in counted)
            n, t = mine.get("number"), mine.get("transactions")
            ratio = theirs["number"] / theirs["transactions"]
            if (
                same
                and isinstance(n, int)
                and isinstance(t, int)
                and t > 0
                and abs(n / t - ratio) < 0.01 * ratio
            ):
                return name
    return None


def _load(session: Session, principal: UserPrincipal, run_ids: list[uuid.UUID]) -> list[Loaded]:
    if not 1 <= len(run_ids) <= MAX_RUNS:
        raise Invalid("runs", f"give between 1 and {MAX_RUNS} run ids")
    run_ids = list(dict.fromkeys(run_ids))
    found = {r.id: r for r in run_repo.by_ids(session, run_ids, principal.team_ids)}
    missing = [str(i) for i in run_ids if i not in found]
    if missing:
        raise Invalid("runs", f"not found in your teams: {', '.join(missing)}")
    runs = [found[i] for i in run_ids]
    jobs = run_repo.jobs_of(session, run_ids)
    devices = run_repo.device_names(session, [r.device_id for r in runs if r.device_id])
    builtin = repository.builtin_names(session, {r.workload_id for r in runs if r.workload_id})
    files = file_summaries(session, runs)
    databases = db_summaries(session, runs)
    envs = compare_repo.environments_by_id(session, (r.environment_id for r in runs if r.environment_id))
    file_runs = [r.id for r in runs if files[r.id] is not None or databases[r.id] != (None, None)]
    energy = power_service.energy_of(session, file_runs) if file_runs else {}
    out = []
    for r in runs:
        device = devices.get(r.device_id) if r.device_id else None
        shortened = r.workload_spec.get("shortened_by")
        fw = files[r.id]
        info = ViewRun(
            id=r.id,
            name=r.name,
            label=f"{device or r.target_path} on {r.agent.name}",
            preset=_preset_of(r, builtin),
            shortened_by=float(shortened) if shortened else None,
            scale=fw.scale if fw is not None else _db_scale(r.workload_spec),
            device_name=device,
            agent_name=r.agent.name,
            target_path=r.target_path,
        )
        out.append(
            Loaded(
                run=r,
                info=info,
                jobs={j.name: j for j in jobs[r.id]},
                spec=list(load_spec(r.workload_spec).jobs),
                passes=run_service.pass_summaries(r.workload_spec, jobs[r.id]),
                file=fw,
                energy=energy.get(r.id),
                mem_bytes=inventory_of(r.agent).mem_bytes if fw is not None else None,
                tpch=databases[r.id][0],
                heap_btree=databases[r.id][1],
                environment=envs[r.environment_id].name if r.environment_id in envs else None,
            )
        )
    _unique_labels(out)
    for x in out:  # the flag sits beside the figures it qualifies: in every header and row group
        if x.info.shortened_by:
            x.info.label = f"{x.info.label} (shortened ×{x.info.shortened_by:g})"
        if x.info.scale is not None and x.info.scale != 1.0:
            x.info.label = f"{x.info.label} (scale ×{x.info.scale:g})"
    return out


def _db_scale(spec: dict[str, Any]) -> float | None:
    """A heap/B-tree run's scale (records times it; labelled). TPC-H's scale is its scale factor,
    which the tpch-qphh view shows as its rows: not a label."""
    value = spec.get("scaled_by")
    if spec.get("kind") == "heap_btree" and isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    return None


def _unique_labels(runs: list[Loaded]) -> None:
    """Two runs on one device are named by their targets (then their ids), so no two columns read
    alike."""
    seen: dict[str, int] = {}
    for r in runs:
        seen[r.info.label] = seen.get(r.info.label, 0) + 1
    for r in runs:
        if seen[r.info.label] > 1:  # one device, two targets: the target names the column
            r.info.label = f"{r.run.target_path} on {r.info.agent_name}"
    seen = {}
    for r in runs:
        seen[r.info.label] = seen.get(r.info.label, 0) + 1
    for r in runs:
        if seen[r.info.label] > 1:  # the same target twice: the run's id tells them apart
            r.info.label = f"{r.info.label} #{str(r.run.id)[:8]}"


def catalog(session: Session, *, principal: UserPrincipal, run_ids: list[uuid.UUID]) -> ViewCatalog:
    runs = _load(session, principal, run_ids) if run_ids else []
    presets = {r.info.preset for r in runs}
    applicable = [
        info.name
        for info, _ in VIEWS.values()
        if runs and presets <= set(info.presets) and info.min_runs <= len(runs) <= info.max_runs
    ]
    return ViewCatalog(
        views=[info for info, _ in VIEWS.values()], runs=[r.info for r in runs], applicable=applicable
    )


def show(
    session: Session,
    *,
    principal: UserPrincipal,
    view: ViewName,
    run_ids: list[uuid.UUID],
    baseline: uuid.UUID | None,
) -> ViewTable:
    info, build = VIEWS[view]
    if not info.min_runs <= len(run_ids) <= info.max_runs:
        raise Invalid("runs", f"the {view} view shows {info.min_runs} to {info.max_runs} runs")
    runs = _load(session, principal, run_ids)
    for r in runs:
        if r.info.preset not in info.presets:
            ran = f"ran preset {r.info.preset}" if r.info.preset else "ran no built-in preset"
            raise Invalid(
                "runs", f"run {r.run.id} {ran}; the {view} view shows runs of {', '.join(info.presets)}"
            )
        if r.run.status != RunStatus.succeeded or not r.jobs:
            raise Invalid("runs", f"run {r.run.id} is {r.run.status.value}: it has no result to show")
    table_notes = (
        [
            "Shortened runs (marked 'shortened ×F') ran each job for F of the preset's time or I/O: a quick "
            "look, not the preset's figures."
        ]
        if any(r.info.shortened_by for r in runs)
        else []
    )
    base = None
    if baseline is not None:
        base = next((r for r in runs if r.run.id == baseline), None)
        if base is None:
            raise Invalid("baseline", "must be one of the runs")
    t = _with_units(build(info, runs, base))
    return t.model_copy(update={"notes": [*t.notes, *table_notes]})


def _shown(c: ViewCell, units: dict[str, str]) -> str | float:
    """A cell as the seed prints it: its figure in the seed's unit (the table's display_units),
    rounded as the page."""
    if c.passes is not None:
        return _pass_text(c.passes)
    if c.value is None:
        return ""
    if isinstance(c.value, str) or c.unit is None:
        return c.value
    shown, factor, digits = DISPLAY[c.unit]
    if units.get(c.unit, shown) != shown:
        factor = SHOWN_FACTOR[(c.unit, units[c.unit])]
    v = c.value / factor
    digits = _digits(c.unit, v, digits)
    v = round(v, digits)
    return int(v) if digits == 0 else v


def _sig3(v: float) -> int:
    """Decimals that keep three significant digits of 0 < |v| < 1 (0.0714 → 4), at most 8."""
    return min(8, max(3, 2 - math.floor(math.log10(abs(v)))))


def _digits(unit: str, v: float, default: int) -> int:
    """The page's rule for a figure's decimals, given the figure as shown (frontend ViewGrid.tsx
    `decimals`; the UI formats, the CSV mirrors): a ratio keeps two decimals from 1 and three
    significant digits below (a scale of 0.0001 is not 0.0); a time below one of its shown unit
    three significant digits (a scaled PostMark's 0.0714 s, vdbench's 0.0213 ms); an operation rate
    of 100 or more none (2259263 op/s); otherwise the seed's decimals (DISPLAY)."""
    if unit == "×":
        return 2 if abs(v) >= 1 or v == 0 else _sig3(v)
    if unit == "op/s" and abs(v) >= 100:
        return 0
    if unit == "ns" and 0 < abs(v) < 1:
        return _sig3(v)
    return default


def to_csv(t: ViewTable) -> str:
    """The view's table as CSV: the same columns, headers with the seed's units (the labels name
    them), figures converted from the wire's base units to those units."""
    out = io.StringIO()
    w = safe_csv.writer(out)
    w.writerow([c.label for c in t.columns])
    for row in t.rows:
        w.writerow([_shown(c, t.display_units) for c in row.cells])
    return out.getvalue()
