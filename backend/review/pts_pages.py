"""The SNIA PTS report pages of a review's PDF: for each candidate linked to a PTS run, the
specification's pages as the run's report view shows them (frontend/src/components/Pts): the
verdict and test conditions, the steady-state convergence plot, the measurement window with its
least-squares fit and the data (±10 %) and slope (±5 %) excursion bands, the IOPS table as a heat
map, Write Saturation over time and over total GB written, Host Idle Recovery's IOPS per burst over
time with its wait states, and the throughput and latency tables.
Pure (no database): the router reads the runs' reports (backend/pts/service.py) in its read
transaction and passes them here. Charts are inline SVG, texts escaped (backend/review/report.py's
rules: no script, no network)."""

from __future__ import annotations

import math
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from html import escape

from backend.kit import numbers as n
from backend.pts.schemas import PtsElement, PtsReport, PtsWindow
from backend.pts.service import compliance_name
from backend.review.report import color_at, nice_ticks, tick_number
from backend.review.schemas import CandidateRead

# the metric's axis unit and its value in it (as the report view's METRIC and axisValue)
METRIC: dict[str, tuple[str, str, float]] = {
    "iops": ("IOPS", "IOPS", 1.0),
    "bw_bytes": ("Throughput", "MB/s", 1e6),
    "lat_mean_ns": ("Average latency", "µs", 1e3),
}
PERCENTILES = ("99", "99.9", "99.99", "99.999")
TEST_NAMES = {
    "iops": "IOPS",
    "throughput": "Throughput",
    "latency": "Latency",
    "wsat": "Write Saturation",
    "hir": "Host Idle Recovery",
}
PROFILE_NAMES = {
    "enterprise": "Enterprise",
    "client": "Client",
}
CSS = """
.pts-page { break-before: page; }
.pts-page .facts th { width: 16%; }
.pts-page td.heat { text-align: right; font-variant-numeric: tabular-nums; }
.pts-grid { display: flex; gap: 10pt; }
.pts-grid > div { flex: 1 1 0; min-width: 0; break-inside: avoid; }
.pts-grid svg, .pts-hir svg { max-width: 100%; height: auto; }
"""


def _e(v: object) -> str:
    return escape("" if v is None else str(v))


def bs_label(b: int) -> str:
    """512 -> "0.5 KiB", 4096 -> "4 KiB" (the specification's and the view's labels)."""
    kib = b / 1024
    return f"{int(kib)} KiB" if kib == int(kib) else f"{kib:.1f} KiB"


def mix_label(read_pct: int) -> str:
    return f"{read_pct}/{100 - read_pct}"


def verdict_text(r: PtsReport) -> str:
    """The verdict in the report view's words (verdictText)."""
    v = r.verdict
    if not v.steady_state_applies:
        return f"no steady-state rule ({v.test}: {v.rounds} rounds over time)"
    of = "preconditioning: " if v.test == "hir" else ""  # HIR's rounds precondition; wait states follow
    if v.steady_state_reached:
        return (
            f"{of}steady state reached in round {v.steady_state_round} "
            f"(window rounds {v.window_first_round}–{v.window_last_round})"
        )
    return f"{of}steady state not reached in {v.rounds} rounds"


def stop_text(r: PtsReport) -> str | None:
    """Why the rounds stopped, in the report view's words (stopText); None when not recorded."""
    st = r.stop
    if st is None:
        return None
    if st.rule == "steady_state":
        return f"steady state reached in round {st.round}"
    if st.rule == "round_limit":
        return f"the round limit: {st.round_limit} rounds without steady state"
    if st.rule == "capacity":
        return (
            f"4 × the tested region written ({n.decimal_bytes(st.bytes_written)} of "
            f"{n.decimal_bytes(st.bytes_limit or 0)}) in round {st.round}"
        )
    spec = "" if st.round_s == 60 else ": the specification's 24 hours at this trial's shorter rounds"
    return f"the time limit: {st.round_limit} rounds of {st.round_s} s{spec} (24 hours at 60 s rounds)"


def averages_text(r: PtsReport) -> str:
    """What the tables' figures average: the measurement window, or Write Saturation's last rounds."""
    if r.verdict.steady_state_applies:
        return "window averages"
    if r.averaged_first_round is None:
        return "no rounds"
    return f"the average of rounds {r.averaged_first_round}–{r.averaged_last_round}, the last ones run"


