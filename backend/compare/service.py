"""Side by side: the same job (by name) across runs, one value per run per metric.

The full compare workspace (baselines, repeat statistics, comparability) is issue 5; this is
the table and charts' data that the runs list's "Compare" opens.
"""

import uuid

from sqlalchemy.orm import Session

from backend.auth.principal import UserPrincipal
from backend.compare.schemas import Comparison, JobComparison, Metric
from backend.errors import Invalid
from backend.run import repository
from backend.run import service as run_service

# (key, label, unit) with units on the wire in base units
METRICS: list[tuple[str, str, str]] = [
    ("read_iops", "Read IOPS", "IO/s"),
    ("read_bw_bytes", "Read bandwidth", "B/s"),
    ("read_lat_mean_ns", "Read latency mean", "ns"),
    ("read_clat_p50_ns", "Read latency p50", "ns"),
    ("read_clat_p99_ns", "Read latency p99", "ns"),
    ("read_clat_p999_ns", "Read latency p99.9", "ns"),
    ("write_iops", "Write IOPS", "IO/s"),
    ("write_bw_bytes", "Write bandwidth", "B/s"),
    ("write_lat_mean_ns", "Write latency mean", "ns"),
    ("write_clat_p50_ns", "Write latency p50", "ns"),
    ("write_clat_p99_ns", "Write latency p99", "ns"),
    ("write_clat_p999_ns", "Write latency p99.9", "ns"),
    ("usr_cpu_pct", "CPU user", "%"),
    ("sys_cpu_pct", "CPU system", "%"),
]

# the paper's table: non-load W, W under load, energy (runtime x W), ratio; then efficiency and carbon
ENERGY_METRICS: list[tuple[str, str, str]] = [
    ("idle_w", "Non-load power", "W"),
    ("load_w_mean", "Power under load", "W"),
    ("runtime_s", "Load time", "s"),
    ("total_j", "Energy (run time x power)", "J"),
    ("dynamic_j", "Energy above idle", "J"),
    ("j_per_gb", "Energy per GB", "J/GB"),
    ("j_per_mio", "Energy per million I/Os", "J/MIO"),
    ("iops_per_w", "IOPS per watt", "IO/J"),
    ("mb_s_per_w", "MB/s per watt", "MB/J"),
    ("operational_gco2e", "CO2 (operational)", "gCO2e"),
    ("embodied_gco2e", "CO2 (embodied share)", "gCO2e"),
]


def compare(session: Session, *, principal: UserPrincipal, run_ids: list[uuid.UUID]) -> Comparison:
    if not 1 <= len(run_ids) <= 50:
        raise Invalid("runs", "give between 1 and 50 run ids")
    found = {r.id: r for r in repository.by_ids(session, run_ids, principal.team_ids)}
    missing = [str(i) for i in run_ids if i not in found]
    if missing:
        raise Invalid("runs", f"not found in your teams: {', '.join(missing)}")
    runs = [found[i] for i in dict.fromkeys(run_ids)]
    jobs = repository.jobs_of(session, [r.id for r in runs])
    names: list[str] = []
    for r in runs:
        names += [j.name for j in jobs[r.id] if j.name not in names]
    out = []
    for name in names:
        per_run = [next((j for j in jobs[r.id] if j.name == name), None) for r in runs]
        metrics = []
        for key, label, unit in METRICS:
            values = [None if j is None else getattr(j, key) for j in per_run]
            if any(v is not None for v in values):
                metrics.append(
                    Metric(
                        key=key,
                        label=label,
                        unit=unit,
                        values=[None if v is None else float(v) for v in values],
                    )
                )
        out.append(JobComparison(name=name, metrics=metrics))
    reads = run_service.to_read(session, runs)
    energy = []
    for key, label, unit in ENERGY_METRICS:
        values = [getattr(r.energy, key) if r.energy.status == "ok" else None for r in reads]
        if any(v is not None for v in values):
            energy.append(Metric(key=key, label=label, unit=unit, values=values))
    return Comparison(runs=reads, jobs=out, energy=energy)
