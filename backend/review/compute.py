"""A review's figures from its inputs: per-candidate figures, the weighted ranking, sensitivity and
the per-job energy crossover. Pure (no database): the service gathers the inputs, including what
a linked run measured, and this module only calculates with backend/review/formulas.py."""

import functools
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field, fields, replace
from decimal import Decimal

from backend.review import formulas as f

# criterion -> (figure key, higher is better)
CRITERIA: dict[str, tuple[str, bool]] = {
    "tco": ("tco", False),
    "performance": ("performance", True),
    "co2e_lifetime": ("co2e_kg_lifetime", False),
    "cost_per_iops_set": ("cost_per_iops_set", False),
    "cost_per_gb_usable": ("cost_per_gb_usable", False),
    "energy": ("energy_kwh_per_year", False),
    "usable_capacity": ("usable_bytes", True),
}
DEFAULT_WEIGHTS = {"tco": Decimal(1), "performance": Decimal(1), "co2e_lifetime": Decimal(1)}
NORMALISATION = (
    "each criterion is divided by the best candidate's value (higher-is-better: value / max; "
    "lower-is-better: min / value), so the best scores 1; a missing figure scores 0; the score is "
    "the weighted mean of these (Σ weight × score / Σ weight)"
)


@dataclass(frozen=True)
class Context:
    horizon_years: Decimal
    duty_cycle: Decimal
    tariff_per_kwh: Decimal
    grid_g_per_kwh: Decimal
    pue: Decimal
    minor_units: int = 2


@dataclass(frozen=True)
class Candidate:
    id: uuid.UUID
    name: str
    unit_price: Decimal
    capacity_bytes: int
    count: int
    hot_spares: int
    over_provisioning: Decimal
    protection: f.Protection
    afr: Decimal
    embodied_kg_per_drive: Decimal | None
    performance: Decimal | None  # the configuration's IOPS, RPS or MB/s
    metric: str  # iops | rps | mb_s
    mb_s: Decimal | None
    idle_w: Decimal | None  # of the set
    load_w: Decimal | None
    job_points: tuple[tuple[str, Decimal, Decimal], ...] = field(default=())


@dataclass(frozen=True)
class Figures:
    """Every figure of one candidate, unrounded (rounding is for display: the service's read).
    None: not computable from the inputs (no performance, no power, nothing usable, no embodied
    carbon). Field names are the CSV's and CandidateCreate.reported's keys."""

    drives: int
    data_drives: int
    raw_bytes: int
    usable_bytes: int
    protection_overhead: Decimal | None
    price_total: Decimal
    performance: Decimal | None
    cost_per_iops_single: Decimal | None
    cost_per_iops_set: Decimal | None
    cost_per_gb_raw: Decimal | None
    cost_per_gb_usable: Decimal | None
    cost_per_gb_usable_per_iops: Decimal | None
    iops_per_w: Decimal | None
    mb_s_per_w: Decimal | None
    energy_kwh_per_year: Decimal | None
    facility_kwh_per_year: Decimal | None
    energy_cost_per_year: Decimal | None
    operational_kg_per_year: Decimal | None
    replacements: Decimal
    embodied_kg: Decimal | None
    co2e_kg_lifetime: Decimal | None
    tco: Decimal
    tco_purchase: Decimal
    tco_energy: Decimal
    tco_replacements: Decimal

    def get(self, key: str) -> Decimal | None:
        """The figure named `key` as a Decimal (a ranking criterion's or a reported figure's key);
        None when it is not computable or not a figure."""
        if key not in _FIGURE_KEYS:
            return None
        v = getattr(self, key)
        return None if v is None else Decimal(v)


_FIGURE_KEYS = frozenset(f.name for f in fields(Figures))


@dataclass(frozen=True)
class _Power:
    """What a candidate's idle and load power give, when both are known."""

    energy_kwh_per_year: Decimal
    facility_kwh_per_year: Decimal
    energy_cost_per_year: Decimal
    operational_kg_per_year: Decimal


def _power(ctx: Context, c: Candidate) -> _Power | None:
    if c.load_w is None or c.idle_w is None:
        return None
    kwh = f.annual_energy_kwh(c.idle_w, c.load_w, ctx.duty_cycle)
    facility = f.facility_energy_kwh(kwh, ctx.pue)
    return _Power(
        energy_kwh_per_year=kwh,
        facility_kwh_per_year=facility,
        energy_cost_per_year=f.energy_cost(facility, ctx.tariff_per_kwh),
        operational_kg_per_year=f.operational_kg(facility, ctx.grid_g_per_kwh),
    )


def _per_watt(c: Candidate) -> tuple[Decimal | None, Decimal | None]:
    """(IOPS or RPS per W, MB/s per W) at the load power."""
    if c.load_w is None or c.load_w <= 0:
        return None, None
    perf = c.performance
    per_op = f.per_watt(perf, c.load_w) if perf is not None and c.metric != "mb_s" else None
    mb_s = perf if c.metric == "mb_s" else c.mb_s
    return per_op, (f.per_watt(mb_s, c.load_w) if mb_s is not None else None)


