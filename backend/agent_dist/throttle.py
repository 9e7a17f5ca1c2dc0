"""The anonymous agent-dist routes throttled per client address, with the shared links' fixed
window (backend/sharing/throttle.py: Redis, or this process's bounded counts without it): past
IOWATT_AGENT_DIST_REQUESTS_PER_MIN in a minute, 429 agent_dist_throttled with Retry-After.

A host's install makes two or three requests (the script, the bundle; the manifest from the UI), so
the default, 60 a minute, lets a rack behind one address install at once while a script cannot pull
30 MB bundles in a loop. A fleet rollout through one NAT or proxy raises it."""

import math

from fastapi import Request

from backend.config import get_settings
from backend.errors import TooManyRequests
from backend.kit.http import client_address
from backend.sharing.throttle import WINDOW_S, hit

_PREFIX = "iowatt:agent-dist-rate"
DESCRIPTION = (
    "`agent_dist_throttled`: more than IOWATT_AGENT_DIST_REQUESTS_PER_MIN a minute from this address"
)


def key_for(client: str) -> str:
    return f"{_PREFIX}:{client}"


def check(request: Request) -> None:
    """FastAPI dependency of every agent-dist route: count the request, 429 past the limit."""
    count, left = hit(key_for(client_address(request.scope)))
    if count > get_settings().agent_dist_requests_per_min:
        retry = max(1, math.ceil(min(left, WINDOW_S)))
        raise TooManyRequests(
            f"too many requests for agent bundles from this address: try again in {retry} s",
            retry_after_s=retry,
            code="agent_dist_throttled",
        )
