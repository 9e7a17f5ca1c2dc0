"""Wake an agent's long-poll through Redis pub/sub (docs/adr/0002-long-poll-wake.md).

Whoever changes an agent's work or standing (the dispatcher assigning a run, an admin revoking
the agent, a replacing enrolment) publishes on `iowatt:wake:<agent id>` after its commit. Each API
process keeps ONE pattern subscription per event loop (`_Hub`) and sets the asyncio events of the
long-polls waiting for that agent: a waiting agent costs a coroutine and its client socket, not a
worker thread nor a Redis connection of its own.

A long-poll registers its event *before* it looks in the database, so a wake-up published between
the look and the wait is never lost. A wake-up reaches every waiter of the agent. Waits are cut
to `RECHECK_S`, so a wake-up lost anyway (Redis down at the publisher's commit: publishing is
best-effort) delays a lease by a few seconds, not a whole long-poll; when the subscription is down
(Redis restarting) they are cut to `_DEGRADED_WAIT_S`.

One agent runs one long-poll at a time, so a new poll of an agent *supersedes* the ones still
waiting for it in this process: they end at once with no lease and never look again. The waiting
poll of an agent process that died (its client gone, the server unaware) would otherwise take
the next lease meant for the restarted process (issue 11: the first run after a restart started
~22 s late). `make up` and the compose file run one API process; with several, an older poll in
another process still ends at its deadline and wake-ups still reach every waiter.
"""

import asyncio
import contextlib
import uuid
from collections.abc import AsyncIterator
from functools import lru_cache
from typing import Any

import redis
import redis.asyncio as aioredis
from sqlalchemy import event
from sqlalchemy.orm import Session

from backend.config import get_settings
from backend.logs import log

CHANNEL_PREFIX = "iowatt:wake:"
_SESSION_KEY = "iowatt_wake"
_DEGRADED_WAIT_S = 2.0
RECHECK_S = 5.0
_READY_WAIT_S = 2.0


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
    caller must not fail: the long-poll's re-check finds the work within RECHECK_S)."""
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

    def supersede(self) -> None:
        """A newer poll of the same agent started: this one ends without looking again."""
        self.superseded = True
        self.event.set()

    async def wait(self, timeout_s: float) -> bool:
        """Up to timeout_s, at most RECHECK_S (a few seconds while the subscription is down);
        True when woken."""
        if timeout_s <= 0 or self.superseded:
            return False
        timeout_s = min(timeout_s, RECHECK_S if self._hub.ready.is_set() else _DEGRADED_WAIT_S)
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
        self.task = asyncio.get_running_loop().create_task(self._run(), name="iowatt-wake-hub")

    async def _run(self) -> None:
        while True:
            client: aioredis.Redis = aioredis.Redis.from_url(self.url, socket_connect_timeout=3)
            try:
                async with client.pubsub() as ps:
                    await ps.psubscribe(f"{CHANNEL_PREFIX}*")
                    self.ready.set()
                    async for msg in ps.listen():
                        if msg.get("type") == "pmessage":
                            self._deliver(msg["channel"])
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

    def _deliver(self, channel: bytes | str) -> None:
        name = channel.decode() if isinstance(channel, bytes) else channel
        for w in self.waiters.get(name.removeprefix(CHANNEL_PREFIX), ()):
            w.event.set()

    def _wake_all(self) -> None:
        for waiters in self.waiters.values():
            for w in waiters:
                w.event.set()


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


@contextlib.asynccontextmanager
async def listen(agent_id: uuid.UUID) -> AsyncIterator[Waiter]:
    """Register a waiter for the agent's wake-ups for the duration of a long-poll; the agent's
    older waiters in this process are superseded."""
    hub = _hub()
    if not hub.ready.is_set():  # the first long-poll of this process: let the subscription start
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(hub.ready.wait(), _READY_WAIT_S)
    w = Waiter(hub)
    key = str(agent_id)
    older = hub.waiters.setdefault(key, set())
    for old in older:
        old.supersede()
    older.add(w)
    try:
        yield w
    finally:
        waiters = hub.waiters.get(key)
        if waiters is not None:
            waiters.discard(w)
            if not waiters:
                del hub.waiters[key]