def _lifetime_kg(ctx: Context, operational_kg: Decimal | None, embodied_kg: Decimal | None) -> Decimal | None:
    """Operational over the horizon plus embodied; a missing part counts 0, both missing is None."""
    if operational_kg is None and embodied_kg is None:
        return None
    return f.lifetime_kg(
        operational_kg if operational_kg is not None else Decimal(0),
        ctx.horizon_years,
        embodied_kg if embodied_kg is not None else Decimal(0),
    )


@dataclass(frozen=True)
class _Own:
    """The figures that depend on the candidate alone, not on the review's context."""

    data_drives: int
    raw_bytes: int
    usable_bytes: int
    protection_overhead: Decimal | None
    price_total: Decimal
    cost_per_iops_single: Decimal | None
    cost_per_iops_set: Decimal | None
    cost_per_gb_raw: Decimal | None
    cost_per_gb_usable: Decimal | None
    cost_per_gb_usable_per_iops: Decimal | None
    iops_per_w: Decimal | None
    mb_s_per_w: Decimal | None


# a sensitivity scan ranks the same candidates hundreds of times under other contexts: what does not
# depend on the context (usable bytes in exact rational arithmetic above all) is computed once
@functools.lru_cache(maxsize=1024)
def _own(c: Candidate) -> _Own:
    raw = f.raw_bytes(c.capacity_bytes, c.count)
    usable = f.usable_bytes(c.protection, c.capacity_bytes, c.count, c.hot_spares, c.over_provisioning)
    price = f.price_total(c.unit_price, c.count)
    perf = c.performance
    iops_per_w, mb_s_per_w = _per_watt(c)
    return _Own(
        data_drives=f.data_drives(c.count, c.hot_spares),
        raw_bytes=raw,
        usable_bytes=usable,
        protection_overhead=f.protection_overhead(raw, usable) if usable > 0 else None,
        price_total=price,
        cost_per_iops_single=f.cost_per_perf_single(c.unit_price, perf) if perf else None,
        cost_per_iops_set=f.cost_per_perf_set(price, perf) if perf else None,
        cost_per_gb_raw=f.cost_per_gb(c.unit_price, c.capacity_bytes),
        cost_per_gb_usable=f.cost_per_gb(price, usable) if usable > 0 else None,
        cost_per_gb_usable_per_iops=f.cost_per_gb_per_perf(price, usable, perf)
        if perf and usable > 0
        else None,
        iops_per_w=iops_per_w,
        mb_s_per_w=mb_s_per_w,
    )


def figures(ctx: Context, c: Candidate) -> Figures:
    """Every figure of one candidate, unrounded."""
    own = _own(c)
    price = own.price_total
    replaced = f.replacements(c.count, c.afr, ctx.horizon_years)
    power = _power(ctx, c)
    energy_cost = power.energy_cost_per_year if power else Decimal(0)
    embodied = (
        f.embodied_kg(c.embodied_kg_per_drive, c.count, replaced)
        if c.embodied_kg_per_drive is not None
        else None
    )
    op_kg = power.operational_kg_per_year if power else None
    return Figures(
        drives=c.count,
        data_drives=own.data_drives,
        raw_bytes=own.raw_bytes,
        usable_bytes=own.usable_bytes,
        protection_overhead=own.protection_overhead,
        price_total=price,
        performance=c.performance,
        cost_per_iops_single=own.cost_per_iops_single,
        cost_per_iops_set=own.cost_per_iops_set,
        cost_per_gb_raw=own.cost_per_gb_raw,
        cost_per_gb_usable=own.cost_per_gb_usable,
        cost_per_gb_usable_per_iops=own.cost_per_gb_usable_per_iops,
        iops_per_w=own.iops_per_w,
        mb_s_per_w=own.mb_s_per_w,
        energy_kwh_per_year=power.energy_kwh_per_year if power else None,
        facility_kwh_per_year=power.facility_kwh_per_year if power else None,
        energy_cost_per_year=power.energy_cost_per_year if power else None,
        operational_kg_per_year=op_kg,
        replacements=replaced,
        embodied_kg=embodied,
        co2e_kg_lifetime=_lifetime_kg(ctx, op_kg, embodied),
        tco=f.tco(price, energy_cost, replaced, c.unit_price, ctx.horizon_years),
        tco_purchase=price,
        tco_energy=energy_cost * ctx.horizon_years,
        tco_replacements=replaced * c.unit_price,
    )


FiguresOf = Callable[[Context, Candidate], Figures]


