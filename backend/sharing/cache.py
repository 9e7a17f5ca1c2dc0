"""The frozen payload of a share link, computed once per link and content version.

An anonymous link's view used to be recomputed from up to 200 runs on every request. Now the view
and its CSV are kept in Redis under the link's id and a *stamp*: a digest of what the view shows
(backend/sharing/repository.py: the runs' names, states, device and environment names, result and
energy rows; a review's and its candidates' rows; the team's and sharer's names; the link's own
title and expiry) and of the payload's schema, read with a few indexed queries that compute
nothing. A request whose stamp differs from the cached one recomputes and replaces it, so a
deleted or re-measured run, a renamed team or an edited review shows at once. Revoking deletes
the link's entries (and open_link answers 404 before the cache is read). Entries expire after
TTL_S, which also bounds anything the stamp does not cover. Without Redis the view is computed
per request, as before (logged), never a 500."""

import hashlib
import json
import uuid
from collections.abc import Callable
from functools import lru_cache

import redis
from sqlalchemy.orm import Session

from backend.auth.throttle import get_redis
from backend.logs import log
from backend.models import ShareLink
from backend.sharing import repository

PREFIX = "iowatt:shared"
TTL_S = 600


@lru_cache
def _schema_version() -> str:
    """The payload's schema, so a deploy that changes it never serves an old cached shape."""
    from backend.sharing.schemas import SharedView

    schema = json.dumps(SharedView.model_json_schema(), sort_keys=True)
    return hashlib.sha256(schema.encode()).hexdigest()[:12]


def stamp(session: Session, link: ShareLink) -> str:
    """The content version of the link's view now."""
    parts = [_schema_version(), str(link.id), link.title, str(link.expires_at)]
    parts.append(repository.names_stamp(session, link.team_id, link.created_by))
    target = link.target
    if link.kind == "review":
        digest, runs = repository.review_stamp(session, uuid.UUID(str(target["review"])))
        parts += [digest, repository.runs_stamp(session, link.team_id, runs) if runs else ""]
    elif link.kind == "campaign":
        cid = uuid.UUID(str(target["campaign"]))
        parts += [
            repository.campaign_stamp(session, cid),
            repository.runs_stamp(session, link.team_id, [], cid),
        ]
    else:
        ids = [uuid.UUID(str(x)) for x in (target.get("runs") or [target.get("run")])]
        parts += [json.dumps(target, sort_keys=True), repository.runs_stamp(session, link.team_id, ids)]
    return hashlib.sha256("\x1f".join(parts).encode()).hexdigest()[:32]


def _key(link_id: uuid.UUID, what: str, version: str) -> str:
    return f"{PREFIX}:{link_id}:{what}:{version}"


def _unavailable(exc: Exception) -> None:
    log.warning("share_cache.redis_unavailable", error=str(exc).splitlines()[0][:200])


def cached(link_id: uuid.UUID, what: str, version: str, build: Callable[[], bytes]) -> bytes:
    """The bytes stored for (link, what, version), else `build()`'s, stored for TTL_S."""
    key = _key(link_id, what, version)
    try:
        hit = get_redis().get(key)
        if isinstance(hit, bytes):
            return hit
    except (redis.RedisError, OSError) as exc:
        _unavailable(exc)
        return build()
    value = build()
    try:
        get_redis().set(key, value, ex=TTL_S)
    except (redis.RedisError, OSError) as exc:
        _unavailable(exc)
    return value


def forget(link_id: uuid.UUID) -> None:
    """Drop every cached entry of a link (revoked: its data should not linger)."""
    try:
        r = get_redis()
        keys = list(r.scan_iter(match=f"{PREFIX}:{link_id}:*", count=100))
        if keys:
            r.delete(*keys)
    except (redis.RedisError, OSError) as exc:
        _unavailable(exc)
