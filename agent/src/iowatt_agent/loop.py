"""The agent's main loop: heartbeat, long-poll for a lease, run it, report, repeat.

Threads: the main thread supervises and handles drain; a worker thread leases and runs; a
heartbeat thread reports state; a spool thread retries undelivered uploads. The pieces
(`heartbeat_once`, `lease_once`, `execute`, `report`) are plain methods testable without threads.

Drain (SIGTERM): stop leasing at once; let the current run finish for up to `drain_timeout_s`;
then kill the engine's process group and report the run as failed; flush the spool once; exit 0.
A second SIGTERM/SIGINT kills the current run immediately, whenever it comes: the `forced` event
is never cleared, so a run whose engine or idle baseline has not started yet never starts.
The run itself (idle before, engine load, idle after, power) is `measured.run_measured`, the
same sequence `bench` uses.
"""

from __future__ import annotations

import logging
import os
import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from uuid import UUID

from iowatt_policy import TARGET_NOT_ALLOWED, ReportedPolicy, check_run, check_target_on_host
from pydantic import ValidationError

from . import __version__
from .client import ApiClient, ApiError, Conflict, Forbidden, NotFound, PermanentError, Unauthorized
from .config import AgentConfig, ConfigError, save_config
from .inventory import collect as collect_inventory
from .measured import run_measured
from .policy import (
    METERS_FILE,
    POLICY_FILE,
    MeterEntry,
    Meters,
    engine_job_for,
    fingerprint,
    load_meters,
    load_policy,
    report,
)
from .power import DEFAULT_IDLE_S, PowerSession
from .runner import EngineOutcome, EngineProcess, EngineProgress
from .schemas import (
    AgentState,
    FailureReport,
    HeartbeatRequest,
    HeartbeatResponse,
    Lease,
    PowerUpload,
    ProgressRequest,
    ResultUpload,
)
from .spool import Delivery, Spool, SpoolEntry, SpoolRetrier, new_upload_id

log = logging.getLogger("iowatt_agent.loop")

MAX_REASON_CHARS = 2000  # the server's FailureReport.reason limit
POLICY_WATCH_S = 2.0  # how often the heartbeat thread looks for a changed policy or meters file
# rotate the token when less than half its lifetime is left; this much when the server does not
# say the lifetime (docs/adr/0011)
ROTATE_LEFT_S = 7 * 24 * 3600.0


@dataclass
class LoopSettings:
    lease_wait_s: float = 25.0
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


