"""Change detection for one metric of a series: pure, no database (the service feeds it points).

Two questions, two well-kept libraries (docs/adr/0040-change-detection.md):
- where did the history change? `ruptures`' exact PELT search with the l2 cost (its C kernel
  implementation, `KernelCPD(kernel="linear")`: a change in mean), on values scaled by a robust
  estimate of the run-to-run noise, with a BIC-like penalty; each change point found is then kept
  only if the segments on either side differ by a test and by the minimum change.
- is a new run worse than the runs before it? the new run, and the last two or three valid runs
  ending with it, against a lookback window of the valid runs before them, with scipy (the t tests
  computed as `scipy.stats` does, from `scipy.special`; Mann-Whitney U from `scipy.stats`):
  Student's t-test (pooled variance; default), Welch's t-test or Mann-Whitney U, plus a z-score and
  percentage and absolute bounds. Every enabled gate must agree for a verdict of regression.

Direction-aware: for throughput (iops, bandwidth) lower is worse, for latency higher is worse.

Validity: a point carries the validity flags that leave it out (`excluded`: short, cache-resident,
shortened, imported...) and its `segment` (host facts and conditions: kernel, firmware, file
system, mount options, engine version, virtualised, unconditioned...). Excluded points are never
in a window and never tested; points of another segment are never compared with each other: a
changed host starts a new history, and the verdict says so.
"""

from __future__ import annotations

import math
import uuid
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    import numpy as np

# numpy, scipy and ruptures are imported by the functions that use them: the API's processes
# start without them (tests/backend/test_startup_imports.py) and load them at the first detection

Direction = Literal["higher_is_better", "lower_is_better"]
Test = Literal["t_test", "welch", "mann_whitney"]
VerdictStatus = Literal["regression", "improvement", "no_change", "insufficient_history", "excluded"]

METRICS: dict[str, Direction] = {
    "read_iops": "higher_is_better",
    "write_iops": "higher_is_better",
    "read_bw_bytes": "higher_is_better",
    "write_bw_bytes": "higher_is_better",
    "read_lat_mean_ns": "lower_is_better",
    "write_lat_mean_ns": "lower_is_better",
    "read_clat_p99_ns": "lower_is_better",
    "write_clat_p99_ns": "lower_is_better",
}


@dataclass(frozen=True)
class Thresholds:
    """Defaults measured on synthetic histories (tests/backend/test_series_stats.py): no alarm in
    1,000 runs of noise with a 2 % coefficient of variation, a 10 % step found within 3 runs."""

    test: Test = "t_test"
    alpha: float = 1e-5  # the per-new-run test's one-sided p-value must be below this
    z_min: float = 3.0  # |suffix mean - window mean| / window standard deviation, at least
    min_change_pct: float = 5.0  # the change, % of the window mean, at least
    max_change_abs: float | None = None  # metric units; a change beyond this is flagged even if small in %
    lookback: int = 20  # runs in the window
    min_window: int = 5  # fewer valid runs before: no verdict
    max_suffix: int = 3  # the new run and up to this many-1 valid runs before it are tested together
    cp_penalty: float = 3.0  # change points: penalty per change, × log(n), on noise-scaled values
    cp_min_size: int = 3  # change points: runs per segment, at least
    cp_alpha: float = 1e-4  # change points: Welch's test between the segments either side

    def tested_with(self) -> dict[str, object]:
        return {k: getattr(self, k) for k in self.__dataclass_fields__}


@dataclass(frozen=True)
class Point:
    run_id: uuid.UUID
    at: datetime
    value: float | None
    excluded: tuple[str, ...] = ()  # the flags that leave it out
    segment: str = ""


@dataclass(frozen=True)
class Change:
    """A difference between the runs before and after (a window and a suffix, or two segments)."""

    mean_before: float
    mean_after: float
    change_pct: float
    change_pct_low: float | None  # 95 % interval of the change, % of mean_before
    change_pct_high: float | None
    p_value: float | None
    z: float | None
    runs_before: int
    runs_after: int
    direction: Literal["regression", "improvement"]