def iops_text(v: float | None) -> str:
    return n.MISSING if v is None else n.plain(v, "IOPS")


def mbs_text(bytes_per_s: float | None) -> str:
    return n.MISSING if bytes_per_s is None else n.plain(bytes_per_s / 1e6, "MB/s")


def ns_text(ns: float | None) -> str:
    """Latency in µs from 1 µs up, ms from 1 ms, else ns (three significant digits)."""
    if ns is None or ns <= 0:
        return n.MISSING
    for scale, unit in ((1e6, "ms"), (1e3, "µs")):
        if ns >= scale:
            return f"{n.sig3(ns / scale)} {unit}"
    return f"{n.sig3(ns)} ns"


def heat(v: float | None, values: Sequence[float | None]) -> float | None:
    """A heat map's shade of `v` on a log scale between the smallest and largest, 0..1 (heat)."""
    if v is None or not v > 0:
        return None
    pos = [x for x in values if x is not None and x > 0]
    lo, hi = math.log10(min(pos)), math.log10(max(pos))
    return (math.log10(v) - lo) / (hi - lo) if hi > lo else 1.0


# --- charts ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Line:
    label: str
    points: list[tuple[float, float]]
    color: str
    dash: str = ""
    dots: bool = True


@dataclass(frozen=True)
class Band:
    """A shaded horizontal band between two values (the window's excursion limits)."""

    label: str
    low: float
    high: float
    fill: str


