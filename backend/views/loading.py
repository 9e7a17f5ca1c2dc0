"""Loading the runs a view shows: each run with its jobs, passes, spec, file or database result,
energy and environment (what the other domains own), named by its device on its agent.

A run's preset is the one recorded when it was queued (runs.preset: run/service.create, from a
built-in workload); only runs without one (stored before migration 0014 recorded it, or imported)
fall back to `_preset_of`: an imported run of a format that stands for a preset (the import
catalogue's STANDS_FOR: a CrystalDiskMark text result is a `crystaldiskmark` run) is that preset's,
with its stored document loaded (`Loaded.imported`: its tests as the tool printed them), the others
a guess from their workload row and job names."""

import uuid
from dataclasses import dataclass, replace
from typing import Any

from sqlalchemy.orm import Session

from backend.auth.principal import UserPrincipal
from backend.compare import repository as compare_repo
from backend.compare.validity import inventory_of
from backend.errors import Invalid
from backend.imports import catalog as import_catalog
from backend.models import ResultJob, Run
from backend.power import service as power_service
from backend.power.schemas import EnergyRead
from backend.result.schemas import FileWorkloadSummary, HeapBtreeSummary, TpchSummary
from backend.result.summary import db_summaries, file_summaries
from backend.run import repository as run_repo
from backend.run import service as run_service
from backend.run.schemas import PassSummary, RunOrigin
from backend.views import repository
from backend.views.schemas import ViewRun
from backend.workload.builtin import BUILTINS
from backend.workload.kinds import KINDS
from backend.workload.schemas import JobSpec, load_spec

MAX_RUNS = 30
QOS_PREFIX = "qos-"  # the qos view's presets (builders/qos.py QOS_PRESETS)


@dataclass(frozen=True)
class Loaded:
    """A run with what a view reads of it."""

    run: Run
    info: ViewRun
    jobs: dict[str, ResultJob]  # by job name
    spec: list[JobSpec]
    passes: list[PassSummary]
    file: FileWorkloadSummary | None = None  # a file workload's result in brief
    energy: EnergyRead | None = None
    mem_bytes: int | None = None  # the host's RAM (the agent's inventory)
    tpch: TpchSummary | None = None  # a TPC-H-derived run's result
    heap_btree: HeapBtreeSummary | None = None  # a heap/B-tree sweep's result
    environment: str | None = None  # the run's environment's name (TPC-H: local vs SAN)
    # an imported run that stands for a preset (STANDS_FOR): its stored document (jobs, `source`)
    imported: dict[str, Any] | None = None
    # a QoS run (the qos view): the depth each latency_target job settled on, by job name (the
    # engine's `latency_depth`), and the mean power over the load's last seconds, as long as its
    # last job's reported window (W; None without a meter)
    latency_depths: dict[str, int] | None = None
    tail_w: float | None = None
    # an InnoDB flushing run (the innodb-flush view): its stored `innodb_flush` document, and the
    # mean power over each setting's measured window by (flush_log, sync_binlog) (W; none without a meter)
    innodb: dict[str, Any] | None = None
    innodb_watts: dict[tuple[int, int], float | None] | None = None


def _preset_of(run: Run, builtin_names: dict[uuid.UUID, str]) -> str | None:
    """The old guess, kept for runs without a recorded preset (runs.preset, migration 0014): runs
    stored before the server recorded it, imported results (an upload names no preset), custom
    workloads, and rows written without run/service.create (the tests' factories). A run queued
    from a built-in preset since then carries its name and never reaches this guess (`_load`).
    The preset is the run's workload row when that is a built-in one, else the built-in whose job
    names the run's spec has (a result uploaded or imported with a preset's layout). An imported
    run whose format stands for a preset (the import catalogue's STANDS_FOR) is that preset's."""
    stands = _stands_for(run)
    if stands is not None:
        return stands
    if run.workload_id and run.workload_id in builtin_names:
        return builtin_names[run.workload_id]
    kind = run.workload_spec.get("kind") or "block"
    if kind != "block":  # a file workload: the preset with the same settings (scale aside)
        return _file_preset_of(run.workload_spec, str(kind))
    # names and cache mode: a buffered variant has its preset's job names
    jobs = {(str(j.get("name")), bool(j.get("direct", False))) for j in run.workload_spec.get("jobs", [])}
    for name, (_, spec) in BUILTINS.items():
        if spec.jobs and jobs == {(j.name, j.direct) for j in spec.jobs}:  # file presets: by workload id only
            return name
    return None


