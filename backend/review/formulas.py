"""Procurement-review formulas: pure functions, one formula each, money in Decimal.

Every function that a review's figure comes from is listed in `METHODOLOGY` with its formula as
written in the methodology appendix (docs/reviews.md and the PDF render that table, so the report
and the code cannot drift apart). Conventions, stated once and beside every figure:

- GB = 10^9 bytes (as drive vendors and Schulz's StorageIO report use it), TB = 10^12 bytes.
- A year is 8,766 hours (365.25 days: the year libs/energy uses for amortising embodied carbon).
- Money is Decimal, never float; per-unit rates keep 4 decimal places, totals the currency's minor
  unit (ROUND_HALF_UP); the figures are divided first and rounded once, at the end.
"""

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal, localcontext
from fractions import Fraction

GB = 10**9
HOURS_PER_YEAR = Decimal("8766")
RATE_PLACES = Decimal("0.0001")
# digits kept when rounding for display: the inputs' bounds (schemas.py) keep every figure far
# below 10^40, so quantizing to 4 places never runs out of digits
PRECISION = 60

PROTECTIONS = ("jbod", "raid0", "raid1", "raid5", "raid6", "raid10", "ec:K+M", "replica:N")


class ProtectionError(ValueError):
    """A protection the drive count cannot form; `field` is the input to blame (protection | count)."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field


@dataclass(frozen=True)
class Protection:
    kind: str  # jbod | raid0 | raid1 | raid5 | raid6 | raid10 | ec | replica
    k: int = 0  # ec: data chunks
    m: int = 0  # ec: coding chunks
    n: int = 0  # replica: copies

    @property
    def label(self) -> str:
        if self.kind == "ec":
            return f"ec:{self.k}+{self.m}"
        if self.kind == "replica":
            return f"replica:{self.n}"
        return self.kind


def parse_protection(text: str) -> Protection:
    """ "jbod", "raid0|1|5|6|10", "ec:K+M" (K ≥ 1, M ≥ 1) or "replica:N" (N ≥ 2)."""
    t = text.strip().lower()
    if t in ("jbod", "raid0", "raid1", "raid5", "raid6", "raid10"):
        return Protection(t)
    if t.startswith("ec:"):
        k, sep, m = t[3:].partition("+")
        if sep and k.isdigit() and m.isdigit() and int(k) >= 1 and int(m) >= 1:
            return Protection("ec", k=int(k), m=int(m))
        raise ProtectionError("protection", f"{text!r}: erasure coding is written ec:K+M with K, M ≥ 1")
    if t.startswith("replica:"):
        n = t[8:]
        if n.isdigit() and int(n) >= 2:
            return Protection("replica", n=int(n))
        raise ProtectionError("protection", f"{text!r}: replication is written replica:N with N ≥ 2")
    raise ProtectionError("protection", f"{text!r} is not one of {', '.join(PROTECTIONS)}")


def data_drives(count: int, hot_spares: int) -> int:
    """Drives that hold data = count − hot spares (a hot spare holds nothing until a drive fails)."""
    return count - hot_spares


def check_protection(p: Protection, count: int, hot_spares: int = 0) -> None:
    """Raise ProtectionError when `count` drives (less the hot spares) cannot form `p`."""
    if hot_spares < 0 or hot_spares >= count:
        raise ProtectionError("hot_spares", f"{hot_spares} hot spares leave no data drive of {count}")
    n = data_drives(count, hot_spares)
    need = {"jbod": 1, "raid0": 1, "raid1": 2, "raid5": 3, "raid6": 4, "raid10": 4}.get(p.kind)
    if p.kind == "ec":
        need = p.k + p.m
    elif p.kind == "replica":
        need = p.n
    assert need is not None
    if n < need:
        raise ProtectionError(
            "count", f"{p.label} needs at least {need} data drives; {n} given (count − hot_spares)"
        )
    if p.kind == "raid10" and n % 2:
        raise ProtectionError("count", f"raid10 stripes mirrored pairs: an even number of drives, not {n}")


def usable_fraction(p: Protection, n: int) -> Fraction:
    """Share of the data drives' raw capacity that holds user data, exactly."""
    if p.kind in ("jbod", "raid0"):
        return Fraction(1)
    if p.kind == "raid1":
        return Fraction(1, n)  # an n-way mirror holds one drive's worth
    if p.kind == "raid5":
        return Fraction(n - 1, n)
    if p.kind == "raid6":
        return Fraction(n - 2, n)
    if p.kind == "raid10":
        return Fraction(1, 2)
    if p.kind == "ec":
        return Fraction(p.k, p.k + p.m)
    return Fraction(1, p.n)  # replica


