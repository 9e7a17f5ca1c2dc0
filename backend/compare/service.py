"""Side by side: runs (or groups of repeats) as columns, every metric with units, ratios to a
baseline column, repeat statistics, a comparability verdict and validity flags."""

import io
import operator
import uuid
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from iowatt_workload import TPCH_LABEL
from sqlalchemy.orm import Session

from backend.auth.principal import UserPrincipal
from backend.campaign import matrix as campaign_matrix
from backend.compare import fingerprint as fp
from backend.compare import repository as compare_repo
from backend.compare import stats as st
from backend.compare.change import change_fields
from backend.compare.schemas import (
    Better,
    Column,
    Comparability,
    Comparison,
    CurvePoint,
    Difference,
    FingerprintMode,
    GroupBy,
    IoDirection,
    JobComparison,
    LatencyCurve,
    LatencyCurves,
    Metric,
    MetricKind,
    ValidityFlag,
)
from backend.compare.validity import flags_for, inventory_of
from backend.environment import topology as env_topology
from backend.errors import Invalid
from backend.kit import csv as safe_csv
from backend.models import Agent, Device, Environment, ResultJob, Run
from backend.run import repository
from backend.run import service as run_service
from backend.run.schemas import RunRead
from backend.workload.kinds import KINDS
from backend.workload.passes import best_of_jobs, is_multi_pass

MAX_RUNS = 200


@dataclass(frozen=True)
class MetricDef:
    """A compare metric: what it is, its base unit on the wire, and which way is better. The one
    place a metric's kind and direction are defined; the API returns them with every value."""

    key: str
    label: str
    unit: str
    kind: MetricKind
    better: Better
    direction: IoDirection | None = None
    percentile: float | None = None


def _io_metrics(d: IoDirection) -> list[MetricDef]:
    name = d.capitalize()
    return [
        MetricDef(f"{d}_iops", f"{name} IOPS", "IO/s", "iops", "higher", d),
        MetricDef(f"{d}_bw_bytes", f"{name} bandwidth", "B/s", "bandwidth", "higher", d),
        MetricDef(f"{d}_lat_mean_ns", f"{name} latency mean", "ns", "latency", "lower", d),
        MetricDef(f"{d}_clat_p50_ns", f"{name} latency p50", "ns", "latency", "lower", d, 50.0),
        MetricDef(f"{d}_clat_p99_ns", f"{name} latency p99", "ns", "latency", "lower", d, 99.0),
        MetricDef(f"{d}_clat_p999_ns", f"{name} latency p99.9", "ns", "latency", "lower", d, 99.9),
    ]


# per job, from result_jobs columns of the same name
METRICS: list[MetricDef] = [
    *_io_metrics("read"),
    *_io_metrics("write"),
    MetricDef("usr_cpu_pct", "CPU user", "%", "cpu", "lower"),
    MetricDef("sys_cpu_pct", "CPU system", "%", "cpu", "lower"),
    # null unless io_uring
    MetricDef("kernel_worker_cpu_pct", "CPU io_uring kernel workers", "%", "cpu", "lower"),
]

# per run, from EnergyRead: the paper's table (non-load W, W under load, energy = run time x W),
# then efficiency and carbon
ENERGY_METRICS: list[MetricDef] = [
    MetricDef("idle_w", "Non-load power", "W", "power", "lower"),
    MetricDef("load_w_mean", "Power under load", "W", "power", "lower"),
    MetricDef("runtime_s", "Load time", "s", "time", "lower"),
    MetricDef("total_j", "Energy (run time x power)", "J", "energy", "lower"),
    MetricDef("dynamic_j", "Energy above idle", "J", "energy", "lower"),
    MetricDef("j_per_gb", "Energy per GB", "J/GB", "efficiency", "lower"),
    MetricDef("j_per_mio", "Energy per million I/Os", "J/MIO", "efficiency", "lower"),
    MetricDef("iops_per_w", "IOPS per watt", "IO/J", "efficiency", "higher"),
    MetricDef("mb_s_per_w", "MB/s per watt", "MB/J", "efficiency", "higher"),
    MetricDef("operational_gco2e", "CO2 (operational)", "gCO2e", "carbon", "lower"),
    MetricDef("gco2e_per_tb", "CO2 per TB read and written", "gCO2e/TB", "carbon", "lower"),
    MetricDef("embodied_gco2e", "CO2 (embodied share)", "gCO2e", "carbon", "lower"),
]

