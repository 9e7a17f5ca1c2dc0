"""The review as a printable HTML page: tables, two charts drawn here as inline SVG (no script, no
network), and the methodology appendix rendered from backend/review/formulas.py's table and
docstrings, so the PDF says exactly what the code computes. Every text is HTML-escaped.

The PDF is what a decision is made from, so it shows the review page's figures, written the page's
way (backend/kit/numbers.py passes the UI formatter's vectors): the figures table has the page's
rows (figure_rows mirrors figureRows in frontend/src/components/Review/Figures.tsx), a column per
candidate; the scatter has the page's axes (performance across, TCO up) and a key instead of point
labels (tests/browser/test_pages.py finds every figure of the page in the PDF's text).

What a PDF holds is bounded, so no review makes Chromium print for minutes: at most MAX_CANDIDATES
candidates (the review's own limit), the newest MAX_COMMENTS comments, each free text clipped at
MAX_TEXT_CHARS (a comment's at MAX_COMMENT_CHARS); whatever is left out is said where it would have
been. The largest review so bounded prints on at most MAX_PAGES A4 pages
(tests/backend/test_review_pdf.py prints one)."""

import math
from collections.abc import Callable
from decimal import Decimal
from html import escape

from backend.kit import numbers as n
from backend.review import formulas
from backend.review.schemas import CandidateRead, ReviewCommentRead, ReviewRead
from backend.review.service import MAX_CANDIDATES

MAX_COMMENTS = 50
MAX_COMMENT_CHARS = 2_000
MAX_TEXT_CHARS = 4_000
MAX_PAGES = 30  # the largest review printed on 19 (tests/backend/test_review_pdf.py)
# the figures table has a column per candidate, as on the page: this many candidates per table
FIGURE_COLUMNS = 6

# Tables keep their header with their rows: a header row is repeated on every page a table spans
# (thead), a row never splits, and a short table (a .keep block: its heading and up to a page of
# rows) moves whole to the next page rather than leaving its heading and header at a page's foot.
CSS = """
@page { size: A4 landscape; margin: 12mm; }
body { font-family: "DejaVu Sans", Arial, sans-serif; font-size: 9pt; color: #111;
       font-variant-ligatures: none; }
h1 { font-size: 16pt; margin: 0 0 4pt; } h2 { font-size: 12pt; margin: 14pt 0 4pt; break-after: avoid; }
table { border-collapse: collapse; width: 100%; margin: 4pt 0; }
thead { display: table-header-group; break-inside: avoid; break-after: avoid; }
tr { break-inside: avoid; }
.keep { break-inside: avoid; }
th, td { border: 1px solid #bbb; padding: 2pt 4pt; text-align: left; vertical-align: top; }
td.n { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
th { background: #eee; } .muted { color: #555; } .flag { color: #a40; }
.appendix { break-before: page; } svg text { font-family: "DejaVu Sans", Arial, sans-serif; }
svg { break-inside: avoid; }
"""
# the UI's series colours (frontend/src/components/charts/palette.ts: Okabe-Ito without its
# yellow; past seven the same hues shifted toward black or white by round), in its order
COLORS = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#000000")
ROUNDS = (0, -0.45, 0.45, -0.7, 0.65, -0.25, 0.25)


