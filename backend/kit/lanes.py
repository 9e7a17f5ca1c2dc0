"""Two lanes for the API's requests: the control lane served at once, the bulk lane admitted a few at a
time per API process (docs/adr/0056-the-control-lane-ahead-of-page-reads.md).

Every route says which lane it is in where it is declared, with one of two dependencies: `CONTROL`
(the agents' protocol, the writes that put work on the queue or take it off, /health,
/health/live, /metrics) or `BULK` (everything else: users' page reads above all). A router whose
routes are all of one lane declares it once (`APIRouter(dependencies=[BULK])`); a router with
both declares it per route. tests/backend/test_lanes.py fails on a route with no lane or two, and
on an agent's route in the bulk lane.

The bulk lane: at most `IOWATT_BULK_CONCURRENCY` bulk requests of one API process run at a time
(0: no limit). The others wait first come, first served, on the event loop: no thread, no database
session, no pooled connection, until a running one ends and hands its slot on. At most
`IOWATT_BULK_QUEUE` wait, each at most `IOWATT_BULK_WAIT_S`; past either bound the request is shed:
503 `overloaded` with Retry-After, never a hang. A control request never waits here.

What a slot covers: from the request's admission (its body read, before its other dependencies:
authentication, the session) to its endpoint's return and its unit of work's commit (`scope =
"function"`), not the sending of the body: every streamed answer here (a team's export, an
imported file) is made before it is sent, and a slow reader must not hold a slot for minutes. A
route that waits for another process's work (a review's PDF while Chromium prints) hands its slot on
first (`hand_back`); one that receives an upload does it outside its slot (`outside`).
"""

import asyncio
import math
import threading
import time
import weakref
from collections import deque
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from enum import StrEnum

from fastapi import Depends, Request

from backend.config import get_settings
from backend.errors import AppError


class Lane(StrEnum):
    CONTROL = "control"
    BULK = "bulk"


class Overloaded(AppError):
    """503 with Retry-After: the bulk lane's queue is full, or the request waited its bound."""

    status_code = 503
    code = "overloaded"

    def __init__(self, *, reason: str, retry_after_s: int, waited_s: float) -> None:
        why = (
            f"{reason.replace('_', ' ')}: the server is serving other requests first"
            if reason == "queue_full"
            else f"waited {waited_s:.1f} s for its turn"
        )
        super().__init__(
            f"the server is busy ({why}); nothing was done: try again in {retry_after_s} s",
            detail={"lane": Lane.BULK.value, "reason": reason, "retry_after_s": retry_after_s},
            headers={"Retry-After": str(retry_after_s)},
        )


class ClientGone(AppError):
    """499 (nginx's "client closed request"): the client went away while its request waited for a
    slot. Nobody reads it; the log and the metrics do, and a 4xx raises no 5xx alert."""

    status_code = 499
    code = "client_closed_request"


# what backend.metrics counts (registered there: this module imports no metrics); each gets the
# event's figures: ("waiting", n) the requests waiting now; ("running", n) those in progress;
# ("admitted", seconds waited); ("shed", reason: queue_full, wait_timeout, client_gone)
Observer = Callable[[str, float | str], None]
_observers: list[Observer] = []


def observe(callback: Observer) -> None:
    _observers.append(callback)


def _emit(event: str, value: float | str) -> None:
    for callback in _observers:
        callback(event, value)


@dataclass
class BulkGate:
    """The bulk lane of one event loop (one API process). Not thread-safe: used on its loop only."""

    limit: int  # requests in progress at most; 0: no limit
    max_waiting: int
    max_wait_s: float
    running: int = 0
    queue: deque[asyncio.Future[None]] = field(default_factory=deque)

    @property
    def waiting(self) -> int:
        return len(self.queue)

    async def enter(self) -> float:
        """Wait for a slot (first come, first served); the seconds waited. Raises Overloaded."""
        if self.limit <= 0:
            return 0.0
        if self.running < self.limit and not self.queue:
            self.running += 1
            _emit("running", self.running)
            return 0.0
        if len(self.queue) >= self.max_waiting:
            _emit("shed", "queue_full")
            raise Overloaded(reason="queue_full", retry_after_s=self._retry_after_s(), waited_s=0.0)
        started = time.monotonic()
        turn: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.queue.append(turn)
        _emit("waiting", len(self.queue))
        try:
            await asyncio.wait_for(asyncio.shield(turn), timeout=self.max_wait_s)
        except TimeoutError:
            if not turn.done():
                turn.cancel()
                self.queue.remove(turn)
                _emit("waiting", len(self.queue))
                _emit("shed", "wait_timeout")
                waited = time.monotonic() - started
                raise Overloaded(
                    reason="wait_timeout", retry_after_s=self._retry_after_s(), waited_s=waited
                ) from None
            # handed a slot as its wait ended: it runs
        except asyncio.CancelledError:  # the request went away while it waited
            if turn.done():
                self.exit()  # it had just been handed a slot: the next one gets it
            else:
                turn.cancel()
                self.queue.remove(turn)
                _emit("waiting", len(self.queue))
            raise
        return time.monotonic() - started

    def exit(self) -> None:
        """The request ended: its slot goes to the longest waiting request, else back."""
        if self.limit <= 0:
            return
        if self.queue:
            self.queue.popleft().set_result(None)  # the slot passes on: `running` stays
            _emit("waiting", len(self.queue))
            return
        self.running -= 1
        _emit("running", self.running)

    def _retry_after_s(self) -> int:
        # about as long as the queue ahead takes to drain at the bound's pace, at least 1 s
        return max(1, min(60, math.ceil(self.max_wait_s / 2)))


