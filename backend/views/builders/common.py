"""What every view builder uses: a view's cells, columns and table, and its Ratio columns."""

import uuid
from collections.abc import Callable
from typing import Any, Literal

from backend.models import ResultJob
from backend.views.display import DISPLAY_UNITS
from backend.views.loading import Loaded
from backend.views.schemas import (
    BaseUnit,
    ViewCell,
    ViewChart,
    ViewColumn,
    ViewInfo,
    ViewRow,
    ViewTable,
)

BEST_OF = (
    "best-of: the measured pass with the highest bandwidth, its IOPS from the same pass "
    "(CrystalDiskMark's rule, libs/workload best_of_passes); discarded passes never count"
)


Builder = Callable[[ViewInfo, list[Loaded], Loaded | None], ViewTable]

View = tuple[ViewInfo, Builder]  # a catalogue entry: what the view is, how it is built


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
    """A view's answer: its figures in base units, the report's units named in display_units
    (`shown`: this view prints a base unit otherwise, as its report does: ns as ms or s)."""
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
    run before it), as the P3608 report's Ratio is its last device over the one before."""
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


def _ratio_any(value: float | None, base: float | None) -> tuple[float | None, str | None]:
    """value ÷ base, plain (the report's Rate: 4.5 = the first took 4.5 times as long)."""
    if value is None or base is None or base <= 0:
        return None, None
    return value / base, None
