"""Liveness and dependencies: database, Redis, and when a Celery worker was last seen."""

from datetime import UTC, datetime
from typing import cast

from fastapi import APIRouter
from sqlalchemy import text

from backend import __version__
from backend.agent.wake import get_redis
from backend.db import get_sessionmaker
from backend.kit.schema import OutputSchema

router = APIRouter(tags=["health"])

WORKER_SEEN_KEY = "iowatt:worker:last_seen"
WORKER_STALE_S = 90


class Check(OutputSchema):
    ok: bool
    detail: str


class WorkerCheck(OutputSchema):
    ok: bool
    last_seen_at: datetime | None
    detail: str


class Health(OutputSchema):
    status: str
    version: str
    database: Check
    redis: Check
    worker: WorkerCheck


@router.get("/health", response_model=Health)
def health() -> Health:
    try:
        with get_sessionmaker()() as s:
            s.execute(text("SELECT 1"))
        db = Check(ok=True, detail="ok")
    except Exception as exc:  # noqa: BLE001 - health reports any failure
        db = Check(ok=False, detail=str(exc).splitlines()[0][:300])
    seen = None
    try:
        r = get_redis()
        r.ping()
        raw = cast(bytes | None, r.get(WORKER_SEEN_KEY))
        seen = datetime.fromtimestamp(float(raw), UTC) if raw else None
        rd = Check(ok=True, detail="ok")
    except Exception as exc:  # noqa: BLE001
        rd = Check(ok=False, detail=str(exc).splitlines()[0][:300])
    age = (datetime.now(UTC) - seen).total_seconds() if seen else None
    worker_ok = age is not None and age < WORKER_STALE_S
    worker = WorkerCheck(
        ok=worker_ok,
        last_seen_at=seen,
        detail="ok" if worker_ok else ("never seen" if seen is None else f"silent for {age:.0f} s"),
    )
    status = "ok" if db.ok and rd.ok and worker.ok else "degraded"
    return Health(status=status, version=__version__, database=db, redis=rd, worker=worker)
