"""CrystalDiskMark's grid and the P3608 report's Table 1 (devices side by side, with its Ratio).

Both take measured runs of the CrystalDiskMark presets (their passes, best-of) and imported
CrystalDiskMark/KDiskMark text results (a format the import catalogue's STANDS_FOR says stands for
a preset, `Loaded.imported`): each imported test is the preset's test of the same pattern, block
size, queue depth and threads, named as the preset names it (one place: the preset's definition);
a test no preset has keeps the tool's name. An imported test carries the one figure the tool
printed (CrystalDiskMark's best pass): MB/s, IOPS and latency where the file has them; what it
lacks (median, spread, the pass list; CrystalDiskMark 5/6's latency and sequential IOPS) is
absent, never 0 nor derived."""

from dataclasses import dataclass
from typing import Any, Literal

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
from backend.workload.builtin import BUILTINS

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


@dataclass(frozen=True)
class _Side:
    """One test's figures in one direction (read, write, or an imported Mix test's combined one),
    measured (from its passes) or imported (what the tool printed; None where it printed nothing)."""

    best_bw: float | None
    best_iops: float | None
    lat_ns: float | None
    median_bw: float | None = None
    spread_pct: float | None = None
    median_iops: float | None = None
    passes: ViewCell | None = None  # the pass-list cell (measured runs)
    lat_note: str | None = None
    note: str | None = None  # beside the MB/s figure (an imported Mix test's read/write split)
    small_random: bool = False  # a random test of at most 4 KiB (the table's IOPS rows)


Shape = tuple[bool, int, int, int]  # random?, block size, queue depth, threads


def _shape(rw: str, bs: Any, q: Any, t: Any) -> Shape | None:
    if not all(isinstance(x, int) and not isinstance(x, bool) for x in (bs, q, t)):
        return None
    return rw.startswith("rand"), bs, q, t


def _preset_tests(runs: list[Loaded]) -> tuple[dict[Shape, str], list[str]]:
    """The tests of the runs' presets by shape, named as each preset's definition names them
    (BUILTINS: 'SEQ1M_Q8T1', the legacy set's 'Seq'), measured runs' presets first, and their order."""
    presets = [r.info.preset for r in runs if r.imported is None] + [r.info.preset for r in runs]
    shapes: dict[Shape, str] = {}
    order: list[str] = []
    for name in dict.fromkeys(p for p in presets if p in BUILTINS):
        for j in BUILTINS[name][1].jobs:
            of = pass_of(j.name)
            key = _shape(j.rw, j.bs_bytes, j.iodepth, j.numjobs)
            if of is None or key is None:
                continue
            test, _ = _split_test(of[0])
            shapes.setdefault(key, test)
            if test not in order:
                order.append(test)
    return shapes, order


def _absent(side: dict[str, Any], figure: str, estimated: set[str], where: str) -> bool:
    """Whether the import derived this figure (the tool did not print it): the document's
    `source.estimated` names it ("SEQ128K Q32T1 read read IOPS = bytes/s / block size")."""
    label = {"iops": "IOPS", "bw_bytes": "bytes/s"}[figure]
    return any(e.startswith(f"{where} {label} = ") for e in estimated) or not isinstance(
        side.get(figure), int | float
    )


def _lat(side: dict[str, Any]) -> tuple[float | None, str | None]:
    """The mean latency the tool printed: total (lat) or, where it printed completion latency
    (KDiskMark 3.2+), that one, noted."""
    for key, note in (("lat_ns", None), ("clat_ns", "completion latency (clat), as the tool printed")):
        mean = side.get(key, {}).get("mean") if isinstance(side.get(key), dict) else None
        if isinstance(mean, int | float):
            return float(mean), note
    return None, None


