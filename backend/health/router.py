"""Liveness and dependencies: database, Redis, and when a Celery worker was last seen.

`GET /health/live` is the process's liveness alone: 200 as soon as the process answers HTTP,
reading nothing (no database, no Redis), in the control lane (never waits behind page reads).
Load balancers and probes that decide whether to send this process requests (Caddy's active
health check, Kubernetes' liveness and readiness probes) ask it: when PostgreSQL is down, every
process is equally unable to read it, and taking them all out of rotation would turn the API's
own 503 `database_unavailable` (JSON, with a request id) into the proxy's bare error, and the UI,
which needs no database, into nothing at all (docs/operations.md § Health checks).

The worker is "down" when its liveness beat (a thread of each worker writes the time to
`WORKER_SEEN_KEY` every 5 s, worker/observe.py) is older than `WORKER_STALE_S`, so a dead
worker shows within about 12 s, with the age of its last beat.

Anonymous callers (load balancers, `make up`, compose health checks) get only `{"status"}`; the
details (version, database, Redis, worker, with error text) need a valid token of a user or an
agent. 200 while the API can serve (status "ok", or "degraded" when Redis or the worker is
missing: runs queue but wait), 503 when the database is unreachable (status "down").
"""

from datetime import UTC, datetime
from functools import lru_cache
from typing import Annotated, Literal, cast

import redis
from fastapi import APIRouter, Depends, Request, Response
from sqlalchemy import text
from sqlalchemy.orm import Session, sessionmaker

from backend import __version__
from backend.auth import service as auth_service
from backend.config import get_settings
from backend.db import get_session_factory, get_sessionmaker
from backend.errors import AppError
from backend.health import WORKER_SEEN_KEY
from backend.kit.lanes import CONTROL
from backend.kit.schema import OutputSchema

router = APIRouter(tags=["health"], dependencies=[CONTROL])

WORKER_STALE_S = 12  # the worker beats every 5 s: two beats missed and a margin


class Check(OutputSchema):
    ok: bool
    detail: str


class WorkerCheck(OutputSchema):
    ok: bool
    status: Literal["ok", "down", "unknown"]
    last_seen_at: datetime | None
    heartbeat_age_s: float | None
    detail: str


class HealthStatus(OutputSchema):
    status: str


class Health(OutputSchema):
    status: str
    version: str
    database: Check
    redis: Check
    worker: WorkerCheck


@lru_cache
def _redis(url: str) -> redis.Redis:
    # short timeouts: a Redis that hangs makes /health say so in 2 s instead of hanging with it
    return redis.Redis.from_url(url, socket_timeout=2, socket_connect_timeout=2)


def _token_is_valid(factory: sessionmaker[Session], raw: str) -> bool:
    """A user's or an agent's token that authenticates (checked in its own short transaction, so
    a broken database makes it False instead of an error)."""
    try:
        with factory() as s, s.begin():
            auth_service.authenticate(s, raw_token=raw)
        return True
    except AppError:
        return False
    except Exception:  # noqa: BLE001 - the database is down: the caller gets the anonymous answer
        return False


@router.get("/health/live", response_model=HealthStatus)
def health_live() -> HealthStatus:
    """`{"status": "ok"}` whenever this process answers: reads neither the database nor Redis."""
    return HealthStatus(status="ok")


@router.get(
    "/health",
    response_model=Health | HealthStatus,
    responses={503: {"model": HealthStatus, "description": "the database is unreachable"}},
)
def health(
    request: Request,
    response: Response,
    factory: Annotated[sessionmaker[Session], Depends(get_session_factory)],
) -> Health | HealthStatus:
    """`{"status"}` for anyone; with a valid bearer token (`Authorization: Bearer ...`, a user's
    or an agent's) also the version and each dependency. An invalid token is not an error here:
    it gets the anonymous answer."""
    full = _check()
    if full.status == "down":
        response.status_code = 503
    scheme, _, raw = request.headers.get("authorization", "").partition(" ")
    if scheme.lower() == "bearer" and raw.strip() and _token_is_valid(factory, raw.strip()):
        return full
    return HealthStatus(status=full.status)


def _check() -> Health:
    try:
        with get_sessionmaker()() as s:
            s.execute(text("SELECT 1"))
        db = Check(ok=True, detail="ok")
    except Exception as exc:  # noqa: BLE001 - health reports any failure
        db = Check(ok=False, detail=str(exc).splitlines()[0][:300])
    seen = None
    redis_ok = False
    try:
        r = _redis(get_settings().redis_url)
        r.ping()
        raw = cast(bytes | None, r.get(WORKER_SEEN_KEY))
        seen = datetime.fromtimestamp(float(raw), UTC) if raw else None
        rd = Check(ok=True, detail="ok")
        redis_ok = True
    except Exception as exc:  # noqa: BLE001
        rd = Check(ok=False, detail=str(exc).splitlines()[0][:300])
    age = max((datetime.now(UTC) - seen).total_seconds(), 0.0) if seen else None
    worker_ok = age is not None and age < WORKER_STALE_S
    if worker_ok:
        state: Literal["ok", "down", "unknown"] = "ok"
        detail = "ok"
    elif not redis_ok:
        state, detail = "unknown", "Redis is unreachable: the worker's heartbeat cannot be read"
    elif age is None:
        state, detail = "down", "no heartbeat seen"
    else:
        state, detail = "down", f"last heartbeat {age:.0f} s ago (stale after {WORKER_STALE_S} s)"
    worker = WorkerCheck(
        ok=worker_ok,
        status=state,
        last_seen_at=seen,
        heartbeat_age_s=round(age, 1) if age is not None else None,
        detail=detail,
    )
    status = "down" if not db.ok else ("ok" if rd.ok and worker.ok else "degraded")
    return Health(status=status, version=__version__, database=db, redis=rd, worker=worker)
