"""Anonymous share routes throttled per client address, in Redis as the login throttle
(ADR 0010): one fixed window per client (`SET key 0 EX window NX` + `INCR`), 429 with Retry-After
past IOWATT_SHARE_REQUESTS_PER_MIN (backend/config.py) in WINDOW_S. The client is
backend.kit.http.client_address (X-Forwarded-For only from IOWATT_TRUSTED_PROXIES). Without Redis
the counts live in this process (bounded), so the routes stay throttled per process and never
answer 500 because of Redis.

What counts: /api/v1/shared/{token} and its exports, /s/{token} and its preview image, found or
not (guessing tokens is throttled too). The default, 120 a minute, is ample for people opening
links and for chat apps unfurling them, and turns a script recomputing views into a trickle; an
instance whose readers share one address (a NAT, a proxy not in IOWATT_TRUSTED_PROXIES) raises it."""

import math
import threading
import time

import redis
from fastapi import Request

from backend.auth.throttle import get_redis
from backend.config import get_settings
from backend.errors import TooManyRequests
from backend.kit.http import client_address
from backend.logs import log

WINDOW_S = 60  # the setting is per minute
_PREFIX = "iowatt:shared-rate"
_MEMORY_KEYS = 100_000


class _Memory:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._counts: dict[str, tuple[int, float]] = {}

    def hit(self, key: str) -> tuple[int, float]:
        """One more request: (count in the window, seconds left)."""
        now = time.monotonic()
        with self._lock:
            if len(self._counts) >= _MEMORY_KEYS:
                self._counts = {k: v for k, v in self._counts.items() if v[1] > now}
                while len(self._counts) >= _MEMORY_KEYS:
                    self._counts.pop(next(iter(self._counts)))
            n, end = self._counts.get(key, (0, 0.0))
            if end <= now:
                n, end = 0, now + WINDOW_S
            self._counts[key] = (n + 1, end)
            return n + 1, end - now


_memory = _Memory()


def key_for(client: str) -> str:
    return f"{_PREFIX}:{client}"


def hit(key: str) -> tuple[int, float]:
    """One more request under `key` in its WINDOW_S window: (count in the window, seconds left).
    The agent bundles' routes count theirs here too, under a key of their own."""
    try:
        pipe = get_redis().pipeline()
        pipe.set(key, 0, ex=WINDOW_S, nx=True)
        pipe.incr(key)
        pipe.pttl(key)
        _, count, pttl = pipe.execute()  # type: ignore[no-untyped-call, unused-ignore]
        left = max(0, int(pttl)) / 1000
    except (redis.RedisError, OSError) as exc:
        log.warning("share_throttle.redis_unavailable", error=str(exc).splitlines()[0][:200])
        count, left = _memory.hit(key)
    return int(count), left


def check(request: Request) -> None:
    """FastAPI dependency of the anonymous share routes: count the request, 429 past the limit."""
    count, left = hit(key_for(client_address(request.scope)))
    if count > get_settings().share_requests_per_min:
        retry = max(1, math.ceil(left))
        raise TooManyRequests(
            f"too many requests for shared links from this address: try again in {retry} s",
            retry_after_s=retry,
            code="share_throttled",
        )