def _imported_tests(r: Loaded, shapes: dict[Shape, str], order: list[str]) -> dict[str, dict[str, _Side]]:
    """An imported run's tests by the preset's names (in the preset's order, the others after in
    the file's), each with its read, write or mix figures as the tool printed them."""
    doc = r.imported or {}
    source = doc.get("source") if isinstance(doc.get("source"), dict) else {}
    estimated = {str(e) for e in (source or {}).get("estimated", [])}
    out: dict[str, dict[str, _Side]] = {}
    for job in doc.get("jobs") or []:
        if not isinstance(job, dict):
            continue
        name = str(job.get("jobname", ""))
        opts = (job.get("iowatt") or {}).get("options") or {}
        rw = str(opts.get("rw", ""))
        key = _shape(rw, opts.get("bs_bytes"), opts.get("iodepth"), opts.get("numjobs"))
        mixed = rw in ("rw", "randrw", "readwrite", "randreadwrite")
        side_of = "mix" if mixed else ("write" if rw.endswith("write") else "read")
        own = name.removeprefix("MIX ").removesuffix(f" {side_of}").replace(" ", "_")
        test = shapes.get(key, own) if key is not None else own
        small = key is not None and key[0] and key[1] <= 4096
        if mixed:
            m = job.get("metrics") or {}
            lat = m.get("lat_mean_ns", m.get("clat_mean_ns"))
            mix = (job.get("job options") or {}).get("rwmixread")
            split = None
            if str(mix).isdigit():
                split = f"read {mix} % / write {100 - int(str(mix))} %, one combined figure"
            fig = _Side(
                best_bw=_num(m.get("bw_bytes")) if isinstance(m.get("bw_bytes"), int | float) else None,
                best_iops=_num(m.get("iops")) if isinstance(m.get("iops"), int | float) else None,
                lat_ns=float(lat) if isinstance(lat, int | float) else None,
                lat_note="completion latency (clat), as the tool printed" if "clat_mean_ns" in m else None,
                note=split,
                small_random=small,
            )
        else:
            got = job.get(side_of)
            side: dict[str, Any] = got if isinstance(got, dict) else {}
            where = f"{name} {side_of}"
            lat_ns, lat_note = _lat(side)
            fig = _Side(
                best_bw=None if _absent(side, "bw_bytes", estimated, where) else float(side["bw_bytes"]),
                best_iops=None if _absent(side, "iops", estimated, where) else float(side["iops"]),
                lat_ns=lat_ns,
                lat_note=lat_note,
                small_random=small,
            )
        out.setdefault(test, {})[side_of] = fig
    rank = {t: i for i, t in enumerate(order)}
    return dict(sorted(out.items(), key=lambda kv: rank.get(kv[0], len(rank))))


def _measured_tests(r: Loaded) -> dict[str, dict[str, _Side]]:
    """A measured run's tests from its passes (best-of, median, spread, every pass)."""
    out: dict[str, dict[str, _Side]] = {}
    for p in r.passes:
        base, side_of = _split_test(p.test)
        d = side_of or ("write" if p.direction == "write" else "read")
        best = r.jobs.get(p.best_job)
        spec = next((j for j in r.spec if j.name == p.best_job), None)
        lat = _side(best, "write" if d == "write" else "read", "lat_mean_ns")
        out.setdefault(base, {})[d] = _Side(
            best_bw=_num(p.best_bw_bytes),
            best_iops=_num(p.best_iops),
            lat_ns=_num(lat),
            median_bw=_num(p.median_bw_bytes),
            spread_pct=_num(p.spread_pct),
            median_iops=_num(p.median_iops),
            passes=ViewCell(
                value=None,
                unit="B/s",
                note=f"{p.passes} measured, {p.discarded} discarded",
                passes=_passes(r, p),
            ),
            small_random=spec is not None and spec.rw.startswith("rand") and (spec.bs_bytes or 0) <= 4096,
        )
    return out


def _tests(r: Loaded, shapes: dict[Shape, str], order: list[str]) -> dict[str, dict[str, _Side]]:
    return _imported_tests(r, shapes, order) if r.imported is not None else _measured_tests(r)