_gates: "weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, BulkGate]" = weakref.WeakKeyDictionary()


def gate() -> BulkGate:
    """This event loop's (this API process's) bulk lane, made from the settings on first use."""
    loop = asyncio.get_running_loop()
    found = _gates.get(loop)
    if found is None:
        s = get_settings()
        found = _gates[loop] = BulkGate(
            limit=s.bulk_concurrency, max_waiting=s.bulk_queue, max_wait_s=s.bulk_wait_s
        )
    return found


async def control_lane() -> None:
    """The route is in the control lane: it never waits for the bulk lane."""


async def bulk_lane(request: Request) -> AsyncGenerator[None, None]:
    """The route is in the bulk lane: it runs once it has one of the process's bulk slots. A read
    whose client went away while it waited is not run (a user who left the page): its slot goes on.
    Only a GET or HEAD is asked: asking reads the next message of the request, which for another
    method may be its body's first chunk that the route has not read yet (POST /imports streams it)."""
    g = gate()
    waited = await g.enter()
    held = _Held(g, asyncio.get_running_loop())
    try:
        if waited > 0 and request.method in ("GET", "HEAD") and await request.is_disconnected():
            _emit("shed", "client_gone")
            raise ClientGone("the client went away while the request waited for its turn")
        _emit("admitted", waited)
        request.state.bulk_slot = held
        yield
    finally:
        held.release()


class _Held:
    """A bulk request's slot, given back once: by `hand_back`, `outside` or at the request's end."""

    def __init__(self, g: BulkGate, loop: asyncio.AbstractEventLoop) -> None:
        self._gate: BulkGate | None = g
        self._loop = loop
        self._lock = threading.Lock()

    @property
    def holding(self) -> bool:
        return self._gate is not None

    async def take_again(self) -> None:
        """On the loop: a slot again, in turn behind the requests waiting (Overloaded past the
        bounds); the request's end gives it back."""
        g = gate()
        waited = await g.enter()
        _emit("admitted", waited)
        with self._lock:
            self._gate = g

    def release(self) -> None:
        with self._lock:
            g, self._gate = self._gate, None
        if g is None:
            return
        try:
            on_loop = asyncio.get_running_loop() is self._loop
        except RuntimeError:  # a sync route's thread
            on_loop = False
        if on_loop:
            g.exit()
        else:  # the gate is the loop's alone (not thread-safe): its next turn is handed on there
            self._loop.call_soon_threadsafe(g.exit)


@asynccontextmanager
async def outside(request: Request) -> AsyncIterator[None]:
    """A bulk route's part that needs no slot, on the event loop: receiving an upload's body (an
    import of tens of MiB from a slow link takes minutes, and two held both of a process's slots).
    The slot goes to the next request meanwhile and is taken again after, in turn (so a busy server
    can still answer 503 `overloaded` once the body is in: nothing was stored). Not again if the
    part raised: the request is ending. A no-op for a request that holds no slot."""
    held = getattr(request.state, "bulk_slot", None)
    if not isinstance(held, _Held) or not held.holding:
        yield
        return
    held.release()
    yield
    await held.take_again()


def hand_back(request: Request) -> None:
    """A bulk route about to wait for work outside this process (Chromium printing a review's PDF,
    seconds of another process's CPU) gives its slot to the next waiting request first: the slots
    bound what this process works on, and two prints held both, so every page read of the process
    waited for them. Idempotent; from the route's thread or the event loop; a no-op in the control
    lane."""
    held = getattr(request.state, "bulk_slot", None)
    if isinstance(held, _Held):
        held.release()


CONTROL = Depends(control_lane)
BULK = Depends(bulk_lane, scope="function")
LANE_OF = {control_lane: Lane.CONTROL, bulk_lane: Lane.BULK}
