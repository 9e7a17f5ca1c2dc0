"""Power samples in, energy and carbon out: ingest with COPY, recompute in the worker."""

import uuid
from datetime import timedelta
from typing import Any

import iowatt_energy as ie
from sqlalchemy.orm import Session

from backend.carbon.service import context_for, device_embodied
from backend.errors import NotFound
from backend.jobs import enqueue
from backend.kit.time import utcnow
from backend.models import Run, RunEnergy, RunPower
from backend.power import repository
from backend.power.schemas import EnergyRead, PhaseEnergy, PhaseRead, PowerPoint, PowerSeries, PowerUpload

MAX_POINTS = 1500
# A run's energy still missing this long after its upload is reported `failed` (final), not
# `pending`: the outbox delivered the task and beat's repair re-queued it (every 5 min), so it did
# not arrive in time. The repair goes on; if it ever succeeds the status becomes `ok`.
ENERGY_DEADLINE = timedelta(minutes=15)


def ingest(session: Session, *, run_id: uuid.UUID, power: PowerUpload) -> None:
    """Store the meter, phases and cleaned samples of a run (COPY, in the request's transaction)
    and queue the energy computation for after the commit."""
    quantity = ie.Quantity(power.meter.quantity)
    cleaned = ie.clean(power.samples.t_ns, power.samples.value, quantity=quantity)
    row = RunPower(
        run_id=run_id,
        meter=power.meter.model_dump(mode="json", exclude={"spec"}),  # never a spec (ADR 0009)
        status=power.status,
        reason=power.reason,
        t0_utc=power.t0_utc,
        phases=[p.model_dump() for p in power.phases],
        agent_cleaning=power.cleaning,
        server_cleaning=cleaned.dropped,
        samples=len(cleaned.t_ns),
    )
    repository.add(session, row, cleaned.t_ns, cleaned.value)
    if power.status == "ok" and cleaned.t_ns:
        enqueue(session, "energy.compute_run", run_id=str(run_id))


def meter_label(meter: dict[str, Any]) -> str:
    """How a run's meter is shown: its name on the host and driver; a spec never (older rows had
    one: migration 0005 removed it, and it is ignored here all the same)."""
    name, driver = str(meter.get("name") or ""), str(meter.get("driver") or "")
    return f"{name} ({driver})" if name and driver else name or driver


def _meter(stored: dict[str, Any]) -> ie.Meter:
    return ie.Meter.from_dict({**stored, "spec": meter_label(stored)})