@dataclass(frozen=True)
class Verdict:
    status: VerdictStatus
    reasons: list[str]
    change: Change | None
    first_run_id: uuid.UUID | None  # the first run of the tested suffix (where the change starts)
    previous_run_id: uuid.UUID | None  # the last run of the window (the previous good one)
    window: list[uuid.UUID] = field(default_factory=list)
    tested: list[uuid.UUID] = field(default_factory=list)
    method: str = ""


@dataclass(frozen=True)
class ChangePoint:
    index: int  # position in the points given: the first point after the change
    run_id: uuid.UUID
    previous_run_id: uuid.UUID
    change: Change


def worse(direction: Direction, change_pct: float) -> bool:
    return change_pct < 0 if direction == "higher_is_better" else change_pct > 0


def usable(p: Point) -> bool:
    return not p.excluded and p.value is not None and math.isfinite(p.value)


def _interval(before: np.ndarray, after: np.ndarray) -> tuple[float | None, float | None]:
    """95 % Welch interval of mean(after) - mean(before), in % of mean(before)."""
    m0 = float(before.mean())
    if m0 == 0 or len(before) < 2:
        return None, None
    va = float(after.var(ddof=1)) / len(after) if len(after) > 1 else float(before.var(ddof=1))
    vb = float(before.var(ddof=1)) / len(before)
    se = math.sqrt(va + vb)
    if se == 0:
        d = float(after.mean()) - m0
        return d / m0 * 100, d / m0 * 100
    df = (va + vb) ** 2 / ((va**2 / (len(after) - 1) if len(after) > 1 else 0.0) + vb**2 / (len(before) - 1))
    t = _t_ppf(0.975, max(df, 1.0))
    d = float(after.mean()) - m0
    lo, hi = (d - t * se) / abs(m0) * 100, (d + t * se) / abs(m0) * 100
    return lo, hi


def _p_value(test: Test, before: np.ndarray, after: np.ndarray, alternative: str) -> float | None:
    """One-sided p-value that `after` is shifted in `alternative` ("less"/"greater") from `before`."""
    if len(before) < 2:
        return None
    if test == "mann_whitney":
        from scipy import stats as sps

        return float(sps.mannwhitneyu(after, before, alternative=alternative).pvalue)
    if len(after) == 1 or test == "t_test":
        # pooled variance: with one to three new runs the window's variance is the estimate
        # (Welch's degrees of freedom collapse with a group of one or two)
        if float(before.var(ddof=1)) == 0 and len(after) == 1:
            return 0.0 if after[0] != before[0] else 1.0
        if len(after) == 1:
            s = float(before.std(ddof=1))
            t = (float(after[0]) - float(before.mean())) / (s * math.sqrt(1 + 1 / len(before)))
            df = len(before) - 1
            return _t_cdf(-t, df) if alternative == "greater" else _t_cdf(t, df)
        return _ttest_ind(after, before, equal_var=True, alternative=alternative)
    return _ttest_ind(after, before, equal_var=False, alternative=alternative)


# Student's t distribution and the two-sample t-test as scipy.stats computes them (scipy 1.17:
# `t.cdf`, `t.sf` and `t.ppf` are `special.stdtr` and `special.stdtrit`; `ttest_ind` is the
# variance, the degrees of freedom and the division below, then `stdtr`), called directly: each call
# through scipy.stats spent ~0.1-0.3 ms checking and broadcasting its arguments, 85 % of a verdict's
# CPU (three compares per metric of every uploaded run). tests/backend/test_series_stats.py checks
# that they give scipy.stats' own figures.


def _t_cdf(t: float, df: float) -> float:
    """P(T <= t) for Student's t with df degrees of freedom (scipy.stats.t.cdf; its sf is cdf(-t))."""
    from scipy import special

    return float(special.stdtr(df, t))


def _t_ppf(q: float, df: float) -> float:
    """The q quantile of Student's t with df degrees of freedom (scipy.stats.t.ppf)."""
    from scipy import special

    return float(special.stdtrit(df, q))