def line_svg(
    lines: Sequence[Line],
    *,
    x_label: str,
    y_label: str,
    bands: Sequence[Band] = (),
    y_floor: float | None = 0.0,
    width: int = 450,
    integer_x: bool = False,
    key_columns: int = 3,
    x_from_zero: bool = False,
) -> str:
    """A line chart: numbered grid, the lines (dots at their points), bands under them, and a key
    below naming every line and band. `y_floor` None: the axis starts near the data (the window's
    bands are a few per cent wide and would be invisible from 0)."""
    xs = [x for ln in lines for x, _ in ln.points]
    ys = [y for ln in lines for _, y in ln.points] + [v for b in bands for v in (b.low, b.high)]
    if not xs:
        return "<p class='muted'>No rounds to plot.</p>"
    plot_h, left, right, top, bottom = 240, 64, 14, 10, 40
    x0, x1 = (0.0 if x_from_zero else min(xs)), max(xs)
    if x1 == x0:
        x0, x1 = x0 - 1, x1 + 1
    if y_floor is None:
        span = (max(ys) - min(ys)) or abs(max(ys)) or 1.0
        lo_raw, hi_raw = min(ys) - 0.1 * span, max(ys) + 0.1 * span
        step = nice_ticks(hi_raw - lo_raw)[1]
        y0 = math.floor(lo_raw / step) * step
        yt = [y0]
        while yt[-1] < hi_raw - step * 1e-9:
            yt.append(float(f"{yt[-1] + step:.12g}"))
    else:
        yt = nice_ticks(max(ys))
    y0, y1 = yt[0], yt[-1] if yt[-1] > yt[0] else yt[0] + 1
    xt = nice_ticks(x1 - x0 if not integer_x else x1)
    if integer_x and x1 - x0 <= 12:
        xt = [float(t) for t in range(math.ceil(x0), math.floor(x1) + 1)]  # every round
    elif integer_x:
        xt = [t for t in xt if x0 <= t <= x1 and t == int(t)] or [x0, x1]
    elif x_from_zero:
        x1 = xt[-1]  # the axis ends at its last round tick, as it starts at 0
    else:
        xt = [x0 + t for t in xt if x0 + t <= x1 + 1e-9]
    key_rows = math.ceil((len(lines) + len(bands)) / key_columns)
    h = plot_h + 14 + key_rows * 15
    pw, ph = width - left - right, plot_h - top - bottom

    def px(v: float) -> float:
        return left + pw * (v - x0) / (x1 - x0)

    def py(v: float) -> float:
        return top + ph - ph * (v - y0) / (y1 - y0)

    out = [f"<svg xmlns='http://www.w3.org/2000/svg' width='{width}' height='{h}' viewBox='0 0 {width} {h}'>"]
    for b in bands:
        ya, yb = py(min(max(b.high, y0), y1)), py(max(min(b.low, y1), y0))
        out.append(
            f"<rect x='{left}' y='{ya:.1f}' width='{pw}' height='{max(0.0, yb - ya):.1f}' fill='{b.fill}'/>"
        )
    for v in xt:
        out.append(f"<line x1='{px(v):.1f}' y1='{top}' x2='{px(v):.1f}' y2='{top + ph}' stroke='#e5e7eb'/>")
        out.append(
            f"<text x='{px(v):.1f}' y='{top + ph + 12}' font-size='9' text-anchor='middle'>"
            f"{tick_number(v)}</text>"
        )
    for v in yt:
        out.append(f"<line x1='{left}' y1='{py(v):.1f}' x2='{left + pw}' y2='{py(v):.1f}' stroke='#e5e7eb'/>")
        out.append(
            f"<text x='{left - 5}' y='{py(v) + 3:.1f}' font-size='9' text-anchor='end'>"
            f"{tick_number(v)}</text>"
        )
    out.append(f"<line x1='{left}' y1='{top + ph}' x2='{left + pw}' y2='{top + ph}' stroke='#333'/>")
    out.append(f"<line x1='{left}' y1='{top}' x2='{left}' y2='{top + ph}' stroke='#333'/>")
    out.append(
        f"<text x='{left + pw / 2:.0f}' y='{top + ph + 28}' font-size='10' text-anchor='middle'>"
        f"{_e(x_label)}</text>"
    )
    cy = top + ph / 2
    out.append(
        f"<text x='12' y='{cy:.0f}' font-size='10' transform='rotate(-90 12 {cy:.0f})' "
        f"text-anchor='middle'>{_e(y_label)}</text>"
    )
    for ln in lines:
        pts = " ".join(f"{px(x):.1f},{py(y):.1f}" for x, y in ln.points)
        dash = f" stroke-dasharray='{ln.dash}'" if ln.dash else ""
        out.append(f"<polyline points='{pts}' fill='none' stroke='{ln.color}' stroke-width='1.6'{dash}/>")
        if ln.dots:
            out += [
                f"<circle cx='{px(x):.1f}' cy='{py(y):.1f}' r='2.2' fill='{ln.color}'/>" for x, y in ln.points
            ]
    col_w = (width - left) / key_columns
    items: list[Line | Band] = [*lines, *bands]
    for i, item in enumerate(items):
        kx = left + (i % key_columns) * col_w
        ky = plot_h + 14 + (i // key_columns) * 15
        if isinstance(item, Band):
            out.append(f"<rect x='{kx:.1f}' y='{ky - 8}' width='14' height='9' fill='{item.fill}'/>")
        else:
            dash = f" stroke-dasharray='{item.dash}'" if item.dash else ""
            out.append(
                f"<line x1='{kx:.1f}' y1='{ky - 4}' x2='{kx + 14:.1f}' y2='{ky - 4}' "
                f"stroke='{item.color}' stroke-width='2'{dash}/>"
            )
        out.append(f"<text x='{kx + 18:.1f}' y='{ky}' font-size='9'>{_e(item.label)}</text>")
    out.append("</svg>")
    return "".join(out)


def convergence_lines(r: PtsReport) -> list[Line]:
    """Every element's figure per round (IOPS: each block size at the tracking variable's R/W
    mix, the specification's plot), in the metric's axis unit (convergenceSeries)."""
    _, _, div = METRIC[r.metric]
    tracking = next((e for e in r.elements if e.name == r.tracking_element), None)
    shown = (
        [e for e in r.elements if e.read_pct == tracking.read_pct]
        if r.verdict.test == "iops" and tracking is not None
        else r.elements
    )
    return [
        Line(
            f"{bs_label(e.bs_bytes)} {mix_label(e.read_pct)}",
            [
                (float(r.rounds[i].round if i < len(r.rounds) else i + 1), y / div)
                for i, y in enumerate(e.per_round)
                if y is not None
            ],
            color_at(k),
        )
        for k, e in enumerate(shown)
    ]


def window_chart(r: PtsReport, w: PtsWindow) -> str:
    """The window's rounds, their least-squares line, the average, and the bands: ±10 % of the
    average (data excursion: 20 % wide) and ±5 % (the fitted line stays inside exactly when its
    change across the window is at most 10 % of the average)."""
    _, unit, div = METRIC[r.metric]
    avg = w.average / div
    lines = [
        Line("tracking variable", [(p.round, p.value / div) for p in w.points], "#1f6feb"),
        Line("least-squares fit", [(p.round, p.fitted / div) for p in w.points], "#d1242f", dots=False),
        Line("average", [(w.first_round, avg), (w.last_round, avg)], "#555555", dash="3 3", dots=False),
    ]
    bands = [
        Band("data band ±10 % (20 % wide)", avg * 0.9, avg * 1.1, "#fdf3d8"),
        Band("slope band ±5 % (10 % change)", avg * 0.95, avg * 1.05, "#e9e1fb"),
    ]
    return line_svg(
        lines, x_label="round", y_label=unit, bands=bands, y_floor=None, integer_x=True, key_columns=2
    )


# --- tables ---------------------------------------------------------------------------------------


def _head(*names: str) -> str:
    return "<thead><tr>" + "".join(f"<th>{x}</th>" for x in names) + "</tr></thead>"


def matrix_table(
    elements: Sequence[PtsElement],
    value: Callable[[PtsElement], float | None],
    fmt: Callable[[float], str],
    *,
    heatmap: bool,
) -> str:
    """Block size rows (largest first) × R/W mix columns (100/0 first); a heat map shades each
    cell on a log scale as the report view does (hsl(212 80% 92-45h%))."""
    sizes = sorted({e.bs_bytes for e in elements}, reverse=True)
    mixes = sorted({e.read_pct for e in elements}, reverse=True)
    by = {(e.bs_bytes, e.read_pct): value(e) for e in elements}
    values = list(by.values())
    rows = []
    for bs in sizes:
        cells = []
        for m in mixes:
            v = by.get((bs, m))
            h = heat(v, values) if heatmap else None
            style = ""
            if h is not None:
                style = (
                    f" style='background:hsl(212 80% {92 - 45 * h:.0f}%);{'color:#fff;' if h > 0.6 else ''}'"
                )
            cells.append(f"<td class='heat'{style}>{_e(n.MISSING if v is None else fmt(v))}</td>")
        rows.append(f"<tr><th>{_e(bs_label(bs))}</th>{''.join(cells)}</tr>")
    return (
        "<table>"
        + _head("Block size", *(f"R/W {_e(mix_label(m))}" for m in mixes))
        + "".join(rows)
        + "</table>"
    )


def latency_table(elements: Sequence[PtsElement]) -> str:
    rows = []
    for e in elements:
        worst = [
            max(e.read_percentiles_ns.get(p, 0.0), e.write_percentiles_ns.get(p, 0.0)) for p in PERCENTILES
        ]
        rows.append(
            "<tr>"
            f"<td>{_e(bs_label(e.bs_bytes))}</td><td>{_e(mix_label(e.read_pct))}</td>"
            f"<td class='n'>{_e(ns_text(e.lat_mean_ns))}</td><td class='n'>{_e(ns_text(e.lat_max_ns))}</td>"
            + "".join(f"<td class='n'>{_e(ns_text(v))}</td>" for v in worst)
            + "</tr>"
        )
    return (
        "<table>"
        + _head("Block size", "R/W", "Average", "Maximum", *(f"p{p}" for p in PERCENTILES))
        + "".join(rows)
        + "</table>"
    )


def _facts(c: CandidateRead, r: PtsReport) -> str:
    v = r.verdict
    name = compliance_name(v)
    compliance = name if v.compliant else f"not {name}: " + "; ".join(v.deviations or ["a short trial"])
    rows = [
        ("Candidate", f"{c.name} ({c.model})"),
        ("Run", str(r.run_id)),
        ("Specification", r.spec),
        ("Profile", PROFILE_NAMES[v.profile]),
        ("Test", TEST_NAMES[v.test]),
        ("Steady state", verdict_text(r)),
        *([("Stopped by", stopped)] if (stopped := stop_text(r)) is not None else []),
        ("Compliance", compliance),
        ("Purge", f"{r.purge.method} ({r.purge.note})" if r.purge.note else r.purge.method),
        (
            "Preconditioning",
            f"{n.decimal_bytes(r.preconditioning_bytes)} of SEQ 128 KiB writes "
            f"({mbs_text(r.preconditioning_bw_bytes)})"
            if r.preconditioning_applies
            else "none: the test starts from the purged state (its own RND 4 KiB writes precondition)",
        ),
        ("Tested region", f"{n.decimal_bytes(r.region_bytes)} of {n.decimal_bytes(r.capacity_bytes)}"),
        (
            "Stimulus",
            f"T{r.threads} Q{r.iodepth}, {r.round_s} s per element per round"
            + (f"; bursts of {r.hir.burst_s} s, {r.hir.bursts} per wait state" if r.hir else ""),
        ),
        ("Written in all", n.decimal_bytes(r.bytes_written)),
    ]
    flagged = {
        "Steady state": v.steady_state_applies and not v.steady_state_reached,
        "Compliance": not v.compliant,
    }
    body = "".join(
        f"<tr><th>{_e(k)}</th><td{' class=flag' if flagged.get(k) else ''}>{_e(val)}</td></tr>"
        for k, val in rows
    )
    return f"<table class='facts'>{body}</table>"


def wsat_charts(r: PtsReport) -> str:
    """IOPS over time (minutes from five minutes of stimulus up, else seconds) and over total GB
    written (wsatPoints, wsatTimeAxis)."""
    per_round = r.round_s * max(1, len(r.elements))
    pts = [
        (rd.round * per_round, rd.bytes_written / 1e9, rd.tracking)
        for rd in r.rounds
        if rd.tracking is not None
    ]
    unit, div = ("minutes", 60) if pts and pts[-1][0] >= 300 else ("seconds", 1)
    over_time = Line("RND 4 KiB 0/100 IOPS", [(t / div, y) for t, _, y in pts], color_at(0))
    over_gb = Line("RND 4 KiB 0/100 IOPS", [(g, y) for _, g, y in pts], color_at(0))
    by_time = line_svg([over_time], x_label=f"{unit} of stimulus", y_label="IOPS", x_from_zero=True)
    by_gb = line_svg([over_gb], x_label="GB written (10^9 bytes)", y_label="IOPS", x_from_zero=True)
    return (
        "<div class='pts-grid'>"
        f"<div><h3>IOPS over time</h3>{by_time}</div>"
        f"<div><h3>IOPS over total GB written</h3>{by_gb}</div>"
        "</div>"
    )


def hir_segment_label(kind: str, wait_state: int, idle_s: float) -> str:
    """hirSegmentLabel: "WS2: 10 s idle" or "baseline after WS2"."""
    return (
        f"WS{wait_state}: {tick_number(idle_s)} s idle"
        if kind == "wait"
        else f"baseline after WS{wait_state}"
    )


def hir_chart(r: PtsReport) -> str:
    """Host Idle Recovery's IOPS per burst over time (minutes from ten minutes on, else seconds),
    one line per segment (a return to baseline dashed), and each wait state's averages (hirSeries,
    hirRows)."""
    h = r.hir
    if h is None:
        return ""
    last = max((pt.t_s for seg in h.segments for pt in seg.points), default=0.0)
    unit, div = ("minutes", 60) if last >= 600 else ("seconds", 1)
    lines = [
        Line(
            hir_segment_label(seg.kind, seg.wait_state, seg.idle_s),
            [(pt.t_s / div, pt.iops) for pt in seg.points],
            color_at(i // 2),
            dash="4 3" if seg.kind == "baseline" else "",
            dots=len(seg.points) <= 60,
        )
        for i, seg in enumerate(h.segments)
    ]
    chart = line_svg(
        lines, x_label=f"{unit} from the first burst", y_label="IOPS", width=900, x_from_zero=True
    )
    rows = []
    for seg in h.segments:
        if seg.kind != "wait":
            continue
        base = next((b for b in h.segments if b.kind == "baseline" and b.wait_state == seg.wait_state), None)
        steady = h.preconditioned_iops
        ratio = f"{n.sig3(seg.average_iops / steady)} ×" if steady else n.MISSING
        rows.append(
            f"<tr><td>WS{seg.wait_state}</td><td class='n'>{_e(tick_number(seg.idle_s))} s</td>"
            f"<td class='n'>{_e(iops_text(seg.average_iops))}</td>"
            f"<td class='n'>{_e(iops_text(base.average_iops if base else None))}</td>"
            f"<td class='n'>{_e(ratio)}</td></tr>"
        )
    table = (
        "<table>"
        + _head(
            "Wait state",
            "Host idle after each burst",
            "IOPS (bursts' average)",
            "Return to baseline",
            "× the steady state",
        )
        + "".join(rows)
        + "</table>"
        + f"<p class='muted'>Bursts of {h.burst_s} s, {h.bursts} per wait state; the steady state: the "
        f"preconditioning's window, {_e(iops_text(h.preconditioned_iops))}.</p>"
    )
    return (
        f"<div class='keep pts-hir'><h3>IOPS per burst over time</h3>{chart}</div>"
        f"<div class='keep'>{table}</div>"
    )


def page(c: CandidateRead, r: PtsReport) -> str:
    """One candidate's PTS report pages."""
    w = r.window
    p = [
        "<section class='pts-page'>",
        f"<h2>SNIA PTS report: {_e(c.name)}</h2>",
        _facts(c, r),
    ]
    if r.verdict.test == "wsat":
        p.append("<h2>Write Saturation</h2>" + wsat_charts(r))
    if r.verdict.test == "hir":
        p.append("<h2>Host Idle Recovery</h2>" + hir_chart(r))
    avg = averages_text(r)
    # Write Saturation has no steady-state convergence or window: its two plots above show it
    if r.verdict.steady_state_applies:
        p.append(_steady_state_pages(r, w))
    if r.verdict.test in ("iops", "wsat"):
        p.append(
            f"<div class='keep'><h3>IOPS by block size and R/W mix ({_e(avg)}), as a heat map</h3>"
            + matrix_table(r.elements, lambda e: e.iops, iops_text, heatmap=True)
            + "</div>"
        )
    if r.verdict.test == "throughput":
        p.append(
            f"<div class='keep'><h3>Throughput by block size and R/W mix ({_e(avg)})</h3>"
            + matrix_table(r.elements, lambda e: e.bw_bytes, mbs_text, heatmap=False)
            + "</div>"
        )
    if r.verdict.test == "latency":
        p.append(
            "<div class='keep'><h3>Latency (window averages; maximum over the window)</h3>"
            + latency_table(r.elements)
            + "</div>"
        )
    p.append("</section>")
    return "".join(p)


def _steady_state_pages(r: PtsReport, w: PtsWindow | None) -> str:
    """The convergence plot and the measurement window with its fit, average and bands."""
    label, unit, _ = METRIC[r.metric]
    p = ["<div class='pts-grid'>"]
    p.append(
        f"<div><h3>Steady-state convergence ({_e(label if label == unit else f'{label}, {unit}')})</h3>"
        + line_svg(convergence_lines(r), x_label="round", y_label=unit, integer_x=True)
        + f"<p class='muted'>Tracking variable: {_e(r.tracking_element)}.</p></div>"
    )
    if w is None:
        p.append(
            "<div><h3>Measurement window</h3>"
            "<p class='muted'>Fewer than five rounds ran: no window.</p></div>"
        )
    else:
        fmt = {"iops": iops_text, "bw_bytes": mbs_text, "lat_mean_ns": ns_text}[r.metric]

        def pct(x: float) -> str:
            return f"{n.sig3(100 * x / w.average)} %" if w.average > 0 else n.MISSING

        p.append(
            f"<div><h3>Measurement window: rounds {w.first_round}–{w.last_round}</h3>{window_chart(r, w)}"
            "<table>"
            f"<tr><th>Average</th><td class='n'>{_e(fmt(w.average))}</td><td></td></tr>"
            f"<tr><th>Data excursion (max − min)</th><td class='n'>{_e(fmt(w.data_excursion))} = "
            f"{_e(pct(w.data_excursion))} (limit 20 %)</td>"
            f"<td>{'within' if w.data_ok else 'exceeded'}</td></tr>"
            f"<tr><th>Slope excursion (the fit's change across the window)</th><td class='n'>"
            f"{_e(fmt(w.slope_excursion))} = {_e(pct(w.slope_excursion))} (limit 10 %)</td>"
            f"<td>{'within' if w.slope_ok else 'exceeded'}</td></tr>"
            "</table></div>"
        )
    p.append("</div>")
    return "".join(p)


def section(candidates: Sequence[CandidateRead], reports: Mapping[uuid.UUID, PtsReport]) -> str:
    """The PTS pages of every candidate whose linked run has a PTS report, in the candidates'
    order (a run linked twice is printed once, under its first candidate); "" when none has."""
    seen: set[uuid.UUID] = set()
    out = []
    for c in candidates:
        if c.run_id is None or c.run_id in seen or c.run_id not in reports:
            continue
        seen.add(c.run_id)
        out.append(page(c, reports[c.run_id]))
    return f"<style>{CSS}</style>" + "".join(out) if out else ""
