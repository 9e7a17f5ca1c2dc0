"""Repeat statistics and direction-aware change (issue 12): no interval of a positive quantity
crosses zero, the point estimate lies inside it, and a change reads the way the metric points."""

import math
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as hst

from backend.compare.change import change
from backend.compare.schemas import Metric, StatsRead
from backend.compare.service import ENERGY_METRICS, METRICS, MetricDef, _metric
from backend.compare.stats import describe, repeats_for, t95, within_noise

# positive, skewed quantities over the ranges iowatt sees: ns latencies, IO/s, B/s, %, W, J
positive = hst.floats(min_value=1e-6, max_value=1e13, allow_nan=False, allow_infinity=False)
non_negative = hst.one_of(hst.just(0.0), positive)


@settings(max_examples=400, deadline=None)
@given(hst.lists(non_negative, min_size=2, max_size=40))
def test_no_interval_of_a_positive_quantity_crosses_zero_and_the_mean_lies_inside(
    values: list[float],
) -> None:
    s = describe(values)
    assert s is not None and s.ci95_low is not None and s.ci95_high is not None
    assert s.ci_method == "log"
    assert 0.0 <= s.ci95_low <= s.mean <= s.ci95_high
    if s.mean > 0:
        assert s.ci95_low > 0 or s.mean < 1e-300  # only underflow could reach 0


@settings(max_examples=200, deadline=None)
@given(hst.lists(positive, min_size=2, max_size=40))
def test_the_log_interval_is_ratio_symmetric_about_the_mean(values: list[float]) -> None:
    s = describe(values)
    assert s is not None and s.ci95_low and s.ci95_high and s.stdev is not None
    assert s.ci95_high / s.mean == pytest.approx(s.mean / s.ci95_low, rel=1e-9)
    # its log half-width is the t quantile times the mean's relative standard error
    assert math.log(s.ci95_high / s.mean) == pytest.approx(
        min(t95(s.n - 1) * s.stdev / math.sqrt(s.n) / s.mean, 700.0), rel=1e-9
    )


def test_the_issues_negative_intervals_are_positive_now() -> None:
    # p99 like the issue's "386 µs, 95 % CI −115 µs – 888 µs": two repeats far apart
    p99 = describe([81_000.0, 691_000.0])
    assert p99 is not None and p99.ci95_low is not None
    assert p99.ci95_low > 0 and p99.ci95_low < p99.mean < (p99.ci95_high or 0)
    cpu = describe([0.0, 0.0, 1.2])  # CPU that reads 0 % in two of three repeats
    assert cpu is not None and cpu.ci95_low is not None and 0 < cpu.ci95_low < cpu.mean
    idle = describe([0.0, 0.0, 0.0])  # a quantity that is 0 throughout: [0, 0]
    assert idle is not None and (idle.ci95_low, idle.ci95_high, idle.ci_method) == (0.0, 0.0, "log")


def test_a_quantity_that_may_go_negative_keeps_the_t_interval() -> None:
    s = describe([-1.0, 1.0, 3.0], positive=False)
    assert s is not None and s.ci_method == "t"
    assert s.ci95_low == pytest.approx(1 - 4.303 * 2 / math.sqrt(3))
    # a negative value among "positive" ones is not a positive quantity: same fallback
    assert (describe([-1.0, 1.0, 3.0]) or s).ci_method == "t"
    single = describe([5.0])
    assert single is not None and single.ci95_low is None and single.ci_method is None


def test_repeats_for_reaches_the_target_on_the_log_scale() -> None:
    n = repeats_for(0.10)
    assert math.exp(t95(n - 1) * 0.10 / math.sqrt(n)) <= 1.05
    assert math.exp(t95(n - 2) * 0.10 / math.sqrt(n - 1)) > 1.05