def raw_bytes(capacity_bytes: int, count: int) -> int:
    """Raw capacity = count × drive capacity (every drive bought, hot spares included)."""
    return capacity_bytes * count


def usable_bytes(
    p: Protection,
    capacity_bytes: int,
    count: int,
    hot_spares: int = 0,
    over_provisioning: Decimal = Decimal(0),
) -> int:
    """Usable capacity = (count − hot spares) × capacity × usable fraction of the scheme
    × (1 − over-provisioning), rounded down to a byte. Usable fractions: JBOD and RAID 0: 1;
    RAID 1 (n-way mirror): 1/n; RAID 5: (n−1)/n; RAID 6: (n−2)/n; RAID 10: 1/2; ec:K+M: K/(K+M);
    replica:N: 1/N."""
    n = data_drives(count, hot_spares)
    frac = usable_fraction(p, n) * (1 - Fraction(over_provisioning))
    return int(Fraction(capacity_bytes * n) * frac)


def protection_overhead(raw: int, usable: int) -> Decimal:
    """Protection overhead = (raw − usable) / usable: the extra raw space bought per usable byte
    (100 % for a mirror, as the tables of Schulz's StorageIO report state it)."""
    return (Decimal(raw - usable) / Decimal(usable)).quantize(RATE_PLACES, ROUND_HALF_UP)


def price_total(unit_price: Decimal, count: int) -> Decimal:
    """Set price = unit price × count."""
    return unit_price * count


def cost_per_perf_single(unit_price: Decimal, performance: Decimal) -> Decimal | None:
    """Single-drive cost per IOPS/RPS = one drive's price / the configuration's measured performance
    (Schulz's StorageIO report, Tables 4 and 6: $595 / 580.7 RPS = $1.02)."""
    return _rate(unit_price, performance)


def cost_per_perf_set(price: Decimal, performance: Decimal) -> Decimal | None:
    """Set cost per IOPS/RPS = set price / the configuration's measured performance."""
    return _rate(price, performance)


def cost_per_gb(price: Decimal, capacity_bytes: int) -> Decimal | None:
    """Cost per GB = price / (bytes / 10^9); raw: one drive's price over one drive's capacity (= set
    price over raw bytes); usable: set price over usable bytes. GB = 10^9 bytes."""
    return _rate(price, Decimal(capacity_bytes) / GB)


def cost_per_gb_per_perf(price: Decimal, usable: int, performance: Decimal) -> Decimal | None:
    """Cost per usable GB per IOPS/RPS = set price / (usable bytes / 10^9) / measured performance
    (the column of that name in Schulz's StorageIO report prints the set cost per RPS instead:
    flagged when entered)."""
    per_gb = cost_per_gb(price, usable)
    return None if per_gb is None else _rate(per_gb, performance)


def per_watt(performance: Decimal, watts: Decimal) -> Decimal | None:
    """IOPS per watt = IOPS / load power; MB/s per watt = (bytes/s / 10^6) / load power."""
    return _rate(performance, watts)


def annual_energy_kwh(idle_w: Decimal, load_w: Decimal, duty_cycle: Decimal) -> Decimal:
    """Annual energy (kWh) = (load W × duty cycle + idle W × (1 − duty cycle)) × 8,766 h / 1,000."""
    return (load_w * duty_cycle + idle_w * (1 - duty_cycle)) * HOURS_PER_YEAR / 1000


def facility_energy_kwh(it_kwh: Decimal, pue: Decimal) -> Decimal:
    """Facility energy = device energy × PUE (the building's cooling and power losses)."""
    return it_kwh * pue


def energy_cost(facility_kwh: Decimal, tariff_per_kwh: Decimal) -> Decimal:
    """Annual energy cost = facility kWh × tariff (currency per kWh)."""
    return facility_kwh * tariff_per_kwh


def operational_kg(facility_kwh: Decimal, grid_g_per_kwh: Decimal) -> Decimal:
    """Annual operational CO2e (kg) = facility kWh × grid intensity (gCO2e/kWh) / 1,000."""
    return facility_kwh * grid_g_per_kwh / 1000


