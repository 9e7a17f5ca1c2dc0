"""The review as a printable HTML page: tables, two charts drawn here as inline SVG (no script, no
network), and the methodology appendix rendered from backend/review/formulas.py's table and
docstrings, so the PDF says exactly what the code computes. Every text is HTML-escaped.

What a PDF holds is bounded, so no review makes Chromium print for minutes: at most MAX_CANDIDATES
candidates (the review's own limit), the newest MAX_COMMENTS comments, each free text clipped at
MAX_TEXT_CHARS (a comment's at MAX_COMMENT_CHARS); whatever is left out is said where it would have
been. The largest review so bounded prints on at most MAX_PAGES A4 pages
(tests/backend/test_review_pdf.py prints one)."""

from decimal import Decimal
from html import escape

from backend.review import formulas
from backend.review.schemas import ReviewCommentRead, ReviewRead
from backend.review.service import MAX_CANDIDATES

MAX_COMMENTS = 50
MAX_COMMENT_CHARS = 2_000
MAX_TEXT_CHARS = 4_000
MAX_PAGES = 30  # the largest review printed on 19 (tests/backend/test_review_pdf.py)

CSS = """
@page { size: A4 landscape; margin: 12mm; }
body { font-family: "DejaVu Sans", Arial, sans-serif; font-size: 9pt; color: #111;
       font-variant-ligatures: none; }
h1 { font-size: 16pt; margin: 0 0 4pt; } h2 { font-size: 12pt; margin: 14pt 0 4pt; break-after: avoid; }
table { border-collapse: collapse; width: 100%; margin: 4pt 0; }
th, td { border: 1px solid #bbb; padding: 2pt 4pt; text-align: left; vertical-align: top; }
td.n { text-align: right; font-variant-numeric: tabular-nums; }
th { background: #eee; } .muted { color: #555; } .flag { color: #a40; }
.appendix { break-before: page; } svg text { font-family: "DejaVu Sans", Arial, sans-serif; }
"""
COLORS = ("#2563eb", "#16a34a", "#d97706", "#9333ea", "#dc2626", "#0891b2", "#4b5563")


def _e(v: object) -> str:
    return escape("" if v is None else str(v))


def _clip(text: str, limit: int) -> str:
    """The text, escaped, cut at `limit` characters with a note saying how many were left out."""
    if len(text) <= limit:
        return _e(text)
    left = len(text) - limit
    return f"{_e(text[:limit])}… <i class='muted'>({left:,} more characters are not in this PDF)</i>"


def _num(v: Decimal | int | None, places: int = 2) -> str:
    if v is None:
        return "—"
    return f"{Decimal(v):,.{places}f}"


def _tr(*cells: str | tuple[str, bool]) -> str:
    """A table row; a (text, True) cell is a number (right-aligned). Texts are already escaped."""
    out = []
    for c in cells:
        text, num = c if isinstance(c, tuple) else (c, False)
        out.append(f"<td class='n'>{text}</td>" if num else f"<td>{text}</td>")
    return "<tr>" + "".join(out) + "</tr>"


def _gb(n: int) -> str:
    return f"{n / formulas.GB:,.0f} GB"


def scatter_svg(r: ReviewRead) -> str:
    """Cost (TCO) against performance, one labelled dot per candidate."""
    pts = [(c.name, c.tco, c.performance_value) for c in r.candidates if c.performance_value is not None]
    w, h, pad = 640, 300, 50
    if not pts:
        return "<p class='muted'>No candidate has a performance figure yet.</p>"
    xmax = max(float(p[1]) for p in pts) or 1.0
    ymax = max(float(p[2]) for p in pts) or 1.0
    out = [f"<svg xmlns='http://www.w3.org/2000/svg' width='{w}' height='{h}' viewBox='0 0 {w} {h}'>"]
    out.append(f"<line x1='{pad}' y1='{h - pad}' x2='{w - 10}' y2='{h - pad}' stroke='#333'/>")
    out.append(f"<line x1='{pad}' y1='10' x2='{pad}' y2='{h - pad}' stroke='#333'/>")
    out.append(
        f"<text x='{w / 2}' y='{h - 12}' text-anchor='middle' font-size='11'>TCO ({_e(r.currency)})</text>"
    )
    metric = _e(r.candidates[0].performance_metric if r.candidates else "")
    out.append(
        f"<text x='14' y='{h / 2}' font-size='11' transform='rotate(-90 14 {h / 2})' text-anchor='middle'>"
        f"performance ({metric})</text>"
    )
    for i in range(5):
        xv, yv = xmax * i / 4, ymax * i / 4
        x = pad + (w - pad - 20) * i / 4
        y = h - pad - (h - pad - 20) * i / 4
        out.append(
            f"<text x='{x:.0f}' y='{h - pad + 14}' font-size='9' text-anchor='middle'>{xv:,.0f}</text>"
        )
        out.append(f"<text x='{pad - 4}' y='{y:.0f}' font-size='9' text-anchor='end'>{yv:,.0f}</text>")
    for n, (name, tco, perf) in enumerate(pts):
        x = pad + (w - pad - 20) * float(tco) / xmax
        y = h - pad - (h - pad - 20) * float(perf) / ymax
        color = COLORS[n % len(COLORS)]
        out.append(f"<circle cx='{x:.1f}' cy='{y:.1f}' r='5' fill='{color}'/>")
        # labels of points in the right third go to their left, so none runs off the chart
        left = x > pad + (w - pad - 20) * 2 / 3
        anchor, dx = ("end", -7) if left else ("start", 7)
        out.append(
            f"<text x='{x + dx:.1f}' y='{y - 6:.1f}' font-size='10' text-anchor='{anchor}'>{_e(name)}</text>"
        )
    out.append("</svg>")
    return "".join(out)