# per operation of a file workload (postmark, vdbench), from the run's file_workload
FILE_OP_METRICS: list[MetricDef] = [
    MetricDef("rate_per_s", "Operation rate", "op/s", "iops", "higher"),
    MetricDef("resp_mean_ns", "Response time mean", "ns", "latency", "lower"),
    MetricDef("resp_p50_ns", "Response time p50", "ns", "latency", "lower", percentile=50.0),
    MetricDef("resp_p99_ns", "Response time p99", "ns", "latency", "lower", percentile=99.0),
    MetricDef("resp_p999_ns", "Response time p99.9", "ns", "latency", "lower", percentile=99.9),
]
# per file-workload run: the totals row ("all operations"); a metric a mode lacks is left out
FILE_RUN_METRICS: list[MetricDef] = [
    MetricDef("elapsed_s", "Elapsed (PostMark's time)", "s", "time", "lower"),
    MetricDef("transactions_per_s", "Transactions per second", "op/s", "iops", "higher"),
    MetricDef("read_bw_bytes", "Read bandwidth", "B/s", "bandwidth", "higher", "read"),
    MetricDef("write_bw_bytes", "Write bandwidth", "B/s", "bandwidth", "higher", "write"),
    MetricDef("cpu_ns_per_op", "CPU per operation", "ns/op", "cpu", "lower"),
    MetricDef("usr_cpu_pct", "CPU user", "%", "cpu", "lower"),
    MetricDef("sys_cpu_pct", "CPU system", "%", "cpu", "lower"),
    MetricDef("host_cpu_total_pct", "Host CPU total", "%", "cpu", "lower"),
    MetricDef("host_cpu_system_pct", "Host CPU system", "%", "cpu", "lower"),
]
FILE_TOTALS = "all operations"

# TPC-H-derived runs: the metrics of the run, then each query's seconds
TPCH_TOTALS = f"TPC-H ({TPCH_LABEL})"
TPCH_RUN_METRICS: list[MetricDef] = [
    MetricDef("qphh_at_size", "QphH@Size", "queries/h", "iops", "higher"),
    MetricDef("power_at_size", "Power@Size", "queries/h", "iops", "higher"),
    MetricDef("throughput_at_size", "Throughput@Size", "queries/h", "iops", "higher"),
    MetricDef("load_s", "Load time", "s", "time", "lower"),
    MetricDef("power_s", "Power test time", "s", "time", "lower"),
    MetricDef("throughput_s", "Throughput test time (Ts)", "s", "time", "lower"),
]
TPCH_QUERY_METRICS: list[MetricDef] = [
    MetricDef("power_s", "Power test", "s", "time", "lower"),
    MetricDef("streams_mean_s", "Throughput streams, mean", "s", "time", "lower"),
]
# heap/B-tree sweeps (the P3608 report's Table 3): one row per structure, operation and cache fraction
HEAP_BTREE_METRICS: list[MetricDef] = [
    MetricDef("ops_per_s", "Operations per second", "op/s", "iops", "higher"),
    MetricDef("lat_mean_ns", "Latency mean", "ns", "latency", "lower"),
    MetricDef("lat_p99_ns", "Latency p99", "ns", "latency", "lower", percentile=99.0),
    MetricDef("hit_ratio", "Buffer pool hit ratio", "", "efficiency", "higher"),
    MetricDef("device_reads", "Device reads (8 KiB pages)", "pages", "efficiency", "lower"),
    MetricDef("device_writes", "Device writes (8 KiB pages)", "pages", "efficiency", "lower"),
]

PERCENTILES = [
    1.0,
    5.0,
    10.0,
    20.0,
    30.0,
    40.0,
    50.0,
    60.0,
    70.0,
    80.0,
    90.0,
    95.0,
    99.0,
    99.5,
    99.9,
    99.95,
    99.99,
]


def _load_runs(session: Session, principal: UserPrincipal, run_ids: list[uuid.UUID]) -> list[Run]:
    if not 1 <= len(run_ids) <= MAX_RUNS:
        raise Invalid("runs", f"give between 1 and {MAX_RUNS} run ids")
    found = {r.id: r for r in repository.by_ids(session, run_ids, principal.team_ids)}
    missing = [str(i) for i in run_ids if i not in found]
    if missing:
        raise Invalid("runs", f"not found in your teams: {', '.join(missing)}")
    return [found[i] for i in dict.fromkeys(run_ids)]


