"""What the agent runs for one lease: the lease checked against the host policy (authoritative,
before anything runs: docs/adr/0009-host-policy.md), then the engine job the agent builds, its
meter, idle time and hard timeout. A refusal carries the failed run's reason.

A file workload (`{"mode": "postmark" | "vdbench", ...}`) is checked twice: its shape,
target (a directory) and meter first; then its text is written to the state directory, the
engine's own `--parse-only` gives its facts, and the host's limits are checked against those
(`filework`). heap-btree is one of them: its job's values become the engine's
flags, and `--heap-btree --parse-only` gives its facts. A TPC-H job starts a DBMS:
the host must have consented to that DBMS (`allowed_dbms`, checked by check_run), have it and
the generator installed (else refused "unsupported on this host: ... install it: ..." before
anything runs), and its bytes written are judged by libs/workload's TPC-H bound (`tpch.lease`)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from iowatt_policy import (
    Policy,
    ReportedPolicy,
    Target,
    check_run,
    check_target_on_host,
    multi_file,
    shared_policy,
)

from . import filework
from .engine_facts import engine_options
from .kinds import RUNNERS, Runner, runner_for_job
from .kinds.jobfile import JobfileRunner
from .policy import MeterEntry, Meters, engine_job_for, report
from .schemas import Lease

# hard timeout of one engine run: never more than the host's max_runtime_s x 1.5 + this (the
# layout of the data file and slack), whatever the lease says; a kind of several engine runs (PTS)
# at most that many times this (Runner.runtime_cap_s)
RUNTIME_SLACK_S = 300.0


class Refused(Exception):
    """The host policy refuses a lease; `reason` is the failed run's reason (ADR 0009 §3)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass
class Plan:
    """What the agent itself decided to run for one lease, after the policy allowed it."""

    job: dict[str, Any]
    data_file: Path | None  # a directory target's data file: removed if the engine left it
    filename: str
    timeout_s: float
    meter_name: str | None
    meter: MeterEntry | None
    idle_s: float
    file_run: filework.FileRun | None = None  # a file workload: its text file, run directory, facts
    runner: Runner = RUNNERS["block"]  # the kind's runner: program, arguments, phases, grace, reasons
    engine_args: tuple[str, ...] = ()  # given before the job file (a fio job file's --untrusted)


def plan_lease(
    lease: Lease,
    *,
    policy: Policy,
    meters: Meters,
    idle_s: float,
    engine: Path | str | None = None,
    state_dir: Path | None = None,
    sharing: int = 1,
) -> Plan:
    """The lease's run as this host allows it. `idle_s` is the agent's default idle time; the
    lease's own, then its meter's, take precedence. A file workload needs `engine` (its
    --parse-only) and `state_dir` (where its text is written). `sharing`: how many targets run
    at once (a multi-target lease, multi.py): the host-wide limits are shared between them
    (iowatt_policy.shared_policy). Raises Refused."""
    reported = shared_policy(report(policy, meters), sharing)
    raw_job = dict(lease.engine_job)
    violations = check_run(
        reported,
        target_path=lease.target_path,
        engine_job=raw_job,
        meter=lease.meter,
        destructive=lease.destructive,
        engine=engine_options(engine),  # which options this host's engine lets a server send
    )
    target = reported.target(lease.target_path)
    resolved: str | None = None
    if not violations and target is not None:
        resolved, violations = check_target_on_host(target)
    if violations or target is None or resolved is None:
        raise Refused("; ".join(v.reason() for v in violations) or "host policy refused this run")
    try:
        runner = runner_for_job(raw_job)  # check_run allowed its mode
    except ValueError as exc:
        raise Refused(str(exc)) from None
    if runner.block_job:
        return _plan_jobfile_run(
            lease, raw_job, runner, reported, target, resolved, meters, idle_s, policy, engine, state_dir
        )
    if runner.mode is not None:
        return _plan_file_run(
            lease, raw_job, runner, reported, resolved, meters, idle_s, policy, engine, state_dir
        )
    try:
        job, data_file = engine_job_for(
            raw_job,
            target=target,
            resolved=resolved,
            run_key=str(lease.run_id),
            destructive=lease.destructive,
        )
    except ValueError as exc:
        raise Refused(str(exc)) from None
    name, entry, idle_s, timeout_s = _meter_and_times(lease, meters, idle_s, policy)
    return Plan(
        job=job,
        data_file=data_file,
        filename=str(job["global"]["filename"]),
        timeout_s=timeout_s,
        meter_name=name if entry is not None else None,
        meter=entry,
        idle_s=idle_s,
        engine_args=tuple(runner.engine_args()),  # a server's job file: --untrusted
    )


