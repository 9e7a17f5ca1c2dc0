"""Wake an agent's long-poll through Redis pub/sub (docs/adr/0002-long-poll-wake.md, 0016).

Whoever changes an agent's work or standing (the dispatcher assigning a run, an admin revoking
the agent, a replacing enrolment) publishes on `iowatt:wake:<agent id>` after its commit. Each API
process keeps ONE pattern subscription per event loop (`_Hub`) and sets the asyncio events of the
long-polls waiting for that agent: a waiting agent costs a coroutine and its client socket, not a
worker thread nor a Redis connection of its own.

A long-poll registers its event *before* it looks in the database, so a wake-up published between
the look and the wait is never lost. A wake-up reaches every waiter of the agent. Publishing is
best-effort (Redis down at the publisher's commit loses it), so every `RECHECK_S` each process
asks the database, in ONE query for all its waiting polls, which of their agents have a run
assigned or were revoked, and wakes those (`backend.agent.service`): a lost wake-up delays a lease
by at most `RECHECK_S`, at the cost of one query per process instead of one look per waiting
agent. While the subscription is down (Redis restarting) waits are cut to `_DEGRADED_WAIT_S`.

One agent runs one long-poll at a time, so a new poll of an agent *supersedes* the older ones:
they end at once with no lease and never look again. The waiting poll of an agent process that
died (its client gone, the server unaware) would otherwise take the next lease meant for the
restarted process (measured: the first run after a restart started ~22 s late). Across API
processes (`backend.serve` runs several) a new poll takes the agent's next *generation* from Redis
(`INCR iowatt:poll-gen:<agent id>`) and publishes it on `iowatt:poll:<agent id>` in the same
script, so every process sees the generations in the order they were taken and ends its waiters
of an older one. Within a process the older waiters end at once, Redis or not.
"""

import asyncio
import contextlib
import uuid
from collections.abc import AsyncIterator, Iterable
from functools import lru_cache
from typing import Any

import redis
import redis.asyncio as aioredis
from sqlalchemy import event
from sqlalchemy.orm import Session

from backend.config import get_settings
from backend.logs import log

CHANNEL_PREFIX = "iowatt:wake:"
POLL_PREFIX = "iowatt:poll:"
GENERATION_PREFIX = "iowatt:poll-gen:"
GENERATION_TTL_S = 7 * 86400  # an agent that never polls again leaves no key behind for long
_SESSION_KEY = "iowatt_wake"
_DEGRADED_WAIT_S = 2.0
RECHECK_S = 5.0  # a wake-up lost anyway is noticed within this (one query per process)
_READY_WAIT_S = 2.0
_ANNOUNCE_TIMEOUT_S = 1.0

# the generation is taken and published in one atomic step: the publish order is the INCR order
_NEW_POLL = """
local g = redis.call('INCR', KEYS[1])
redis.call('EXPIRE', KEYS[1], ARGV[2])
redis.call('PUBLISH', ARGV[1], g)
return g
"""


@lru_cache
def get_redis() -> redis.Redis:
    return redis.Redis.from_url(get_settings().redis_url, socket_timeout=None, socket_connect_timeout=3)


def _channel(agent_id: uuid.UUID) -> str:
    return f"{CHANNEL_PREFIX}{agent_id}"


def wake(agent_id: uuid.UUID) -> None:
    """Wake the agent's waiting long-polls in every API process (call after the commit)."""
    get_redis().publish(_channel(agent_id), "1")


def wake_best_effort(agent_id: uuid.UUID) -> bool:
    """wake() that logs a warning instead of raising when Redis is unreachable (after a commit the
    caller must not fail: the periodic re-check finds the work within RECHECK_S)."""
    try:
        wake(agent_id)
    except (redis.RedisError, OSError) as exc:
        log.warning("agent.wake_failed", agent_id=str(agent_id), error=str(exc).splitlines()[0][:200])
        return False
    return True


