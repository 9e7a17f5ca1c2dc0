"""Login throttle: failed logins counted per account and per client address (ADR 0010).

State lives in Redis (`INCR` + `EXPIRE` on a fixed window per key), so every API process sees the
same counts and nothing is written to PostgreSQL by a failed login (whose transaction is rolled
back anyway). When Redis cannot be reached the counts fall back to this process's memory: login
keeps working, still throttled per process, and never answers 500 because of Redis.
"""

import hashlib
import math
import threading
import time
from dataclasses import dataclass
from functools import lru_cache

import redis

from backend.config import get_settings
from backend.logs import log

_PREFIX = "iowatt:login-fail"


def get_redis() -> redis.Redis:
    return _client(get_settings().redis_url)


@lru_cache
def _client(url: str) -> redis.Redis:
    # short timeouts: a Redis that hangs slows a login by a second, then the fallback counts
    return redis.Redis.from_url(url, socket_timeout=1, socket_connect_timeout=1)


@dataclass(frozen=True)
class Blocked:
    retry_after_s: int
    scope: str  # "account" | "client"


def _keys(email: str, client: str) -> list[tuple[str, str, int]]:
    s = get_settings()
    account = hashlib.sha256(email.strip().lower().encode()).hexdigest()[:32]
    return [
        (f"{_PREFIX}:account:{account}", "account", s.login_max_failures_per_account),
        (f"{_PREFIX}:client:{client}", "client", s.login_max_failures_per_client),
    ]


class _Memory:
    """Fallback counts for a Redis outage: {key: (count, window_end_monotonic)}."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._counts: dict[str, tuple[int, float]] = {}

    def get(self, key: str) -> tuple[int, float]:
        with self._lock:
            n, end = self._counts.get(key, (0, 0.0))
            if end <= time.monotonic():
                self._counts.pop(key, None)
                return 0, 0.0
            return n, end - time.monotonic()

    def incr(self, key: str, window_s: int) -> None:
        now = time.monotonic()
        with self._lock:
            if len(self._counts) > 100_000:  # bounded: drop expired windows, then the oldest
                self._counts = {k: v for k, v in self._counts.items() if v[1] > now}
                while len(self._counts) > 100_000:
                    self._counts.pop(next(iter(self._counts)))
            n, end = self._counts.get(key, (0, 0.0))
            if end <= now:
                n, end = 0, now + window_s
            self._counts[key] = (n + 1, end)

    def delete(self, key: str) -> None:
        with self._lock:
            self._counts.pop(key, None)


_memory = _Memory()


def _redis_down(exc: Exception) -> None:
    log.warning("login_throttle.redis_unavailable", error=str(exc).splitlines()[0][:200])


def check(email: str, client: str) -> Blocked | None:
    """A block when the account or the client has used up its failures in the current window."""
    keys = _keys(email, client)
    try:
        r = get_redis()
        pipe = r.pipeline()
        for key, _, _ in keys:
            pipe.get(key)
            pipe.pttl(key)
        res = pipe.execute()
        state = [(int(res[2 * i] or 0), max(0, int(res[2 * i + 1])) / 1000) for i in range(len(keys))]
    except (redis.RedisError, OSError) as exc:
        _redis_down(exc)
        state = [_memory.get(key) for key, _, _ in keys]
    for (_, scope, limit), (count, ttl_s) in zip(keys, state, strict=True):
        if count >= limit:
            return Blocked(retry_after_s=max(1, math.ceil(ttl_s)), scope=scope)
    return None


def record_failure(email: str, client: str) -> None:
    window = get_settings().login_window_s
    keys = _keys(email, client)
    try:
        pipe = get_redis().pipeline()
        for key, _, _ in keys:
            pipe.set(key, 0, ex=window, nx=True)  # the window starts at the first failure
            pipe.incr(key)
        pipe.execute()
    except (redis.RedisError, OSError) as exc:
        _redis_down(exc)
        for key, _, _ in keys:
            _memory.incr(key, window)


def record_success(email: str, client: str) -> None:
    """A successful login clears the account's failures (the client's stay: one address trying
    many accounts is still throttled)."""
    key = _keys(email, client)[0][0]
    _memory.delete(key)
    try:
        get_redis().delete(key)
    except (redis.RedisError, OSError) as exc:
        _redis_down(exc)


def hit(kind: str, key: str, *, limit: int, window_s: int) -> Blocked | None:
    """Count one request of `kind` by `key` (a client address) in a fixed window; a block once more
    than `limit` came in the window. For anonymous requests that cost the server something (a
    password reset mail): the same Redis, with the same per-process fallback, as the login counts."""
    name = f"iowatt:rate:{kind}:{hashlib.sha256(key.encode()).hexdigest()[:32]}"
    try:
        pipe = get_redis().pipeline()
        pipe.set(name, 0, ex=window_s, nx=True)
        pipe.incr(name)
        pipe.pttl(name)
        _, count, ttl_ms = pipe.execute()
        count, ttl_s = int(count), max(0, int(ttl_ms)) / 1000
    except (redis.RedisError, OSError) as exc:
        _redis_down(exc)
        _memory.incr(name, window_s)
        count, ttl_s = _memory.get(name)
    if count > limit:
        return Blocked(retry_after_s=max(1, math.ceil(ttl_s)), scope="client")
    return None