@pytest.mark.parametrize(
    ("value", "base", "kind", "better", "label", "phrase", "verdict"),
    [
        (75.0, 10_000.0, "latency", "lower", "Read latency p99", "133× lower latency", "better"),
        (10_000.0, 75.0, "latency", "lower", "Read latency p99", "133× higher latency", "worse"),
        (8_100.0, 100.0, "iops", "higher", "Read IOPS", "81× faster", "better"),
        (75.0, 100.0, "bandwidth", "higher", "Read bandwidth", "25% slower", "worse"),
        (230.0, 100.0, "energy", "lower", "Energy above idle", "2.3× more energy", "worse"),
        (88.0, 100.0, "cpu", "lower", "CPU user", "12% less CPU", "better"),
        (108.0, 100.0, "efficiency", "higher", "IOPS per watt", "8% higher IOPS per watt", "better"),
        (100.2, 100.0, "power", "lower", "Power under load", "same", "same"),
        (1.0, 1000.0, "carbon", "lower", "CO2 (operational)", "1,000× less CO2", "better"),
        (0.0, 3.0, "cpu", "lower", "CPU system", "100% less CPU", "better"),
        (3.0, 5.0, "time", "lower", "Load time", "40% less time", "better"),
        (50.0, 100.0, "efficiency", "lower", "Energy per GB", "2× lower energy per GB", "better"),
    ],
)
def test_change_reads_the_way_the_metric_points(
    value: float, base: float, kind: str, better: str, label: str, phrase: str, verdict: str
) -> None:
    c = change(value=value, baseline=base, kind=kind, better=better, label=label)  # type: ignore[arg-type]
    assert c is not None
    assert (c.phrase, c.verdict) == (phrase, verdict)
    assert c.ratio == pytest.approx(value / base)
    assert c.pct_change == pytest.approx((value / base - 1) * 100)
    assert c.factor == (None if value == 0 else pytest.approx(max(value / base, base / value)))


def test_no_change_without_a_positive_baseline() -> None:
    for value, base in ((1.0, 0.0), (None, 1.0), (1.0, None)):
        assert change(value=value, baseline=base, kind="iops", better="higher", label="x") is None


def test_every_metric_kind_has_words() -> None:
    for m in [*METRICS, *ENERGY_METRICS]:
        up = change(value=3.0, baseline=1.0, kind=m.kind, better=m.better, label=m.label)
        down = change(value=1.0, baseline=3.0, kind=m.kind, better=m.better, label=m.label)
        assert up and down and up.phrase.startswith("3×") and down.phrase.startswith("3×")
        assert {up.verdict, down.verdict} == {"better", "worse"}
        assert up.verdict == ("better" if m.better == "higher" else "worse")


def _metric_built_per_cell(m: MetricDef, per_col: list[list[float]], base: int) -> Metric:
    """The comparison row as it was built before session 24: a Change and a StatsRead model per
    cell, each column's statistics through describe's general path (the single-value shortcut
    bypassed: a None is dropped there, as before)."""
    described = [describe([*v, None]) for v in per_col]
    means = [d.mean if d else None for d in described]
    b = means[base]
    return Metric(
        key=m.key,
        label=m.label,
        unit=m.unit,
        kind=m.kind,
        better=m.better,
        direction=m.direction,
        percentile=m.percentile,
        higher_is_better=m.better == "higher",
        values=means,
        ratios=[v / b if v is not None and b else None for v in means],
        changes=[
            None if i == base else change(value=v, baseline=b, kind=m.kind, better=m.better, label=m.label)
            for i, v in enumerate(means)
        ],
        stats=[StatsRead(**vars(d)) if d else None for d in described],
        within_noise=[within_noise(d, described[base]) for d in described],
    )


def test_a_comparison_row_is_the_same_json_as_when_each_cell_was_a_model() -> None:
    """_metric validates its cells as dicts with their row and describe takes a shortcut for one
    value (a 200-run comparison's CPU, docs/benchmarks.md § A million runs, session 24): the JSON
    is byte for byte the per-cell models' on generated rows of every metric, with columns of one
    run, of repeats, of zeros, empty, a zero or missing baseline, huge and tiny values, inf/nan."""
    rnd = random.Random(24)

    def value() -> float:
        return rnd.choice([0.0, 1e-9, 3.0, 1e13, rnd.uniform(0, 2e6), rnd.lognormvariate(8, 3), math.inf])

    def column() -> list[float]:
        n = rnd.choice([0, 1, 1, 1, 2, 3, 7])
        same = value()
        return [same if rnd.random() < 0.2 else value() for _ in range(n)]

    rows = 0
    for m in METRICS + ENERGY_METRICS:
        for _ in range(25):
            per_col = [column() for _ in range(rnd.choice([1, 2, 5, 40]))]
            if rnd.random() < 0.1:
                per_col = [[math.nan, *c] for c in per_col]
            base = rnd.randrange(len(per_col))
            new, old = _metric(m, per_col, base), _metric_built_per_cell(m, per_col, base)
            assert new.model_dump_json() == old.model_dump_json(), (m.key, per_col, base)
            rows += 1
    assert rows == 25 * (len(METRICS) + len(ENERGY_METRICS))