def _columns(
    runs: list[Run],
    group_by: GroupBy,
    devices: dict[uuid.UUID, Device],
    envs: dict[uuid.UUID, Environment],
    agents: dict[uuid.UUID, Agent],
    fps: dict[uuid.UUID, str],
    workload_names: dict[uuid.UUID, str] | None = None,
) -> list[tuple[str, str, list[Run]]]:
    def dev_label(r: Run) -> str:
        d = devices.get(r.device_id) if r.device_id else None
        agent = agents.get(r.agent_id)
        return f"{d.name if d else r.target_path} on {agent.name if agent else '?'}"

    def env_label(r: Run) -> str:
        e = envs.get(r.environment_id) if r.environment_id else None
        return e.name if e else "no environment"

    keyers: dict[str, Callable[[Run], tuple[str, str]]] = {
        "none": lambda r: (str(r.id), r.name),
        "device": lambda r: (str(r.device_id or r.target_path), dev_label(r)),
        "environment": lambda r: (str(r.environment_id or "none"), env_label(r)),
        "device_environment": lambda r: (
            f"{r.device_id or r.target_path}|{r.environment_id or 'none'}",
            f"{dev_label(r)} · {env_label(r)}",
        ),
        "workload": lambda r: (fps[r.id][:12], r.name.split(" on ")[0]),
        # each host's path its own column: two directories on one disk stay apart
        "target": lambda r: (
            f"{r.agent_id}:{r.target_path}",
            f"{r.target_path} on {agents[r.agent_id].name if r.agent_id in agents else '?'}",
        ),
    }
    if group_by == "sweep":
        keyers["sweep"] = _sweep_keyer(runs, fps, workload_names or {}, keyers["target"])
    cols: dict[str, tuple[str, list[Run]]] = {}
    for r in runs:
        if group_by.startswith("env."):  # a field of the environment as the run recorded it (ADR 0035)
            value = env_topology.facet_value(r.environment_snapshot, group_by[4:])
            key, label = f"{group_by}:{value}", env_topology.facet_label(group_by[4:], value)
        else:
            key, label = keyers[group_by](r)
        cols.setdefault(key, (label, []))[1].append(r)
    return [(k, label, rs) for k, (label, rs) in cols.items()]


def _sweep_keyer(
    runs: list[Run],
    fps: dict[uuid.UUID, str],
    workload_names: dict[uuid.UUID, str],
    by_target: Callable[[Run], tuple[str, str]],
) -> Callable[[Run], tuple[str, str]]:
    """A campaign matrix's columns: one per workload, sweep combination and target, named by what
    varies among the compared runs (the swept job fields, the workload, the target)."""
    params = {r.id: campaign_matrix.params_of(r.workload_spec) for r in runs}
    varying = [k for k in campaign_matrix.SWEPT if len({p.get(k) for p in params.values()}) > 1]
    targets_vary = len({by_target(r)[0] for r in runs}) > 1
    # the workload's name when two runs of the same swept values still differ in their workload
    named = len({(tuple(params[r.id].get(k) for k in varying), fps[r.id]) for r in runs}) > len(
        {tuple(params[r.id].get(k) for k in varying) for r in runs}
    )

    def key(r: Run) -> tuple[str, str]:
        parts = []
        if named:
            parts.append(
                workload_names.get(r.workload_id, "inline workload") if r.workload_id else "inline workload"
            )
        swept = campaign_matrix.label({k: v for k, v in params[r.id].items() if k in varying})
        if swept:
            parts.append(swept)
        if targets_vary or not parts:
            parts.append(by_target(r)[1])
        return f"{fps[r.id][:12]}|{by_target(r)[0]}", " · ".join(parts)

    return key


def _metric(m: MetricDef, per_col: list[list[float]], base: int) -> Metric:
    described = [st.describe(v) for v in per_col]
    means = [d.mean if d else None for d in described]
    b = means[base]
    base_stats = described[base]
    # the cells (a change and statistics per column) go in as dicts and are validated with their
    # row in one pydantic call: a 200-run comparison has ~18,000 of them, and a model built per
    # cell cost more than the row's validation (docs/benchmarks.md § A million runs, session 24)
    return Metric.model_validate(
        {
            "key": m.key,
            "label": m.label,
            "unit": m.unit,
            "kind": m.kind,
            "better": m.better,
            "direction": m.direction,
            "percentile": m.percentile,
            "higher_is_better": m.better == "higher",
            "values": means,
            "ratios": [v / b if v is not None and b else None for v in means],
            "changes": [
                None
                if i == base
                else change_fields(value=v, baseline=b, kind=m.kind, better=m.better, label=m.label)
                for i, v in enumerate(means)
            ],
            "stats": [vars(d) if d else None for d in described],
            "within_noise": [st.within_noise(d, base_stats) for d in described],
        }
    )


