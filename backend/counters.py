"""Counters the worker keeps in Redis (one hash, `COUNTERS_KEY`, so every worker process adds to
the same figure); backend.metrics serves them at /metrics. Apart from the metrics router so the
worker counts without importing FastAPI and prometheus_client (tests/backend/test_startup_imports.py).
Also the API's ingest count (`ingested`): rows a request stored, counted when its transaction commits."""

from collections.abc import Callable
from functools import lru_cache

import redis
from sqlalchemy import event
from sqlalchemy.orm import Session

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


# --- what the API stored (ingest), counted once the request's transaction commits ----------------

INGEST_KEY = "iowatt_ingested"  # session.info: kind -> rows written in this transaction
IngestHook = Callable[[str, int], None]
_ingest_hook: IngestHook | None = None


def on_ingest(hook: IngestHook | None) -> None:
    """backend.metrics sets the API process's counter here (the worker sets none: what it writes is
    derived data, and it imports no prometheus_client)."""
    global _ingest_hook
    _ingest_hook = hook


def ingested(session: Session, kind: str, n: int = 1) -> None:
    """Note n rows of `kind` written in `session`'s transaction: counted (iowatt_ingested_total)
    when it commits, never when it rolls back."""
    if n > 0:
        pending: dict[str, int] = session.info.setdefault(INGEST_KEY, {})
        pending[kind] = pending.get(kind, 0) + n


@event.listens_for(Session, "after_commit")
def _count_committed(session: Session) -> None:
    pending = session.info.pop(INGEST_KEY, None)
    if pending and _ingest_hook is not None:
        for kind, n in pending.items():
            _ingest_hook(kind, n)


@event.listens_for(Session, "after_rollback")
def _drop_rolled_back(session: Session) -> None:
    session.info.pop(INGEST_KEY, None)