def color_at(i: int) -> str:
    """Series `i`'s colour, as the UI's colorAt."""
    base = COLORS[i % len(COLORS)]
    by = ROUNDS[(i // len(COLORS)) % len(ROUNDS)]
    if base == "#000000":
        by = abs(by)  # black has no darker shade: its rounds go to greys
    to, f = (0 if by < 0 else 255), abs(by)

    def channel(k: int) -> str:
        v = int(base[k : k + 2], 16)
        return f"{_js_round(v + (to - v) * f):02x}"

    return f"#{channel(1)}{channel(3)}{channel(5)}"


def _js_round(x: float) -> int:
    """JavaScript's Math.round: halves go up."""
    return math.floor(x + 0.5)


GB_NOTE = "GB = 10^9 bytes"
# Sensitivity parameters in words and the unit of their values (components/Review/units.ts PARAMETERS)
PARAMETERS = {
    "price": ("Leader's unit price", "× today's price"),
    "tariff": ("Electricity tariff", "{cur}/kWh"),
    "grid_intensity": ("Grid intensity", "gCO2e/kWh"),
    "duty_cycle": ("Duty cycle", "share of hours under load"),
    "horizon": ("Horizon", "years"),
}
# the ranking's criteria as the page names them (frontend/src/queries/reviews.ts CRITERIA)
CRITERIA = (
    ("tco", "TCO"),
    ("performance", "Performance"),
    ("co2e_lifetime", "Lifetime CO2e"),
    ("cost_per_iops_set", "Cost per IOPS (set)"),
    ("cost_per_gb_usable", "Cost per usable GB"),
    ("energy", "Energy per year"),
    ("usable_capacity", "Usable capacity"),
)


def _e(v: object) -> str:
    return escape("" if v is None else str(v))


def _clip(text: str, limit: int) -> str:
    """The text, escaped, cut at `limit` characters with a note saying how many were left out."""
    if len(text) <= limit:
        return _e(text)
    left = len(text) - limit
    return f"{_e(text[:limit])}… <i class='muted'>({left:,} more characters are not in this PDF)</i>"


def _tr(*cells: str | tuple[str, bool]) -> str:
    """A table row; a (text, True) cell is a number (right-aligned). Texts are already escaped."""
    out = []
    for c in cells:
        text, num = c if isinstance(c, tuple) else (c, False)
        out.append(f"<td class='n'>{text}</td>" if num else f"<td>{text}</td>")
    return "<tr>" + "".join(out) + "</tr>"


def _head(*names: str) -> str:
    """A table's header row (escaped names), repeated on each page the table spans."""
    return "<thead><tr>" + "".join(f"<th>{x}</th>" for x in names) + "</tr></thead>"


# --- the page's wording of each figure (frontend/src/components/Review/units.ts) -------------------


def perf_unit(metric: str) -> str:
    return "MB/s" if metric == "mb_s" else "RPS" if metric == "rps" else "IOPS"


def perf_text(value: Decimal | None, metric: str) -> str:
    return n.plain(value, perf_unit(metric))


def device_text(c: CandidateRead) -> str:
    return f"{c.model} ({n.decimal_bytes(c.capacity_bytes)}) × {c.count}"


def protection_text(c: CandidateRead) -> str:
    spares = f" + {c.hot_spares} hot spare{'s' if c.hot_spares > 1 else ''}" if c.hot_spares > 0 else ""
    op = f", {n.fraction_pct(c.over_provisioning)} over-provisioned" if c.over_provisioning else ""
    return f"{c.protection}{spares}{op}"


def energy_text(j: Decimal | float | None) -> str:
    """Energy as the UI's formatEnergy writes it: J, kJ, MJ, from 3.6 MJ up kWh."""
    if j is None:
        return n.MISSING
    v = float(j)
    a = abs(v)
    div, unit = (
        (3.6e6, "kWh") if a >= 3.6e6 else (1e6, "MJ") if a >= 1e6 else (1e3, "kJ") if a >= 1e3 else (1, "J")
    )
    return f"{n.sig3(v / div)} {unit}"


def tick_number(v: float) -> str:
    """Compact tick labels as the UI's charts write them (components/charts/axis.ts): 12000 -> "12k"."""
    a = abs(v)
    if a >= 1e9:
        return f"{n.sig3(v / 1e9)}G"
    if a >= 1e6:
        return f"{n.sig3(v / 1e6)}M"
    if a >= 1e3:
        return f"{n.sig3(v / 1e3)}k"
    return n.sig3(v)


def nice_ticks(top: float, count: int = 5) -> list[float]:
    """Round-numbered ticks (1, 2 or 5 x 10^k apart) from 0 to at least `top`."""
    if top <= 0:
        return [0.0, 1.0]
    raw = top / count
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 5, 10) if m * mag >= raw)
    ticks = [0.0]
    while ticks[-1] < top - step * 1e-9:
        ticks.append(float(f"{ticks[-1] + step:.12g}"))
    return ticks