def rank(
    ctx: Context, cands: list[Candidate], weights: dict[str, Decimal], figures_of: FiguresOf = figures
) -> list[tuple[int, Decimal, dict[str, Decimal]]]:
    """(index, score, per-criterion scores) best first; ties keep the candidates' order.
    `figures_of`: `figures`, or a memo of it (sensitivity)."""
    if not cands:
        return []
    figs = [figures_of(ctx, c) for c in cands]
    columns: dict[str, list[Decimal]] = {}
    for crit, (key, higher) in CRITERIA.items():
        if weights.get(crit, Decimal(0)) <= 0:
            continue
        columns[crit] = f.normalised([fg.get(key) for fg in figs], higher)
    scores = f.weighted_scores(columns, weights) if columns else [Decimal(0)] * len(cands)
    order = sorted(range(len(cands)), key=lambda i: (-scores[i], i))
    return [(i, scores[i], {k: col[i] for k, col in columns.items()}) for i in order]


def leader(
    ctx: Context, cands: list[Candidate], weights: dict[str, Decimal], figures_of: FiguresOf = figures
) -> int:
    return rank(ctx, cands, weights, figures_of)[0][0]


@dataclass(frozen=True)
class Sensitivity:
    parameter: str
    base: Decimal
    low: Decimal
    high: Decimal
    flip_at: Decimal | None
    new_leader: str | None
    message: str


def sensitivity(ctx: Context, cands: list[Candidate], weights: dict[str, Decimal]) -> list[Sensitivity]:
    """One parameter at a time over a stated range: where the leader changes, or no flip in range.
    price: a multiplier on the current leader's unit price (0.25× to 4×)."""
    if len(cands) < 2:
        return []
    # the scans evaluate the ranking hundreds of times; the price scan changes one candidate at one
    # context, so the others' figures (pure functions of both) are computed once for it
    memo: FiguresOf = functools.cache(figures)
    top = leader(ctx, cands, weights, memo)

    def with_ctx(**kw: Decimal) -> Callable[[Decimal], int]:
        name = next(iter(kw))
        return lambda x: leader(replace(ctx, **{name: x}), cands, weights)  # type: ignore[arg-type]

    def with_price(x: Decimal) -> int:
        changed = list(cands)
        changed[top] = replace(cands[top], unit_price=cands[top].unit_price * x)
        return leader(ctx, changed, weights, memo)

    scans: list[tuple[str, Callable[[Decimal], int], Decimal, Decimal, Decimal]] = [
        ("price", with_price, Decimal(1), Decimal("0.25"), Decimal(4)),
        (
            "tariff",
            with_ctx(tariff_per_kwh=Decimal(0)),
            ctx.tariff_per_kwh,
            Decimal(0),
            max(Decimal(1), ctx.tariff_per_kwh * 5),
        ),
        (
            "grid_intensity",
            with_ctx(grid_g_per_kwh=Decimal(0)),
            ctx.grid_g_per_kwh,
            Decimal(0),
            max(Decimal(1500), ctx.grid_g_per_kwh * 2),
        ),
        ("duty_cycle", with_ctx(duty_cycle=Decimal(0)), ctx.duty_cycle, Decimal(0), Decimal(1)),
        (
            "horizon",
            with_ctx(horizon_years=Decimal(0)),
            ctx.horizon_years,
            Decimal("0.5"),
            max(Decimal(15), min(ctx.horizon_years * 2, Decimal(50))),
        ),
    ]
    out = []
    for name, fn, base, lo, hi in scans:
        found = f.flip_point(fn, lo, hi, base, steps=40)
        if found is None:
            out.append(Sensitivity(name, base, lo, hi, None, None, f"no flip in range {_n(lo)} to {_n(hi)}"))
        else:
            at, who = found
            at = at.quantize(Decimal("0.0001"))
            what = f"{_n(at)}× {cands[top].name}'s unit price" if name == "price" else f"{name} {_n(at)}"
            out.append(
                Sensitivity(
                    name,
                    base,
                    lo,
                    hi,
                    at,
                    cands[who].name,
                    f"at {what}, {cands[who].name} leads instead of {cands[top].name}",
                )
            )
    return out


def job_crossover(cands: list[Candidate]) -> tuple[list[str], list[str], str | None] | None:
    """Per job label (in the first candidate's order) the candidate with the least energy per job,
    and the first label whose winner differs from the previous label's."""
    labels: list[str] = []
    for c in cands:
        for label, _, _ in c.job_points:
            if label not in labels:
                labels.append(label)
    if not labels:
        return None
    winners: list[str] = []
    for label in labels:
        best: tuple[Decimal, str] | None = None
        for c in cands:
            for lab, runtime, power in c.job_points:
                if lab == label:
                    e = f.energy_per_job_j(runtime, power)
                    if best is None or e < best[0]:
                        best = (e, c.name)
        winners.append(best[1] if best else "")
    cross = next((labels[i] for i in range(1, len(labels)) if winners[i] != winners[i - 1]), None)
    return labels, winners, cross


def _n(x: Decimal) -> str:
    return (
        format(x.normalize(), "f")
        if x == x.to_integral_value()
        else format(x.quantize(Decimal("0.0001")).normalize(), "f")
    )