def compute(session: Session, *, run_id: uuid.UUID) -> RunEnergy | None:
    """(Re)compute a run's energy and carbon from its stored samples; idempotent."""
    rp = repository.get(session, run_id)
    run = repository.run(session, run_id)
    if rp is None or run is None or rp.status != "ok":
        return None
    rows = repository.samples(session, run_id)
    if not rows:
        return None
    meter = _meter(rp.meter)
    cleaned = ie.Cleaned(
        t_ns=[r[0] for r in rows], value=[r[1] for r in rows], dropped=dict(rp.server_cleaning)
    )
    phases = [ie.Phase(p["name"], p["start_ns"], p["end_ns"]) for p in rp.phases]
    io_bytes, total_ios = repository.io_totals(session, run_id)
    s = ie.summarize(meter=meter, phases=phases, cleaned=cleaned, io_bytes=io_bytes, total_ios=total_ios)
    load = next(p for p in phases if p.name == "load")
    start = rp.t0_utc + timedelta(microseconds=load.start_ns // 1000)
    end = rp.t0_utc + timedelta(microseconds=load.end_ns // 1000)
    ctx = context_for(session, run.environment_id, (start, end))
    if ctx.method == "hourly":
        op = ie.hourly_weighted_gco2e(
            cleaned=cleaned,
            quantity=meter.quantity,
            nominal_interval_s=meter.nominal_interval_s,
            t0_utc=rp.t0_utc,
            start_ns=load.start_ns,
            end_ns=load.end_ns,
            hourly_g_per_kwh=ctx.hourly,
            fallback_g_per_kwh=ctx.g_per_kwh,
            pue=ctx.pue,
        )
        g_eff = op / (s.total_j / ie.J_PER_KWH * ctx.pue) if s.total_j > 0 else ctx.g_per_kwh
    else:
        g_eff = ctx.g_per_kwh
        op = ie.operational_gco2e(energy_j=s.total_j, g_per_kwh=g_eff, pue=ctx.pue)
    dyn = (
        ie.operational_gco2e(energy_j=s.dynamic_j, g_per_kwh=g_eff, pue=ctx.pue)
        if s.dynamic_j is not None
        else None
    )
    emb = device_embodied(repository.device(session, run.device_id))
    values: dict[str, Any] = dict(
        summary=s.to_dict(),
        tier=s.tier,
        estimated=s.estimated,
        idle_w=s.idle_w,
        load_w_mean=s.load_w_mean,
        runtime_s=s.runtime_s,
        total_j=s.total_j,
        dynamic_j=s.dynamic_j,
        uncertainty_j=s.uncertainty_j,
        j_per_gb=s.j_per_gb,
        j_per_mio=s.j_per_mio,
        iops_per_w=s.iops_per_w,
        mb_s_per_w=s.mb_s_per_w,
        grid_g_per_kwh=g_eff,
        grid_source=ctx.source[:500],
        carbon_method=ctx.method,
        pue=ctx.pue,
        operational_gco2e=op,
        dynamic_gco2e=dyn,
        embodied_gco2e=ie.amortized_gco2e(embodied_kg=emb[0], duration_s=s.runtime_s, lifetime_years=emb[2])
        if emb
        else None,
        embodied_source=emb[1][:500] if emb else None,
        computed_at=utcnow(),
    )
    return repository.upsert_energy(session, run_id, values)


def runs_to_recompute(
    session: Session,
    *,
    environment_id: uuid.UUID | None = None,
    device_id: uuid.UUID | None = None,
    after: uuid.UUID | None = None,
    limit: int | None = None,
) -> list[uuid.UUID]:
    return repository.runs_with_power(
        session, environment_id=environment_id, device_id=device_id, after=after, limit=limit
    )


def energy_of(session: Session, run_ids: list[uuid.UUID]) -> dict[uuid.UUID, EnergyRead]:
    """EnergyRead per run in one query (two when a result waits for its energy; the run list shows
    it: a run's energy matters only beside its power record)."""
    if not run_ids:
        return {}
    powers, energies = repository.powers_with_energies(session, run_ids)
    waiting = [rid for rid, p in powers.items() if p.status == "ok" and p.samples and rid not in energies]
    late = repository.uploaded_before(session, waiting, utcnow() - ENERGY_DEADLINE)
    return {rid: _energy_read(powers.get(rid), energies.get(rid), late=rid in late) for rid in run_ids}


_EMPTY: dict[str, Any] = {k: None for k in EnergyRead.model_fields}


def no_energy() -> EnergyRead:
    """The energy of a run with no power record (yet: a run just queued)."""
    return _energy_read(None, None)


def _energy_read(rp: RunPower | None, e: RunEnergy | None, *, late: bool = False) -> EnergyRead:
    base = {**_EMPTY, "estimated": False, "flags": [], "phases": [], "dropped": {}}
    if rp is None:
        return EnergyRead(**{**base, "status": "none", "reason": "no meter configured for this run"})
    meter = _meter(rp.meter)
    dropped = {
        k: rp.agent_cleaning.get(k, 0) + rp.server_cleaning.get(k, 0)
        for k in {*rp.agent_cleaning, *rp.server_cleaning}
    }
    ident = {
        "source": meter.spec,
        "meter_name": str(rp.meter.get("name") or ""),
        "meter_driver": meter.driver,
        "tier": meter.tier.value,
        "tier_label": ie.TIER_LABEL[meter.tier],
        "estimated": meter.tier is ie.Tier.estimate,
        "dropped": dropped,
    }
    if rp.status != "ok" or rp.samples == 0:
        return EnergyRead(
            **{
                **base,
                **ident,
                "status": "no_meter_data",
                "reason": rp.reason or "the meter returned no usable samples",
            }
        )
    if e is None and late:
        minutes = int(ENERGY_DEADLINE.total_seconds() // 60)
        reason = (
            f"not computed within {minutes} minutes of the upload; the server keeps retrying every "
            "few minutes (see the worker's log)"
        )
        return EnergyRead(**{**base, **ident, "status": "failed", "reason": reason})
    if e is None:
        return EnergyRead(**{**base, **ident, "status": "pending", "reason": "being computed"})
    s = e.summary
    fields = dict(
        status="ok",
        reason=None,
        samples=s["samples"],
        idle_w=e.idle_w,
        idle_drift_w=s.get("idle_drift_w"),
        load_w_mean=e.load_w_mean,
        runtime_s=e.runtime_s,
        total_j=e.total_j,
        dynamic_j=e.dynamic_j,
        uncertainty_j=e.uncertainty_j,
        dynamic_uncertainty_j=s.get("dynamic_uncertainty_j"),
        j_per_gb=e.j_per_gb,
        dynamic_j_per_gb=s.get("dynamic_j_per_gb"),
        j_per_mio=e.j_per_mio,
        iops_per_w=e.iops_per_w,
        mb_s_per_w=e.mb_s_per_w,
        coverage=s.get("coverage"),
        accuracy_pct=s.get("accuracy_pct"),
        accuracy_declared=s.get("accuracy_declared"),
        flags=list(s.get("flags", [])),
        grid_g_per_kwh=e.grid_g_per_kwh,
        grid_source=e.grid_source,
        carbon_method=e.carbon_method,
        pue=e.pue,
        operational_gco2e=e.operational_gco2e,
        # bytes moved = total_j / j_per_gb GB, so per decimal TB: gCO2e x 1000 x j_per_gb / total_j
        gco2e_per_tb=e.operational_gco2e * 1000 * e.j_per_gb / e.total_j
        if e.j_per_gb and e.total_j
        else None,
        dynamic_gco2e=e.dynamic_gco2e,
        embodied_gco2e=e.embodied_gco2e,
        embodied_source=e.embodied_source,
        phases=[PhaseEnergy(**p) for p in s.get("phases", [])],
    )
    return EnergyRead(**{**base, **ident, **fields})


def series(session: Session, *, run: Run, points: int = MAX_POINTS) -> PowerSeries:
    """Power over time, bucketed in SQL to at most `points` points (mean, min, max per bucket)."""
    rp = repository.get(session, run.id)
    if rp is None:
        raise NotFound("this run has no power measurement", code="no_power")
    meter = _meter(rp.meter)
    load = next((p for p in rp.phases if p["name"] == "load"), {"start_ns": 0})
    first, last = repository.sample_bounds(session, run.id)
    out: list[PowerPoint] = []
    if first is not None and last is not None:
        bucket = max(1, -(-(last - first + 1) // max(1, points)))
        counter = meter.quantity is ie.Quantity.energy_counter
        for t, mean, lo, hi in repository.buckets(session, run.id, bucket_ns=bucket, counter=counter):
            out.append(PowerPoint(t_s=(t - load["start_ns"]) / 1e9, w_mean=mean, w_min=lo, w_max=hi))
    return PowerSeries(
        run_id=run.id,
        status=rp.status,
        reason=rp.reason,
        tier=meter.tier.value,
        tier_label=ie.TIER_LABEL[meter.tier],
        estimated=meter.tier is ie.Tier.estimate,
        source=meter.spec,
        meter_name=str(rp.meter.get("name") or ""),
        meter_driver=meter.driver,
        quantity=meter.quantity.value,
        t0_utc=rp.t0_utc,
        load_start_s=load["start_ns"] / 1e9,
        phases=[PhaseRead(**p) for p in rp.phases],
        points=out,
    )


def window_watts(session: Session, *, run_id: uuid.UUID, start_utc_ns: int, duration_ns: int) -> float | None:
    """Mean power over a window of the run given in UTC (an InnoDB flushing run's setting: its
    start as the agent's wall clock read it, and its length), W; None without a usable meter or
    samples in it. The samples' time is ns since the power record's t0_utc."""
    rp = repository.get(session, run_id)
    if rp is None or rp.status != "ok" or duration_ns <= 0:
        return None
    t0 = int(rp.t0_utc.timestamp()) * 1_000_000_000 + rp.t0_utc.microsecond * 1000
    start = start_utc_ns - t0
    end = start + duration_ns
    inside = [(t, v) for t, v in repository.samples(session, run_id) if start <= t <= end]
    if (rp.meter or {}).get("quantity") == "energy_counter":
        if len(inside) < 2 or inside[-1][0] <= inside[0][0]:
            return None
        return (inside[-1][1] - inside[0][1]) / ((inside[-1][0] - inside[0][0]) / 1e9)
    if not inside:
        return None
    return sum(v for _, v in inside) / len(inside)


def tail_watts(session: Session, *, run_id: uuid.UUID, window_ns: int) -> float | None:
    """Mean power over the load phase's last `window_ns` (the qos view: its last job's window),
    W; None without a usable meter or samples there. An energy counter's: its rise over the time."""
    rp = repository.get(session, run_id)
    if rp is None or rp.status != "ok" or window_ns <= 0:
        return None
    load = next((p for p in rp.phases if p.get("name") == "load"), None)
    if load is None:
        return None
    end = int(load["end_ns"])
    start = max(int(load["start_ns"]), end - window_ns)
    inside = [(t, v) for t, v in repository.samples(session, run_id) if start <= t <= end]
    if (rp.meter or {}).get("quantity") == "energy_counter":
        if len(inside) < 2 or inside[-1][0] <= inside[0][0]:
            return None
        return (inside[-1][1] - inside[0][1]) / ((inside[-1][0] - inside[0][0]) / 1e9)
    if not inside:
        return None
    return sum(v for _, v in inside) / len(inside)
