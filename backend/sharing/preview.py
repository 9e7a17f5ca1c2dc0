"""Link previews of a shared view: OpenGraph tags injected into the SPA's index.html and a PNG of
the main chart rendered on the server (matplotlib's Agg canvas; docs/adr/0018-share-previews.md).

Everything injected into HTML is the team's text: escaped here, attribute-safe."""

import html
import io
from typing import Any

from backend.sharing.schemas import SharedComparison, SharedReview, SharedView

WIDTH_PX, HEIGHT_PX, DPI = 1200, 630, 100
# every text drawn is printed as written: matplotlib reads "$…$" as mathtext (a title "$$" or
# "$x^$" made the preview a 500) and a lone "\\" as an escape; every text call passes this
PLAIN: dict[str, Any] = {"parse_math": False}
MAX_BARS = 12
SITE = "iowatt"
# Fonts in the order matplotlib (>= 3.6) falls back through them glyph by glyph: DejaVu Sans
# (matplotlib's own; Latin, Greek, Cyrillic) and a CJK font, WenQuanYi Micro Hei (Debian's
# fonts-wqy-microhei, 1.6 MB: scripts/install-system-deps.sh, deploy/Dockerfile.server); Noto
# Sans CJK and Droid Sans Fallback serve where an operator installed those instead. A team or run
# named in Chinese, Japanese or Korean was drawn as empty boxes with DejaVu alone.
FONTS = ["DejaVu Sans", "WenQuanYi Micro Hei", "Noto Sans CJK JP", "Droid Sans Fallback"]
_CJK_FILES = ("wqy", "notosanscjk", "droidsansfallback")
_fonts_set = False


def _use_fonts() -> None:
    """Makes FONTS matplotlib's font family, once per process (the API draws with matplotlib only
    here; set once, not per render, as rcParams are global and renders run in threads).
    matplotlib's font list is cached on disk (~/.cache/matplotlib) and misses fonts installed after
    the cache was written, so the CJK fonts are added from the system's font directories when the
    list lacks them."""
    global _fonts_set
    if _fonts_set:
        return
    import matplotlib
    from matplotlib import font_manager

    known = {f.name for f in font_manager.fontManager.ttflist}
    if not known.intersection(FONTS[1:]):
        for path in font_manager.findSystemFonts():
            if any(k in path.lower().replace("-", "").replace("_", "") for k in _CJK_FILES):
                try:
                    font_manager.fontManager.addfont(path)
                except (OSError, RuntimeError, ValueError):  # a file FreeType cannot read
                    continue
        known = {f.name for f in font_manager.fontManager.ttflist}
    matplotlib.rcParams["font.family"] = [f for f in FONTS if f in known] or ["DejaVu Sans"]
    _fonts_set = True


def _human(value: float, unit: str) -> tuple[float, str]:
    """Base units on the wire; people read MB/s and µs."""
    if unit == "B/s":
        return value / 1e6, "MB/s"
    if unit == "ns":
        return value / 1e3, "µs"
    if unit == "B":
        return value / 1e6, "MB"
    return value, unit


def _fmt(value: float) -> str:
    if abs(value) >= 100:
        return f"{value:,.0f}"
    return f"{value:.3g}"


def _labels(c: SharedComparison) -> list[str]:
    if c.group_by == "none":
        names = {r.id: r.name for r in c.runs}
        return [names.get(col.run_ids[0], col.label) if col.run_ids else col.label for col in c.columns]
    return [col.label for col in c.columns]


LARGE_BLOCK = 64 * 1024


def _headline_kind(c: SharedComparison, job: str) -> str:
    """Bandwidth for large blocks (sequential work is read in MB/s), IOPS for small ones."""
    sizes = [j.bs_bytes for r in c.runs for j in r.jobs if j.name == job and j.bs_bytes]
    return "bandwidth" if sizes and max(sizes) >= LARGE_BLOCK else "iops"


def headline(v: SharedView) -> tuple[str, list[tuple[str, float, bool]], str] | None:
    """The main chart's metric: the first job's first metric with a value (what the compare page's
    first bar chart shows): its title, (column label, value, is baseline) in display units, and unit."""
    c = v.comparison
    if c is None or not c.jobs:
        return None
    job = c.jobs[0]
    for m in sorted(job.metrics, key=lambda m: m.kind != _headline_kind(c, job.name)):
        if any(x is not None for x in m.values):
            _, unit = _human(1.0, m.unit)
            pairs = [
                (lab, _human(x, m.unit)[0], col.is_baseline)
                for lab, x, col in zip(_labels(c), m.values, c.columns, strict=True)
                if x is not None
            ]
            return f"{job.name} · {m.label}", pairs, unit
    return None


