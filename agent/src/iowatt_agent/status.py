"""What the agent's threads share: the worker thread (`loop.AgentLoop`) writes the state, run and
lease it is at; the heartbeat thread (`heartbeat.Heartbeat`) reads them for the server, adopts the
server's heartbeat interval and puts a rotated token in `config`; either may make the agent
fatal. Both depend on this object and neither on the other."""

from __future__ import annotations

import logging
import threading
import uuid
from uuid import UUID

from .clock import ClockFilter
from .credentials import AgentConfig
from .schemas import AgentState

log = logging.getLogger("iowatt_agent.loop")

# A lease long-poll's wait until the server names one (`LeaseResponse.poll_wait_s`; an older server
# never does), and the bounds a named wait is held to (a server's answer is not trusted further:
# the request's own timeout is the wait plus 15 s).
DEFAULT_POLL_WAIT_S = 25.0
POLL_WAIT_BOUNDS_S = (1.0, 300.0)


class AgentStatus:
    def __init__(self, config: AgentConfig) -> None:
        self.config = config  # replaced (under token_lock) when the token is rotated
        self.heartbeat_interval_s = config.heartbeat_interval_s  # the server's, once it says one
        self.poll_wait_s = DEFAULT_POLL_WAIT_S  # the lease long-poll's wait: the server's, once it names one
        # made once per agent process: the server tells a restarted agent from the one that
        # started a run (heartbeats and lease requests carry it)
        self.boot_id = uuid.uuid4()
        self.draining = threading.Event()  # no new lease (a signal, a refusal)
        self.stopping = threading.Event()  # the threads end
        self.lock = threading.Lock()  # busy and draining change together
        self.token_lock = threading.Lock()  # one rotation at a time (heartbeat thread, drain)
        self.busy = False
        self.current_run_id: UUID | None = None
        self.current_lease_id: UUID | None = None  # from taking a lease to its run's end
        self.fatal: str | None = None  # why the server no longer accepts this agent
        self.clock = ClockFilter()  # this host's clock against the server's (heartbeat exchanges)
        # requests of the agent's clients the server answered (`answered()`), and a wake-up for a
        # thread waiting on them or on the drain (`wait_answered`)
        self.answers = 0
        self._answered = threading.Condition()

    @property
    def state(self) -> AgentState:
        if self.draining.is_set():
            return "draining"
        return "busy" if self.busy else "idle"

    def set_fatal(self, message: str) -> None:
        """The server refused this agent: drain, and exit 3 (the first reason is kept)."""
        if self.fatal is None:
            self.fatal = message
            log.error("agent.fatal %s", message)
        self.drain()

    def drain(self) -> None:
        """No new lease: set `draining` and wake a `wait_answered`."""
        self.draining.set()
        with self._answered:
            self._answered.notify_all()

    def answered(self) -> None:
        """A request to the server got an answer below 400 (ApiClient.on_success)."""
        with self._answered:
            self.answers += 1
            self._answered.notify_all()

    def wait_answered(self, since: int, timeout_s: float) -> bool:
        """Wait up to `timeout_s` until a request answered after `since` (an earlier `answers`),
        or the drain; True when one was answered."""
        with self._answered:
            self._answered.wait_for(
                lambda: self.answers != since or self.draining.is_set(), timeout=timeout_s
            )
            return self.answers != since