@dataclass
class _Frame:
    """What a comparison is laid out on: the runs, their context, fingerprints and columns."""

    runs: list[Run]
    agents: dict[uuid.UUID, Agent]
    devices: dict[uuid.UUID, Device]
    envs: dict[uuid.UUID, Environment]
    comparability: Comparability
    cols: list[tuple[str, str, list[Run]]]
    columns: list[Column]
    base: int
    filtered_out: list[uuid.UUID]


def _frame(
    session: Session,
    principal: UserPrincipal,
    run_ids: list[uuid.UUID],
    baseline: uuid.UUID | None,
    group_by: GroupBy,
    fingerprint_mode: FingerprintMode,
    force: bool,
    env_filters: list[tuple[str, str]] | None = None,
) -> _Frame:
    runs = _load_runs(session, principal, run_ids)
    filtered_out: list[uuid.UUID] = []
    # only the runs whose recorded environment matches (a filtered-out baseline: the first left)
    if env_filters:
        kept = [r for r in runs if env_topology.matches(r.environment_snapshot, env_filters)]
        if not kept:
            raise Invalid("env", "no run of the comparison has an environment that matches the filter")
        filtered_out = [r.id for r in runs if r not in kept]
        runs = kept
        if baseline in filtered_out:
            baseline = None
    agents = {r.agent_id: r.agent for r in runs}  # loaded with the runs (by_ids: selectinload)
    devices = compare_repo.devices_by_id(session, (r.device_id for r in runs if r.device_id))
    envs = compare_repo.environments_by_id(session, (r.environment_id for r in runs if r.environment_id))

    docs: dict[str, dict[str, Any]] = {}
    fps: dict[uuid.UUID, str] = {}
    memo: dict[str, tuple[str, Any]] = {}
    for r in runs:
        host = None
        if fingerprint_mode == "workload_host":
            dev = devices.get(r.device_id) if r.device_id else None
            agent = agents.get(r.agent_id)
            host = fp.host_facts(agent.inventory if agent else None, dev.facts if dev else None)
        # runs of one comparison mostly share a spec: validate and hash each distinct one once
        memo_key = repr((r.workload_spec, host))
        if memo_key not in memo:
            memo[memo_key] = (fp.fingerprint(r.workload_spec, host), fp.canonical_workload(r.workload_spec))
        fps[r.id], canonical = memo[memo_key]
        docs[str(r.id)] = {"workload": canonical, **({"host": host} if host else {})}
    like = len(set(fps.values())) == 1
    comparability = Comparability(
        verdict="comparable" if like else ("forced" if force else "not_comparable"),
        fingerprint=fingerprint_mode,
        fingerprints={str(k): v for k, v in fps.items()},
        differences=[Difference(field=f, values=v) for f, v in fp.differences(docs)] if not like else [],
    )

    base_run = baseline or runs[0].id
    if all(r.id != base_run for r in runs):
        raise Invalid("baseline", "the baseline must be one of the compared runs")
    names = compare_repo.workload_names(session, (r.workload_id for r in runs if r.workload_id))
    cols = _columns(runs, group_by, devices, envs, agents, fps, names)
    base = next(i for i, (_, _, rs) in enumerate(cols) if any(r.id == base_run for r in rs))
    columns = [
        Column(
            key=k,
            label=label,
            run_ids=[r.id for r in rs],
            is_baseline=i == base,
            device_name=_common([devices[r.device_id].name if r.device_id in devices else None for r in rs]),
            environment_name=_common(
                [envs[r.environment_id].name if r.environment_id in envs else None for r in rs]
            ),
        )
        for i, (k, label, rs) in enumerate(cols)
    ]
    return _Frame(runs, agents, devices, envs, comparability, cols, columns, base, filtered_out)