def replacements(count: int, afr: Decimal, horizon_years: Decimal) -> Decimal:
    """Expected replacement drives over the horizon = count × AFR × years (an expected value, not
    rounded: 10 drives at 1 % AFR over 5 years = 0.5 drives)."""
    return count * afr * horizon_years


def embodied_kg(per_drive_kg: Decimal, count: int, replaced: Decimal) -> Decimal:
    """Embodied CO2e (kg) = per-drive embodied × (count + replacements)."""
    return per_drive_kg * (count + replaced)


def tco(
    price: Decimal, annual_energy_cost: Decimal, replaced: Decimal, unit_price: Decimal, years: Decimal
) -> Decimal:
    """TCO = purchase + annual energy cost × years + replacements × unit price."""
    return price + annual_energy_cost * years + replaced * unit_price


def lifetime_kg(annual_operational_kg: Decimal, years: Decimal, embodied: Decimal) -> Decimal:
    """Lifetime CO2e (kg) = annual operational × years + embodied."""
    return annual_operational_kg * years + embodied


def energy_per_job_j(runtime_s: Decimal, power_w: Decimal) -> Decimal:
    """Energy per job (J) = run time (s) × power (W) (Song & Lee's Table 5: 15 s × 264.18 W =
    3,962.7 J)."""
    return runtime_s * power_w


def normalised(values: Sequence[Decimal | None], higher_is_better: bool) -> list[Decimal]:
    """Ratio to the best: higher-is-better v / max; lower-is-better min / v; 1 = the best candidate,
    0 for a missing figure (or a zero where lower is better cannot be divided into)."""
    present = [v for v in values if v is not None and v > 0]
    if not present:
        return [Decimal(0) for _ in values]
    best = max(present) if higher_is_better else min(present)
    out = []
    for v in values:
        if v is None or v <= 0:
            out.append(Decimal(1) if (v == 0 and not higher_is_better) else Decimal(0))
        else:
            out.append(v / best if higher_is_better else best / v)
    return out


def weighted_scores(columns: dict[str, list[Decimal]], weights: dict[str, Decimal]) -> list[Decimal]:
    """Score = Σ weight × normalised score / Σ weights (0 to 1; criteria with weight 0 do not count)."""
    total = sum((w for w in weights.values() if w > 0), Decimal(0))
    n = len(next(iter(columns.values()))) if columns else 0
    if total == 0:
        return [Decimal(0)] * n
    return [
        sum((weights[c] * columns[c][i] for c in columns if weights.get(c, 0) > 0), Decimal(0)) / total
        for i in range(n)
    ]


def flip_point(
    leader_at: Callable[[Decimal], int], lo: Decimal, hi: Decimal, base: Decimal, steps: int = 120
) -> tuple[Decimal, int] | None:
    """Sensitivity: scan [lo, hi] from the base value outwards (up first, then down) for the nearest
    value at which the leader changes, refined by bisection to 1/10,000 of the range; None when it
    never changes in the range ("no flip in range")."""
    base_leader = leader_at(base)
    found: list[tuple[Decimal, int]] = []
    for end in (hi, lo):
        prev = base
        for i in range(1, steps + 1):
            x = base + (end - base) * i / steps
            if leader_at(x) != base_leader:
                a, b = prev, x
                for _ in range(40):
                    if abs(b - a) <= abs(hi - lo) / 10000:
                        break
                    mid = (a + b) / 2
                    if leader_at(mid) != base_leader:
                        b = mid
                    else:
                        a = mid
                found.append((b, leader_at(b)))
                break
            prev = x
    if not found:
        return None
    return min(found, key=lambda f: abs(f[0] - base))


def money(value: Decimal, minor_units: int = 2) -> Decimal:
    """A total in the currency's minor unit, half up."""
    with localcontext(prec=PRECISION):
        return value.quantize(Decimal(1).scaleb(-minor_units), ROUND_HALF_UP)


def rate(value: Decimal) -> Decimal:
    """A per-unit rate (cost per IOPS, per GB; per watt) to 4 decimal places, half up."""
    with localcontext(prec=PRECISION):
        return value.quantize(RATE_PLACES, ROUND_HALF_UP)


