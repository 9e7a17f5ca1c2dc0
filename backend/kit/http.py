"""Who is on the other end of a request: the client address and whether it came over TLS.

Forwarded headers are believed only from a proxy listed in `IOWATT_TRUSTED_PROXIES` (a JSON list
of addresses, e.g. `["127.0.0.1"]` for a reverse proxy on the same host); from anyone else they
are ignored, so a client cannot pick its own address to dodge the login throttle.
"""

from collections.abc import Mapping, Sequence
from typing import Any

from backend.config import get_settings


def _headers(scope: Mapping[str, Any]) -> dict[str, str]:
    return {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers") or []}


def _peer(scope: Mapping[str, Any]) -> str:
    client = scope.get("client")
    return str(client[0]) if client else "unknown"


def _trusted(peer: str, proxies: Sequence[str]) -> bool:
    return peer in proxies


def client_address(scope: Mapping[str, Any]) -> str:
    peer = _peer(scope)
    proxies = get_settings().trusted_proxies
    if not _trusted(peer, proxies):
        return peer
    forwarded = _headers(scope).get("x-forwarded-for", "")
    # the right-most address not ours is the one our proxy saw
    for hop in reversed([h.strip() for h in forwarded.split(",") if h.strip()]):
        if not _trusted(hop, proxies):
            return hop[:100]
    return peer


def is_tls(scope: Mapping[str, Any]) -> bool:
    if scope.get("scheme") in ("https", "wss"):
        return True
    if _trusted(_peer(scope), get_settings().trusted_proxies):
        proto = _headers(scope).get("x-forwarded-proto", "")
        return proto.split(",")[0].strip().lower() == "https"
    return False