def figure_rows(r: ReviewRead) -> list[tuple[str, str, str, list[str]]]:
    """Every computed figure per candidate, as the page's figures table shows it (figureRows in
    frontend/src/components/Review/Figures.tsx): (key, label, note, one text per candidate)."""
    cur = r.currency
    metric = r.candidates[0].performance_metric if r.candidates else "iops"
    mixed = any(c.performance_metric != metric for c in r.candidates)
    perf = "unit of performance" if mixed else perf_unit(metric)
    rows: list[tuple[str, str, str, Callable[[CandidateRead], str]]] = [
        ("drives", "Drives (data drives)", "", lambda c: f"{c.drives} ({c.data_drives})"),
        ("raw_bytes", "Raw capacity", GB_NOTE, lambda c: n.decimal_bytes(c.raw_bytes)),
        ("usable_bytes", "Usable capacity", GB_NOTE, lambda c: n.decimal_bytes(c.usable_bytes)),
        ("protection_overhead", "Protection overhead", "", lambda c: n.fraction_pct(c.protection_overhead)),
        ("price_total", "Set price", "", lambda c: n.money(c.price_total, cur)),
        ("performance", "Performance", "", lambda c: perf_text(c.performance_value, c.performance_metric)),
        ("mb_s", "Throughput", "", lambda c: n.plain(c.mb_s, "MB/s")),
        (
            "cost_per_iops_single",
            f"Cost per {perf}, single drive",
            "",
            lambda c: n.money(c.cost_per_iops_single, cur),
        ),
        ("cost_per_iops_set", f"Cost per {perf}, set", "", lambda c: n.money(c.cost_per_iops_set, cur)),
        ("cost_per_gb_raw", "Cost per GB raw", GB_NOTE, lambda c: n.money(c.cost_per_gb_raw, cur)),
        ("cost_per_gb_usable", "Cost per GB usable", GB_NOTE, lambda c: n.money(c.cost_per_gb_usable, cur)),
        (
            "cost_per_gb_usable_per_iops",
            f"Cost per usable GB per {perf}",
            GB_NOTE,
            lambda c: n.money(c.cost_per_gb_usable_per_iops, cur),
        ),
        ("iops_per_w", f"{'Performance' if mixed else perf} per watt", "", lambda c: n.plain(c.iops_per_w)),
        ("mb_s_per_w", "MB/s per watt", "", lambda c: n.plain(c.mb_s_per_w)),
        (
            "idle_load_w",
            "Power idle / load (set)",
            "",
            lambda c: f"{n.plain(c.idle_w, 'W')} / {n.plain(c.load_w, 'W')}",
        ),
        (
            "energy_kwh_per_year",
            "Energy per year (device)",
            "",
            lambda c: n.plain(c.energy_kwh_per_year, "kWh"),
        ),
        (
            "facility_kwh_per_year",
            f"Energy per year (× PUE {n.plain(r.pue)})",
            "",
            lambda c: n.plain(c.facility_kwh_per_year, "kWh"),
        ),
        ("energy_cost_per_year", "Energy cost per year", "", lambda c: n.money(c.energy_cost_per_year, cur)),
        (
            "operational_kg_per_year",
            "Operational CO2e per year",
            "",
            lambda c: n.plain(c.operational_kg_per_year, "kg"),
        ),
        ("replacements", "Replacements (expected)", "", lambda c: n.plain(c.replacements, "drives")),
        ("embodied_kg", "Embodied CO2e (incl. replacements)", "", lambda c: n.plain(c.embodied_kg, "kg")),
        ("tco_purchase", "TCO: purchase", "", lambda c: n.money(c.tco_parts.purchase, cur)),
        ("tco_energy", "TCO: energy", "", lambda c: n.money(c.tco_parts.energy, cur)),
        ("tco_replacements", "TCO: replacements", "", lambda c: n.money(c.tco_parts.replacements, cur)),
        ("tco", f"TCO over {n.plain(r.horizon_years)} years", "", lambda c: n.money(c.tco, cur)),
        ("co2e_kg_lifetime", "Lifetime CO2e", "", lambda c: n.plain(c.co2e_kg_lifetime, "kg")),
    ]
    return [(key, label, note, [f(c) for c in r.candidates]) for key, label, note, f in rows]


