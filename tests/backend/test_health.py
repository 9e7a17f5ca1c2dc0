"""A real Celery worker process: /health sees it alive, then "down" within 15 s of a SIGKILL with
the age of its last heartbeat; its tasks log one line each with the queuing request's id, and a
failing task moves `iowatt_task_failures_total`."""

import json
import os
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import structlog
from fastapi.testclient import TestClient
from prometheus_client.parser import text_string_to_metric_families
from sqlalchemy import create_engine
from sqlalchemy.orm import Session

from backend.main import create_app
from backend.models import Run, RunStatus
from tests.backend import test_outbox
from tests.backend.test_outbox import LocalRedis
from tests.conftest import REPO
from tests.factories import create_agent, create_run, create_user
from tests.services import celery_worker_argv

outbox_env = test_outbox.env  # a committed database and a Redis of the test's own


def _worker(db_url: str, redis_url: str, log: Path) -> subprocess.Popen[bytes]:
    env = {**os.environ, "IOWATT_DATABASE_URL": db_url, "IOWATT_REDIS_URL": redis_url}
    with open(log, "wb") as out:
        return subprocess.Popen(
            celery_worker_argv(),
            cwd=REPO,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )


def _worker_check(c: TestClient, headers: dict[str, str]) -> dict[str, Any]:
    r = c.get("/api/v1/health", headers=headers)
    assert r.status_code == 200, r.text
    return dict(r.json()["worker"])


def _lines(log: Path) -> list[dict[str, Any]]:
    out = []
    for line in log.read_text(errors="replace").splitlines():
        if line.startswith("{"):
            try:
                out.append(json.loads(line))
            except ValueError:
                continue
    return out


def _failures(c: TestClient, task: str) -> float:
    for fam in text_string_to_metric_families(c.get("/metrics").text):
        for s in fam.samples:
            if s.name == "iowatt_task_failures_total" and s.labels.get("task") == task:
                return float(s.value)
    return 0.0


def test_a_killed_worker_shows_down_within_15_s(outbox_env: tuple[str, LocalRedis], tmp_path: Path) -> None:
    from backend.outbox import enqueue

    url, r = outbox_env
    eng = create_engine(url)
    with Session(eng, expire_on_commit=False) as s:
        u = create_user(s)
        a = create_agent(s, team=u.team)
        run = create_run(s, agent=a.agent)
        s.commit()
    log = tmp_path / "worker.log"
    proc = _worker(url, r.url, log)
    try:
        with TestClient(create_app()) as c:
            deadline = time.monotonic() + 60
            while (w := _worker_check(c, u.headers))["status"] != "ok":
                assert time.monotonic() < deadline, (w, log.read_text()[-3000:])
                time.sleep(0.5)
            assert w["ok"] is True and w["heartbeat_age_s"] < 12

            # a task queued by a request runs under that request's id
            from backend.db import unit_of_work

            structlog.contextvars.bind_contextvars(request_id="trace-dispatch-1")
            try:
                with unit_of_work() as s2:
                    enqueue(s2, "run.dispatch", run_id=str(run.id))
            finally:
                structlog.contextvars.unbind_contextvars("request_id")
            # and a task that fails is counted and logged
            before = _failures(c, "run.dispatch")
            with unit_of_work() as s3:
                enqueue(s3, "run.dispatch", run_id="not-a-uuid")
            deadline = time.monotonic() + 60
            while _failures(c, "run.dispatch") < before + 1:
                assert time.monotonic() < deadline, log.read_text()[-3000:]
                time.sleep(0.3)
            with Session(eng) as s4:
                assert s4.get(Run, run.id).status == RunStatus.assigned  # type: ignore[union-attr]
            lines = _lines(log)
            done = [x for x in lines if x.get("event") == "task.done" and x.get("run_id") == str(run.id)]
            assert done, log.read_text()[-4000:]
            assert done[0]["request_id"] == "trace-dispatch-1" and done[0]["task"] == "run.dispatch"
            assert done[0]["outcome"] == "ok" and done[0]["duration_ms"] >= 0 and done[0]["task_id"]
            assert done[0]["timestamp"].endswith("Z") and done[0]["level"] == "info"
            failed = [x for x in lines if x.get("event") == "task.failed"]
            assert failed and failed[0]["task"] == "run.dispatch" and "ValueError" in failed[0]["error"]
            assert failed[0]["run_id"] == "not-a-uuid" and failed[0]["level"] == "error"

            proc.send_signal(signal.SIGKILL)
            proc.wait(timeout=10)
            killed = time.monotonic()
            while (w := _worker_check(c, u.headers))["status"] != "down":
                assert time.monotonic() - killed < 15, w
                time.sleep(0.5)
            assert w["ok"] is False and w["heartbeat_age_s"] >= 12
            assert "last heartbeat" in w["detail"]
            full = c.get("/api/v1/health", headers=u.headers).json()
            assert full["status"] == "degraded"
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        eng.dispose()


def test_health_says_unknown_when_redis_is_down_and_down_when_never_seen(
    outbox_env: tuple[str, LocalRedis],
) -> None:
    _, r = outbox_env
    eng = create_engine(outbox_env[0])
    with Session(eng, expire_on_commit=False) as s:
        u = create_user(s)
        s.commit()
    eng.dispose()
    with TestClient(create_app()) as c:
        w = _worker_check(c, u.headers)
        assert w["status"] == "down" and w["heartbeat_age_s"] is None and w["detail"] == "no heartbeat seen"
        r.stop()
        w = _worker_check(c, u.headers)
        assert w["status"] == "unknown" and w["ok"] is False
        # liveness reads neither Redis nor the database (tests/faults scenario 6 stops PostgreSQL)
        live = c.get("/api/v1/health/live")
        assert (live.status_code, live.json()) == (200, {"status": "ok"})
