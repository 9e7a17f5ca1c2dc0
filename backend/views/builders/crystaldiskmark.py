"""CrystalDiskMark's grid and the P3608 report's Table 1 (devices side by side, with its Ratio)."""

from typing import Literal

from iowatt_workload import pass_of

from backend.run.schemas import PassSummary
from backend.views.builders.common import (
    BEST_OF,
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
    ViewCell,
    ViewInfo,
    ViewPass,
    ViewRow,
    ViewTable,
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


# --- 2. the P3608 report's Table 1: tests as rows, devices as columns, Ratio ----------------------

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


VIEWS: list[View] = [
    (
        ViewInfo(
            name="crystaldiskmark",
            title="CrystalDiskMark grid",
            description="Per test, read and write: best-of MB/s and IOPS, median, spread, every pass "
            "with the discarded ones marked.",
            seed="CrystalDiskMark's result window (the P3608 report ran CrystalDiskMark)",
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
            seed="the P3608 report, Table 1",
            presets=["crystaldiskmark-legacy", "crystaldiskmark"],
            min_runs=1,
            max_runs=MAX_RUNS,
        ),
        _cdm_table,
    ),
]