def compare(
    session: Session,
    *,
    principal: UserPrincipal,
    run_ids: list[uuid.UUID],
    baseline: uuid.UUID | None = None,
    group_by: GroupBy = "none",
    fingerprint_mode: FingerprintMode = "workload",
    force: bool = False,
    env_filters: list[tuple[str, str]] | None = None,
    targets: list[tuple[uuid.UUID, int]] | None = None,
) -> Comparison:
    f = _frame(session, principal, run_ids, baseline, group_by, fingerprint_mode, force, env_filters)
    # one query for the result jobs of every run: the RunReads and the metrics both read them
    jobs = repository.jobs_of(session, [r.id for r in f.runs])
    _pick_targets(f, jobs, targets or [], session)
    reads = {
        r.id: r
        for r in run_service.to_read(
            session,
            f.runs,
            jobs=jobs,
            agents=f.agents,
            device_names={i: d.name for i, d in f.devices.items()},
        )
    }
    kind = _one_kind(f.runs, reads)
    jobs_out: list[JobComparison] = []
    energy_out: list[Metric] = []
    if f.comparability.verdict != "not_comparable":
        family = _family(kind)
        if family == "block":
            jobs_out = _job_metrics(f.cols, jobs, f.base)
        elif family == "database":
            figures = _db_figures(reads, kind)
            jobs_out = _rows_metrics(f.cols, figures, f.base, kind)
        else:
            jobs_out = _file_metrics(f.cols, reads, f.base)
        energy_out = _energy_metrics(f.cols, reads, f.base, kind)

    inventories = {aid: inventory_of(agent) for aid, agent in f.agents.items()}  # parsed once per agent
    validity = {
        str(r.id): [
            ValidityFlag(**flag)
            for flag in run_service.with_origin_flags(
                r,
                flags_for(
                    r,
                    reads[r.id],
                    f.agents.get(r.agent_id),
                    f.devices.get(r.device_id) if r.device_id else None,
                    inventory=inventories.get(r.agent_id),
                ),
            )
        ]
        for r in f.runs
    }
    return Comparison(
        runs=[reads[r.id] for r in f.runs],
        columns=f.columns,
        baseline=f.columns[f.base].key,
        group_by=group_by,
        comparability=f.comparability,
        jobs=jobs_out,
        energy=energy_out,
        validity=validity,
        suggestions=_suggestions(f.columns, jobs_out, group_by),
        filtered_out=f.filtered_out,
    )


def _pick_targets(
    f: _Frame, jobs: dict[uuid.UUID, list[ResultJob]], picks: list[tuple[uuid.UUID, int]], session: Session
) -> None:
    """`targets=RUN:N`: a multi-target run compared by its target N's own figures instead of the
    combined ones (its column says which target; its energy stays the whole host's)."""
    by_id = {r.id: r for r in f.runs}
    for run_id, index in picks:
        run = by_id.get(run_id)
        if run is None:
            raise Invalid("targets", f"run {run_id} is not one of the compared runs")
        path, rows = run_service.target_jobs(session, run, index)
        jobs[run_id] = rows
        for col in f.columns:
            if run_id in col.run_ids:
                col.label = f"{col.label} · target {index}: {path}"


def _kind(run: Run, read: RunRead) -> str:
    """block, postmark, vdbench, tpch or heap_btree: the result's mode, else the spec's kind."""
    if read.file_workload is not None:
        return read.file_workload.mode
    if read.tpch is not None:
        return "tpch"
    if read.heap_btree is not None:
        return "heap_btree"
    return str(run.workload_spec.get("kind") or "block")


def _family(kind: str) -> str:
    """block jobs, an engine file set, or a database run's rows (the kind's family)."""
    return KINDS[kind].family if kind in KINDS else "block"  # type: ignore[index]


def _one_kind(runs: list[Run], reads: dict[uuid.UUID, RunRead]) -> str:
    """The kind every compared run has; block and file workloads (or postmark and vdbench) side by
    side would set I/Os against file operations: a 422 naming the runs of each, even with force."""
    kinds: dict[str, list[str]] = {}
    for r in runs:
        kinds.setdefault(_kind(r, reads[r.id]), []).append(str(r.id))
    if len(kinds) > 1:
        which = "; ".join(f"{k}: {', '.join(ids)}" for k, ids in kinds.items())
        raise Invalid(
            "runs",
            "these runs ran different kinds of workload, whose figures do not compare (block I/Os, "
            "PostMark transactions, vdbench file operations, TPC-H queries, heap/B-tree operations): "
            f"{which}. Compare each kind on its own",
        )
    return next(iter(kinds))


