"""iowatt_energy against known inputs, including the HDD vs DRAM-SSD paper's Tables 3–5."""

import math
from datetime import UTC, datetime

import pytest
from iowatt_energy import (
    Meter,
    Phase,
    Quantity,
    Tier,
    amortized_gco2e,
    clean,
    embodied_kg,
    grid_intensity,
    hourly_weighted_gco2e,
    operational_gco2e,
    summarize,
    window_stats,
)

NS = 1_000_000_000


def series(f, seconds: float, hz: float = 10.0, start_s: float = 0.0) -> tuple[list[int], list[float]]:  # type: ignore[no-untyped-def]
    n = int(seconds * hz) + 1
    ts = [int((start_s + k / hz) * NS) for k in range(n)]
    return ts, [f(t / NS) for t in ts]


def test_constant_264_18_w_over_15_s_is_3962_7_j() -> None:
    ts, ws = series(lambda t: 264.18, 15)
    c = clean(ts, ws, quantity=Quantity.power)
    w = window_stats(c, 0, 15 * NS, quantity=Quantity.power, nominal_interval_s=0.1)
    assert w.energy_j == pytest.approx(3962.7, abs=1e-6)
    assert w.mean_w == pytest.approx(264.18) and w.coverage == 1.0


# The paper: Table 3 (PostMark run time, s), Table 4 (W under load), Table 5 (run time × W) and its Rate.
TABLE3 = {"Low": (15, 15), "Medium": (153, 34), "High": (388, 74.33)}
TABLE4 = {
    "Non-load": (263.8, 475.7),
    "Low": (264.18, 476.55),
    "Medium": (264.63, 484.74),
    "High": (281.26, 508.01),
}
TABLE5 = {
    "Low": (3962.7, 7148.25, 0.55),
    "Medium": (40488.39, 16481.16, 2.46),
    "High": (109128.88, 37760.38, 2.89),
}


@pytest.mark.parametrize("level", ["Low", "Medium", "High"])
def test_paper_table5_follows_from_tables_3_and_4(level: str) -> None:
    energies = []
    for dev in (0, 1):
        seconds, watts = TABLE3[level][dev], TABLE4[level][dev]
        ts, ws = series(lambda t, w=watts: w, seconds, hz=4)
        c = clean(ts, ws, quantity=Quantity.power)
        energies.append(
            window_stats(c, 0, int(seconds * NS), quantity=Quantity.power, nominal_interval_s=0.25).energy_j
        )
    hdd, dram, rate = TABLE5[level]
    assert energies[0] == pytest.approx(hdd, abs=0.01)
    assert energies[1] == pytest.approx(dram, abs=0.01)
    assert round(energies[0] / energies[1], 2) == rate
    # Table 4's Rate column is HDD W / DRAM-SSD W
    assert round(TABLE4["Non-load"][0] / TABLE4["Non-load"][1], 2) == 0.55


def test_cleaning_drops_and_counts_every_bad_sample() -> None:
    ts = [0, 100, 100, 50, 200, 300, 400]
    ws = [10.0, 11.0, 12.0, 13.0, float("nan"), -1.0, 14.0]
    c = clean(ts, ws, quantity=Quantity.power)
    assert c.t_ns == [0, 100, 400] and c.value == [10.0, 11.0, 14.0]
    assert c.dropped == {
        "dropped_nonfinite": 1,
        "dropped_negative": 1,
        "dropped_out_of_order": 1,
        "dropped_duplicate": 1,
    }
    counter = clean([0, 1, 2], [5.0, 4.0, 6.0], quantity=Quantity.energy_counter)
    assert counter.value == [5.0, 6.0] and counter.dropped["dropped_out_of_order"] == 1