def _var1(x: np.ndarray) -> np.float64:
    """The sample variance (ddof 1) as scipy.stats' `_var`: NaN for a single value."""
    import numpy as np

    n = np.float64(len(x))
    return np.float64(np.mean((x - np.mean(x)) ** 2) * (n / (n - 1)))


def _ttest_ind(a: np.ndarray, b: np.ndarray, *, equal_var: bool, alternative: str) -> float:
    """scipy.stats.ttest_ind(a, b, equal_var=equal_var, alternative=alternative).pvalue for two
    non-empty samples of finite values: NaN where scipy's is (two groups without variance)."""
    import numpy as np

    n1, n2 = np.float64(len(a)), np.float64(len(b))
    with np.errstate(divide="ignore", invalid="ignore"):
        v1, v2 = _var1(a), _var1(b)
        if equal_var:
            v1 = np.float64(0.0) if n1 == 1 else v1
            v2 = np.float64(0.0) if n2 == 1 else v2
            df = n1 + n2 - 2.0
            denom = np.sqrt(((n1 - 1) * v1 + (n2 - 1) * v2) / df * (1.0 / n1 + 1.0 / n2))
        else:
            vn1, vn2 = v1 / n1, v2 / n2
            df = (vn1 + vn2) ** 2 / (vn1**2 / (n1 - 1) + vn2**2 / (n2 - 1))
            df = np.float64(1.0) if np.isnan(df) else df
            denom = np.sqrt(vn1 + vn2)
        t = (np.mean(a) - np.mean(b)) / denom
    return _t_cdf(-t, df) if alternative == "greater" else _t_cdf(t, df)


def compare(
    before: np.ndarray, after: np.ndarray, direction: Direction, th: Thresholds, test: Test | None = None
) -> tuple[Change, bool]:
    """The change from `before` to `after` and whether every gate calls it a change."""
    m0, m1 = float(before.mean()), float(after.mean())
    pct = (m1 - m0) / abs(m0) * 100 if m0 != 0 else (0.0 if m1 == m0 else math.copysign(math.inf, m1 - m0))
    s = float(before.std(ddof=1)) if len(before) > 1 else 0.0
    z = (m1 - m0) / s if s > 0 else (0.0 if m1 == m0 else math.copysign(math.inf, m1 - m0))
    p = _p_value(test or th.test, before, after, "greater" if m1 > m0 else "less")
    if p is not None and not math.isfinite(p):
        p = None  # both groups without variance: no test, no verdict from it
    lo, hi = _interval(before, after)
    change = Change(
        mean_before=m0,
        mean_after=m1,
        change_pct=pct,
        change_pct_low=lo,
        change_pct_high=hi,
        p_value=p,
        z=z if math.isfinite(z) else None,
        runs_before=len(before),
        runs_after=len(after),
        direction="regression" if worse(direction, pct) else "improvement",
    )
    big = abs(pct) >= th.min_change_pct or (
        th.max_change_abs is not None and abs(m1 - m0) > th.max_change_abs
    )
    significant = p is not None and p < th.alpha and abs(z) >= th.z_min
    return change, big and significant


def host_change(before: Point | None, point: Point) -> bool:
    return before is not None and before.segment != point.segment


