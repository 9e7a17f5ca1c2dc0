"""Repeat statistics: mean, sample standard deviation, CV and a 95 % confidence interval of the mean.

Every compare metric is a positive, right-skewed quantity (latency, rate, CPU share, power, energy):
the interval is built on the log scale of the mean (delta method), mean ×/÷ exp(t · CV / √n), so it
never crosses zero and always holds the mean (ADR 0015, docs/statistics.md). A quantity that may go
negative gets the plain Student-t interval."""

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

# two-sided 95 % Student t quantiles by degrees of freedom (1..30); beyond 30 the normal 1.96 is close enough
_T95 = [
    12.706,
    4.303,
    3.182,
    2.776,
    2.571,
    2.447,
    2.365,
    2.306,
    2.262,
    2.228,
    2.201,
    2.179,
    2.160,
    2.145,
    2.131,
    2.120,
    2.110,
    2.101,
    2.093,
    2.086,
    2.080,
    2.074,
    2.069,
    2.064,
    2.060,
    2.056,
    2.052,
    2.048,
    2.045,
    2.042,
]

CV_SUGGEST = 0.05  # above 5 % CV, suggest more repeats
TARGET_HALF_WIDTH = 0.05  # ... enough for a ±5 % 95 % confidence interval


def t95(dof: int) -> float:
    return _T95[dof - 1] if 1 <= dof <= len(_T95) else 1.96


CiMethod = Literal["log", "t"]


@dataclass(frozen=True)
class Stats:
    n: int
    mean: float
    stdev: float | None
    cv: float | None
    ci95_low: float | None
    ci95_high: float | None
    ci_method: CiMethod | None
    values: list[float]


def describe(values: Sequence[float | None], *, positive: bool = True) -> Stats | None:
    """Mean, stdev, CV and the 95 % CI of the mean. `positive`: the quantity cannot be negative
    (every compare metric): the interval is mean ×/÷ exp(t · se / mean), [0, 0] when every value
    is 0. A negative value among them (not a positive quantity after all) falls back to mean ± t · se."""
    if len(values) == 1:  # a column of one run (most of a comparison by device): no spread
        v = values[0]
        if v is None or not math.isfinite(v):
            return None
        return Stats(1, float(v), None, None, None, None, None, [float(v)])
    vals = [float(v) for v in values if v is not None and math.isfinite(v)]
    if not vals:
        return None
    n = len(vals)
    mean = math.fsum(vals) / n
    if n < 2:
        return Stats(n, mean, None, None, None, None, None, vals)
    sd = math.sqrt(math.fsum((v - mean) ** 2 for v in vals) / (n - 1))
    se = sd / math.sqrt(n)
    cv = sd / abs(mean) if mean else None
    if positive and min(vals) >= 0:
        if mean == 0:  # all zero (CPU 0 %): nothing varies
            return Stats(n, mean, sd, cv, 0.0, 0.0, "log", vals)
        spread = math.exp(min(t95(n - 1) * se / mean, 700.0))
        return Stats(n, mean, sd, cv, mean / spread, mean * spread, "log", vals)
    half = t95(n - 1) * se
    return Stats(n, mean, sd, cv, mean - half, mean + half, "t", vals)


def within_noise(a: Stats | None, b: Stats | None) -> bool | None:
    """True when the two 95 % CIs overlap (no evidence of a difference); None without repeats."""
    if a is None or b is None or a.ci95_low is None or b.ci95_low is None:
        return None
    assert a.ci95_high is not None and b.ci95_high is not None
    return a.ci95_low <= b.ci95_high and b.ci95_low <= a.ci95_high


def repeats_for(cv: float, target: float = TARGET_HALF_WIDTH) -> int:
    """Repeats for a 95 % CI within ×/÷ (1 + target) of the mean at this CV (the log-scale interval,
    iterating the t quantile)."""
    n = 2
    while n < 1000 and t95(n - 1) * cv / math.sqrt(n) > math.log1p(target):
        n += 1
    return n
