"""Wake an agent's long-poll through Redis (a list per agent: LPUSH by the dispatcher, BLPOP by the API)."""

import uuid
from functools import lru_cache

import redis

from backend.config import get_settings

_TTL_S = 120


@lru_cache
def get_redis() -> redis.Redis:
    return redis.Redis.from_url(get_settings().redis_url, socket_timeout=None, socket_connect_timeout=3)


def _key(agent_id: uuid.UUID) -> str:
    return f"iowatt:agent:{agent_id}:wake"


def wake(agent_id: uuid.UUID) -> None:
    r = get_redis()
    pipe = r.pipeline()
    pipe.lpush(_key(agent_id), "1")
    pipe.ltrim(_key(agent_id), 0, 0)
    pipe.expire(_key(agent_id), _TTL_S)
    pipe.execute()  # type: ignore[no-untyped-call]


def wait(agent_id: uuid.UUID, timeout_s: float) -> bool:
    """Block up to timeout_s for a wake-up; True when one arrived."""
    if timeout_s <= 0:
        return False
    return get_redis().blpop([_key(agent_id)], timeout=max(1, int(timeout_s))) is not None