def tco_bars_svg(r: ReviewRead) -> str:
    """Stacked TCO bars: purchase, energy, replacements."""
    if not r.candidates:
        return ""
    row, label_w, w = 26, 170, 640
    h = row * len(r.candidates) + 40
    top = max(float(c.tco) for c in r.candidates) or 1.0
    parts = (("purchase", "#2563eb"), ("energy", "#d97706"), ("replacements", "#dc2626"))
    out = [f"<svg xmlns='http://www.w3.org/2000/svg' width='{w}' height='{h}' viewBox='0 0 {w} {h}'>"]
    for i, c in enumerate(r.candidates):
        y = 10 + i * row
        out.append(
            f"<text x='{label_w - 6}' y='{y + 14}' font-size='10' text-anchor='end'>{_e(c.name)}</text>"
        )
        x = float(label_w)
        for key, color in parts:
            v = float(getattr(c.tco_parts, key))
            bw = (w - label_w - 90) * v / top
            out.append(f"<rect x='{x:.1f}' y='{y}' width='{bw:.1f}' height='18' fill='{color}'/>")
            x += bw
        out.append(f"<text x='{x + 4:.1f}' y='{y + 14}' font-size='10'>{_num(c.tco)} {_e(r.currency)}</text>")
    ly = h - 14
    for n, (key, color) in enumerate(parts):
        out.append(f"<rect x='{label_w + n * 120}' y='{ly - 9}' width='10' height='10' fill='{color}'/>")
        out.append(f"<text x='{label_w + n * 120 + 14}' y='{ly}' font-size='10'>{key}</text>")
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
        "<table><tr><th>figure</th><th>formula</th><th>as the code documents it</th><th>source</th></tr>"
        + "".join(rows)
        + "</table></section>"
    )


def _bounded(r: ReviewRead) -> tuple[ReviewRead, int]:
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


