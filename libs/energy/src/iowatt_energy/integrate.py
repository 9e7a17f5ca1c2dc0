"""Energy over a time window from cleaned samples (docs/energy.md §2.3).

- `power` (instantaneous): trapezoid rule, boundary values interpolated at the window edges.
- `power_avg`: each reading covers the interval since the previous one; clipped to the window.
- `energy_counter`: counter difference, interpolated at the window edges.
"""

import math
from bisect import bisect_left, bisect_right
from dataclasses import dataclass

from iowatt_energy.samples import Cleaned, Quantity

NS = 1_000_000_000


@dataclass(frozen=True)
class WindowStats:
    start_ns: int
    end_ns: int
    duration_s: float
    energy_j: float
    mean_w: float
    samples: int  # readings inside the window
    coverage: float  # share of the window within 2 nominal intervals of a reading (0..1)
    max_gap_s: float
    stdev_w: float  # spread of the power readings inside the window
    n_eff: float  # effective number of independent readings (lag-1 autocorrelation)
    integration_u_j: float  # |trapezoid - left Riemann| / 2 for instantaneous readings, else 0
    min_w: float
    max_w: float


def _interp(t: int, ts: list[int], vs: list[float]) -> float:
    """Linear interpolation; constant beyond the ends (coverage tells how far that is)."""
    if t <= ts[0]:
        return vs[0]
    if t >= ts[-1]:
        return vs[-1]
    i = bisect_right(ts, t)
    t0, t1, v0, v1 = ts[i - 1], ts[i], vs[i - 1], vs[i]
    return v0 + (v1 - v0) * (t - t0) / (t1 - t0)


def _power_points(c: Cleaned, quantity: Quantity) -> tuple[list[int], list[float]]:
    """Readings as (t, W) points: a counter becomes the mean power of each interval."""
    if quantity is not Quantity.energy_counter:
        return c.t_ns, c.value
    ts, ws = [], []
    for i in range(1, len(c.t_ns)):
        dt = (c.t_ns[i] - c.t_ns[i - 1]) / NS
        ts.append(c.t_ns[i])
        ws.append((c.value[i] - c.value[i - 1]) / dt)
    return ts, ws


def _energy(c: Cleaned, start: int, end: int, quantity: Quantity, nominal_ns: int) -> tuple[float, float]:
    ts, vs = c.t_ns, c.value
    if quantity is Quantity.energy_counter:
        return _interp(end, ts, vs) - _interp(start, ts, vs), 0.0
    if quantity is Quantity.power_avg:
        e = 0.0
        for i, (t, w) in enumerate(zip(ts, vs, strict=True)):
            lo = ts[i - 1] if i > 0 else t - nominal_ns
            overlap = min(t, end) - max(lo, start)
            if overlap > 0:
                e += w * overlap / NS
        # the tail after the last reading has no reading yet: hold the last value (coverage flags it)
        if ts[-1] < end:
            e += vs[-1] * (end - max(ts[-1], start)) / NS
        return e, 0.0
    i0, i1 = bisect_right(ts, start), bisect_left(ts, end)
    pts_t = [start, *ts[i0:i1], end]
    pts_w = [_interp(start, ts, vs), *vs[i0:i1], _interp(end, ts, vs)]
    trap = left = 0.0
    for k in range(1, len(pts_t)):
        dt = (pts_t[k] - pts_t[k - 1]) / NS
        trap += 0.5 * (pts_w[k] + pts_w[k - 1]) * dt
        left += pts_w[k - 1] * dt
    return trap, abs(trap - left) / 2


def window_stats(
    c: Cleaned, start_ns: int, end_ns: int, *, quantity: Quantity, nominal_interval_s: float
) -> WindowStats:
    if end_ns <= start_ns:
        raise ValueError("a window must end after it starts")
    duration = (end_ns - start_ns) / NS
    nominal_ns = max(1, int(nominal_interval_s * NS))
    if not c.t_ns:
        return WindowStats(start_ns, end_ns, duration, 0.0, 0.0, 0, 0.0, duration, 0.0, 0.0, 0.0, 0.0, 0.0)
    energy, u_int = _energy(c, start_ns, end_ns, quantity, nominal_ns)
    inside = [t for t in c.t_ns if start_ns <= t <= end_ns]
    # coverage: time within 2 nominal intervals after a reading (or before the first one)
    edges = [start_ns, *inside, end_ns]
    uncovered = 0
    max_gap = 0
    for a, b in zip(edges, edges[1:], strict=False):
        gap = b - a
        max_gap = max(max_gap, gap)
        if gap > 2 * nominal_ns:
            uncovered += gap - 2 * nominal_ns
    coverage = max(0.0, 1.0 - uncovered / (end_ns - start_ns))
    pts_t, pts_w = _power_points(c, quantity)
    ws = [w for t, w in zip(pts_t, pts_w, strict=True) if start_ns <= t <= end_ns] or (
        [_interp(start_ns, pts_t, pts_w)] if pts_t else [0.0]
    )
    mean = sum(ws) / len(ws)
    var = sum((w - mean) ** 2 for w in ws) / (len(ws) - 1) if len(ws) > 1 else 0.0
    n_eff = float(len(ws))
    if len(ws) > 2 and var > 0:
        rho = sum((ws[i] - mean) * (ws[i - 1] - mean) for i in range(1, len(ws))) / ((len(ws) - 1) * var)
        rho = min(max(rho, 0.0), 0.99)
        n_eff = max(1.0, len(ws) * (1 - rho) / (1 + rho))
    return WindowStats(
        start_ns=start_ns,
        end_ns=end_ns,
        duration_s=duration,
        energy_j=energy,
        mean_w=energy / duration,
        samples=len(inside),
        coverage=coverage,
        max_gap_s=max_gap / NS,
        stdev_w=math.sqrt(var),
        n_eff=n_eff,
        integration_u_j=u_int,
        min_w=min(ws),
        max_w=max(ws),
    )
