"""The agent's worker loop: heartbeat, long-poll for a lease, run it, report, repeat.

Threads: the main thread supervises and handles drain; a worker thread leases and runs
(`_work_loop`, `execute`); the heartbeat thread reports state (`heartbeat`; what the two share is
`status.AgentStatus`: state, current run and lease, credentials, interval); a spool thread
retries undelivered uploads (`spool.SpoolRetrier`). What a lease may do on this host is decided
in `plan`, its progress reports in `progress`, the report of its end in `upload`, and the run
itself (idle before, engine load, idle after, power) is `measured.run_measured`, the same
sequence `bench` uses. At start, `leftovers` removes what a crashed agent process left behind;
an error of the agent's own during a run fails the run at once with that error as the reason.

Signals and drain: the first SIGTERM/SIGINT stops leasing at once and lets the current run
finish for up to `drain_timeout_s`; then the engine's process group is killed and the run
reported as failed; the spool is flushed once; exit 0. A second signal kills the current run
immediately, whenever it comes: the `forced` event is never cleared, so a run whose engine or
idle baseline has not started yet never starts.
"""

from __future__ import annotations

import logging
import random
import signal
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from uuid import UUID

from iowatt_policy import TARGET_NOT_ALLOWED, ReportedPolicy

from .client import (
    ApiClient,
    ApiError,
    Conflict,
    Forbidden,
    NotFound,
    PermanentError,
    ServerUnreachable,
    Unauthorized,
)
from .config import ConfigError
from .credentials import AgentConfig
from .group import GroupStart, barrier_limit_s
from .heartbeat import Heartbeat
from .inventory import collect as collect_inventory
from .layout import Laid, LayoutFailed, lay_out
from .leftovers import remove_leftovers
from .measured import run_measured
from .multi import EngineGroup, check_block, target_leases
from .pagecache import PageCacheProbe, is_buffered
from .plan import Plan, Refused, plan_lease
from .policy import MeterEntry, Meters, fingerprint, load_meters, load_policy, report
from .power import DEFAULT_IDLE_S, PowerSession
from .progress import IdleWatch, engine_progress_forwarder
from .runner import EngineOutcome, EngineProcess, cleanup_target
from .schemas import AgentState, Lease
from .spool import Delivery, Spool, SpoolRetrier
from .status import DEFAULT_POLL_WAIT_S, POLL_WAIT_BOUNDS_S, AgentStatus
from .upload import Reporter

log = logging.getLogger("iowatt_agent.loop")


@dataclass
class LoopSettings:
    # each lease request's long-poll wait; None: the wait the server names (25 s until it names one)
    lease_wait_s: float | None = None
    drain_timeout_s: float = 600.0
    progress_interval_s: float = 1.0
    keepalive_s: float = 30.0  # well under the server's lease_progress_timeout_s (120 s)
    kill_grace_s: float = 5.0
    error_backoff_base_s: float = 1.0
    error_backoff_max_s: float = 60.0
    output_format: str = "json+"  # json+ keeps the latency histograms for merged percentile curves
    # a meter spec given to `run --meter` by the local root user: replaces the host's default
    # meter for this process (leases still name meters; null = this one)
    meter: str | None = None
    idle_s: float = DEFAULT_IDLE_S  # each idle phase around the engine; a lease's `idle_s` overrides it


class FatalAgentError(Exception):
    """The server no longer accepts this agent (token revoked, agent deleted)."""


ClientFactory = Callable[[], ApiClient]