@pytest.mark.parametrize("quantity", list(Quantity))
def test_cleaning_with_nothing_to_drop_keeps_what_the_sample_by_sample_walk_keeps(quantity: Quantity) -> None:
    """`clean` checks whole lists first and walks sample by sample only when something is to be
    dropped: both give the same samples and counts, whichever sample makes the difference."""
    from iowatt_energy.samples import _clean_each

    ts, ws = [0, 10, 20, 30, 40], [0.0, 1.5, 1.5, 2.0, 7.25]
    variants = [
        (ts, ws),  # nothing to drop
        ([], []),
        (ts, [0.0, 1.5, -0.0, 2.0, 7.25]),  # -0.0 is not negative
        (ts, [0.0, 1.5, 1.0, 2.0, 7.25]),  # a counter going back
        (ts, [0.0, 1.5, math.inf, 2.0, 7.25]),
        (ts, [0.0, -1.5, 1.5, 2.0, 7.25]),
        ([0, 10, 10, 30, 40], ws),
        ([0, 10, 5, 30, 40], ws),
    ]
    for t, w in variants:
        c = clean(t, w, quantity=quantity)
        zero = dict.fromkeys(c.dropped, 0)
        walked = _clean_each(list(t), list(w), quantity, zero)
        assert (c.t_ns, c.value, c.dropped) == (walked.t_ns, walked.value, walked.dropped), (t, w)
        assert all(type(x) is int for x in c.t_ns) and all(type(x) is float for x in c.value)


def test_trapezoid_is_exact_on_a_ramp_and_edges_are_interpolated() -> None:
    ts, ws = series(lambda t: 100 + 10 * t, 10, hz=1)
    c = clean(ts, ws, quantity=Quantity.power)
    w = window_stats(c, int(2.5 * NS), int(7.5 * NS), quantity=Quantity.power, nominal_interval_s=1)
    assert w.energy_j == pytest.approx(5 * 150.0)  # mean of 125..175 over 5 s


def test_interval_averages_and_counters() -> None:
    ts, ws = series(lambda t: 50.0, 10, hz=1)
    c = clean(ts, ws, quantity=Quantity.power_avg)
    assert window_stats(
        c, 0, 10 * NS, quantity=Quantity.power_avg, nominal_interval_s=1
    ).energy_j == pytest.approx(500)
    ts, joules = series(lambda t: 1000 + 80 * t, 10, hz=2)
    c = clean(ts, joules, quantity=Quantity.energy_counter)
    w = window_stats(c, NS, 9 * NS, quantity=Quantity.energy_counter, nominal_interval_s=0.5)
    assert w.energy_j == pytest.approx(640) and w.mean_w == pytest.approx(80)


def test_a_gap_over_5_percent_is_flagged() -> None:
    ts, ws = series(lambda t: 100.0, 20)
    keep = [(t, w) for t, w in zip(ts, ws, strict=True) if not 5 * NS < t < 8 * NS]
    c = clean([t for t, _ in keep], [w for _, w in keep], quantity=Quantity.power)
    meter = Meter(
        spec="command:x", driver="command", tier=Tier.inband, quantity=Quantity.power, nominal_interval_s=0.1
    )
    s = summarize(meter=meter, phases=[Phase("load", 0, 20 * NS)], cleaned=c, io_bytes=10**9, total_ios=1000)
    assert s.coverage < 0.95 and "low_coverage" in s.flags
    assert s.total_j == pytest.approx(2000, rel=1e-6)  # the gap is interpolated, and flagged


