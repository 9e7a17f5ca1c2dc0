"""A group run's member: meet the other agents at the server's start barrier (ADR 0038).

The member has prepared as any run (plan, start, idle baseline). Before its engine starts it
re-measures its clock against the server's (a burst of heartbeat exchanges, clock.py), reports
ready with the best sample and long-polls until the server answers the group's start instant
(server time) or that the group stopped. It converts the instant to its own clock with the
measured offset, sleeps on the monotonic clock until just before it and spins the last
milliseconds, then the engine starts; the instant it started is reported afterwards
(`POST /runs/{id}/started`), and the server records the member's skew from it.

Only HTTP requests the agent makes: no port is opened on the measured host.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from datetime import datetime

from . import clock
from .client import ApiClient, ApiError, Conflict, NotFound
from .schemas import ClockSample, Lease, ReadyRequest, StartedRequest
from .status import AgentStatus

log = logging.getLogger("iowatt_agent.group")

BURST = 4  # clock exchanges before reporting ready (the smallest round trip of them is kept)
SPIN_NS = 2_000_000  # the last 2 ms before the instant are spun, not slept (a sleep overshoots)
MAX_UNREACHABLE_S = 60.0  # the barrier is given up when the server cannot be reached this long
# the server sets the instant a few hundred milliseconds ahead (at most 2 s plus the answer's way
# here); one further away is refused rather than held: the host is not kept waiting by a server
MAX_START_AHEAD_S = 30.0
# the longest a member waits at the barrier for the others, whatever the server answers: a server
# that keeps saying "not yet" does not hold the host. The group's prepare timeout (in the lease,
# from what the members lay out) plus BARRIER_SLACK_S when the server sends it, else 600 s
MAX_BARRIER_S = 600.0
BARRIER_SLACK_S = 60.0


def barrier_limit_s(prepare_timeout_s: float | None) -> float:
    return MAX_BARRIER_S if prepare_timeout_s is None else prepare_timeout_s + BARRIER_SLACK_S


class GroupStart:
    """`wait()` before the engine starts (False: do not start; `stop_reason` says why), then
    `report(started_at)` with the instant the engine started."""

    def __init__(
        self,
        lease: Lease,
        *,
        client: ApiClient,
        status: AgentStatus,
        exchange: Callable[[], None],
        stop: threading.Event,
        wait_s: float = 25.0,
        max_barrier_s: float = MAX_BARRIER_S,
    ) -> None:
        self.lease = lease
        self.client = client
        self.status = status
        self.exchange = exchange
        self.stop = stop
        self.wait_s = wait_s
        self.max_barrier_s = max_barrier_s
        self.stop_reason: str | None = None
        self.cancelled = False  # the group stopped (not this agent): the member is cancelled
        self.start_at: datetime | None = None
        self.offset_ns = 0

    def _burst(self) -> ClockSample | None:
        for _ in range(BURST):
            try:
                self.exchange()
            except ApiError as exc:
                log.warning("group.clock_exchange_failed run_id=%s error=%s", self.lease.run_id, exc)
        best = self.status.clock.best()
        if best is None:
            return None
        self.offset_ns = best.offset_ns
        return ClockSample(offset_ns=best.offset_ns, round_trip_ns=best.round_trip_ns)

    def wait(self) -> bool:
        run_id = self.lease.run_id
        sample = self._burst()
        request = ReadyRequest(lease_id=self.lease.lease_id, clock=sample)
        log.info(
            "group.ready run_id=%s offset_ns=%s round_trip_ns=%s",
            run_id,
            sample.offset_ns if sample else None,
            sample.round_trip_ns if sample else None,
        )
        unreachable_since: float | None = None
        waiting_since = time.monotonic()
        while self.start_at is None:
            if self.stop.is_set():
                self.stop_reason = "agent stopped at the group's start barrier"
                return False
            if time.monotonic() - waiting_since > self.max_barrier_s:
                self.stop_reason = (
                    f"no start instant from the server in {self.max_barrier_s:g} s at the group's "
                    "start barrier: not started"
                )
                return False
            try:
                answer = self.client.ready(run_id, request, self.wait_s)
                unreachable_since = None
            except (Conflict, NotFound) as exc:
                self.stop_reason = f"the server ended the run at the group's start barrier: {exc}"
                return False
            except ApiError as exc:
                now = time.monotonic()
                unreachable_since = unreachable_since or now
                if now - unreachable_since > MAX_UNREACHABLE_S:
                    self.stop_reason = f"the server was unreachable at the group's start barrier: {exc}"
                    return False
                log.warning("group.ready_failed run_id=%s error=%s: asking again", run_id, exc)
                self.stop.wait(1.0)
                continue
            if answer.stop is not None:
                self.stop_reason, self.cancelled = f"the group stopped: {answer.stop}", True
                return False
            self.start_at = answer.start_at
        local_ns = clock.to_ns(self.start_at) - self.offset_ns
        ahead_s = (local_ns - time.time_ns()) / 1e9
        if ahead_s > MAX_START_AHEAD_S:
            self.stop_reason = (
                f"the server's start instant is {ahead_s:.0f} s away (at most {MAX_START_AHEAD_S:g} s is "
                "waited for): not started"
            )
            return False
        if not sleep_until(local_ns, self.stop):
            self.stop_reason = "agent stopped at the group's start barrier"
            return False
        return True

    def report(self, started_at: datetime) -> None:
        """The instant the engine started (this agent's clock); best effort."""
        try:
            self.client.started(
                self.lease.run_id, StartedRequest(lease_id=self.lease.lease_id, started_at=started_at)
            )
        except ApiError as exc:
            log.warning("group.started_not_reported run_id=%s error=%s", self.lease.run_id, exc)


def sleep_until(realtime_ns: int, stop: threading.Event) -> bool:
    """Until this host's clock reads `realtime_ns`, measured on the monotonic clock (a clock
    step meanwhile does not move the instant); False when `stop` was set meanwhile."""
    target = time.monotonic_ns() + (realtime_ns - time.time_ns())
    while True:
        left = target - time.monotonic_ns()
        if left <= 0:
            return not stop.is_set()
        if left > SPIN_NS:
            if stop.wait((left - SPIN_NS) / 1e9):
                return False
        elif stop.is_set():
            return False