def wake_after_commit(session: Session, agent_id: uuid.UUID) -> None:
    """Wake the agent once this transaction commits (dropped on rollback), as backend.jobs does
    for tasks: the woken long-poll must see what the transaction wrote."""
    session.info.setdefault(_SESSION_KEY, set()).add(agent_id)


@event.listens_for(Session, "after_commit")
def _wake_after_commit(session: Session) -> None:
    for agent_id in session.info.pop(_SESSION_KEY, set()):
        wake_best_effort(agent_id)


@event.listens_for(Session, "after_soft_rollback")
def _drop_after_rollback(session: Session, previous_transaction: Any) -> None:
    if previous_transaction.parent is None:
        session.info.pop(_SESSION_KEY, None)


class Waiter:
    """One long-poll's wake-up: registered for its agent until the long-poll ends."""

    def __init__(self, hub: "_Hub") -> None:
        self._hub = hub
        self.event = asyncio.Event()
        self.superseded = False
        self.generation: int | None = None  # None while it is being taken from Redis
        self.newest_seen = 0  # the newest generation announced meanwhile
        self.key = ""  # its agent's (listen)

    def supersede(self) -> None:
        """A newer poll of the same agent started: this one ends without looking again."""
        self.superseded = True
        self.event.set()

    def announced(self, generation: int) -> None:
        """A poll of this agent (in any process) took `generation`."""
        if self.generation is None:
            self.newest_seen = max(self.newest_seen, generation)
        elif generation > self.generation:
            self.supersede()

    async def announce(self) -> None:
        """This poll supersedes the agent's older ones: those waiting in this process end now,
        those in other processes when the generation it takes reaches them (no subscription, no
        Redis: only this process's are known)."""
        for old in self._hub.waiters.get(self.key, ()):
            if old is not self:
                old.supersede()
        self.own(await self._hub.generation(self.key) if self._hub.ready.is_set() else 0)

    def own(self, generation: int) -> None:
        """This poll's generation (0: Redis unreachable, so any announced one is newer)."""
        self.generation = generation
        if self.newest_seen > generation:
            self.supersede()

    async def wait(self, timeout_s: float) -> bool:
        """Up to timeout_s (at most _DEGRADED_WAIT_S while the subscription is down); True when
        woken."""
        if timeout_s <= 0 or self.superseded:
            return False
        if not self._hub.ready.is_set():
            timeout_s = min(timeout_s, _DEGRADED_WAIT_S)
        try:
            await asyncio.wait_for(self.event.wait(), timeout_s)
        except TimeoutError:
            return False
        self.event.clear()
        return True