def scatter_svg(r: ReviewRead) -> str:
    """TCO against performance as the page draws it: performance across, TCO up, one coloured
    point per candidate named in a key under the plot (never labels on top of each other)."""
    pts = [
        (c.name, float(c.performance_value), float(c.tco))
        for c in r.candidates
        if c.performance_value is not None
    ]
    if not pts:
        return "<p class='muted'>No candidate has both a TCO and a performance.</p>"
    metric = r.candidates[0].performance_metric
    w, plot_h = 720, 300
    left, right, top, bottom = 78, 20, 12, 44  # room for the tick labels and, outside them, the axis titles
    xt, yt = nice_ticks(max(p[1] for p in pts)), nice_ticks(max(p[2] for p in pts))
    xmax, ymax = xt[-1] or 1.0, yt[-1] or 1.0
    pw, ph = w - left - right, plot_h - top - bottom
    key_cols = 3
    key_rows = math.ceil(len(pts) / key_cols)
    h = plot_h + 16 + key_rows * 16

    def px(v: float) -> float:
        return left + pw * v / xmax

    def py(v: float) -> float:
        return top + ph - ph * v / ymax

    out = [f"<svg xmlns='http://www.w3.org/2000/svg' width='{w}' height='{h}' viewBox='0 0 {w} {h}'>"]
    for v in xt:
        x = px(v)
        out.append(f"<line x1='{x:.1f}' y1='{top}' x2='{x:.1f}' y2='{top + ph}' stroke='#e5e7eb'/>")
        out.append(
            f"<text x='{x:.1f}' y='{top + ph + 13}' font-size='9' text-anchor='middle'>"
            f"{tick_number(v)}</text>"
        )
    for v in yt:
        y = py(v)
        out.append(f"<line x1='{left}' y1='{y:.1f}' x2='{left + pw}' y2='{y:.1f}' stroke='#e5e7eb'/>")
        out.append(
            f"<text x='{left - 6}' y='{y + 3:.1f}' font-size='9' text-anchor='end'>{tick_number(v)}</text>"
        )
    out.append(f"<line x1='{left}' y1='{top + ph}' x2='{left + pw}' y2='{top + ph}' stroke='#333'/>")
    out.append(f"<line x1='{left}' y1='{top}' x2='{left}' y2='{top + ph}' stroke='#333'/>")
    out.append(
        f"<text x='{left + pw / 2:.0f}' y='{top + ph + 34}' text-anchor='middle' font-size='11'>"
        f"performance ({perf_unit(metric)})</text>"
    )
    cy = top + ph / 2
    out.append(
        f"<text x='16' y='{cy:.0f}' font-size='11' transform='rotate(-90 16 {cy:.0f})' text-anchor='middle'>"
        f"TCO ({_e(r.currency)})</text>"
    )
    col_w = (w - left) / key_cols
    for i, (name, perf, tco) in enumerate(pts):
        color = color_at(i)
        out.append(f"<circle cx='{px(perf):.1f}' cy='{py(tco):.1f}' r='5' fill='{color}'/>")
        kx = left + (i % key_cols) * col_w
        ky = plot_h + 16 + (i // key_cols) * 16
        out.append(f"<circle cx='{kx + 5:.1f}' cy='{ky - 4}' r='5' fill='{color}'/>")
        out.append(f"<text x='{kx + 14:.1f}' y='{ky}' font-size='10'>{_e(name)}</text>")
    out.append("</svg>")
    out.append("<p class='muted'>Down and to the right is better: more performance for less money.</p>")
    return "".join(out)


def tco_bars_svg(r: ReviewRead) -> str:
    """Stacked TCO bars: purchase, energy, replacements (the page's colours for the three)."""
    if not r.candidates:
        return ""
    row, label_w, w = 26, 170, 720
    h = row * len(r.candidates) + 40
    top = max(float(c.tco) for c in r.candidates) or 1.0
    parts = (("purchase", color_at(0)), ("energy", color_at(2)), ("replacements", color_at(1)))
    bar_w = w - label_w - 130
    out = [f"<svg xmlns='http://www.w3.org/2000/svg' width='{w}' height='{h}' viewBox='0 0 {w} {h}'>"]
    for i, c in enumerate(r.candidates):
        y = 10 + i * row
        out.append(
            f"<text x='{label_w - 6}' y='{y + 14}' font-size='10' text-anchor='end'>{_e(c.name)}</text>"
        )
        x = float(label_w)
        for key, color in parts:
            v = float(getattr(c.tco_parts, key))
            bw = bar_w * v / top
            out.append(f"<rect x='{x:.1f}' y='{y}' width='{bw:.1f}' height='18' fill='{color}'/>")
            x += bw
        out.append(
            f"<text x='{x + 4:.1f}' y='{y + 14}' font-size='10'>{_e(n.money(c.tco, r.currency))}</text>"
        )
    ly = h - 14
    for k, (key, color) in enumerate(parts):
        out.append(f"<rect x='{label_w + k * 120}' y='{ly - 9}' width='10' height='10' fill='{color}'/>")
        out.append(f"<text x='{label_w + k * 120 + 14}' y='{ly}' font-size='10'>{key}</text>")
    out.append("</svg>")
    return "".join(out)


def _methodology() -> str:
    rows = []
    for m in formulas.METHODOLOGY:
        doc = getattr(formulas, m.name).__doc__ or ""
        rows.append(
            f"<tr><td>{_e(m.name)}</td><td>{_e(m.formula)}</td>"
            f"<td class='muted'>{_e(' '.join(doc.split()))}</td>"
            f"<td>{_e(m.source)}</td></tr>"
        )
    return (
        "<section class='appendix'><h2>Methodology</h2>"
        f"<p>GB = 10^9 bytes. A year = {formulas.HOURS_PER_YEAR:,} hours (365.25 days). Money is computed "
        "in exact decimals and rounded once: totals to the currency's minor unit, rates to 4 places.</p>"
        "<table>"
        + _head("figure", "formula", "as the code documents it", "source")
        + "".join(rows)
        + "</table></section>"
    )


def bounded(r: ReviewRead) -> tuple[ReviewRead, int]:
    """The review with at most MAX_CANDIDATES candidates (the best ranked) and how many were cut."""
    if len(r.candidates) <= MAX_CANDIDATES:
        return r, 0
    ranked = [x.candidate_id for x in r.ranking][:MAX_CANDIDATES]
    keep = set(ranked) or {c.id for c in r.candidates[:MAX_CANDIDATES]}
    return (
        r.model_copy(
            update={
                "candidates": [c for c in r.candidates if c.id in keep],
                "ranking": [x for x in r.ranking if x.candidate_id in keep],
            }
        ),
        len(r.candidates) - len(keep),
    )


def html(
    r: ReviewRead, comments: list[ReviewCommentRead], *, comments_total: int | None = None, pts: str = ""
) -> str:
    """The page; `comments` are the newest MAX_COMMENTS of `comments_total` (older ones are said to
    be left out); `pts`: the SNIA PTS report pages of candidates linked to PTS runs
    (pts_pages.section), printed after the discussion and before the methodology appendix."""
    r, cut = bounded(r)
    comments = comments[-MAX_COMMENTS:]
    total = max(comments_total or 0, len(comments))
    cur = _e(r.currency)
    p: list[str] = [
        "<!doctype html><html><head><meta charset='utf-8'>",
        f"<title>{_e(r.name)}</title><style>{CSS}</style></head><body>",
        f"<h1>{_e(r.name)}</h1>",
        f"<p class='muted'>Procurement review, version {r.version}. {_clip(r.question, MAX_TEXT_CHARS)}</p>",
    ]
    if r.decision:
        d = r.decision
        p.append(
            f"<p><b>Decision:</b> {_e(d.candidate_name)} — by {_e(d.decided_by_name)} on "
            f"{_e(d.decided_at.strftime('%Y-%m-%d %H:%M UTC'))}. {_clip(d.reason, MAX_TEXT_CHARS)}</p>"
        )
    else:
        p.append("<p class='muted'>Not decided yet.</p>")
    horizon = n.plain(r.horizon_years, "years")
    p.append(
        "<div class='keep'><h2>Context</h2><table>"
        f"<tr><th>currency</th><td>{cur}</td><th>horizon</th><td>{_e(horizon)}</td></tr>"
        f"<tr><th>duty cycle</th><td>{_e(n.plain(float(r.duty_cycle) * 100, '%'))} of "
        f"{n.count(r.hours_per_year)} h/year under load</td>"
        f"<th>PUE</th><td>{_e(n.plain(r.pue))}</td></tr>"
        f"<tr><th>tariff</th><td>{_e(n.money(r.tariff_per_kwh, r.currency + '/kWh'))} "
        f"({_e(r.tariff_source)})</td>"
        f"<th>grid intensity</th><td>{_e(n.plain(r.grid_g_per_kwh, 'gCO2e/kWh'))} "
        f"({_e(r.grid_source)})</td></tr>"
        "</table></div>"
    )
    weighted = [(k, label) for k, label in CRITERIA if Decimal(r.weights.get(k, 0)) != 0]
    p.append(
        f"<div class='{'keep' if len(r.ranking) <= 25 else ''}'><h2>Ranking</h2>"
        f"<p class='muted'>{_e(r.normalisation)}</p><table>"
        + _head(
            "rank", "candidate", "score",
            *(f"{_e(label)} × {_e(n.plain_decimal(r.weights[k]))}" for k, label in weighted),
        )
    )  # fmt: skip
    for x in r.ranking:
        per = [(_e(n.plain(x.scores.get(k))), True) for k, _ in weighted]
        p.append(_tr((str(x.rank), True), _e(x.name), (_e(n.plain(x.score)), True), *per))
    p.append("</table></div>")
    if cut:
        p.append(
            f"<p class='flag'>{cut} lower-ranked candidate{'s are' if cut != 1 else ' is'} not in this PDF "
            f"(it holds the best {MAX_CANDIDATES}); the review page shows them all.</p>"
        )
    p.append(
        "<h2>Candidates</h2><table>"
        + _head(
            "Candidate", "Device × count", "Protection", "Unit price", "AFR",
            "Embodied CO2e (set + replacements)", "Performance", "Power (set)",
        )
    )  # fmt: skip
    for c in r.candidates:
        flags = "".join(f"<br><span class='flag'>⚠ {_e(v.message)}</span>" for v in c.validity)
        label = "measured" if c.performance_source in ("run", "comparison") else c.performance_source
        perf = (
            f"{_e(perf_text(c.performance_value, c.performance_metric))} ({_e(label)})<br>"
            f"<span class='muted'>{_e(c.performance_reference)}</span>{flags}"
        )
        power_label = "measured" if c.power_source in ("run", "comparison") else c.power_source
        power = (
            f"{_e(n.plain(c.idle_w, 'W'))} idle / {_e(n.plain(c.load_w, 'W'))} load"
            + (f" ({_e(power_label)})" if power_label else "")
            + f"<br><span class='muted'>{_e(c.power_reference or '')}</span>"
        )
        p.append(
            _tr(
                f"<b>{_e(c.name)}</b>",
                _e(device_text(c)),
                _e(protection_text(c)),
                (_e(n.money(c.unit_price, r.currency)), True),
                (_e(n.fraction_pct(c.afr)), True),
                f"{_e(n.plain(c.embodied_kg, 'kg CO2e'))}<br>"
                f"<span class='muted'>{_e(c.embodied_source or '')}</span>",
                perf,
                power,
            )
        )
    p.append("</table>")
    notes = [(c.name, d) for c in r.candidates for d in c.discrepancies]
    if notes:
        p.append("<h2>Differences from the published figures</h2><ul>")
        p += [
            f"<li><b>{_e(nm)}</b>, {_e(d.field)}: reported {_e(n.grouped_decimal(d.reported))}, computed "
            f"{_e(n.MISSING if d.computed is None else n.grouped_decimal(d.computed))} — {_e(d.message)}</li>"
            for nm, d in notes
        ]
        p.append("</ul>")
    # the heading goes with the first table, so it never stays alone at a page's foot
    figures_head = (
        f"<h2>Figures</h2><p class='muted'>Money in {cur} exactly as computed (totals to the minor unit, "
        f"rates to 4 places); GB = 10^9 bytes; a year = {n.count(r.hours_per_year)} h.</p>"
    )
    rows = figure_rows(r)
    for start in range(0, len(r.candidates), FIGURE_COLUMNS):
        names = [_e(c.name) for c in r.candidates[start : start + FIGURE_COLUMNS]]
        p.append(f"<div class='keep'>{figures_head if start == 0 else ''}<table>" + _head("Figure", *names))
        for _key, label, note, values in rows:
            head = _e(label) + (f" <span class='muted'>({_e(note)})</span>" if note else "")
            cells = [(_e(v), True) for v in values[start : start + FIGURE_COLUMNS]]
            p.append(_tr(head, *cells))
        p.append("</table></div>")
    p.append(f"<div class='keep'><h2>TCO against performance</h2>{scatter_svg(r)}</div>")
    p.append(
        f"<div class='keep'><h2>TCO over {_e(n.plain(r.horizon_years))} years ({cur})</h2>"
        f"{tco_bars_svg(r)}</div>"
    )
    if r.sensitivity:
        p.append(
            "<div class='keep'><h2>Sensitivity</h2><p class='muted'>One change at a time over the range "
            "shown: where another candidate would lead.</p><table>"
            + _head(
                "Change",
                "Range scanned",
                "Review's value",
                "Where the leader changes",
                "New leader",
                "What it means",
            )
        )
        for s in r.sensitivity:
            label, unit = PARAMETERS.get(s.parameter, (s.parameter, ""))
            flip = "no flip in range" if s.flip_at is None else f"flips at {n.plain(s.flip_at)}"
            p.append(
                _tr(
                    f"<b>{_e(label)}</b><br><span class='muted'>{_e(unit.format(cur=r.currency))}</span>",
                    (f"{_e(n.plain(s.low))} – {_e(n.plain(s.high))}", True),
                    (_e(n.plain(s.base)), True),
                    _e(flip),
                    _e(s.new_leader or n.MISSING),
                    _e(s.message),
                )
            )
        p.append("</table></div>")
    jc = r.job_crossover
    with_jobs = [c for c in r.candidates if c.job_energy]
    if jc or with_jobs:
        labels = jc.labels if jc else [j.label for j in with_jobs[0].job_energy]
        heads = [
            _e(x) + (" <span class='muted'>(crossover)</span>" if jc and jc.crossover == x else "")
            for x in labels
        ]
        p.append("<div class='keep'><h2>Energy per job</h2><table>" + _head("Candidate", *heads))
        for c in with_jobs:
            by = {j.label: j for j in c.job_energy}
            cells = [(_e(energy_text(by[x].energy_j) if x in by else n.MISSING), True) for x in labels]
            p.append(_tr(_e(c.name), *cells))
        if jc:
            p.append(_tr("<b>uses least</b>", *(_e(w) for w in jc.winners)))
        p.append("</table>" + (f"<p>{_e(jc.message)}</p>" if jc else "") + "</div>")
    if comments:
        p.append("<h2>Discussion</h2>")
        if total > len(comments):
            older = total - len(comments)
            p.append(
                f"<p class='flag'>{older:,} earlier comment{'s are' if older != 1 else ' is'} not in this "
                "PDF "
                f"(it holds the newest {MAX_COMMENTS}); the review page shows the whole discussion.</p>"
            )
        p.append("<ul>")
        p += [
            f"<li><b>{_e(c.author_name)}</b> ({_e(c.created_at.strftime('%Y-%m-%d'))}): "
            f"{_clip(c.body, MAX_COMMENT_CHARS)}</li>"
            for c in comments
        ]
        p.append("</ul>")
    p.append(pts)
    p.append(_methodology())
    p.append("</body></html>")
    return "".join(p)