def _file_figures(read: RunRead) -> dict[str, dict[str, float | None]]:
    """A file run's figures by row (operation, then the totals) and metric key."""
    fw = read.file_workload
    if fw is None:
        return {}
    out: dict[str, dict[str, float | None]] = {
        o.name: {m.key: getattr(o, m.key) for m in FILE_OP_METRICS} for o in fw.ops
    }
    out[FILE_TOTALS] = {
        "elapsed_s": fw.elapsed_ns / 1e9 if fw.mode == "postmark" else None,
        "transactions_per_s": fw.postmark.transactions_per_s if fw.postmark else None,
        "read_bw_bytes": fw.read_bw_bytes,
        "write_bw_bytes": fw.write_bw_bytes,
        "cpu_ns_per_op": fw.cpu_ns_per_op,
        "usr_cpu_pct": fw.usr_cpu_pct,
        "sys_cpu_pct": fw.sys_cpu_pct,
        "host_cpu_total_pct": fw.host_cpu_total_pct,
        "host_cpu_system_pct": fw.host_cpu_system_pct,
    }
    return out


def _file_metrics(
    cols: list[tuple[str, str, list[Run]]], reads: dict[uuid.UUID, RunRead], base: int
) -> list[JobComparison]:
    """File workloads compare per operation (rate, response times) and by their totals (MB/s,
    PostMark's elapsed time and transaction rate, CPU per operation), with the same statistics and
    direction-aware changes as block jobs' metrics."""
    figures = {r.id: _file_figures(reads[r.id]) for _, _, rs in cols for r in rs}
    names: list[str] = []
    for fig in figures.values():
        names += [n for n in fig if n not in names and n != FILE_TOTALS]
    out = []
    for name, defs in [*((n, FILE_OP_METRICS) for n in names), (FILE_TOTALS, FILE_RUN_METRICS)]:
        metrics = []
        for m in defs:
            per_col = [
                [v for r in rs if (v := figures[r.id].get(name, {}).get(m.key)) is not None]
                for _, _, rs in cols
            ]
            if any(per_col):
                direction = m.direction or (name if name in ("read", "write") and m.kind != "cpu" else None)
                metrics.append(_metric(MetricDef(**{**vars(m), "direction": direction}), per_col, base))
        if metrics:
            out.append(JobComparison(name=name, metrics=metrics))
    return out


Figures = dict[str, dict[str, float | None]]


def _tpch_figures(read: RunRead) -> Figures:
    """A TPC-H run's figures: the run's metrics, then per query its power-test seconds and its mean
    over the throughput streams (a query that timed out or failed has none)."""
    t = read.tpch
    if t is None:
        return {}
    out: Figures = {TPCH_TOTALS: {m.key: getattr(t, m.key) for m in TPCH_RUN_METRICS}}
    for n in range(1, 23):
        runs = [q for q in t.queries if q.query == n and q.seconds is not None and not q.timed_out]
        power = [q.seconds for q in runs if q.stream == 0 and q.seconds is not None]
        streams = [q.seconds for q in runs if q.stream > 0 and q.seconds is not None]
        out[f"Q{n}"] = {
            "power_s": power[0] if power else None,
            "streams_mean_s": sum(streams) / len(streams) if streams else None,
        }
    return out


def hb_row_name(structure: str, operation: str, fraction: float) -> str:
    """ "B-tree point query, cache 10 %": a heap/B-tree row's name in compare and its CSV."""
    what = {"heap": "Heap", "btree": "B-tree"}.get(structure, structure)
    return f"{what} {operation.replace('_', ' ')}, cache {fraction * 100:g} %"


def _hb_figures(read: RunRead) -> Figures:
    h = read.heap_btree
    if h is None:
        return {}
    return {
        hb_row_name(r.structure, r.operation, r.cache_fraction): {
            m.key: (float(v) if (v := getattr(r, m.key)) is not None else None) for m in HEAP_BTREE_METRICS
        }
        for r in h.rows
    }


def _db_figures(reads: dict[uuid.UUID, RunRead], kind: str) -> dict[uuid.UUID, Figures]:
    of = _tpch_figures if kind == "tpch" else _hb_figures
    return {rid: of(read) for rid, read in reads.items()}


def _rows_metrics(
    cols: list[tuple[str, str, list[Run]]], figures: dict[uuid.UUID, Figures], base: int, kind: str
) -> list[JobComparison]:
    """TPC-H runs compare by their metrics (QphH@Size, power, throughput, times) and per query;
    heap/B-tree sweeps per structure, operation and fraction; with the same statistics and
    direction-aware changes as block jobs' metrics."""
    names: list[str] = []
    for fig in figures.values():
        names += [n for n in fig if n not in names]
    out = []
    for name in names:
        if kind == "tpch":
            defs = TPCH_RUN_METRICS if name == TPCH_TOTALS else TPCH_QUERY_METRICS
        else:
            defs = HEAP_BTREE_METRICS
        metrics = []
        for m in defs:
            per_col = [
                [v for r in rs if (v := figures.get(r.id, {}).get(name, {}).get(m.key)) is not None]
                for _, _, rs in cols
            ]
            if any(per_col):
                metrics.append(_metric(m, per_col, base))
        if metrics:
            out.append(JobComparison(name=name, metrics=metrics))
    return out


