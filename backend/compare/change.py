"""Direction-aware change against the baseline: the one place a ratio becomes "133× lower latency".

Clients show `phrase` and colour by `verdict`; the CSV exports both beside the ratio
(docs/contracts.md §5, docs/statistics.md)."""

from dataclasses import dataclass
from typing import Any

from backend.compare.schemas import Better, Change, MetricKind

FACTOR_FROM = 2.0  # from 2× on a change reads as a factor, below as a percentage
SAME_PCT = 0.5  # |change| under 0.5 % reads "same" (it rounds to 0 %)


@dataclass(frozen=True)
class _Words:
    up: str  # the value went up
    down: str
    noun: str  # "" for "faster"/"slower"


_WORDS: dict[MetricKind, _Words] = {
    "iops": _Words("faster", "slower", ""),
    "bandwidth": _Words("faster", "slower", ""),
    "latency": _Words("higher", "lower", "latency"),
    "cpu": _Words("more", "less", "CPU"),
    "power": _Words("more", "less", "power"),
    "time": _Words("more", "less", "time"),
    "energy": _Words("more", "less", "energy"),
    "carbon": _Words("more", "less", "CO2"),
    "efficiency": _Words("higher", "lower", ""),  # the metric's label is the noun
}


def _noun(label: str) -> str:
    """A label inside a phrase: "Energy per GB" → "energy per GB", "IOPS per watt" stays."""
    return label[:1].lower() + label[1:] if label[1:2].islower() else label


def _factor_text(f: float) -> str:
    return f"{f:,.0f}×" if f >= 100 else f"{f:.3g}×"


def _pct_text(p: float) -> str:
    return f"{p:,.0f}%" if p >= 10 else f"{p:.2g}%"


def change(
    *, value: float | None, baseline: float | None, kind: MetricKind, better: Better, label: str
) -> Change | None:
    """The change of `value` against `baseline` for a metric of this kind and direction; None when
    either is missing or the baseline is not positive (no ratio)."""
    fields = change_fields(value=value, baseline=baseline, kind=kind, better=better, label=label)
    return None if fields is None else Change(**fields)


def change_fields(
    *, value: float | None, baseline: float | None, kind: MetricKind, better: Better, label: str
) -> dict[str, Any] | None:
    """`change`'s fields as a dict: a comparison's table validates its ~18,000 cells with their
    Metric rows (one pydantic call per row, not one per cell: docs/benchmarks.md § A million runs)."""
    if value is None or baseline is None or not baseline > 0 or value < 0:
        return None
    ratio = value / baseline
    pct = (ratio - 1.0) * 100.0
    words = _WORDS[kind]
    noun = _noun(label) if kind == "efficiency" else words.noun
    factor = max(ratio, 1.0 / ratio) if ratio > 0 else None
    if abs(pct) < SAME_PCT:
        return {"ratio": ratio, "pct_change": pct, "factor": factor, "verdict": "same", "phrase": "same"}
    up = ratio > 1.0
    verdict = "better" if up == (better == "higher") else "worse"
    word = words.up if up else words.down
    amount = _factor_text(factor) if factor is not None and factor >= FACTOR_FROM else _pct_text(abs(pct))
    phrase = f"{amount} {word} {noun}" if noun else f"{amount} {word}"
    return {"ratio": ratio, "pct_change": pct, "factor": factor, "verdict": verdict, "phrase": phrase}