IMPORTED_NOTE = (
    "An imported CrystalDiskMark or KDiskMark result (labelled 'imported from ...') carries the one "
    "figure per test the tool printed (its best pass), mapped to the preset's test of the same "
    "pattern, block size, queue depth and threads; what the file lacks is shown as — (median, "
    "spread and passes always; latency and the sequential tests' IOPS for CrystalDiskMark 5 and 6)."
)
MIX_NOTE = (
    "Mix: an imported [Mix] test's one combined read+write figure (the file's Read N %/Write M %), "
    "as the tool printed it."
)


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
                f"{d}_best_lat",
                f"{D} latency (µs)",
                "ns",
                f"mean {d} latency of the best pass (submission to completion, CrystalDiskMark's <us>), "
                "shown in µs",
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
    shapes, test_order = _preset_tests(runs)
    per_run = [(r, _tests(r, shapes, test_order)) for r in runs]
    mix = any("mix" in sides for _, tests in per_run for sides in tests.values())
    if mix:  # CrystalDiskMark's [Mix] section: one combined figure per test
        cols += [
            _col("mix_best_mbps", "Mix (MB/s)", "B/s", "an imported Mix test's read+write MB/s"),
            _col("mix_best_iops", "Mix (IOPS)", "IO/s", "an imported Mix test's read+write I/Os per second"),
            _col("mix_best_lat", "Mix latency (µs)", "ns", "an imported Mix test's mean latency, in µs"),
        ]
    cols = _grouped(cols, {"read": "Read", "write": "Write", "mix": "Mix"})
    rows = []
    for r, tests in per_run:
        for test, sides in tests.items():
            cells = [_cell(r.info.label), _cell(test.replace("_", " "))]
            for side in CDM_SIDES:
                p = sides.get(side)
                if p is None:
                    cells += [_cell(None)] * 7
                    continue
                cells += [
                    _cell(p.best_bw, p.note),
                    _cell(p.median_bw),
                    _cell(p.spread_pct),
                    _cell(p.best_iops),
                    _cell(p.median_iops),
                    _cell(p.lat_ns, p.lat_note),
                    p.passes or _cell(None, "the file has the best pass only" if r.imported else None),
                ]
            if mix:
                m = sides.get("mix")
                cells += (
                    [_cell(m.best_bw, m.note), _cell(m.best_iops), _cell(m.lat_ns, m.lat_note)]
                    if m
                    else [_cell(None)] * 3
                )
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
    ]
    if npasses:
        notes.append(
            "Passes per test: " + ", ".join(f"{m} measured + {d} discarded" for m, d in sorted(npasses)) + "."
        )
    if any(r.imported is not None for r in runs):
        notes.append(IMPORTED_NOTE)
    if mix:
        notes.append(MIX_NOTE)
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
    # row keys in order: (test, direction); an imported run's tests named as the preset names them
    shapes, preset_order = _preset_tests(runs)
    tests = {r.run.id: _tests(r, shapes, preset_order) for r in runs}
    order: list[tuple[str, str]] = []
    for r in runs:
        for test, sides in tests[r.run.id].items():
            for d in (*CDM_SIDES, "mix"):
                if d in sides and (test, d) not in order:
                    order.append((test, d))
    if any(t in LEGACY_LABELS for t, _ in order):  # the report's order; other tests after them
        sides_order = (*CDM_SIDES, "mix")
        order.sort(
            key=lambda k: (
                LEGACY_ORDER.index(k[0]) if k[0] in LEGACY_ORDER else len(LEGACY_ORDER),
                sides_order.index(k[1]),
            )
        )

    def label(test: str, d: str) -> str:
        if test in LEGACY_LABELS and d in CDM_SIDES:
            return LEGACY_LABELS[test].format(D=d.capitalize())
        return f"{test.replace('_', ' ')} {d.capitalize()}"

    def summary(r: Loaded, test: str, d: str) -> _Side | None:
        return tests[r.run.id].get(test, {}).get(d)

    rows = []
    for test, d in order:
        mb = [summary(r, test, d) for r in runs]
        cells = [_cell(label(test, d)), _cell("MB/s")]
        cells += [_cell(p.best_bw if p else None, p.note if p else None, unit="B/s") for p in mb]
        if pair:
            a, b = (summary(x, test, d) for x in pair)
            v, note = _ratio(a.best_bw if a else None, b.best_bw if b else None)
            cells.append(_cell(v, note))
        rows.append(ViewRow(group=test, cells=cells))
        if any(p is not None and p.small_random for p in mb):  # the report adds IOPS under its 4kB rows
            cells = [_cell("IOPS"), _cell("IOPS")]
            cells += [_cell(p.best_iops if p else None, unit="IO/s") for p in mb]
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
    if any(r.imported is not None for r in runs):
        notes.append(IMPORTED_NOTE)
    return _table(info, runs, cols, rows, notes, baseline=pair[1].run.id if pair else None)


VIEWS: list[View] = [
    (
        ViewInfo(
            name="crystaldiskmark",
            title="CrystalDiskMark grid",
            description="Per test, read and write: best-of MB/s, IOPS and latency, median, spread, every "
            "pass with the discarded ones marked; imported CrystalDiskMark/KDiskMark results beside them.",
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