def _common(values: list[str | None]) -> str | None:
    return values[0] if values and len(set(values)) == 1 else None


def _best_passes(run: Run, jobs: list[ResultJob]) -> list[ResultJob]:
    """Multi-pass workloads compare per test with the pass CrystalDiskMark would show (libs/workload's
    best_of_passes: the best read pass of a read test, the best write pass of a write test, the
    best read + write of a mixed one), renamed to the test."""
    spec = run.workload_spec
    if not is_multi_pass(int(spec.get("passes", 1)), int(spec.get("discard_passes", 0))):
        return jobs
    by_name = {j.name: j for j in jobs}
    out = []
    for best in best_of_jobs(spec, jobs):
        j = by_name[best.best_job]
        renamed = ResultJob(**{c.key: getattr(j, c.key) for c in ResultJob.__table__.columns})
        renamed.name = best.test
        out.append(renamed)
    return out


def _job_metrics(
    cols: list[tuple[str, str, list[Run]]], all_jobs: dict[uuid.UUID, list[ResultJob]], base: int
) -> list[JobComparison]:
    all_runs = [r for _, _, rs in cols for r in rs]
    jobs = {r.id: _best_passes(r, all_jobs[r.id]) for r in all_runs}
    names: list[str] = []
    for r in all_runs:
        names += [j.name for j in jobs[r.id] if j.name not in names]
    # one pass over the jobs: each job's metric values read once, filed by job name and column
    # (in run order, then job order: the order the statistics' values keep)
    values_of = operator.attrgetter(*(m.key for m in METRICS))  # a job's values as one tuple
    rows: dict[str, list[list[tuple[Any, ...]]]] = {name: [[] for _ in cols] for name in names}
    for ci, (_, _, rs) in enumerate(cols):
        for r in rs:
            for j in jobs[r.id]:
                rows[j.name][ci].append(values_of(j))
    out = []
    for name in names:
        metrics = []
        by_col = rows[name]
        for mi, m in enumerate(METRICS):
            per_col = [[row[mi] for row in col_rows if row[mi] is not None] for col_rows in by_col]
            if any(per_col):
                metrics.append(_metric(m, per_col, base))
        out.append(JobComparison(name=name, metrics=metrics))
    return out


# The per-I/O efficiency figures of file workloads count the engine's read and write calls (PostMark)
# or operations' transfers (vdbench), not block I/Os: their labels say so, as the run page's.
FILE_ENERGY_LABELS = {
    "j_per_mio": ("Energy per million read/write operations", "J/M ops"),
    "iops_per_w": ("Read/write operations per watt", "op/J"),
}


def _energy_metrics(
    cols: list[tuple[str, str, list[Run]]], reads: dict[uuid.UUID, RunRead], base: int, kind: str = "block"
) -> list[Metric]:
    out = []
    for m in ENERGY_METRICS:
        if _family(kind) == "file" and m.key in FILE_ENERGY_LABELS:
            label, unit = FILE_ENERGY_LABELS[m.key]
            m = replace(m, label=label, unit=unit)
        per_col = [
            [
                getattr(reads[r.id].energy, m.key)
                for r in rs
                if reads[r.id].energy.status == "ok" and getattr(reads[r.id].energy, m.key) is not None
            ]
            for _, _, rs in cols
        ]
        if any(per_col):
            out.append(_metric(m, per_col, base))
    return out


def _suggestions(columns: list[Column], jobs: list[JobComparison], group_by: GroupBy) -> list[str]:
    out = []
    for job in jobs:
        main = next((m for m in job.metrics if m.kind == "iops"), None)
        if main is None:
            continue
        for col, s, wn in zip(columns, main.stats, main.within_noise, strict=True):
            if s is not None and s.cv is not None and s.cv > st.CV_SUGGEST:
                out.append(
                    f"{job.name}: {main.label} of '{col.label}' varies by {s.cv * 100:.0f} % (CV); about "
                    f"{st.repeats_for(s.cv)} repeats give a ±5 % 95 % confidence interval"
                )
            base_stats = next(st_ for c_, st_ in zip(columns, main.stats, strict=True) if c_.is_baseline)
            if wn is True and not col.is_baseline and s is not None and base_stats is not None:
                out.append(
                    f"{job.name}: {main.label} of '{col.label}' cannot be told apart from the baseline "
                    f"at 95 % confidence (n={s.n} vs n={base_stats.n}): the 95 % intervals overlap"
                )
    if group_by != "none" and any(len(c.run_ids) == 1 for c in columns):
        out.append("some columns have a single run: repeat them to get confidence intervals")
    return out