def fine_rate(value: Decimal) -> Decimal:
    """A rate of fractions of a cent (cost per GB per IOPS) to 8 decimal places, half up."""
    with localcontext(prec=PRECISION):
        return value.quantize(Decimal("0.00000001"), ROUND_HALF_UP)


def _rate(num: Decimal, den: Decimal) -> Decimal | None:
    if den <= 0:
        return None
    return num / den


@dataclass(frozen=True)
class Formula:
    name: str
    formula: str
    source: str


# The methodology appendix: what each figure is, exactly as computed above (tests check every
# function named here exists and that its docstring carries the formula).
METHODOLOGY: tuple[Formula, ...] = (
    Formula("raw_bytes", "raw = count × drive capacity (hot spares included)", "definition"),
    Formula(
        "usable_bytes",
        "usable = (count − hot spares) × capacity × f × (1 − over-provisioning); f: JBOD, RAID 0 = 1; "
        "RAID 1 = 1/n; RAID 5 = (n−1)/n; RAID 6 = (n−2)/n; RAID 10 = 1/2; ec:K+M = K/(K+M); replica:N = 1/N",
        "SNIA Dictionary (RAID levels); erasure coding and replication as in Ceph's pool documentation",
    ),
    Formula(
        "protection_overhead",
        "overhead = (raw − usable) / usable",
        "Schulz's StorageIO report, Tables 4, 6 (100 % for a mirror)",
    ),
    Formula("price_total", "set price = unit price × count", "definition"),
    Formula(
        "cost_per_perf_single",
        "single-drive cost per IOPS/RPS = unit price / measured performance",
        "Schulz's StorageIO report, Tables 4, 6",
    ),
    Formula(
        "cost_per_perf_set",
        "set cost per IOPS/RPS = set price / measured performance",
        "Schulz's StorageIO report, Tables 4, 6",
    ),
    Formula(
        "cost_per_gb",
        "cost per GB = price / (bytes / 10^9); raw: unit price / drive capacity; usable: set price / usable",
        "Schulz's StorageIO report, Tables 4, 6; GB = 10^9 bytes",
    ),
    Formula(
        "cost_per_gb_per_perf",
        "cost per usable GB per IOPS/RPS = set price / (usable bytes / 10^9) / measured performance",
        "Schulz's StorageIO report, Tables 4, 6 (its column prints set price / RPS); GB = 10^9 bytes",
    ),
    Formula(
        "per_watt",
        "IOPS/W = IOPS / load W; MB/s/W = (bytes/s / 10^6) / load W",
        "SNIA Emerald; docs/energy.md",
    ),
    Formula(
        "annual_energy_kwh",
        "kWh/year = (load W × duty + idle W × (1 − duty)) × 8,766 h / 1,000",
        "8,766 h = 365.25 days",
    ),
    Formula(
        "facility_energy_kwh", "facility kWh = device kWh × PUE", "The Green Grid, PUE (ISO/IEC 30134-2)"
    ),
    Formula(
        "energy_cost",
        "energy cost/year = facility kWh × tariff",
        "tariff of the review (environment or override)",
    ),
    Formula(
        "operational_kg",
        "operational kgCO2e/year = facility kWh × grid gCO2e/kWh / 1,000",
        "GHG Protocol scope 2, location-based",
    ),
    Formula(
        "replacements",
        "replacements = count × AFR × years (expected value)",
        "AFR as published (datasheet, Backblaze)",
    ),
    Formula(
        "embodied_kg",
        "embodied kgCO2e = per-drive embodied × (count + replacements)",
        "device embodied carbon with its source",
    ),
    Formula("tco", "TCO = set price + energy cost/year × years + replacements × unit price", "definition"),
    Formula("lifetime_kg", "lifetime kgCO2e = operational kg/year × years + embodied", "definition"),
    Formula("energy_per_job_j", "energy per job (J) = run time (s) × power (W)", "Song & Lee's Table 5"),
    Formula(
        "normalised",
        "score = v / max (higher better), min / v (lower better); 1 = best",
        "ratio normalisation",
    ),
    Formula("weighted_scores", "score = Σ wᵢ × scoreᵢ / Σ wᵢ", "weighted sum model"),
    Formula(
        "flip_point",
        "nearest value in the range where the leader changes (scan + bisection), else no flip in range",
        "one-at-a-time sensitivity",
    ),
)