class _Hub:
    """One pattern subscription per event loop, fanning wake-ups out to the waiting long-polls."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.ready = asyncio.Event()
        self.waiters: dict[str, set[Waiter]] = {}
        self.commands: aioredis.Redis = aioredis.Redis.from_url(
            url, socket_connect_timeout=_ANNOUNCE_TIMEOUT_S, socket_timeout=_ANNOUNCE_TIMEOUT_S
        )
        self._new_poll = self.commands.register_script(_NEW_POLL)
        self.task = asyncio.get_running_loop().create_task(self._run(), name="iowatt-wake-hub")

    async def _run(self) -> None:
        while True:
            client: aioredis.Redis = aioredis.Redis.from_url(self.url, socket_connect_timeout=3)
            try:
                async with client.pubsub() as ps:
                    await ps.psubscribe(f"{CHANNEL_PREFIX}*", f"{POLL_PREFIX}*")
                    self.ready.set()
                    async for msg in ps.listen():
                        if msg.get("type") == "pmessage":
                            self._deliver(msg["channel"], msg["data"])
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # noqa: BLE001 - any failure: degrade to polling, then retry
                log.warning("agent.wake_hub_down", error=str(exc)[:200])
            finally:
                self.ready.clear()
                self._wake_all()  # let every long-poll look in the database now
                with contextlib.suppress(Exception):
                    await client.aclose()
            await asyncio.sleep(1.0)

    def _deliver(self, channel: bytes | str, data: bytes | str) -> None:
        name = channel.decode() if isinstance(channel, bytes) else channel
        if name.startswith(POLL_PREFIX):
            try:
                generation = int(data)
            except ValueError:
                return
            for w in list(self.waiters.get(name.removeprefix(POLL_PREFIX), ())):
                w.announced(generation)
            return
        for w in self.waiters.get(name.removeprefix(CHANNEL_PREFIX), ()):
            w.event.set()

    def _wake_all(self) -> None:
        for waiters in self.waiters.values():
            for w in waiters:
                w.event.set()

    def wake(self, agent_ids: Iterable[uuid.UUID]) -> None:
        """Wake this process's waiters of these agents (the periodic re-check's finds)."""
        for agent_id in agent_ids:
            for w in self.waiters.get(str(agent_id), ()):
                w.event.set()

    async def generation(self, key: str) -> int:
        """Take the agent's next poll generation and announce it to every API process; 0 when
        Redis is unreachable (supersession then stays within this process)."""
        try:
            return int(
                await self._new_poll(
                    keys=[f"{GENERATION_PREFIX}{key}"], args=[f"{POLL_PREFIX}{key}", GENERATION_TTL_S]
                )
            )
        except (redis.RedisError, OSError) as exc:
            log.warning("agent.poll_generation_failed", agent_id=key, error=str(exc).splitlines()[0][:200])
            return 0


# per event loop; the loop is held so a recycled id() never matches a dead loop
_hubs: dict[int, tuple[asyncio.AbstractEventLoop, _Hub]] = {}


def _hub() -> _Hub:
    loop = asyncio.get_running_loop()
    url = get_settings().redis_url
    entry = _hubs.get(id(loop))
    if entry is not None and entry[0] is loop and entry[1].url == url and not entry[1].task.done():
        return entry[1]
    if entry is not None and entry[0] is loop:
        entry[1].task.cancel()
    for key, (other, _) in list(_hubs.items()):
        if other.is_closed():
            del _hubs[key]
    hub = _Hub(url)
    _hubs[id(loop)] = (loop, hub)
    return hub


def current_hub() -> _Hub | None:
    """This event loop's hub when it is subscribed (None otherwise: waits are short then)."""
    entry = _hubs.get(id(asyncio.get_running_loop()))
    if entry is None or entry[0] is not asyncio.get_running_loop() or not entry[1].ready.is_set():
        return None
    return entry[1]


def waiting_agents(hub: _Hub) -> list[uuid.UUID]:
    """The agents with a long-poll waiting in this process."""
    return [uuid.UUID(key) for key, waiters in hub.waiters.items() if waiters]


def polling_agents(hub: _Hub) -> list[uuid.UUID]:
    """The agents with a long-poll waiting in this process that its first look authenticated (it
    announced itself: `Waiter.announce`) and no newer poll superseded: the re-check stamps these
    alive (agent.service.stamp_waiting). A poll before its first look may be anyone's."""
    return [
        uuid.UUID(key)
        for key, waiters in hub.waiters.items()
        if any(w.generation is not None and not w.superseded for w in waiters)
    ]


@contextlib.asynccontextmanager
async def listen(agent_id: uuid.UUID, *, announce: bool = True) -> AsyncIterator[Waiter]:
    """Register a waiter for the agent's wake-ups for the duration of a long-poll; once announced
    (at once, or when the caller calls `announce` after authenticating the poll) the agent's older
    waiters in this process end at once, those in other processes once the generation this poll
    takes reaches them."""
    hub = _hub()
    if not hub.ready.is_set():  # the first long-poll of this process: let the subscription start
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(hub.ready.wait(), _READY_WAIT_S)
    w = Waiter(hub)
    key = str(agent_id)
    w.key = key
    hub.waiters.setdefault(key, set()).add(w)
    try:
        if announce:
            await w.announce()
        yield w
    finally:
        waiters = hub.waiters.get(key)
        if waiters is not None:
            waiters.discard(w)
            if not waiters:
                del hub.waiters[key]