def _stands_for(run: Run) -> str | None:
    o = run.origin
    if not isinstance(o, dict) or o.get("kind") != "imported":
        return None
    return import_catalog.preset_of(str(o.get("format") or ""))


# what a run's scale multiplies, by kind (TPC-H's scale factor, heap/B-tree's records)
DB_SCALED: dict[str, str] = {
    name: k.scaled_parameter for name, k in KINDS.items() if k.family == "database" and k.scaled_parameter
}


def _file_preset_of(spec: dict[str, Any], kind: str) -> str | None:
    """vdbench: the same parameter text; postmark: the same settings, files and transactions in the
    preset's proportion (a run scaled from it)."""
    mine = spec.get(kind)
    if not isinstance(mine, dict):
        return None
    for name, (_, preset) in BUILTINS.items():
        theirs = preset.model_dump(mode="json").get(kind)
        if preset.kind != kind or not isinstance(theirs, dict):
            continue
        if kind == "vdbench" and mine.get("parameters") == theirs.get("parameters"):
            return name
        # TPC-H, heap/B-tree: the same settings but the one a run's scale multiplies
        if kind in DB_SCALED and all(mine.get(k) == v for k, v in theirs.items() if k != DB_SCALED[kind]):
            return name
        if kind == "postmark":
            counted = ("number", "transactions")
            same = all(mine.get(k) == v for k, v in theirs.items() if k not in counted)
            n, t = mine.get("number"), mine.get("transactions")
            ratio = theirs["number"] / theirs["transactions"]
            if (
                same
                and isinstance(n, int)
                and isinstance(t, int)
                and t > 0
                and abs(n / t - ratio) < 0.01 * ratio
            ):
                return name
    return None


def _load(session: Session, principal: UserPrincipal, run_ids: list[uuid.UUID]) -> list[Loaded]:
    if not 1 <= len(run_ids) <= MAX_RUNS:
        raise Invalid("runs", f"give between 1 and {MAX_RUNS} run ids")
    run_ids = list(dict.fromkeys(run_ids))
    found = {r.id: r for r in run_repo.by_ids(session, run_ids, principal.team_ids)}
    missing = [str(i) for i in run_ids if i not in found]
    if missing:
        raise Invalid("runs", f"not found in your teams: {', '.join(missing)}")
    runs = [found[i] for i in run_ids]
    jobs = run_repo.jobs_of(session, run_ids)
    devices = run_repo.device_names(session, [r.device_id for r in runs if r.device_id])
    unrecorded = [r for r in runs if r.preset is None]  # the fallback's runs (see _preset_of)
    builtin = repository.builtin_names(session, {r.workload_id for r in unrecorded if r.workload_id})
    files = file_summaries(session, runs)
    databases = db_summaries(session, runs)
    standing = {r.id for r in runs if _stands_for(r) is not None}
    imported = repository.documents(session, list(standing))
    envs = compare_repo.environments_by_id(session, (r.environment_id for r in runs if r.environment_id))
    file_runs = [r.id for r in runs if files[r.id] is not None or databases[r.id] != (None, None)]
    energy = power_service.energy_of(session, file_runs) if file_runs else {}
    out = []
    for r in runs:
        device = devices.get(r.device_id) if r.device_id else None
        shortened = r.workload_spec.get("shortened_by")
        fw = files[r.id]
        info = ViewRun(
            id=r.id,
            name=r.name,
            label=f"{device or r.target_path} on {r.agent.name}",
            preset=r.preset if r.preset is not None else _preset_of(r, builtin),
            shortened_by=float(shortened) if shortened else None,
            scale=fw.scale if fw is not None else _db_scale(r.workload_spec),
            device_name=device,
            agent_name=r.agent.name,
            target_path=r.target_path,
            origin=run_service.origin_of(r),
        )
        out.append(
            Loaded(
                run=r,
                info=info,
                jobs={j.name: j for j in jobs[r.id]},
                spec=list(load_spec(r.workload_spec).jobs),
                passes=run_service.pass_summaries(r.workload_spec, jobs[r.id]),
                file=fw,
                energy=energy.get(r.id),
                mem_bytes=inventory_of(r.agent).mem_bytes if fw is not None else None,
                tpch=databases[r.id][0],
                heap_btree=databases[r.id][1],
                environment=envs[r.environment_id].name if r.environment_id in envs else None,
                imported=imported.get(r.id, {}) if r.id in standing else None,
            )
        )
    out = [_with_qos(session, x) if (x.info.preset or "").startswith(QOS_PREFIX) else x for x in out]
    innodb_docs = repository.innodb_documents(
        session, [x.run.id for x in out if x.run.workload_spec.get("kind") == "innodb_flush"]
    )
    out = [_with_innodb(session, x, innodb_docs[x.run.id]) if x.run.id in innodb_docs else x for x in out]
    _unique_labels(out)
    for x in out:  # the flag sits beside the figures it qualifies: in every header and row group
        if x.info.shortened_by:
            x.info.label = f"{x.info.label} (shortened ×{x.info.shortened_by:g})"
        if x.info.scale is not None and x.info.scale != 1.0:
            x.info.label = f"{x.info.label} (scale ×{x.info.scale:g})"
        if x.info.origin is not None:  # "imported from CrystalDiskMark 8": not measured here
            x.info.label = f"{x.info.label} ({_origin_label(x.info.origin)})"
    return out