def title_of(v: SharedView) -> str:
    if v.title:
        return v.title
    if v.kind == "review":
        return f"Review {v.review.name} (version {v.review.version})" if v.review else "Review"
    if v.kind == "campaign" and v.campaign is not None:
        return f"Campaign {v.campaign.name}"
    if v.kind == "run" and v.comparison is not None and v.comparison.runs:
        return v.comparison.runs[0].name
    n = len(v.comparison.runs) if v.comparison else 0
    return f"Comparison of {n} run{'s' if n != 1 else ''}"


def review_state(r: SharedReview) -> str:
    """ "Decided: X" or "Not decided yet", as the page says it."""
    if r.decision is not None:
        return f"Decided: {r.decision.candidate_name} on {r.decision.decided_at:%Y-%m-%d}"
    return "Not decided yet"


def _review_description(v: SharedView, shared: str) -> str:
    r = v.review
    if r is None:
        return f"{shared} The review of this link was deleted."
    ranking = "; ".join(f"{x.rank}. {x.name} ({_fmt(float(x.score))})" for x in r.ranking[:5])
    more = f" (+{len(r.ranking) - 5} more)" if len(r.ranking) > 5 else ""
    ranked = f" Ranking (score, 1 = best): {ranking}{more}." if ranking else " No candidates yet."
    return f"{review_state(r)}.{ranked} {r.currency}, {_fmt(float(r.horizon_years))} years. {shared}"


def description_of(v: SharedView) -> str:
    shared = f"Shared by {v.team_name} on {v.created_at:%Y-%m-%d}."
    if v.kind == "review":
        return _review_description(v, shared)
    h = headline(v)
    if h is None:
        if v.comparison is None:
            return f"{shared} The runs of this link were deleted."
        return f"{shared} {len(v.comparison.runs)} runs; no comparable results to show."
    name, pairs, unit = h
    figures = "; ".join(f"{lab}: {_fmt(x)} {unit}" for lab, x, _ in pairs[:6])
    more = f" (+{len(pairs) - 6} more)" if len(pairs) > 6 else ""
    c = v.comparison
    phrases = []
    if c is not None and c.jobs:
        key = name.rsplit(" · ", 1)[1]
        m = next(m for m in c.jobs[0].metrics if m.label == key)
        phrases = [ch.phrase for ch in m.changes if ch is not None and ch.verdict != "same"][:3]
    vs = f" vs baseline: {', '.join(phrases)}." if phrases else ""
    return f"{name} — {figures}{more}.{vs} {shared}"


def inject(index_html: str, tags: dict[str, str]) -> str:
    """index.html with a <title> and OpenGraph/Twitter meta tags (escaped) before </head>."""
    esc = {k: html.escape(v, quote=True) for k, v in tags.items()}
    meta = "".join(
        f'<meta property="{k}" content="{val}" />'
        if k.startswith("og:")
        else f'<meta name="{k}" content="{val}" />'
        for k, val in esc.items()
        if k != "title"
    )
    block = f"<title>{esc.get('title', SITE)}</title>{meta}"
    if "<title>" in index_html and "</title>" in index_html:
        start, end = index_html.index("<title>"), index_html.index("</title>") + len("</title>")
        index_html = index_html[:start] + index_html[end:]
    if "</head>" in index_html:
        return index_html.replace("</head>", block + "</head>", 1)
    return block + index_html


def tags_for(v: SharedView | None, *, page_url: str, image_url: str | None) -> dict[str, str]:
    if v is None:
        return {
            "title": f"Link not available · {SITE}",
            "og:title": "Link not available",
            "og:description": "This iowatt share link does not exist, was revoked or expired.",
            "og:site_name": SITE,
            "robots": "noindex",
        }
    title = title_of(v)
    out = {
        "title": f"{title} · {SITE}",
        "og:type": "website",
        "og:site_name": SITE,
        "og:title": title,
        "og:description": description_of(v),
        "og:url": page_url,
        "twitter:card": "summary_large_image",
        "robots": "noindex",
    }
    if image_url:
        out |= {
            "og:image": image_url,
            "og:image:width": str(WIDTH_PX),
            "og:image:height": str(HEIGHT_PX),
            "og:image:alt": out["og:description"][:300],
        }
    return out


