"""Progress reports of a running lease: the engine's (forwarded as they come) and the idle
phases' (job_name "idle_before"/"idle_after"). Both keep the lease alive and carry the server's
cancel back; a 409 (the lease is lost) stops the run."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING

from .client import ApiClient, ApiError, Conflict
from .runner import EngineProcess, EngineProgress
from .schemas import Lease, ProgressRequest

if TYPE_CHECKING:
    from .multi import EngineGroup

log = logging.getLogger("iowatt_agent.loop")


def engine_progress_forwarder(
    client: ApiClient, lease: Lease, proc: EngineProcess | EngineGroup
) -> Callable[[EngineProgress], bool]:
    """The engine's `on_progress`: returns True when the server asks to cancel."""

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
            answer = client.progress(lease.run_id, request)
        except Conflict as exc:
            log.error("run.lease_lost run_id=%s error=%s: stopping the engine", lease.run_id, exc)
            proc.stop(f"lease lost: {exc}")
            return False
        if answer.cancel_requested:
            log.info("run.cancel_requested run_id=%s", lease.run_id)
        return answer.cancel_requested

    return forward


class IdleWatch:
    """The idle phases' `on_idle`: a progress report per tick; `reason`/`cancelled` say why the
    phase was ended early (lease lost, cancelled by the server)."""

    def __init__(self, client: ApiClient, lease: Lease, tick_s: float) -> None:
        self.client = client
        self.lease = lease
        self.tick_s = tick_s
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
            answer = self.client.progress(self.lease.run_id, request)
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
