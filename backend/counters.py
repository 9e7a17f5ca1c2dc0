"""Counters the worker keeps in Redis (one hash, `COUNTERS_KEY`, so every worker process adds to
the same figure); backend.metrics serves them at /metrics. Apart from the metrics router so the
worker counts without importing FastAPI and prometheus_client (tests/backend/test_startup_imports.py)."""

from functools import lru_cache

import redis

from backend.config import get_settings
from backend.logs import log

COUNTERS_KEY = "iowatt:metrics:counters"


@lru_cache
def counters_redis(url: str) -> redis.Redis:
    # short timeouts: a counter is best-effort, a scrape must not hang on a dead Redis
    return redis.Redis.from_url(url, socket_timeout=1, socket_connect_timeout=1)


def count(name: str, label: str, n: int = 1) -> None:
    """Add n to the shared counter `name{label}` (worker side); never raises."""
    try:
        counters_redis(get_settings().redis_url).hincrby(COUNTERS_KEY, f"{name}|{label}", n)
    except (redis.RedisError, OSError) as exc:
        log.warning("metrics.count_failed", counter=name, error=str(exc).splitlines()[0][:200])