def html(r: ReviewRead, comments: list[ReviewCommentRead], *, comments_total: int | None = None) -> str:
    """The page; `comments` are the newest MAX_COMMENTS of `comments_total` (older ones are said to
    be left out)."""
    r, cut = _bounded(r)
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
    p.append(
        "<h2>Context</h2><table>"
        f"<tr><th>currency</th><td>{cur}</td><th>horizon</th><td>{_num(r.horizon_years)} years</td></tr>"
        f"<tr><th>duty cycle</th><td>{_num(r.duty_cycle * 100, 1)} % of {r.hours_per_year:,} h/year "
        "under load</td>"
        f"<th>PUE</th><td>{_num(r.pue, 2)}</td></tr>"
        f"<tr><th>tariff</th><td>{_num(r.tariff_per_kwh, 4)} {cur}/kWh ({_e(r.tariff_source)})</td>"
        f"<th>grid intensity</th><td>{_num(r.grid_g_per_kwh, 0)} gCO2e/kWh ({_e(r.grid_source)})</td></tr>"
        "</table>"
    )
    p.append(
        "<h2>Ranking</h2><table><tr><th>rank</th><th>candidate</th><th>score</th>"
        "<th>per criterion (1 = best)</th></tr>"
    )
    weights = ", ".join(f"{_e(k)} × {_num(v, 2)}" for k, v in r.weights.items())
    for x in r.ranking:
        per = ", ".join(f"{_e(k)} {_num(v, 3)}" for k, v in x.scores.items())
        p.append(
            f"<tr><td class='n'>{x.rank}</td><td>{_e(x.name)}</td>"
            f"<td class='n'>{_num(x.score, 4)}</td><td>{per}</td></tr>"
        )
    p.append(f"</table><p class='muted'>Weights: {weights}. Normalisation: {_e(r.normalisation)}.</p>")
    if cut:
        p.append(
            f"<p class='flag'>{cut} lower-ranked candidate{'s are' if cut != 1 else ' is'} not in this PDF "
            f"(it holds the best {MAX_CANDIDATES}); the review page shows them all.</p>"
        )
    p.append(
        "<h2>Candidates</h2><table><tr><th>candidate</th><th>device</th><th>drives</th><th>protection</th>"
        "<th>performance</th><th>power</th><th>unit price</th></tr>"
    )
    for c in r.candidates:
        flags = "".join(f"<br><span class='flag'>⚠ {_e(v.message)}</span>" for v in c.validity)
        power = (
            f"{_num(c.idle_w, 1)} W idle / {_num(c.load_w, 1)} W load "
            f"({_e(c.power_source)}: {_e(c.power_reference)})"
            if c.load_w is not None
            else "—"
        )
        spare = f" ({c.hot_spares} spare)" if c.hot_spares else ""
        perf = (
            f"{_num(c.performance_value, 1)} {_e(c.performance_metric)} — {_e(c.performance_source)}: "
            f"{_e(c.performance_reference)}{flags}"
        )
        p.append(
            _tr(
                _e(c.name),
                f"{_e(c.model)}, {_gb(c.capacity_bytes)} (GB = 10^9 B)",
                (f"{c.drives}{spare}", True),
                _e(c.protection),
                perf,
                power,
                (f"{_num(c.unit_price)} {cur}", True),
            )
        )
    p.append("</table>")
    p.append(
        "<h2>Figures</h2><table><tr><th>candidate</th><th>raw</th><th>usable</th><th>overhead</th>"
        f"<th>price ({cur})</th><th>cost/IOPS single</th><th>cost/IOPS set</th>"
        "<th>cost/GB raw (GB = 10^9 B)</th><th>cost/GB usable (GB = 10^9 B)</th><th>IOPS/W</th>"
        f"<th>kWh/year</th><th>TCO ({cur})</th><th>kg CO2e lifetime</th></tr>"
    )
    for c in r.candidates:
        nums = (
            _gb(c.raw_bytes),
            _gb(c.usable_bytes),
            f"{_num(c.protection_overhead * 100, 0)} %",
            _num(c.price_total),
            _num(c.cost_per_iops_single),
            _num(c.cost_per_iops_set),
            _num(c.cost_per_gb_raw),
            _num(c.cost_per_gb_usable),
            _num(c.iops_per_w),
            _num(c.energy_kwh_per_year, 1),
            _num(c.tco),
            _num(c.co2e_kg_lifetime, 1),
        )
        p.append(_tr(_e(c.name), *((v, True) for v in nums)))
    p.append("</table>")
    notes = [(c.name, d) for c in r.candidates for d in c.discrepancies]
    if notes:
        p.append("<h2>Differences from the published figures</h2><ul>")
        p += [f"<li><b>{_e(n)}</b>, {_e(d.field)}: {_e(d.message)}</li>" for n, d in notes]
        p.append("</ul>")
    p.append(f"<h2>Cost against performance</h2>{scatter_svg(r)}")
    p.append(f"<h2>Total cost of ownership over {_num(r.horizon_years)} years</h2>{tco_bars_svg(r)}")
    p.append(
        "<h2>Sensitivity</h2><table><tr><th>parameter</th><th>base</th><th>range</th>"
        "<th>where the ranking flips</th></tr>"
    )
    for s in r.sensitivity:
        p.append(
            f"<tr><td>{_e(s.parameter)}</td><td class='n'>{_num(s.base, 4)}</td>"
            f"<td>{_num(s.low, 2)} to {_num(s.high, 2)}</td><td>{_e(s.message)}</td></tr>"
        )
    p.append("</table>")
    if r.job_crossover:
        jc = r.job_crossover
        p.append(
            "<h2>Energy per job</h2><table><tr><th>candidate</th>"
            + "".join(f"<th>{_e(x)} (J)</th>" for x in jc.labels)
            + "</tr>"
        )
        for c in r.candidates:
            by = {j.label: j for j in c.job_energy}
            cells = "".join(
                f"<td class='n'>{_num(by[x].energy_j, 2) if x in by else '—'}</td>" for x in jc.labels
            )
            p.append(f"<tr><td>{_e(c.name)}</td>{cells}</tr>")
        p.append(f"</table><p>{_e(jc.message)}</p>")
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
    p.append(_methodology())
    p.append("</body></html>")
    return "".join(p)