def test_summary_idle_baseline_dynamic_energy_and_ratios() -> None:
    # idle 100 W for 30 s, load 150 W for 20 s, idle 102 W for 30 s (drift 2 W)
    def watts(t: float) -> float:
        return 100.0 if t < 30 else (150.0 if t < 50 else 102.0)

    ts, ws = series(lambda t: watts(t - 0.05), 80)  # each reading averages the 0.1 s before it
    c = clean(ts, ws, quantity=Quantity.power_avg)
    meter = Meter(
        spec="ptdaemon://lab:8888",
        driver="ptdaemon",
        tier=Tier.lab,
        quantity=Quantity.power_avg,
        nominal_interval_s=0.1,
        accuracy_pct=1.0,
        accuracy_w=0.0,
        accuracy_declared=True,
    )
    phases = [
        Phase("idle_before", 0, 30 * NS),
        Phase("load", 30 * NS, 50 * NS),
        Phase("idle_after", 50 * NS, 80 * NS),
    ]
    s = summarize(meter=meter, phases=phases, cleaned=c, io_bytes=2 * 10**9, total_ios=500_000)
    assert s.total_j == pytest.approx(3000, rel=1e-3)
    assert s.idle_w == pytest.approx(101.0, rel=1e-3) and s.idle_drift_w == pytest.approx(2.0, rel=1e-2)
    assert s.dynamic_j == pytest.approx(3000 - 101 * 20, rel=1e-2)
    assert s.j_per_gb == pytest.approx(1500, rel=1e-3) and s.j_per_mio == pytest.approx(6000, rel=1e-3)
    assert s.iops_per_w == pytest.approx(500_000 / 3000, rel=1e-3)
    assert s.mb_s_per_w == pytest.approx(2000 / 3000, rel=1e-3)
    # 1 % gain on 3000 J (rectangular, k=2) plus interpolation of the step edges
    assert 2 * 0.01 * 3000 / math.sqrt(3) <= s.uncertainty_j < 0.05 * 3000
    assert s.dynamic_uncertainty_j is not None and s.dynamic_uncertainty_j > 0
    assert "idle_drift" not in s.flags and s.tier_label == "lab analyzer" and not s.estimated
    # a run whose I/O nobody counted (TPC-H: the DBMS's I/O) has no per-I/O efficiency, not zero
    quiet = summarize(meter=meter, phases=phases, cleaned=c, io_bytes=0, total_ios=0)
    assert quiet.total_j == pytest.approx(3000, rel=1e-3)
    assert (quiet.iops_per_w, quiet.mb_s_per_w, quiet.j_per_mio, quiet.j_per_gb) == (None, None, None, None)


def test_estimate_tier_is_labelled() -> None:
    ts, ws = series(lambda t: 8.0, 5)
    meter = Meter(
        spec="estimate:5,9",
        driver="estimate",
        tier=Tier.estimate,
        quantity=Quantity.power,
        nominal_interval_s=0.1,
    )
    s = summarize(
        meter=meter,
        phases=[Phase("load", 0, 5 * NS)],
        cleaned=clean(ts, ws, quantity=Quantity.power),
        io_bytes=0,
        total_ios=0,
    )
    assert s.estimated and "estimate" in s.flags and s.tier_label.startswith("estimate")
    assert s.j_per_gb is None and s.accuracy_pct == 25.0 and "accuracy_assumed" in s.flags


def test_carbon_operational_hourly_and_embodied() -> None:
    assert operational_gco2e(energy_j=3962.7, g_per_kwh=341, pue=1.0) == pytest.approx(3962.7 / 3.6e6 * 341)
    assert operational_gco2e(energy_j=3.6e6, g_per_kwh=100, pue=1.5) == pytest.approx(150)
    with pytest.raises(ValueError, match="PUE"):
        operational_gco2e(energy_j=1, g_per_kwh=1, pue=0.9)
    de = grid_intensity("de")
    assert (de.g_per_kwh, de.year) == (341.0, 2024) and "Electricity Maps" in de.source
    with pytest.raises(ValueError, match="unknown grid region"):
        grid_intensity("XX")
    # 100 W from 10:59:30 to 11:00:30 UTC: 30 s at 200 g/kWh then 30 s at 400 g/kWh
    t0 = datetime(2026, 11, 21, 10, 59, 30, tzinfo=UTC)
    ts, ws = series(lambda t: 100.0, 60)
    g = hourly_weighted_gco2e(
        cleaned=clean(ts, ws, quantity=Quantity.power),
        quantity=Quantity.power,
        nominal_interval_s=0.1,
        t0_utc=t0,
        start_ns=0,
        end_ns=60 * NS,
        hourly_g_per_kwh={
            datetime(2026, 11, 21, 10, tzinfo=UTC): 200.0,
            datetime(2026, 11, 21, 11, tzinfo=UTC): 400.0,
        },
        fallback_g_per_kwh=999.0,
    )
    assert g == pytest.approx(3000 / 3.6e6 * 200 + 3000 / 3.6e6 * 400)
    kg, d = embodied_kg(media="ssd", capacity_bytes=1_000 * 10**9)
    assert kg == pytest.approx(55.0) and "spruce" in d.source
    assert embodied_kg(media="hdd", capacity_bytes=None, drives=2)[0] == 60.0
    one_year = 365.25 * 86400
    assert amortized_gco2e(embodied_kg=30, duration_s=one_year, lifetime_years=5) == pytest.approx(6000)