# hard timeout of the engine: never more than the host's max_runtime_s x 1.5 + this (the layout
# of the data file and slack), whatever the lease says
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
        self.config = config
        self.state_dir = state_dir
        self.engine = engine
        self.settings = settings or LoopSettings()
        self.client = client_factory()  # lease, start, progress (worker thread)
        self.hb_client = client_factory()  # heartbeat thread
        self.spool_client = client_factory()  # spool thread
        self.spool = Spool(state_dir)
        self.send_inventory = send_inventory
        self.heartbeat_interval_s = config.heartbeat_interval_s

        self.draining = threading.Event()
        self.stopping = threading.Event()
        self._lock = threading.Lock()
        self._busy = False
        self.current: EngineProcess | None = None
        # set once and never cleared: a forced drain (second signal, drain deadline) ends an idle
        # phase and keeps an engine from starting, also when it comes before the run has a
        # process (just after a lease was taken)
        self.forced = threading.Event()
        self.current_run_id: UUID | None = None
        self.fatal: str | None = None
        self.retrier = SpoolRetrier(self.spool, self.spool_client, self.stopping)
        self.reported_fingerprint: str | None = None  # of the policy the server last got
        self._inventory_lock = threading.Lock()  # worker and heartbeat threads both may send it
        self._token_lock = threading.Lock()  # one rotation at a time (heartbeat thread, drain)

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
        return report(load_policy(self.state_dir), self.meters())

    def policy_files_signature(self) -> tuple[tuple[int, int, int] | None, ...]:
        """(inode, size, mtime) of the policy and meters files: cheap to read every few seconds."""
        sig: list[tuple[int, int, int] | None] = []
        for name in (POLICY_FILE, METERS_FILE):
            try:
                st = os.stat(self.state_dir / name)
            except OSError:
                sig.append(None)
                continue
            sig.append((st.st_ino, st.st_size, st.st_mtime_ns))
        return tuple(sig)

    def send_inventory_if_changed(self, *, force: bool = False, client: ApiClient | None = None) -> None:
        """Re-send the inventory when the policy or the meters changed since the server last got
        them (and at start), so the server checks new runs against what the host allows now."""
        if not self.send_inventory:
            return
        with self._inventory_lock:
            self._send_inventory_locked(force=force, client=client or self.client)

    def _send_inventory_locked(self, *, force: bool, client: ApiClient) -> None:
        try:
            reported = self.reported_policy()
        except ConfigError as exc:
            log.error("policy.unreadable error=%s: every lease is refused until it is fixed", exc)
            return
        fp = fingerprint(reported)
        if fp == self.reported_fingerprint and not force:
            return
        inventory = collect_inventory(policy=reported)
        client.put_inventory(self.config.agent_id, inventory)
        self.reported_fingerprint = fp
        log.info("inventory.sent targets=%d meters=%d", len(reported.targets), len(reported.meters))

    def plan(self, lease: Lease) -> Plan:
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
        reported = report(policy, meters)
        raw_job = lease.engine_job.model_dump(by_alias=True)
        violations = check_run(
            reported,
            target_path=lease.target_path,
            engine_job=raw_job,
            meter=lease.meter,
            destructive=lease.destructive,
        )
        target = reported.target(lease.target_path)
        resolved: str | None = None
        if not violations and target is not None:
            resolved, violations = check_target_on_host(target)
        if violations or target is None or resolved is None:
            raise Refused("; ".join(v.reason() for v in violations) or "host policy refused this run")
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
        name = lease.meter if lease.meter is not None else meters.default
        entry = meters.meters.get(name) if name else None
        idle_s = self.settings.idle_s
        if lease.idle_s is not None:
            idle_s = lease.idle_s
        elif entry is not None and entry.idle_s is not None:
            idle_s = entry.idle_s
        timeout_s = lease.timeout_s
        if policy.limits.max_runtime_s is not None:
            timeout_s = min(timeout_s, policy.limits.max_runtime_s * 1.5 + RUNTIME_SLACK_S)
        return Plan(
            job=job,
            data_file=data_file,
            filename=str(job["global"]["filename"]),
            timeout_s=timeout_s,
            meter_name=name if entry is not None else None,
            meter=entry,
            idle_s=idle_s,
        )

    # --- state ---------------------------------------------------------------------------------

    @property
    def state(self) -> AgentState:
        if self.draining.is_set():
            return "draining"
        return "busy" if self._busy else "idle"

    def request_drain(self, reason: str = "signal") -> None:
        with self._lock:
            already = self.draining.is_set()
            self.draining.set()
        if already:
            log.warning("drain.forced reason=%s: stopping the current run now", reason)
            self.forced.set()  # before reading self.current: the worker sets it, then checks this
            proc = self.current
            if proc is not None:
                proc.stop(f"agent stopped ({reason}) while draining")
        else:
            log.info("drain.requested reason=%s busy=%s", reason, self._busy)

    # --- heartbeat -----------------------------------------------------------------------------

    def heartbeat_once(self) -> None:
        request = HeartbeatRequest(
            state=self.state, current_run_id=self.current_run_id, agent_version=__version__
        )
        answer = self.hb_client.heartbeat(self.config.agent_id, request)
        if answer.heartbeat_interval_s > 0:
            self.heartbeat_interval_s = answer.heartbeat_interval_s
        if token_due(answer):
            self.rotate_token()

    # --- token rotation (docs/adr/0011) --------------------------------------------------------

    def rotate_token(self) -> bool:
        """Get a new token, write it to agent.json (atomically) and only then use it. Any failure
        keeps the current token, which the server still accepts, and the next heartbeat tries
        again. A refusal (401/403/404) is raised: the server no longer accepts this agent."""
        with self._token_lock:
            try:
                answer = self.hb_client.rotate_token(self.config.agent_id)
            except (Unauthorized, Forbidden, NotFound):
                raise
            except ApiError as exc:
                log.warning("token.rotate_failed error=%s: will retry at the next heartbeat", exc)
                return False
            rotated = self.config.model_copy(
                update={"agent_token": answer.agent_token, "token_expires_at": answer.token_expires_at}
            )
            try:
                save_config(self.state_dir, rotated)
            except (OSError, ConfigError) as exc:
                log.error(
                    "token.save_failed error=%s: keeping the current token; will rotate again at the "
                    "next heartbeat",
                    exc,
                )
                return False
            self.config = rotated
            for client in (self.client, self.hb_client, self.spool_client):
                client.set_token(answer.agent_token)
            log.info("token.rotated expires_at=%s", answer.token_expires_at.isoformat(timespec="seconds"))
            return True

    def _heartbeat_loop(self) -> None:
        """Heartbeats, and between them a look at the policy files every POLICY_WATCH_S: a target
        added on the host reaches the server within seconds, not at the next empty long-poll."""
        next_beat = time.monotonic() + self.heartbeat_interval_s
        signature: tuple[tuple[int, int, int] | None, ...] | None = self.policy_files_signature()
        while not self.stopping.wait(min(POLICY_WATCH_S, max(0.0, next_beat - time.monotonic()))):
            now_sig = self.policy_files_signature()
            if now_sig != signature:
                signature = now_sig
                try:
                    self.send_inventory_if_changed(client=self.hb_client)
                except ApiError as exc:
                    log.warning("inventory.failed error=%s: will retry", exc)
                    signature = None  # retry at the next look
            if time.monotonic() < next_beat:
                continue
            next_beat = time.monotonic() + self.heartbeat_interval_s
            try:
                self.heartbeat_once()
            except (Unauthorized, Forbidden, NotFound) as exc:
                self._set_fatal(f"heartbeat refused: {exc}")
            except ApiError as exc:
                log.warning("heartbeat.failed error=%s", exc)

    # --- leasing -------------------------------------------------------------------------------

    def lease_once(self) -> Lease | None:
        """One long-poll. Raises FatalAgentError when the server refuses this agent."""
        try:
            return self.client.lease(self.config.agent_id, self.settings.lease_wait_s)
        except (Unauthorized, Forbidden, NotFound) as exc:
            raise FatalAgentError(
                f"the server refused this agent ({exc}); re-enrol with `iowatt-agent enroll --replace`"
            ) from exc

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
                self._set_fatal(str(exc))
                return
            except ApiError as exc:
                failures += 1
                delay = min(
                    self.settings.error_backoff_max_s,
                    self.settings.error_backoff_base_s * 2 ** (failures - 1),
                ) * random.uniform(0.5, 1.0)
                if exc.retry_after_s is not None:  # 429/503 with Retry-After: the server knows best
                    delay = exc.retry_after_s
                log.warning("lease.failed error=%s retry_in_s=%.1f", exc, delay)
                self.draining.wait(delay)
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
                self._busy = True
            try:
                self.execute(lease)
            except Exception:  # noqa: BLE001 - a bug in one run must not end the agent
                log.exception("run.crashed run_id=%s: the lease will expire", lease.run_id)
            finally:
                with self._lock:
                    self._busy = False

    # --- one run -------------------------------------------------------------------------------

    def execute(self, lease: Lease) -> str:
        """Run one lease to the end and report it. Returns 'result', 'failure' or 'not_started'."""
        run_id, lease_id = lease.run_id, lease.lease_id
        log.info(
            "lease.acquired run_id=%s target=%s timeout_s=%g", run_id, lease.target_path, lease.timeout_s
        )
        self._refresh_inventory()  # the policy this lease is judged by is the one the server gets
        try:
            plan = self.plan(lease)
        except Refused as exc:
            log.error("run.refused run_id=%s reason=%s", run_id, exc.reason)
            self.report_failure(lease, reason=exc.reason, exit_code=None, stderr_tail="", cancelled=False)
            return "failure"
        try:
            self.client.start(run_id, lease_id)
        except Conflict as exc:
            log.warning("run.lease_lost run_id=%s error=%s", run_id, exc)
            return "not_started"
        except ApiError as exc:
            log.error("run.start_failed run_id=%s error=%s: the lease will expire", run_id, exc)
            return "not_started"

        job_file = self.state_dir / "jobs" / f"{run_id}.json"
        proc = EngineProcess(
            self.engine,
            plan.job,
            job_file=job_file,
            timeout_s=plan.timeout_s,
            progress_interval_s=self.settings.progress_interval_s,
            keepalive_s=self.settings.keepalive_s,
            kill_grace_s=self.settings.kill_grace_s,
            output_format=self.settings.output_format,
        )
        proc.on_progress = self._progress_forwarder(lease, proc)
        proc.on_message = lambda line: log.info("engine.message run_id=%s %s", run_id, line)
        self.current_run_id = run_id
        idle = _IdleWatch(self, lease)
        self.current = proc  # from here a forced drain stops it (or keeps it from starting)
        log.info("run.started run_id=%s engine=%s filename=%s", run_id, self.engine, plan.filename)
        try:
            measured = run_measured(
                proc,
                self._power_session(lease, plan),
                stop=self.forced,
                data_file=plan.data_file,
                on_idle=idle.tick,
                tick_s=idle.tick_s,
            )
        finally:
            self.current = None
            self.current_run_id = None
        outcome, power = measured.outcome, measured.power
        if power is not None and outcome is not None:
            log.info(
                "power.measured run_id=%s status=%s samples=%d reason=%s",
                run_id,
                power["status"],
                len(power["samples"]["t_ns"]),
                power["reason"],
            )
        if outcome is None:  # stopped before the engine started (idle_before, forced drain)
            self.report_failure(
                lease,
                reason=idle.reason or "agent stopped before the benchmark started",
                exit_code=None,
                stderr_tail="",
                cancelled=idle.cancelled,
            )
            return "failure"
        if outcome.ok:
            self.report_result(lease, outcome, power)
            return "result"
        self.report_failure(
            lease,
            reason=outcome.error or "engine failed",
            exit_code=outcome.exit_code,
            stderr_tail=outcome.stderr_tail,
            cancelled=outcome.cancelled,
        )
        return "failure"

    def _power_session(self, lease: Lease, plan: Plan) -> PowerSession | None:
        """The run's meter: the one the lease names on this host (checked by plan()), else none."""
        if plan.meter is None:
            return None
        # The lease's target, not the data file inside a directory target (not created yet):
        # the estimate meter finds the block device from it.
        return PowerSession(
            plan.meter.spec, idle_s=plan.idle_s, target=lease.target_path, name=plan.meter_name
        )

    def _progress_forwarder(self, lease: Lease, proc: EngineProcess) -> Callable[[EngineProgress], bool]:
        def forward(p: EngineProgress) -> bool:
            request = ProgressRequest(
                lease_id=lease.lease_id,
                job_index=p.job_index,
                job_name=p.job_name,
                percent=p.percent,
                elapsed_ns=p.elapsed_ns,
                read_iops=p.read_iops,
                read_bw_bytes=p.read_bw_bytes,
                write_iops=p.write_iops,
                write_bw_bytes=p.write_bw_bytes,
            )
            try:
                answer = self.client.progress(lease.run_id, request)
            except Conflict as exc:
                log.error("run.lease_lost run_id=%s error=%s: stopping the engine", lease.run_id, exc)
                proc.stop(f"lease lost: {exc}")
                return False
            if answer.cancel_requested:
                log.info("run.cancel_requested run_id=%s", lease.run_id)
            return answer.cancel_requested

        return forward

    # --- reporting (always through the spool) --------------------------------------------------

    def report_result(
        self, lease: Lease, outcome: EngineOutcome, power: dict[str, object] | None = None
    ) -> Delivery:
        assert outcome.result is not None and outcome.exit_code is not None
        power_upload = None
        if power is not None:
            try:
                power_upload = PowerUpload.model_validate(power)
            except ValidationError as exc:  # a driver bug must not cost the benchmark's result
                log.error("power.invalid run_id=%s error=%s: result sent without power", lease.run_id, exc)
        upload = ResultUpload(
            lease_id=lease.lease_id,
            upload_id=new_upload_id(),
            engine_result=outcome.result,
            engine_exit_code=outcome.exit_code,
            started_at=outcome.started_at,
            finished_at=outcome.finished_at,
            agent_version=__version__,
            power=power_upload,
        )
        entry = self.spool.put_result(upload, lease.run_id)
        log.info(
            "run.succeeded run_id=%s upload_id=%s spooled=%s", lease.run_id, upload.upload_id, entry.path.name
        )
        return self._deliver(entry)

    def report_failure(
        self, lease: Lease, *, reason: str, exit_code: int | None, stderr_tail: str, cancelled: bool
    ) -> Delivery:
        report = FailureReport(
            lease_id=lease.lease_id,
            upload_id=new_upload_id(),
            reason=(reason.strip() or "engine failed")[:MAX_REASON_CHARS],
            exit_code=exit_code,
            stderr_tail=stderr_tail,
            cancelled=cancelled,
        )
        entry = self.spool.put_failure(report, lease.run_id)
        log.info("run.failed run_id=%s cancelled=%s reason=%s", lease.run_id, cancelled, reason)
        return self._deliver(entry)

    def _deliver(self, entry: SpoolEntry) -> Delivery:
        outcome = self.spool.deliver(entry, self.client, attempts=3)
        if outcome is Delivery.RETRY:
            self.retrier.kick()
        return outcome

    # --- supervision ---------------------------------------------------------------------------

    def _set_fatal(self, message: str) -> None:
        if self.fatal is None:
            self.fatal = message
            log.error("agent.fatal %s", message)
        self.draining.set()

    def startup(self) -> None:
        try:
            self.heartbeat_once()
            self.send_inventory_if_changed(force=True)
        except (Unauthorized, Forbidden, NotFound) as exc:
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
        try:
            self.startup()
        except FatalAgentError as exc:
            log.error("agent.fatal %s", exc)
            return 3
        self.retrier.start()
        threading.Thread(target=self._heartbeat_loop, name="heartbeat", daemon=True).start()
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
            busy = self._busy
        if busy:
            log.info(
                "drain.waiting run_id=%s deadline_s=%g", self.current_run_id, self.settings.drain_timeout_s
            )
            self._safe_heartbeat()
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
        self._safe_heartbeat()
        counts = self.spool.flush(self.spool_client)
        pending = len(self.spool.pending())
        log.info("agent.stopped delivered=%d pending_in_spool=%d", counts[Delivery.DELIVERED], pending)

    def _safe_heartbeat(self) -> None:
        try:
            self.heartbeat_once()
        except ApiError as exc:
            log.warning("heartbeat.failed error=%s", exc)


