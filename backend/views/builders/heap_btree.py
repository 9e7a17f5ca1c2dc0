"""Heap and B-tree insert and point-query throughput per cache fraction."""

from backend.views.builders.common import (
    View,
    _cell,
    _col,
    _ratio_any,
    _table,
)
from backend.views.loading import Loaded
from backend.views.schemas import (
    ChartAxis,
    ChartPoint,
    ChartSeries,
    ViewChart,
    ViewInfo,
    ViewRow,
    ViewTable,
)

# --- 10. the P3608 report's Table 3: heap and B-tree, insert and point query, per cache fraction ---

HB_OPS = [  # (structure, operation, the report's header)
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
    if len(fractions) > 1:  # the report's "3× higher with every block cached than with 10 %"
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
            title=f"{title}: throughput by cache size (the P3608 report, Figure {figure})",
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
        "The P3608 report's Table 3: insert and point-query throughput (op/s) of a sequential array (heap "
        "file) and a B-tree on 8 KiB pages, with the cache buffer holding 10 % ... 100 % of the data blocks; "
        "the engine's --heap-btree (agent/engine/README.md § Heap and B-tree).",
        f"Records inserted: {', '.join(f'{n:,}' for n in records) or 'unknown'} (the report: 50,000,000; a "
        "run's scale multiplies the preset's 1,000,000).",
        "A heap point query is a sequential scan until the key is found (the report gives the heap no "
        "index), so its rate is far below the report's; the last row divides the largest fraction's figure "
        "by the smallest's, as the report's '3× higher when all blocks are cached'.",
    ]
    if other is not None:
        notes.append(
            "The Ratio columns divide the other run's figure by the baseline's (pick it with baseline=)."
        )
    base_run = base.run.id if other is not None else None
    return _table(info, runs, cols, rows, notes, baseline=base_run, charts=charts)


VIEWS: list[View] = [
    (
        ViewInfo(
            name="heap-btree-grid",
            title="Heap and B-tree by cache size",
            description="Insert and point-query throughput of a heap file and a B-tree per cache "
            "fraction (10 % ... 100 % of the data blocks), with ratios between runs and between the "
            "largest and smallest fraction.",
            seed="the P3608 report, Table 3 and Figures 2-3",
            presets=["heap-btree"],
            min_runs=1,
            max_runs=8,
        ),
        _heap_btree_grid,
    ),
]