def verdict(points: list[Point], index: int, direction: Direction, th: Thresholds) -> Verdict:
    """The verdict on points[index] (points in run order) against the valid runs before it."""
    new = points[index]
    if new.excluded:
        return Verdict("excluded", [f"left out: {r}" for r in new.excluded], None, None, None)
    if new.value is None or not math.isfinite(new.value):
        return Verdict("excluded", ["the run has no value for this metric"], None, None, None)
    same = [p for p in points[:index] if usable(p) and p.segment == new.segment]
    reasons: list[str] = []
    others = [p for p in points[:index] if usable(p) and p.segment != new.segment]
    if others:
        reasons.append(f"{len(others)} earlier run(s) on other host facts or conditions are not compared")
    left_out = [p for p in points[max(0, index - th.lookback) : index] if p.excluded]
    if left_out:
        reasons.append(f"{len(left_out)} recent run(s) left out by their validity flags")
    best: Verdict | None = None
    first: Verdict | None = None
    for k in range(1, th.max_suffix + 1):
        suffix = [*same[len(same) - (k - 1) :], new] if k > 1 else [new]
        if k > 1 and len(same) < k - 1:
            break
        window = same[: len(same) - (k - 1)][-th.lookback :]
        if len(window) < th.min_window:
            break
        # here, not above: an excluded run or a short history needs no numpy (~0.12 CPU-s a worker)
        import numpy as np

        before = np.array([p.value for p in window], dtype=float)
        after = np.array([p.value for p in suffix], dtype=float)
        change, flagged = compare(before, after, direction, th)
        if k > 1 and not all(
            (v > change.mean_before) == (change.mean_after > change.mean_before) for v in after
        ):
            flagged = False  # a suffix that straddles the window mean is not a shift
        v = Verdict(
            change.direction if flagged else "no_change",
            reasons,
            change,
            suffix[0].run_id,
            window[-1].run_id,
            [p.run_id for p in window],
            [p.run_id for p in suffix],
            f"{th.test}, last {k} vs {len(window)}",
        )
        first = first or v
        if flagged and (best is None or (change.p_value or 1) < (best.change.p_value or 1)):  # type: ignore[union-attr]
            best = v
    if best is not None:
        return best
    if first is None:
        why = f"fewer than {th.min_window} valid runs before it"
        if others and not same:
            why += " on the same host facts and conditions (they changed)"
        return Verdict("insufficient_history", [why, *reasons], None, None, same[-1].run_id if same else None)
    return first


def noise_scale(values: np.ndarray) -> float:
    """Run-to-run noise, robust to steps: the median absolute successive difference / (0.6745·√2)."""
    import numpy as np

    if len(values) < 3:
        return float(values.std()) or 1.0
    d = np.abs(np.diff(values))
    s = float(np.median(d)) / (0.6745 * math.sqrt(2))
    return s if s > 0 else (float(values.std()) or 1.0)


def change_points(points: list[Point], direction: Direction, th: Thresholds) -> list[ChangePoint]:
    """Change points of the valid points, each segment (host facts, conditions) on its own."""
    out: list[ChangePoint] = []
    valid = [(i, p) for i, p in enumerate(points) if usable(p)]
    runs: list[list[tuple[int, Point]]] = []
    for i, p in valid:
        if runs and runs[-1][-1][1].segment == p.segment:
            runs[-1].append((i, p))
        else:
            runs.append([(i, p)])
    for seg in runs:
        n = len(seg)
        if n < 2 * th.cp_min_size:
            continue
        # here, not above: ruptures (scipy.stats, scipy.spatial) costs ~1.3 CPU-s to import, and
        # most series a Celery process tracks are too short for a change point (numpy too: ~0.12)
        import numpy as np
        import ruptures as rpt

        x = np.array([p.value for _, p in seg], dtype=float)
        z = (x - float(np.median(x))) / noise_scale(x)
        bkps = (
            rpt.KernelCPD(kernel="linear", min_size=th.cp_min_size)
            .fit(z)
            .predict(pen=th.cp_penalty * math.log(n))
        )
        edges = [0, *[int(b) for b in bkps]]
        for j in range(1, len(edges) - 1):
            a, b, c = edges[j - 1], edges[j], edges[j + 1]
            change, _ = compare(x[a:b], x[b:c], direction, th, test="welch")
            big = abs(change.change_pct) >= th.min_change_pct or (
                th.max_change_abs is not None
                and abs(change.mean_after - change.mean_before) > th.max_change_abs
            )
            if change.p_value is not None and change.p_value < th.cp_alpha and big:
                out.append(ChangePoint(seg[b][0], seg[b][1].run_id, seg[b - 1][1].run_id, change))
    return out