class _IdleWatch:
    """Progress reports during the idle phases (job_name "idle_before"/"idle_after"): they keep
    the lease alive exactly like the engine's progress, and carry the server's cancel back."""

    def __init__(self, loop: AgentLoop, lease: Lease) -> None:
        self.loop = loop
        self.lease = lease
        self.tick_s = loop.settings.progress_interval_s
        self.reason: str | None = None
        self.cancelled = False

    def tick(self, phase: str, elapsed_s: float, planned_s: float) -> bool:
        request = ProgressRequest(
            lease_id=self.lease.lease_id,
            job_index=0,
            job_name=phase,
            percent=min(100.0, 100.0 * elapsed_s / planned_s) if planned_s > 0 else 100.0,
            elapsed_ns=int(elapsed_s * 1e9),
            read_iops=0.0,
            read_bw_bytes=0,
            write_iops=0.0,
            write_bw_bytes=0,
        )
        try:
            answer = self.loop.client.progress(self.lease.run_id, request)
        except Conflict as exc:
            log.error("run.lease_lost run_id=%s phase=%s error=%s", self.lease.run_id, phase, exc)
            self.reason = f"lease lost: {exc}"
            return True
        except ApiError as exc:
            log.warning("progress.failed run_id=%s phase=%s error=%s", self.lease.run_id, phase, exc)
            return False
        if answer.cancel_requested:
            log.info("run.cancel_requested run_id=%s phase=%s", self.lease.run_id, phase)
            self.reason, self.cancelled = "cancelled by the server", True
            return True
        return False


def token_due(answer: HeartbeatResponse) -> bool:
    """Whether the token the heartbeat came with should be rotated now: less than half its
    lifetime left (7 days when the server does not say the lifetime), measured on the server's
    clock so a skewed host clock does not matter."""
    if answer.token_expires_at is None:
        return False
    left_s = (answer.token_expires_at - answer.server_time).total_seconds()
    threshold_s = answer.token_ttl_s / 2 if answer.token_ttl_s else ROTATE_LEFT_S
    return left_s < threshold_s