def _with_qos(session: Session, x: Loaded) -> Loaded:
    """A QoS run's search depths and the power while its last job ran (the qos view)."""
    last = max(x.jobs.values(), key=lambda j: j.job_index, default=None)
    window = int(last.runtime_ns) if last is not None else 0
    return replace(
        x,
        latency_depths=repository.latency_depths(session, [x.run.id]).get(x.run.id, {}),
        tail_w=power_service.tail_watts(session, run_id=x.run.id, window_ns=window),
        # whether that power is datasheet watts (an estimate meter): the view labels it
        energy=x.energy or power_service.energy_of(session, [x.run.id]).get(x.run.id),
    )


def _with_innodb(session: Session, x: Loaded, doc: dict[str, Any]) -> Loaded:
    """An InnoDB flushing run's document and the power over each setting's window."""
    watts: dict[tuple[int, int], float | None] = {}
    for c in doc.get("cells") or []:
        if not isinstance(c, dict):
            continue
        start, duration = c.get("start_utc_ns"), c.get("duration_ns")
        key = (c.get("innodb_flush_log_at_trx_commit"), c.get("sync_binlog"))
        if isinstance(start, int) and isinstance(duration, int) and all(isinstance(k, int) for k in key):
            watts[key] = power_service.window_watts(  # type: ignore[index]
                session, run_id=x.run.id, start_utc_ns=start, duration_ns=duration
            )
    energy = x.energy or power_service.energy_of(session, [x.run.id]).get(x.run.id)
    return replace(x, innodb=doc, innodb_watts=watts, energy=energy)


def _origin_label(origin: RunOrigin) -> str:
    """The origin's label with the tool's major version: "imported from CrystalDiskMark 8"."""
    major = (origin.version or "").split(".", 1)[0].strip()
    if origin.kind != "imported":
        return origin.label
    return f"imported from {origin.tool} {major}" if major else f"imported from {origin.tool}"


def _db_scale(spec: dict[str, Any]) -> float | None:
    """A heap/B-tree run's scale (records times it; labelled). TPC-H's scale is its scale factor,
    which the tpch-qphh view shows as its rows: not a label."""
    value = spec.get("scaled_by")
    if spec.get("kind") == "heap_btree" and isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    return None


def _unique_labels(runs: list[Loaded]) -> None:
    """Two runs on one device are named by their targets (then their ids), so no two columns read
    alike."""
    seen: dict[str, int] = {}
    for r in runs:
        seen[r.info.label] = seen.get(r.info.label, 0) + 1
    for r in runs:
        if seen[r.info.label] > 1:  # one device, two targets: the target names the column
            r.info.label = f"{r.run.target_path} on {r.info.agent_name}"
    seen = {}
    for r in runs:
        seen[r.info.label] = seen.get(r.info.label, 0) + 1
    for r in runs:
        if seen[r.info.label] > 1:  # the same target twice: the run's id tells them apart
            r.info.label = f"{r.info.label} #{str(r.run.id)[:8]}"
