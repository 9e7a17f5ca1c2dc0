"""Grid carbon intensity and embodied carbon defaults, each with its source and year.

Operational: C_op = E[kWh] × PUE × CI[gCO2e/kWh]; with an hourly series the intensity is weighted
by the energy drawn in each hour. Embodied (SCI): M = TE × (T_run / lifetime).
"""

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from iowatt_energy.integrate import NS, window_stats
from iowatt_energy.samples import Cleaned, Quantity

J_PER_KWH = 3.6e6
SECONDS_PER_YEAR = 365.25 * 86400

_EM = (
    "Electricity Maps yearly zone average (consumption-based, lifecycle), as republished under ODbL by CO2.js"
)


@dataclass(frozen=True)
class GridIntensity:
    region: str
    name: str
    g_per_kwh: float
    year: int
    source: str


_EM_2024 = {
    "US": ("United States", 409),
    "CN": ("China", 513),
    "IN": ("India", 614),
    "DE": ("Germany", 341),
    "FR": ("France", 33),
    "GB": ("United Kingdom", 175),
    "JP": ("Japan", 464),
    "KR": ("South Korea", 423),
    "CA": ("Canada", 132),
    "AU": ("Australia", 489),
    "BR": ("Brazil", 91),
    "ZA": ("South Africa", 712),
    "SE": ("Sweden", 23),
    "NO": ("Norway", 33),
    "PL": ("Poland", 581),
    "IE": ("Ireland", 352),
    "NL": ("Netherlands", 251),
    "SG": ("Singapore", 485),
    "IT": ("Italy", 267),
    "ES": ("Spain", 129),
    "FI": ("Finland", 80),
    "TW": ("Taiwan", 525),
}

GRID_INTENSITY: dict[str, GridIntensity] = {
    code: GridIntensity(code, name, float(g), 2024, _EM) for code, (name, g) in _EM_2024.items()
}
GRID_INTENSITY["WORLD"] = GridIntensity(
    "WORLD", "World average", 445.0, 2024, "IEA global average 2024 (the Green Metrics Tool's default)"
)
DEFAULT_REGION = "WORLD"
# An annual average differs from the hour's actual intensity by tens of percent (docs/energy.md §2.7).
ANNUAL_CI_RELATIVE_U = 0.20


def grid_intensity(region: str) -> GridIntensity:
    try:
        return GRID_INTENSITY[region.upper()]
    except KeyError:
        known = ", ".join(sorted(GRID_INTENSITY))
        raise ValueError(
            f"unknown grid region {region!r}; known: {known} (or give gCO2e/kWh directly)"
        ) from None


def operational_gco2e(*, energy_j: float, g_per_kwh: float, pue: float = 1.0) -> float:
    if pue < 1.0:
        raise ValueError("PUE is at least 1.0")
    return energy_j / J_PER_KWH * pue * g_per_kwh


def hourly_weighted_gco2e(
    *,
    cleaned: Cleaned,
    quantity: Quantity,
    nominal_interval_s: float,
    t0_utc: datetime,
    start_ns: int,
    end_ns: int,
    hourly_g_per_kwh: dict[datetime, float],
    fallback_g_per_kwh: float,
    pue: float = 1.0,
) -> float:
    """Carbon of [start_ns, end_ns] with each hour's energy times that hour's intensity (UTC hour starts)."""
    total = 0.0
    t = start_ns
    while t < end_ns:
        at = (t0_utc + timedelta(microseconds=t // 1000)).astimezone(UTC)
        hour = at.replace(minute=0, second=0, microsecond=0)
        seg_end = min(end_ns, t + max(1, int((hour + timedelta(hours=1) - at).total_seconds() * NS)))
        e = window_stats(
            cleaned, t, seg_end, quantity=quantity, nominal_interval_s=nominal_interval_s
        ).energy_j
        total += operational_gco2e(
            energy_j=e, g_per_kwh=hourly_g_per_kwh.get(hour, fallback_g_per_kwh), pue=pue
        )
        t = seg_end
    return total


@dataclass(frozen=True)
class EmbodiedDefault:
    media: str
    kg_per_drive: float | None
    kg_per_gb: float | None
    low: float
    high: float
    source: str


EMBODIED_DEFAULTS: dict[str, EmbodiedDefault] = {
    "hdd": EmbodiedDefault(
        "hdd",
        30.0,
        None,
        24.0,
        50.0,
        "DigitalPebble spruce consensus (PR #275): 30 kgCO2e per drive; band Boavizta/vendor 24 to Teads 50",
    ),
    "ssd": EmbodiedDefault(
        "ssd",
        None,
        0.055,
        0.018,
        0.16,
        "DigitalPebble spruce consensus (PR #275): 0.055 kgCO2e/GB; band Boavizta high density 0.018 "
        "to Tannu & Nair (HotCarbon'22) 0.16",
    ),
}
DEFAULT_LIFETIME_YEARS = 5.0


def embodied_kg(*, media: str, capacity_bytes: int | None, drives: int = 1) -> tuple[float, EmbodiedDefault]:
    d = EMBODIED_DEFAULTS.get(media)
    if d is None:
        raise ValueError(f"no embodied-carbon default for media {media!r}; give the kgCO2e figure")
    if d.kg_per_drive is not None:
        return d.kg_per_drive * drives, d
    if not capacity_bytes:
        raise ValueError("an SSD's embodied carbon scales with capacity: the device's capacity is unknown")
    return (d.kg_per_gb or 0.0) * capacity_bytes / 1e9, d


def amortized_gco2e(
    *, embodied_kg: float, duration_s: float, lifetime_years: float = DEFAULT_LIFETIME_YEARS
) -> float:
    """SCI amortisation of a device's embodied carbon over the part of its life a run used."""
    return embodied_kg * 1000 * duration_s / (lifetime_years * SECONDS_PER_YEAR)