def render_png(v: SharedView) -> bytes:
    """The main chart as a 1200×630 PNG (the OpenGraph image size)."""
    # imported here: matplotlib costs start-up time and memory the API needs only for previews
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    _use_fonts()
    fig = Figure(figsize=(WIDTH_PX / DPI, HEIGHT_PX / DPI), dpi=DPI, facecolor="white")
    FigureCanvasAgg(fig)
    fig.text(0.03, 0.94, _clip(title_of(v), 80), fontsize=20, weight="bold", color="#111827", **PLAIN)
    fig.text(
        0.03,
        0.885,
        f"Shared by {_clip(v.team_name, 60)} on {v.created_at:%Y-%m-%d} · {SITE}",
        fontsize=12,
        color="#6b7280",
        **PLAIN,
    )
    h = headline(v)
    if v.kind == "review":
        _review_bars(fig, v.review)
    elif h is None:
        msg = (
            "The runs of this link were deleted."
            if v.comparison is None
            else "No comparable results to chart."
        )
        fig.text(0.5, 0.45, msg, fontsize=18, ha="center", color="#374151", **PLAIN)
    else:
        name, pairs, unit = h
        shown = pairs[:MAX_BARS]
        ax: Any = fig.add_axes((0.30, 0.10, 0.62, 0.70))
        labels = [_clip(lab, 40) + (" (baseline)" if base else "") for lab, _, base in shown][::-1]
        values = [x for _, x, _ in shown][::-1]
        colors = ["#9ca3af" if base else "#2563eb" for _, _, base in shown][::-1]  # baseline grey
        bars = _bars(ax, labels, values, colors)
        ax.set_title(_clip(f"{name} ({unit})", 90), loc="left", fontsize=14, color="#111827", **PLAIN)
        ax.bar_label(bars, labels=[_fmt(x) for x in values], padding=4, fontsize=11, **PLAIN)
        ax.spines[["top", "right"]].set_visible(False)
        ax.tick_params(labelsize=11)
        ax.margins(x=0.15)
        if len(pairs) > MAX_BARS:
            fig.text(
                0.97,
                0.03,
                f"+{len(pairs) - MAX_BARS} more columns",
                ha="right",
                fontsize=10,
                color="#6b7280",
                **PLAIN,
            )
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=DPI)
    return buf.getvalue()


def _review_bars(fig: Any, r: SharedReview | None) -> None:
    """A review's weighted ranking as bars (score, 1 = best), the chosen candidate green, the
    state (decided or not yet) as the chart's title."""
    if r is None or not r.ranking:
        msg = "The review of this link was deleted." if r is None else "No candidates to rank yet."
        fig.text(0.5, 0.45, msg, fontsize=18, ha="center", color="#374151", **PLAIN)
        return
    chosen = r.decision.candidate_id if r.decision else None
    shown = r.ranking[:MAX_BARS]
    ax: Any = fig.add_axes((0.30, 0.10, 0.62, 0.70))
    labels = [
        f"{x.rank}. {_clip(x.name, 36)}" + (" (chosen)" if x.candidate_id == chosen else "") for x in shown
    ][::-1]
    values = [float(x.score) for x in shown][::-1]
    colors = ["#16a34a" if x.candidate_id == chosen else "#2563eb" for x in shown][::-1]
    bars = _bars(ax, labels, values, colors)
    title = f"{review_state(r)} · weighted score, 1 = best"
    ax.set_title(_clip(title, 90), loc="left", fontsize=14, color="#111827", **PLAIN)
    ax.bar_label(bars, labels=[f"{x:.3f}" for x in values], padding=4, fontsize=11, **PLAIN)
    ax.spines[["top", "right"]].set_visible(False)
    ax.tick_params(labelsize=11)
    ax.set_xlim(0, max(1.0, max(values)) * 1.15)
    if len(r.ranking) > MAX_BARS:
        fig.text(
            0.97,
            0.03,
            f"+{len(r.ranking) - MAX_BARS} more candidates",
            ha="right",
            fontsize=10,
            color="#6b7280",
            **PLAIN,
        )


def _bars(ax: Any, labels: list[str], values: list[float], colors: list[str]) -> Any:
    """Horizontal bars with the team's labels as plain-text ticks (never mathtext); equal labels
    stay separate bars (categorical axes would merge them)."""
    pos = list(range(len(values)))
    bars = ax.barh(pos, values, color=colors)
    ax.set_yticks(pos, labels=labels, **PLAIN)
    return bars


def _clip(text: str, n: int) -> str:
    return text if len(text) <= n else text[: n - 1] + "…"
