"""Wake an agent's long-poll through Redis (a list per agent: LPUSH by whoever changed the agent's
work or standing, BLPOP by the API's long-poll). See docs/adr/0002-long-poll-wake.md.

The long-poll waits with asyncio (`wait_async`, one async Redis client per event loop): a waiting
agent costs a socket and a coroutine, not a worker thread.
"""

import asyncio
import uuid
from functools import lru_cache
from typing import Any

import redis
import redis.asyncio as aioredis
from sqlalchemy import event
from sqlalchemy.orm import Session

from backend.config import get_settings
from backend.logs import log

_TTL_S = 120
_SESSION_KEY = "iowatt_wake"


@lru_cache
def get_redis() -> redis.Redis:
    return redis.Redis.from_url(get_settings().redis_url, socket_timeout=None, socket_connect_timeout=3)


# (event loop, url) -> client; the loop is held so a recycled id() can never match a dead loop
_async_clients: dict[int, tuple[asyncio.AbstractEventLoop, str, aioredis.Redis]] = {}


def _async_redis() -> aioredis.Redis:
    loop = asyncio.get_running_loop()
    url = get_settings().redis_url
    entry = _async_clients.get(id(loop))
    if entry is None or entry[0] is not loop or entry[1] != url:
        client: aioredis.Redis = aioredis.Redis.from_url(url, socket_timeout=None, socket_connect_timeout=3)
        _async_clients[id(loop)] = (loop, url, client)
        return client
    return entry[2]


def _key(agent_id: uuid.UUID) -> str:
    return f"iowatt:agent:{agent_id}:wake"


def wake(agent_id: uuid.UUID) -> None:
    r = get_redis()
    pipe = r.pipeline()
    pipe.lpush(_key(agent_id), "1")
    pipe.ltrim(_key(agent_id), 0, 0)
    pipe.expire(_key(agent_id), _TTL_S)
    pipe.execute()  # type: ignore[no-untyped-call]


def wake_after_commit(session: Session, agent_id: uuid.UUID) -> None:
    """Wake the agent once this transaction commits (dropped on rollback), as backend.jobs does
    for tasks: the woken long-poll must see what the transaction wrote."""
    session.info.setdefault(_SESSION_KEY, set()).add(agent_id)


@event.listens_for(Session, "after_commit")
def _wake_after_commit(session: Session) -> None:
    for agent_id in session.info.pop(_SESSION_KEY, set()):
        try:
            wake(agent_id)
        except redis.RedisError as exc:  # the long-poll still ends at its deadline
            log.warning("agent.wake_failed", agent_id=str(agent_id), error=str(exc)[:200])


@event.listens_for(Session, "after_soft_rollback")
def _drop_after_rollback(session: Session, previous_transaction: Any) -> None:
    if previous_transaction.parent is None:
        session.info.pop(_SESSION_KEY, None)


def wait(agent_id: uuid.UUID, timeout_s: float) -> bool:
    """Block up to timeout_s for a wake-up (threads outside the API); True when one arrived."""
    if timeout_s <= 0:
        return False
    return get_redis().blpop([_key(agent_id)], timeout=max(1, int(timeout_s))) is not None


async def wait_async(agent_id: uuid.UUID, timeout_s: float) -> bool:
    """Wait up to timeout_s for a wake-up without holding a thread; True when one arrived.

    Without Redis the wait degrades to a short sleep, so the caller polls the database instead."""
    if timeout_s <= 0:
        return False
    try:
        # BLPOP's timeout 0 means forever: never send it; Redis >= 6 takes fractions of seconds
        got = await _async_redis().blpop([_key(agent_id)], timeout=max(0.01, timeout_s))  # type: ignore[misc,arg-type]
    except (redis.RedisError, OSError) as exc:
        log.warning("agent.wait_failed", agent_id=str(agent_id), error=str(exc)[:200])
        await asyncio.sleep(min(timeout_s, 2.0))
        return False
    return got is not None
