"""Repeat statistics: mean, sample standard deviation, CV and a Student-t 95 % confidence interval."""

import math
from dataclasses import dataclass

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


@dataclass(frozen=True)
class Stats:
    n: int
    mean: float
    stdev: float | None
    cv: float | None
    ci95_low: float | None
    ci95_high: float | None
    values: list[float]


def describe(values: list[float]) -> Stats | None:
    vals = [float(v) for v in values if v is not None and math.isfinite(v)]
    if not vals:
        return None
    n = len(vals)
    mean = sum(vals) / n
    if n < 2:
        return Stats(n, mean, None, None, None, None, vals)
    sd = math.sqrt(sum((v - mean) ** 2 for v in vals) / (n - 1))
    half = t95(n - 1) * sd / math.sqrt(n)
    cv = sd / abs(mean) if mean else None
    return Stats(n, mean, sd, cv, mean - half, mean + half, vals)


def within_noise(a: Stats | None, b: Stats | None) -> bool | None:
    """True when the two 95 % CIs overlap (no evidence of a difference); None without repeats."""
    if a is None or b is None or a.ci95_low is None or b.ci95_low is None:
        return None
    assert a.ci95_high is not None and b.ci95_high is not None
    return a.ci95_low <= b.ci95_high and b.ci95_low <= a.ci95_high


def repeats_for(cv: float, target: float = TARGET_HALF_WIDTH) -> int:
    """Repeats for a ±target relative 95 % CI half-width at this CV (iterating the t quantile)."""
    n = 2
    while n < 1000 and t95(n - 1) * cv / math.sqrt(n) > target:
        n += 1
    return n
