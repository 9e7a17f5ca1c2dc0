"""A run's energy from its phases: idle baseline, load energy, normalised figures, uncertainty.

Formulas from docs/energy.md §2.4–2.7: idle W = mean of the idle phases before and after; dynamic
energy = load energy − idle W × load time; uncertainty combines the meter's (correlated) gain and
offset error, the readings' random spread, integration and gap errors, and for dynamic energy the
idle baseline's spread and drift. Expanded with k = 2 (≈95 %).
"""

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from enum import StrEnum
from typing import Any

from iowatt_energy.integrate import WindowStats, window_stats
from iowatt_energy.samples import Cleaned, Quantity

MIN_COVERAGE = 0.95  # a phase with more than 5 % of its window in gaps is flagged
MIN_LOAD_SAMPLES = 100  # fewer readings per load phase: low confidence (docs/energy.md §2.3)
IDLE_DRIFT_WARN = 0.02


class Tier(StrEnum):
    lab = "lab"  # SPEC PTDaemon, SCPI power analyzers
    bmc = "bmc"  # IPMI DCMI, Redfish
    pdu = "pdu"  # SNMP PDUs
    plug = "plug"  # Shelly, Tasmota
    inband = "inband"  # hwmon, a command printing watts
    component = "component"  # RAPL: CPU/DRAM share only, never system energy
    estimate = "estimate"  # datasheet model: an estimate, labelled everywhere
    unknown = "unknown"  # a meter whose kind nobody knows (a spec this agent cannot read)


# (percent of reading, absolute W) assumed when a meter declares nothing (docs/energy.md §3.4): these are
# platform assumptions, not sourced specifications, and the result says `accuracy_declared: false`.
TIER_DEFAULT_ACCURACY: dict[Tier, tuple[float, float]] = {
    Tier.lab: (1.0, 0.0),
    Tier.bmc: (5.0, 0.0),
    Tier.pdu: (5.0, 0.0),
    Tier.plug: (2.0, 0.5),
    Tier.inband: (5.0, 0.0),
    Tier.component: (5.0, 0.0),
    Tier.estimate: (25.0, 0.0),
    Tier.unknown: (25.0, 0.0),
}

TIER_LABEL: dict[Tier, str] = {
    Tier.lab: "lab analyzer",
    Tier.bmc: "BMC",
    Tier.pdu: "PDU",
    Tier.plug: "smart plug (informative)",
    Tier.inband: "in-band sensor",
    Tier.component: "component counter (not wall power)",
    Tier.estimate: "estimate (no meter)",
    Tier.unknown: "unknown meter",
}


def classify_tier(driver: str, declared: str) -> Tier:
    """The tier from what the meter is: a driver nobody knows ("unknown": the agent could not read
    the spec) or a tier that is not one of ours is `unknown`, never a sensor class it is not."""
    if driver in ("", "unknown"):
        return Tier.unknown
    try:
        return Tier(declared)
    except ValueError:
        return Tier.unknown


@dataclass(frozen=True)
class Meter:
    spec: str
    driver: str
    tier: Tier
    quantity: Quantity
    nominal_interval_s: float
    accuracy_pct: float | None = None
    accuracy_w: float | None = None
    accuracy_declared: bool = False
    model: str = ""

    def accuracy(self) -> tuple[float, float]:
        if self.accuracy_pct is not None:
            return self.accuracy_pct, self.accuracy_w or 0.0
        return TIER_DEFAULT_ACCURACY[self.tier]

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "Meter":
        return cls(
            spec=str(d.get("spec", "")),
            driver=str(d.get("driver", "")),
            tier=classify_tier(str(d.get("driver", "")), str(d.get("tier", ""))),
            quantity=Quantity(d["quantity"]),
            nominal_interval_s=float(d.get("nominal_interval_s") or 1.0),
            accuracy_pct=d.get("accuracy_pct"),
            accuracy_w=d.get("accuracy_w"),
            accuracy_declared=bool(d.get("accuracy_declared", False)),
            model=str(d.get("model", "")),
        )


@dataclass(frozen=True)
class Phase:
    name: str  # idle_before | load | idle_after (or a load level's name)
    start_ns: int
    end_ns: int


@dataclass(frozen=True)
class PhaseSummary:
    name: str
    duration_s: float
    mean_w: float
    energy_j: float
    samples: int
    coverage: float