class AgentLoop:
    def __init__(
        self,
        config: AgentConfig,
        *,
        state_dir: Path,
        engine: Path,
        client_factory: ClientFactory,
        settings: LoopSettings | None = None,
        send_inventory: bool = True,
    ) -> None:
        self.status = AgentStatus(config)  # what the heartbeat thread reads and writes too
        self.state_dir = state_dir
        self.engine = engine
        self.settings = settings or LoopSettings()
        self.client = client_factory()  # lease, start, progress, report (worker thread)
        self.hb_client = client_factory()  # heartbeat thread
        self.spool_client = client_factory()  # spool thread
        self.spool = Spool(state_dir)
        self.send_inventory = send_inventory
        self._lock = self.status.lock
        self.current: EngineProcess | EngineGroup | None = None
        # set once and never cleared: a forced drain (second signal, drain deadline) ends an idle
        # phase and keeps an engine from starting, also when it comes before the run has a
        # process (just after a lease was taken)
        self.forced = threading.Event()
        self.retrier = SpoolRetrier(self.spool, self.spool_client, self.stopping)
        for waker in (self.client, self.hb_client):  # the server is back: retry the spool now
            waker.on_success = self._server_answered
        self.reporter = Reporter(self.spool, self.client, self.retrier.kick)
        self.heartbeat = Heartbeat(
            self.status,
            client=self.hb_client,
            state_dir=state_dir,
            token_users=(self.client, self.hb_client, self.spool_client),
            send_inventory=lambda client: self.send_inventory_if_changed(client=client),
        )
        self.reported_fingerprint: str | None = None  # of the policy the server last got
        self._inventory_lock = threading.Lock()  # worker and heartbeat threads both may send it

    # --- the shared status, by the names the loop has always had --------------------------------

    @property
    def config(self) -> AgentConfig:
        """The agent's credentials (the heartbeat thread replaces them when it rotates the token)."""
        return self.status.config

    @property
    def heartbeat_interval_s(self) -> float:
        return self.status.heartbeat_interval_s

    @heartbeat_interval_s.setter
    def heartbeat_interval_s(self, value: float) -> None:
        self.status.heartbeat_interval_s = value

    @property
    def draining(self) -> threading.Event:
        return self.status.draining

    @draining.setter
    def draining(self, event: threading.Event) -> None:
        self.status.draining = event

    @property
    def stopping(self) -> threading.Event:
        return self.status.stopping

    @property
    def current_run_id(self) -> UUID | None:
        return self.status.current_run_id

    @property
    def fatal(self) -> str | None:
        return self.status.fatal

    # --- host policy ---------------------------------------------------------------------------

    def meters(self) -> Meters:
        """The host's meters (meters.json), with `run --meter SPEC` as the default if given."""
        meters = load_meters(self.state_dir)
        if self.settings.meter:
            name = meters.default or "default"
            old = meters.meters.get(name)
            meters.meters[name] = MeterEntry(self.settings.meter, old.idle_s if old else None)
            meters.default = name
        return meters

    def reported_policy(self) -> ReportedPolicy:
        return report(load_policy(self.state_dir), self.meters(), idle_s=self.settings.idle_s)

    def send_inventory_if_changed(self, *, force: bool = False, client: ApiClient | None = None) -> None:
        """Re-send the inventory when the policy or the meters changed since the server last got
        them (and at start), so the server checks new runs against what the host allows now."""
        if not self.send_inventory:
            return
        with self._inventory_lock:
            try:
                reported = self.reported_policy()
            except ConfigError as exc:
                log.error("policy.unreadable error=%s: every lease is refused until it is fixed", exc)
                return
            fp = fingerprint(reported)
            if fp == self.reported_fingerprint and not force:
                return
            inventory = collect_inventory(policy=reported, engine=self.engine)
            (client or self.client).put_inventory(self.config.agent_id, inventory)
            self.reported_fingerprint = fp
            log.info("inventory.sent targets=%d meters=%d", len(reported.targets), len(reported.meters))

    def plan_targets(self, lease: Lease) -> list[Plan]:
        """The lease's plan, or one per target of a multi-target lease (each judged with the
        host-wide limits shared between the targets; block workloads only). Raises Refused."""
        if not lease.targets:
            return [self.plan(lease)]
        leases = target_leases(lease)
        plans = []
        for i, one in enumerate(leases):
            try:
                plans.append(self.plan(one, sharing=len(leases)))
            except Refused as exc:
                for p in plans:
                    if p.file_run is not None:
                        p.file_run.discard()
                raise Refused(f"target {i} ({one.target_path}): {exc.reason}") from None
        check_block(plans)
        return plans

    def plan(self, lease: Lease, *, sharing: int = 1) -> Plan:
        """Check the lease against the host policy (authoritative: before anything runs) and
        build what the engine gets. Raises Refused with the failed run's reason."""
        try:
            policy = load_policy(self.state_dir)
            meters = self.meters()
        except ConfigError as exc:
            raise Refused(
                f"host policy refused this run [{TARGET_NOT_ALLOWED}]: the host policy cannot be read: "
                f"{exc} (on the host: iowatt-agent targets list)"
            ) from None
        return plan_lease(
            lease,
            policy=policy,
            meters=meters,
            idle_s=self.settings.idle_s,
            engine=self.engine,
            state_dir=self.state_dir,
            sharing=sharing,
        )

    # --- state, heartbeat ------------------------------------------------------------------------

    @property
    def state(self) -> AgentState:
        return self.status.state

    def _server_answered(self) -> None:
        """A request of the worker's or the heartbeat's client got through: the spool retries now,
        and a lease poll backing off from an unreachable server polls again (`_work_loop`)."""
        self.retrier.server_reachable()
        self.status.answered()

    def heartbeat_once(self) -> None:
        self.heartbeat.once()

    def rotate_token(self) -> bool:
        return self.heartbeat.rotate_token()

    def _heartbeat_loop(self) -> None:
        self.heartbeat.run()

    # --- leasing -------------------------------------------------------------------------------

    def lease_once(self) -> Lease | None:
        """One long-poll. Raises FatalAgentError when the server refuses this agent."""
        try:
            # the process's boot id: the server then spares the runs this process started
            # (a result still in the spool is not a lost run)
            answer = self.client.lease_answer(
                self.config.agent_id, self.lease_wait_s, boot_id=self.status.boot_id
            )
        except (Unauthorized, Forbidden, NotFound) as exc:
            raise FatalAgentError(
                f"the server refused this agent ({exc}); re-enrol with `iowatt-agent enroll --replace`"
            ) from exc
        if answer.poll_wait_s is not None:  # a server that names the wait (an older one does not)
            low, high = POLL_WAIT_BOUNDS_S
            self.status.poll_wait_s = min(high, max(low, answer.poll_wait_s))
        return answer.lease

    @property
    def lease_wait_s(self) -> float:
        """The next lease request's wait: `--lease-wait` when given, else the server's (ADR 0053)."""
        given = self.settings.lease_wait_s
        return given if given is not None else self.status.poll_wait_s

    def _refresh_inventory(self) -> None:
        try:
            self.send_inventory_if_changed()
        except ApiError as exc:
            log.warning("inventory.failed error=%s: will retry", exc)

    def _work_loop(self) -> None:
        failures = 0
        while not self.draining.is_set() and not self.stopping.is_set():
            try:
                lease = self.lease_once()
                failures = 0
            except FatalAgentError as exc:
                self.set_fatal(str(exc))
                return
            except ApiError as exc:
                answers = self.status.answers
                failures += 1
                delay = min(
                    self.settings.error_backoff_max_s,
                    self.settings.error_backoff_base_s * 2 ** (failures - 1),
                ) * random.uniform(0.5, 1.0)
                if exc.retry_after_s is not None:  # 429/503 with Retry-After: the server knows best
                    delay = exc.retry_after_s
                log.warning("lease.failed error=%s retry_in_s=%.1f", exc, delay)
                if not isinstance(exc, ServerUnreachable):
                    self.draining.wait(delay)  # the server answered: its error keeps the backoff
                elif self.status.wait_answered(answers, delay):
                    # no answer (refused, reset, timed out): the network or the server was away, and
                    # the next request of another client that gets through (a heartbeat) ends the
                    # backoff, as it ends the spool's. Waiting it out left a host idle for up to
                    # error_backoff_max_s after a network outage while runs were queued for it
                    log.info("lease.server_reachable: polling now, not after the %.1f s backoff", delay)
                continue
            if lease is None:
                self._refresh_inventory()
                continue
            with self._lock:
                if self.draining.is_set():
                    log.warning(
                        "lease.not_started run_id=%s: agent is draining; the server re-queues it "
                        "when the lease expires",
                        lease.run_id,
                    )
                    return
                self.status.busy = True
                self.status.current_lease_id = lease.lease_id
            try:
                self.execute(lease)
            except Exception as exc:  # noqa: BLE001 - a bug in one run must not end the agent
                log.exception("run.crashed run_id=%s: reporting it failed", lease.run_id)
                self._report_crash(lease, exc)
            finally:
                with self._lock:
                    self.status.busy = False
                    self.status.current_lease_id = None

    def _report_crash(self, lease: Lease, exc: Exception) -> None:
        """Fail the run on the server now, with the real reason, instead of letting its lease
        expire minutes later (and block the agent's queue meanwhile)."""
        reason = f"the agent failed while running it: {type(exc).__name__}: {exc}"
        try:
            self.report_failure(lease, reason=reason, exit_code=None, stderr_tail="", cancelled=False)
        except Exception:  # noqa: BLE001
            log.exception("run.crash_not_reported run_id=%s: the lease will expire", lease.run_id)

    # --- one run -------------------------------------------------------------------------------

    def execute(self, lease: Lease) -> str:
        """Run one lease to the end and report it. Returns 'result', 'failure' or 'not_started'."""
        run_id, lease_id = lease.run_id, lease.lease_id
        log.info(
            "lease.acquired run_id=%s target=%s timeout_s=%g", run_id, lease.target_path, lease.timeout_s
        )
        self._refresh_inventory()  # the policy this lease is judged by is the one the server gets
        try:
            plans = self.plan_targets(lease)
            plan = plans[0]
        except Refused as exc:
            log.error("run.refused run_id=%s reason=%s", run_id, exc.reason)
            self.report_failure(lease, reason=exc.reason, exit_code=None, stderr_tail="", cancelled=False)
            return "failure"
        file_run = plan.file_run
        try:
            self.client.start(run_id, lease_id)
        except Conflict as exc:
            log.warning("run.lease_lost run_id=%s error=%s", run_id, exc)
            if file_run is not None:
                file_run.discard()
            return "not_started"
        except ApiError as exc:
            log.error("run.start_failed run_id=%s error=%s: the lease will expire", run_id, exc)
            if file_run is not None:
                file_run.discard()
            return "not_started"

        runner = plan.runner

        def engine_for(p: Plan, job_name: str) -> EngineProcess:
            return EngineProcess(
                runner.program(file_run, self.engine),
                p.job,
                job_file=file_run.text_file if file_run else self.state_dir / "jobs" / job_name,
                timeout_s=p.timeout_s,
                progress_interval_s=self.settings.progress_interval_s,
                keepalive_s=self.settings.keepalive_s,
                # a kind may need longer to stop (TPC-H: its child stops its DBMS and removes its files)
                kill_grace_s=max(self.settings.kill_grace_s, runner.kill_grace_s or 0.0),
                output_format=self.settings.output_format,
                mode_argv=runner.arguments(file_run) if file_run else None,
                extra_args=p.engine_args,
                phases=runner.phases(file_run) if file_run else None,
                phase_of=runner.progress_phase,
            )

        def on_message(line: str) -> None:
            log.info("engine.message run_id=%s %s", run_id, line)

        laid = Laid()
        if lease.group is not None or len(plans) > 1:
            # engines started together lay their files out first, before the idle baseline and
            # the group's barrier: at the instant each only starts its I/O (layout.py)
            def layout_engine(p: Plan, i: int) -> EngineProcess:
                proc = engine_for(p, f"{run_id}-layout-{i}.json")
                proc.on_progress = engine_progress_forwarder(self.client, lease, proc)
                proc.on_message = on_message
                return proc

            def running(proc: EngineProcess | None) -> None:
                self.current = proc  # a forced drain stops the layout too

            try:
                laid = lay_out(plans, engine_for=layout_engine, running=running, stop=self.forced)
            except LayoutFailed as exc:
                log.error("run.layout_failed run_id=%s reason=%s", run_id, exc.reason)
                self.report_failure(
                    lease,
                    reason=exc.reason,
                    exit_code=exc.exit_code,
                    stderr_tail=exc.stderr_tail,
                    cancelled=exc.cancelled,
                )
                return "failure"

        proc: EngineProcess | EngineGroup
        if len(plans) == 1:
            proc = engine_for(plan, f"{run_id}.json")
            proc.on_progress = engine_progress_forwarder(self.client, lease, proc)
            proc.on_message = on_message
        else:  # one engine per target, started together (multi.py)
            engines = [engine_for(p, f"{run_id}-{i}.json") for i, p in enumerate(plans)]
            for engine in engines:  # each target's engine logs its own messages
                engine.on_message = on_message
            paths = [str(p) for p in (lease.targets or [])]
            group = EngineGroup(engines, paths, [p.data_file for p in plans])
            group.forward_progress(engine_progress_forwarder(self.client, lease, group))
            proc = group
        self.status.current_run_id = run_id
        idle = IdleWatch(self.client, lease, self.settings.progress_interval_s)
        barrier = (
            GroupStart(
                lease,
                client=self.client,
                status=self.status,
                exchange=lambda: self.heartbeat.once(self.client),
                stop=self.forced,
                wait_s=self.settings.lease_wait_s
                if self.settings.lease_wait_s is not None
                else DEFAULT_POLL_WAIT_S,
                max_barrier_s=barrier_limit_s(lease.group.prepare_timeout_s),
            )
            if lease.group is not None
            else None
        )
        not_started: list[str] = []

        def before_load() -> bool:
            """The group's start barrier, then the laid-out files still the ones laid out."""
            if barrier is not None and not barrier.wait():
                return False
            problem = laid.changed()
            if problem is not None:
                not_started.append(problem)
                return False
            return True

        self.current = proc  # from here a forced drain stops it (or keeps it from starting)
        log.info("run.started run_id=%s engine=%s filename=%s", run_id, self.engine, plan.filename)
        try:
            measured = run_measured(
                proc,
                power_session(lease, plan),
                stop=self.forced,
                data_file=plan.data_file,
                on_idle=idle.tick,
                tick_s=idle.tick_s,
                file_run=file_run,
                before_load=before_load,
                page_cache=PageCacheProbe(lease.target_path, buffered=is_buffered(plan.job)),
            )
        finally:
            self.current = None
            self.status.current_run_id = None
            laid.close()
            for p in plans[1:]:  # a multi-target run's other files, when its engines never started
                cleanup_target(p.data_file)
        outcome, power = measured.outcome, measured.power
        if power is not None and outcome is not None:
            samples = len(power["samples"]["t_ns"])
            log.info(
                "power.measured run_id=%s status=%s samples=%d reason=%s",
                run_id,
                power["status"],
                samples,
                power["reason"],
            )
        if outcome is None and not_started:  # a laid-out file was replaced: nothing ran on it
            self.report_failure(lease, reason=not_started[0], exit_code=None, stderr_tail="", cancelled=False)
            return "failure"
        if outcome is None and barrier is not None and barrier.stop_reason is not None:
            # the group stopped at its start barrier (or this member could not wait there)
            self.report_failure(
                lease, reason=barrier.stop_reason, exit_code=None, stderr_tail="", cancelled=barrier.cancelled
            )
            return "failure"
        if outcome is None:  # stopped before the engine started (idle_before, forced drain)
            reason = idle.reason or "agent stopped before the benchmark started"
            self.report_failure(
                lease, reason=reason, exit_code=None, stderr_tail="", cancelled=idle.cancelled
            )
            return "failure"
        if barrier is not None:  # the instant this member's engine started: its skew
            barrier.report(outcome.started_at)
        if outcome.ok:
            self.report_result(lease, outcome, power)
            return "result"
        reason = runner.failure_reason(outcome) or outcome.error or "engine failed"
        self.report_failure(
            lease,
            reason=reason,
            exit_code=outcome.exit_code,
            stderr_tail=outcome.stderr_tail,
            cancelled=outcome.cancelled,
        )
        return "failure"

    def report_result(
        self, lease: Lease, outcome: EngineOutcome, power: dict[str, object] | None = None
    ) -> Delivery:
        return self.reporter.result(lease, outcome, power)

    def report_failure(
        self, lease: Lease, *, reason: str, exit_code: int | None, stderr_tail: str, cancelled: bool
    ) -> Delivery:
        return self.reporter.failure(
            lease, reason=reason, exit_code=exit_code, stderr_tail=stderr_tail, cancelled=cancelled
        )

    # --- supervision, signals and drain ----------------------------------------------------------

    def set_fatal(self, message: str) -> None:
        self.status.set_fatal(message)

    def request_drain(self, reason: str = "signal") -> None:
        with self._lock:
            already = self.draining.is_set()
            self.status.drain()
        if already:
            log.warning("drain.forced reason=%s: stopping the current run now", reason)
            self.forced.set()  # before reading self.current: the worker sets it, then checks this
            proc = self.current
            if proc is not None:
                proc.stop(f"agent stopped ({reason}) while draining")
        else:
            log.info("drain.requested reason=%s busy=%s", reason, self.status.busy)

    def startup(self) -> None:
        try:
            self.heartbeat_once()
            self.send_inventory_if_changed(force=True)
        except Forbidden as exc:
            if exc.code == "agent_protocol_unsupported":  # not this host's enrolment: its version
                raise FatalAgentError(f"the server does not speak this agent's protocol ({exc})") from exc
            raise FatalAgentError(
                f"the server refused this agent ({exc}); re-enrol with `iowatt-agent enroll --replace`"
            ) from exc
        except (Unauthorized, NotFound) as exc:
            raise FatalAgentError(
                f"the server refused this agent ({exc}); re-enrol with `iowatt-agent enroll --replace`"
            ) from exc
        except PermanentError as exc:
            log.warning("startup.rejected error=%s", exc)
        except ApiError as exc:
            log.warning("startup.server_unreachable error=%s: will keep trying", exc)

    def run(self) -> int:
        """Run until drained. Returns the process exit code (0 after a drain, 3 when refused)."""
        log.info(
            "agent.started agent_id=%s name=%s server=%s engine=%s",
            self.config.agent_id,
            self.config.name,
            self.config.server_url,
            self.engine,
        )
        remove_leftovers(self.state_dir)  # no run is going on yet: what is there is a dead one's
        try:
            self.startup()
        except FatalAgentError as exc:
            log.error("agent.fatal %s", exc)
            return 3
        self.retrier.start()
        threading.Thread(target=self.heartbeat.run, name="heartbeat", daemon=True).start()
        worker = threading.Thread(target=self._work_loop, name="worker", daemon=True)
        worker.start()
        while worker.is_alive() and not self.draining.is_set():
            self.draining.wait(0.5)
        crashed = not worker.is_alive() and not self.draining.is_set()
        self._drain(worker)
        if self.fatal:
            return 3
        return 1 if crashed else 0

    def _drain(self, worker: threading.Thread) -> None:
        with self._lock:
            busy = self.status.busy
        if busy:
            log.info(
                "drain.waiting run_id=%s deadline_s=%g", self.current_run_id, self.settings.drain_timeout_s
            )
            self.heartbeat.safe_once()
            worker.join(self.settings.drain_timeout_s)
            if worker.is_alive():
                self.forced.set()
                proc = self.current
                if proc is not None:
                    deadline = self.settings.drain_timeout_s
                    proc.stop(f"agent draining: run still going after the {deadline:g} s deadline")
                worker.join(self.settings.kill_grace_s + 60.0)
        self.stopping.set()
        self.retrier.kick()
        self.heartbeat.safe_once()
        counts = self.spool.flush(self.spool_client)
        pending = len(self.spool.pending())
        log.info("agent.stopped delivered=%d pending_in_spool=%d", counts[Delivery.DELIVERED], pending)


def power_session(lease: Lease, plan: Plan) -> PowerSession | None:
    """The run's meter: the one the lease names on this host (checked by plan()), else none."""
    if plan.meter is None:
        return None
    # The lease's target, not the data file inside a directory target (not created yet):
    # the estimate meter finds the block device from it.
    return PowerSession(plan.meter.spec, idle_s=plan.idle_s, target=lease.target_path, name=plan.meter_name)


def install_drain_signals(loop: AgentLoop) -> None:
    """SIGTERM and SIGINT drain the loop (the second one forces it); main thread only."""

    def on_signal(signum: int, _frame: FrameType | None) -> None:
        loop.request_drain(signal.Signals(signum).name)

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