def _plan_jobfile_run(
    lease: Lease,
    raw_job: dict[str, Any],
    runner: Runner,
    reported: ReportedPolicy,
    target: Target,
    resolved: str,
    meters: Meters,
    idle_s: float,
    policy: Policy,
    engine: Path | str | None,
    state_dir: Path | None,
) -> Plan:
    """A fio job file (ADR 0029): the engine's own parse of the text here (--untrusted), judged as
    the block job it is by the host's rules, then its JSON form (read back the same by the engine)
    with the target's options, run as a block job with --untrusted."""
    if engine is None or state_dir is None or not isinstance(runner, JobfileRunner):
        raise Refused("this agent cannot check job files here (no engine to read them)")
    text_file = state_dir / "jobs" / filework.text_file_name(str(lease.run_id), str(raw_job["mode"]))
    try:
        parse = runner.parse(engine, str(raw_job["text"]), text_file=text_file)
    except filework.FileJobRefused as exc:
        raise Refused(filework.refusal("jobfile", exc.reason, runner.refusal_key)) from None
    violations = check_run(
        reported,
        target_path=lease.target_path,
        engine_job=raw_job,
        meter=lease.meter,
        destructive=lease.destructive,
        file_facts=parse,
        engine=engine_options(engine),
    )
    if violations:
        raise Refused("; ".join(v.reason() for v in violations))
    run_dir: Path | None = None
    try:
        block = runner.checked_job(engine, parse, text_file=text_file)
        if target.kind == "directory" and multi_file(parse):
            # jobs that make files of their own run as written, in a directory of this run beneath
            # the target (made below through the target's descriptor, removed with its files after)
            run_dir = Path(resolved) / filework.run_dir_name(str(lease.run_id))
        job, data_file = engine_job_for(
            block,
            target=target,
            resolved=resolved,
            run_key=str(lease.run_id),
            destructive=lease.destructive,
            run_dir=run_dir,
        )
    except filework.FileJobRefused as exc:
        raise Refused(filework.refusal("jobfile", exc.reason, runner.refusal_key)) from None
    except ValueError as exc:
        raise Refused(str(exc)) from None
    name, entry, idle_s, timeout_s = _meter_and_times(lease, meters, idle_s, policy)
    if run_dir is not None:
        try:
            filework.make_run_dir(resolved, run_dir.name)
        except (OSError, ValueError) as exc:
            raise Refused(f"cannot make the run's directory in {resolved}: {exc}") from None
    return Plan(
        job=job,
        data_file=data_file,
        filename=str(job["global"].get("filename") or job["global"]["directory"]),
        timeout_s=timeout_s,
        meter_name=name if entry is not None else None,
        meter=entry,
        idle_s=idle_s,
        runner=runner,
        engine_args=tuple(runner.engine_args()),
    )


def _meter_and_times(
    lease: Lease, meters: Meters, idle_s: float, policy: Policy, runner: Runner | None = None
) -> tuple[str | None, MeterEntry | None, float, float]:
    """The meter, idle time and hard timeout: the lease's timeout, at most the host's limit of one
    engine run (max_runtime_s x 1.5 + slack) times the engine runs the kind plans (a PTS run's
    rounds: Runner.runtime_cap_s)."""
    name = lease.meter if lease.meter is not None else meters.default
    entry = meters.meters.get(name) if name else None
    if lease.idle_s is not None:
        idle_s = lease.idle_s
    elif entry is not None and entry.idle_s is not None:
        idle_s = entry.idle_s
    timeout_s = lease.timeout_s
    if policy.limits.max_runtime_s is not None:
        per_run = policy.limits.max_runtime_s * 1.5 + RUNTIME_SLACK_S
        cap = runner.runtime_cap_s(dict(lease.engine_job), per_run) if runner is not None else per_run
        timeout_s = min(timeout_s, cap)
    return name, entry, idle_s, timeout_s


def _plan_file_run(
    lease: Lease,
    raw_job: dict[str, Any],
    runner: Runner,
    reported: ReportedPolicy,
    resolved: str,
    meters: Meters,
    idle_s: float,
    policy: Policy,
    engine: Path | str | None,
    state_dir: Path | None,
) -> Plan:
    """A file workload: the engine's own facts of the text written here, then the limits. A
    TPC-H run: the host can run it, then its bound of bytes written against the limits (each
    kind's runner prepares its run and says which facts)."""
    if engine is None or state_dir is None:
        raise Refused("this agent cannot check file workloads here (no engine to read them)")
    mode = str(raw_job["mode"])
    text_file = state_dir / "jobs" / filework.text_file_name(str(lease.run_id), mode)
    try:
        run = runner.prepare(engine, raw_job, text_file=text_file, target=resolved, run_key=str(lease.run_id))
    except filework.FileJobRefused as exc:
        raise Refused(exc.reason) from None
    try:
        facts = runner.limit_facts(run, raw_job)
    except filework.FileJobRefused as exc:
        run.discard()
        raise Refused(exc.reason) from None
    violations = check_run(
        reported,
        target_path=lease.target_path,
        engine_job=raw_job,
        meter=lease.meter,
        destructive=lease.destructive,
        file_facts=facts,
        engine=engine_options(engine),  # a PTS run's engine jobs are judged as block jobs
    )
    if violations:
        run.discard()
        raise Refused("; ".join(v.reason() for v in violations))
    name, entry, idle_s, timeout_s = _meter_and_times(lease, meters, idle_s, policy, runner)
    return Plan(
        job=raw_job,
        data_file=None,
        filename=str(run.run_dir),
        timeout_s=timeout_s,
        meter_name=name if entry is not None else None,
        meter=entry,
        idle_s=idle_s,
        file_run=run,
        runner=runner,
    )
