"""PostMark's seconds per level per device, with power and energy where a meter measured them."""

from collections.abc import Callable

from backend.views.builders.common import (
    View,
    _cell,
    _col,
    _num,
    _ratio_any,
    _table,
)
from backend.views.builders.per_device import _device_columns, _device_key, _device_mean_cell, energy_ok
from backend.views.loading import MAX_RUNS, Loaded
from backend.views.schemas import (
    BaseUnit,
    ViewInfo,
    ViewRow,
    ViewTable,
)

# --- 8. Song & Lee's Tables 3-5: PostMark seconds, power and energy per level ---------------------

POSTMARK_LEVELS = {"postmark-low": "Low", "postmark-medium": "Medium", "postmark-high": "High"}


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
        _col(
            "level",
            "PostMark level",
            None,
            "Song & Lee's level (their Table 1), or the idle baseline",
            "text",
        ),
    ]
    cols += _device_columns(devices, keys, base_key, other_key, "at the row's level (Song & Lee averaged 10)")

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
        "Song & Lee's Table 3: PostMark's elapsed time per level (creation + transactions + deletion), shown "
        "in seconds, with the transaction rate beside it; Low, Medium, High as its Table 1 (4 KB blocks, "
        "327 KB files).",
        "Each cell is the mean over the runs of that device and level; the Rate column divides the first "
        "device's figure by the baseline's (pick it with baseline=), as the report's Rate (HDD ÷ DRAM-SSD).",
    ]
    if metered:
        notes.append(
            "Tables 4-5: power is the wattmeter's mean over the run (Non-load: the idle baseline); energy "
            "is PostMark's run time × that power, in J (W·s), as the report's 'run time X power W'. Cells "
            "marked estimated come from datasheet watts, not a meter."
        )
    else:
        notes.append(
            "No run has meter data: the power and energy rows (Song & Lee's Tables 4-5) are left out."
        )
    if any(r.file and r.file.scale not in (None, 1.0) for r in runs):
        notes.append(
            "Some runs were scaled (files and transactions times the scale): not the report's level."
        )
    base_run = devices[base_key][1][0].run.id if other_key is not None else None
    return _table(info, runs, cols, rows, notes, baseline=base_run, shown={"ns": "s"})


VIEWS: list[View] = [
    (
        ViewInfo(
            name="postmark-levels",
            title="PostMark levels per device",
            description="Seconds per PostMark level (Low, Medium, High) per device with the transaction "
            "rate and the Rate column; with meter data, power and energy per level.",
            seed="Song & Lee's HDD vs DRAM-SSD study, Table 3 (PostMark run time), Tables 4-5 (power, run "
            "time × power)",
            presets=list(POSTMARK_LEVELS),
            min_runs=1,
            max_runs=MAX_RUNS,
        ),
        _postmark_levels,
    ),
]
