"""iowatt's energy and carbon arithmetic, shared by the agent (`bench --meter`) and the server
(which recomputes every figure from the stored samples). Standard library only.

Samples (`samples.py`)
    Quantity            power | power_avg | energy_counter (what a value means)
    clean(t_ns, values, quantity=) -> Cleaned   drops NaN/inf, negatives, duplicates, out-of-order,
                                                counter decreases; `Cleaned.dropped` counts each reason
Integration (`integrate.py`)
    window_stats(cleaned, start_ns, end_ns, quantity=, nominal_interval_s=) -> WindowStats
        energy_j (trapezoid / interval average / counter difference), mean_w, samples, coverage,
        max_gap_s, stdev_w, n_eff, integration_u_j
Run summary (`summary.py`)
    Meter, Phase, Tier, TIER_DEFAULT_ACCURACY, TIER_LABEL
    summarize(meter=, phases=, cleaned=, io_bytes=, total_ios=) -> EnergySummary   (.to_dict())
        idle_w, load_w_mean, runtime_s, total_j, dynamic_j, j_per_gb, j_per_mio, iops_per_w,
        mb_s_per_w, uncertainty_j (k=2), flags (low_coverage, few_samples, idle_drift, estimate, ...)
Carbon (`carbon.py`)
    GRID_INTENSITY (22 countries + WORLD, with source and year), grid_intensity(region)
    operational_gco2e(energy_j=, g_per_kwh=, pue=), hourly_weighted_gco2e(...)
    EMBODIED_DEFAULTS, embodied_kg(media=, capacity_bytes=), amortized_gco2e(embodied_kg=, duration_s=)
"""

from iowatt_energy.carbon import (
    ANNUAL_CI_RELATIVE_U,
    DEFAULT_LIFETIME_YEARS,
    DEFAULT_REGION,
    EMBODIED_DEFAULTS,
    GRID_INTENSITY,
    J_PER_KWH,
    EmbodiedDefault,
    GridIntensity,
    amortized_gco2e,
    embodied_kg,
    grid_intensity,
    hourly_weighted_gco2e,
    operational_gco2e,
)
from iowatt_energy.integrate import WindowStats, window_stats
from iowatt_energy.samples import Cleaned, Quantity, clean
from iowatt_energy.summary import (
    TIER_DEFAULT_ACCURACY,
    TIER_LABEL,
    EnergySummary,
    Meter,
    Phase,
    PhaseSummary,
    Tier,
    classify_tier,
    summarize,
)

__all__ = [
    "ANNUAL_CI_RELATIVE_U",
    "DEFAULT_LIFETIME_YEARS",
    "DEFAULT_REGION",
    "EMBODIED_DEFAULTS",
    "GRID_INTENSITY",
    "J_PER_KWH",
    "TIER_DEFAULT_ACCURACY",
    "TIER_LABEL",
    "classify_tier",
    "Cleaned",
    "EmbodiedDefault",
    "EnergySummary",
    "GridIntensity",
    "Meter",
    "Phase",
    "PhaseSummary",
    "Quantity",
    "Tier",
    "WindowStats",
    "amortized_gco2e",
    "clean",
    "embodied_kg",
    "grid_intensity",
    "hourly_weighted_gco2e",
    "operational_gco2e",
    "summarize",
    "window_stats",
]