@dataclass(frozen=True)
class EnergySummary:
    """The `energy` object of a result (units in the field names or below)."""

    source: str  # the meter spec
    tier: str
    tier_label: str
    estimated: bool  # true when the figures come from a model, not a meter
    samples: int
    achieved_rate_hz: float
    idle_w: float | None
    idle_drift_w: float | None  # idle after − idle before
    load_w_mean: float
    runtime_s: float
    total_j: float
    dynamic_j: float | None
    j_per_gb: float | None
    dynamic_j_per_gb: float | None
    j_per_mio: float | None
    iops_per_w: float | None
    mb_s_per_w: float | None
    uncertainty_j: float  # expanded (k=2) uncertainty of total_j
    dynamic_uncertainty_j: float | None  # expanded (k=2) uncertainty of dynamic_j
    coverage: float  # of the load window
    accuracy_pct: float
    accuracy_w: float
    accuracy_declared: bool
    flags: list[str] = field(default_factory=list)
    phases: list[PhaseSummary] = field(default_factory=list)
    dropped: dict[str, int] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _u_total(w: WindowStats, a_pct: float, b_w: float) -> float:
    sys_u = (a_pct / 100 * w.energy_j + b_w * w.duration_s) / math.sqrt(3)
    rand_u = w.stdev_w * w.duration_s / math.sqrt(max(w.n_eff, 1.0))
    gap_u = 0.5 * (w.max_w - w.min_w) * w.duration_s * (1 - w.coverage)
    return math.sqrt(sys_u**2 + rand_u**2 + w.integration_u_j**2 + gap_u**2)


def summarize(
    *, meter: Meter, phases: Sequence[Phase], cleaned: Cleaned, io_bytes: int, total_ios: int
) -> EnergySummary:
    """Energy of the `load` phase with the idle baseline from `idle_before`/`idle_after`."""
    by_name = {p.name: p for p in phases if p.end_ns > p.start_ns}
    if "load" not in by_name:
        raise ValueError("no load phase: the phases must include one named 'load'")
    stats = {
        name: window_stats(
            cleaned,
            p.start_ns,
            p.end_ns,
            quantity=meter.quantity,
            nominal_interval_s=meter.nominal_interval_s,
        )
        for name, p in by_name.items()
    }
    load = stats["load"]
    idles = [stats[n] for n in ("idle_before", "idle_after") if n in stats and stats[n].samples > 0]
    idle_w = sum(s.mean_w for s in idles) / len(idles) if idles else None
    drift = stats["idle_after"].mean_w - stats["idle_before"].mean_w if len(idles) == 2 else None
    a_pct, b_w = meter.accuracy()
    t = load.duration_s
    total = load.energy_j
    dynamic = total - idle_w * t if idle_w is not None else None
    u_total = 2 * _u_total(load, a_pct, b_w)
    u_dyn = None
    if dynamic is not None:
        idle_sd = math.sqrt(sum(s.stdev_w**2 for s in idles) / len(idles))
        idle_n = sum(s.n_eff for s in idles)
        terms = [
            a_pct / 100 * abs(dynamic) / math.sqrt(3),
            t * idle_sd / math.sqrt(max(idle_n, 1.0)),
            t * abs(drift or 0.0) / (2 * math.sqrt(3)),
            load.stdev_w * t / math.sqrt(max(load.n_eff, 1.0)),
            load.integration_u_j,
        ]
        u_dyn = 2 * math.sqrt(sum(x * x for x in terms))
    flags = []
    if load.coverage < MIN_COVERAGE:
        flags.append("low_coverage")
    if load.samples < MIN_LOAD_SAMPLES:
        flags.append("few_samples")
    if idle_w is None:
        flags.append("no_idle_baseline")
    if drift is not None and idle_w and abs(drift) > IDLE_DRIFT_WARN * idle_w:
        flags.append("idle_drift")
    if meter.tier is Tier.estimate:
        flags.append("estimate")
    if meter.tier is Tier.component:
        flags.append("component_only")
    if not meter.accuracy_declared:
        flags.append("accuracy_assumed")
    gb, mio = io_bytes / 1e9, total_ios / 1e6
    window = sum(s.duration_s for s in stats.values())
    n = len(cleaned.t_ns)
    return EnergySummary(
        source=meter.spec,
        tier=meter.tier.value,
        tier_label=TIER_LABEL[meter.tier],
        estimated=meter.tier is Tier.estimate,
        samples=n,
        achieved_rate_hz=n / window if window else 0.0,
        idle_w=idle_w,
        idle_drift_w=drift,
        load_w_mean=load.mean_w,
        runtime_s=t,
        total_j=total,
        dynamic_j=dynamic,
        j_per_gb=total / gb if gb else None,
        dynamic_j_per_gb=dynamic / gb if gb and dynamic is not None else None,
        j_per_mio=total / mio if mio else None,
        # no I/O counted (a TPC-H run: the DBMS's I/O is not the engine's to count) is "not measured",
        # never "0 IOPS per watt"
        iops_per_w=total_ios / total if total > 0 and total_ios else None,
        mb_s_per_w=io_bytes / 1e6 / total if total > 0 and io_bytes else None,
        uncertainty_j=u_total,
        dynamic_uncertainty_j=u_dyn,
        coverage=load.coverage,
        accuracy_pct=a_pct,
        accuracy_w=b_w,
        accuracy_declared=meter.accuracy_declared,
        flags=flags,
        phases=[
            PhaseSummary(
                name=k,
                duration_s=s.duration_s,
                mean_w=s.mean_w,
                energy_j=s.energy_j,
                samples=s.samples,
                coverage=s.coverage,
            )
            for k, s in stats.items()
        ],
        dropped=dict(cleaned.dropped),
    )
