"""How the views print a figure: the report's unit for each base unit on the wire, the factor between
them and the decimals (DISPLAY), and the CSV that prints the table that way. The page converts
with lib/format.ts fromBaseUnit; both sides pass the vectors in backend/views/testdata/display_units.json
(tests/backend/test_views_display.py, frontend/src/lib/format.views.test.ts)."""

import io
import math

from backend.kit import csv as safe_csv
from backend.views.schemas import ViewCell, ViewPass, ViewTable

MB = 1_000_000  # the reports' and CrystalDiskMark's MB: 10^6 bytes

# How the reports print a base unit: (their unit, base units per one of it, decimals). The page
# converts and rounds the same way (frontend/src/lib/format.ts fromBaseUnit, ViewGrid.tsx decimals):
# both sides pass testdata/display_units.json, so a factor or a decimal changed on one side alone
# fails a test. Units not listed print as they are.
DISPLAY: dict[str, tuple[str, float, int]] = {
    "B/s": ("MB/s", MB, 2),  # CrystalDiskMark's and the reports' MB/s: 10^6 B/s
    "ns": ("µs", 1_000, 2),
    "B": ("KiB", 1024, 2),  # block and I/O sizes: DiskSpd's and the report's kB are KiB
    "IO/s": ("IO/s", 1, 1),
    "%": ("%", 1, 1),
    "×": ("×", 1, 3),
    "threads": ("threads", 1, 0),
    "op/s": ("op/s", 1, 1),  # file operations (or PostMark transactions) per second
    "W": ("W", 1, 1),  # as the page: one decimal (the CSV printed two until both read the vectors)
    "J": ("J", 1, 2),  # the reports' "run time x power W": W·s
    "QphH": ("QphH@Size", 1, 2),  # TPC-H queries per hour at the scale factor
    "SF": ("SF", 1, 2),  # TPC-H scale factor (1 ≈ 1 GB of raw data)
    "IO/s/W": ("IO/s/W", 1, 1),  # IOPS per watt (the qos view's figure at the target)
    "/tx": ("/tx", 1, 3),  # a count per transaction (fsyncs, device flushes: 0.022 is not 0.02)
}
DISPLAY_UNITS = {base: shown for base, (shown, factor, _) in DISPLAY.items() if factor != 1}
# the same base unit printed otherwise by a view whose report does (vdbench's ms, PostMark's seconds)
SHOWN_FACTOR: dict[tuple[str, str], float] = {("ns", "ms"): 1e6, ("ns", "s"): 1e9}


def _pass_text(passes: list[ViewPass]) -> str:
    """The CSV's pass list in the report's MB/s: "p0 512.30 (discarded) · p1 530.10 (best) · ..."."""
    marks = {"discarded": " (discarded)", "best": " (best)", "measured": ""}
    return " · ".join(f"p{x.index} {x.bw_bytes / MB:.2f}{marks[x.status]}" for x in passes)


def _shown(c: ViewCell, units: dict[str, str]) -> str | float:
    """A cell as the report prints it: its figure in the report's unit (the table's display_units),
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
    three significant digits (a scaled PostMark's 0.0714 s, vdbench's 0.0213 ms), and so does energy
    below 1 J (a transaction's 0.0326 J); an operation rate
    of 100 or more none (2259263 op/s); otherwise the report's decimals (DISPLAY)."""
    if unit == "×":
        return 2 if abs(v) >= 1 or v == 0 else _sig3(v)
    if unit == "op/s" and abs(v) >= 100:
        return 0
    if unit in ("ns", "J") and 0 < abs(v) < 1:
        return _sig3(v)
    return default


def to_csv(t: ViewTable) -> str:
    """The view's table as CSV: the same columns, headers with the report's units (the labels name
    them), figures converted from the wire's base units to those units."""
    out = io.StringIO()
    w = safe_csv.writer(out)
    w.writerow([c.label for c in t.columns])
    for row in t.rows:
        w.writerow([_shown(c, t.display_units) for c in row.cells])
    return out.getvalue()