def to_csv(c: Comparison) -> str:
    buf = io.StringIO()
    w = safe_csv.writer(buf)  # labels and job names are the team's text: no formula cells
    head = ["job", "metric", "unit", "better"]
    for col in c.columns:
        lab = col.label + (" (baseline)" if col.is_baseline else "")
        head += [
            f"{lab} mean",
            f"{lab} ratio",
            f"{lab} change %",
            f"{lab} change",
            f"{lab} verdict",
            f"{lab} n",
            f"{lab} stdev",
            f"{lab} cv %",
            f"{lab} ci95 low",
            f"{lab} ci95 high",
            f"{lab} energy basis",
        ]
    w.writerow(head)
    bases = [_energy_basis(c, col) for col in c.columns]
    rows = [(j.name, m) for j in c.jobs for m in j.metrics] + [("(energy)", m) for m in c.energy]
    for job, m in rows:
        line: list[Any] = [job, m.label, m.unit, m.better]
        energy_row = job == "(energy)"
        for v, r, ch, s, basis in zip(m.values, m.ratios, m.changes, m.stats, bases, strict=True):
            line += [
                _num(v),
                _num(r),
                _num(ch.pct_change if ch else None),
                ch.phrase if ch else "",
                ch.verdict if ch else "",
                s.n if s else "",
                _num(s.stdev if s else None),
                _num(s.cv * 100 if s and s.cv is not None else None),
                _num(s.ci95_low if s else None),
                _num(s.ci95_high if s else None),
                basis if energy_row and v is not None else "",
            ]
        w.writerow(line)
    return buf.getvalue()


def _energy_basis(c: Comparison, col: Column) -> str:
    """Whether a column's energy figures were measured by a wattmeter or estimated (datasheet
    watts): a spreadsheet that drops the page's badges must still say which figure is which."""
    energies = [r.energy for r in c.runs if r.id in col.run_ids and r.energy.status == "ok"]
    if not energies:
        return ""
    estimated = sum(e.estimated for e in energies)
    if estimated == 0:
        return "measured"
    if estimated == len(energies):
        return "estimated"
    return f"mixed: {estimated} of {len(energies)} runs estimated"


def _num(v: float | None) -> float | str:
    """Six significant digits, kept a number (a negative figure is not a formula); "" for none."""
    return "" if v is None else float(f"{v:.6g}")


def latency_curves(
    session: Session,
    *,
    principal: UserPrincipal,
    run_ids: list[uuid.UUID],
    job: str,
    group_by: GroupBy = "none",
    env_filters: list[tuple[str, str]] | None = None,
) -> LatencyCurves:
    """Percentile curves per column from the runs' merged json+ clat histograms (fio's bins)."""
    frame = _frame(session, principal, run_ids, None, group_by, "workload", True, env_filters)
    docs = compare_repo.result_jobs_docs(session, run_ids)
    curves = []
    for col in frame.columns:
        for direction in ("read", "write"):
            merged: dict[int, int] = {}
            for rid in col.run_ids:
                for j in docs.get(rid) or []:
                    if j.get("jobname") != job:
                        continue
                    for k, n in ((j.get(direction) or {}).get("clat_ns") or {}).get("bins", {}).items():
                        merged[int(k)] = merged.get(int(k), 0) + int(n)
            total = sum(merged.values())
            if total:
                curves.append(
                    LatencyCurve(
                        column=col.key, direction=direction, samples=total, points=_percentiles(merged, total)
                    )
                )
    return LatencyCurves(job=job, columns=frame.columns, curves=curves)


def _percentiles(bins: dict[int, int], total: int) -> list[CurvePoint]:
    keys = sorted(bins)
    out, cum, i = [], 0, 0
    for p in PERCENTILES:
        need = p / 100 * total
        while i < len(keys) and cum + bins[keys[i]] < need:
            cum += bins[keys[i]]
            i += 1
        out.append(CurvePoint(percentile=p, latency_ns=keys[min(i, len(keys) - 1)]))
    return out
