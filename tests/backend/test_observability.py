"""Issue 11, observability: request ids in headers, error bodies, logs and queued tasks; the
access log line; Prometheus metrics that appear and move; and `POST /runs` during a Redis outage
(201, the run dispatched once Redis is back, never 500-and-created)."""

import base64
import json
import time
import uuid
from datetime import timedelta
from typing import Any, cast

import pytest
import redis
from fastapi import FastAPI
from fastapi.testclient import TestClient
from prometheus_client.parser import text_string_to_metric_families
from sqlalchemy import create_engine, func, select
from sqlalchemy.orm import Session

from backend.db import unit_of_work
from backend.health import WORKERS_SEEN_KEY
from backend.kit.time import utcnow
from backend.main import create_app
from backend.metrics import observe_request
from backend.models import OutboxTask, Run, RunStatus
from backend.outbox import enqueue
from backend.run import service as run_service
from tests.backend import test_outbox
from tests.backend.test_outbox import LocalRedis, _leased_run
from tests.backend.test_runs import run_body
from tests.factories import UserCtx, create_agent, create_run, create_user

HEX32 = 32
outbox_env = test_outbox.env  # `env`: a committed database and a Redis of the test's own
INGESTED = ("results", "result_jobs", "series_points", "power_samples")


def _boom_app() -> FastAPI:
    app = create_app()

    def boom() -> None:
        raise RuntimeError("a bug")

    # POST: the UI's catch-all answers GET for every path before a route added now
    app.add_api_route("/api/v1/test-boom", boom, methods=["POST"])
    return app


# --- request ids -------------------------------------------------------------------------------


def test_a_request_id_is_made_or_kept_and_returned(client: TestClient) -> None:
    made = client.get("/api/v1/health")
    rid = made.headers["x-request-id"]
    assert len(rid) == HEX32 and all(c in "0123456789abcdef" for c in rid)
    assert client.get("/api/v1/health").headers["x-request-id"] != rid  # one per request
    kept = client.get("/api/v1/health", headers={"X-Request-ID": "ci-job.42_a-b"})
    assert kept.headers["x-request-id"] == "ci-job.42_a-b"
    for bad in ("x" * 65, "has space", "semi;colon", "-leading-dash", "ünïcode"):
        r = client.get("/api/v1/health", headers={"X-Request-ID": bad.encode()})
        assert r.headers["x-request-id"] != bad and len(r.headers["x-request-id"]) == HEX32, bad


def test_every_error_body_carries_the_request_id(client: TestClient, session: Session) -> None:
    u = create_user(session)
    cases = [
        client.get(f"/api/v1/runs/{uuid.uuid4()}", headers=u.headers),  # 404 from a service
        client.get("/api/v1/runs"),  # 401
        client.post("/api/v1/runs", json={"agent_id": "nope"}, headers=u.headers),  # 422
        client.get("/api/v1/no-such-route"),  # the UI catch-all's 404
        client.get("/api/v1/agents/enroll"),  # 405 from the catch-all
        client.post("/api/v1/workloads", content=b"x" * (2 * 1024 * 1024 + 1), headers=u.headers),  # 413
        client.get("/api/v1/runs?status=%00"),  # 422 from the NUL check
    ]
    for r in cases:
        assert r.status_code >= 400, r.text
        body = r.json()
        assert set(body) == {"error", "message", "detail", "request_id"}, body
        assert body["request_id"] == r.headers["x-request-id"], (r.status_code, body)
        assert int(r.headers["content-length"]) == len(r.content)
    r = client.get("/api/v1/runs", headers={"X-Request-ID": "trace-me-1"})
    assert r.status_code == 401 and r.json()["request_id"] == "trace-me-1"


def test_an_unexpected_error_is_our_json_500_with_the_request_id(db_url: str) -> None:
    with TestClient(_boom_app(), raise_server_exceptions=False) as c:
        r = c.post("/api/v1/test-boom", headers={"X-Request-ID": "find-the-bug"})
    assert r.status_code == 500
    assert r.headers["x-request-id"] == "find-the-bug"
    assert r.json() == {
        "error": "internal_error",
        "message": "internal server error; the request id names it in the server log",
        "detail": None,
        "request_id": "find-the-bug",
    }


def test_the_error_schema_names_the_request_id(client: TestClient) -> None:
    schema = client.get("/openapi.json").json()["components"]["schemas"]["ErrorResponse"]
    assert "request_id" in schema["properties"] and "request_id" in schema["required"]


# --- the access log -------------------------------------------------------------------------------


def _lines(err: str) -> list[dict[str, Any]]:
    out = []
    for line in err.splitlines():
        if line.startswith("{"):
            try:
                out.append(json.loads(line))
            except ValueError:
                continue
    return out


def test_every_request_writes_one_structured_access_line(
    client: TestClient, session: Session, capfd: pytest.CaptureFixture[str]
) -> None:
    u = create_user(session)
    capfd.readouterr()
    r = client.get(f"/api/v1/runs/{uuid.uuid4()}", headers={**u.headers, "X-Request-ID": "log-line-1"})
    assert r.status_code == 404
    lines = [x for x in _lines(capfd.readouterr().err) if x.get("event") == "http.request"]
    assert len(lines) == 1, lines
    line = lines[0]
    assert line["request_id"] == "log-line-1"
    assert line["method"] == "GET" and line["route"] == "/api/v1/runs/{run_id}" and line["status"] == 404
    assert line["level"] == "info" and isinstance(line["duration_ms"], float) and line["duration_ms"] >= 0
    assert line["timestamp"].endswith("Z") and line["timestamp"][10] == "T"  # ISO-8601 UTC


# --- metrics -------------------------------------------------------------------------------------


def _scrape(c: TestClient) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    r = c.get("/metrics")
    assert r.status_code == 200
    out = {}
    for fam in text_string_to_metric_families(r.text):
        for s in fam.samples:
            out[(s.name, tuple(sorted(s.labels.items())))] = s.value
    return out


def _v(m: dict[tuple[str, tuple[tuple[str, str], ...]], float], name: str, **labels: str) -> float:
    return m.get((name, tuple(sorted(labels.items()))), 0.0)


def _committed_user(url: str) -> tuple[UserCtx, uuid.UUID]:
    eng = create_engine(url)
    with Session(eng, expire_on_commit=False) as s:
        u = create_user(s)
        a = create_agent(s, team=u.team)
        s.commit()
    eng.dispose()
    return u, a.agent.id


def test_metrics_appear_and_move(outbox_env: tuple[str, LocalRedis]) -> None:
    """Also the series deploy/monitoring's rules and dashboard read (issue 30): workers alive and
    stale from their own heartbeats, the newest beat's age, the Celery queue, leases held and
    overdue, agents in both states, rows stored (counted at commit), the database's size, and
    Redis unreachable as iowatt_redis_up 0."""
    from worker.observe import beat_once
    from worker.tasks.run import expire_stale_leases

    url, r = outbox_env
    with TestClient(create_app()) as c:
        before = _scrape(c)
        for name in ("iowatt_outbox_unsent", "iowatt_outbox_oldest_unsent_age_seconds"):
            assert (name, ()) in before, name  # present while zero
        assert _v(before, "iowatt_redis_up") == 1 and _v(before, "iowatt_database_size_bytes") > 1e6
        assert _v(before, "iowatt_worker_heartbeat_age_seconds") == float("inf")  # no worker ever
        assert ("iowatt_workers", (("state", "alive"),)) in before
        for online in ("true", "false"):  # both states, zero or not
            assert ("iowatt_agents", (("online", online),)) in before
        for kind in INGESTED:
            assert ("iowatt_ingested_total", (("kind", kind),)) in before, kind
        # workers: one beating, one silent for a minute (stale), one gone long ago (forgotten)
        beat_once("host-a/1")
        with redis.Redis.from_url(r.url) as rc:
            rc.hset(WORKERS_SEEN_KEY, mapping={"host-b/2": time.time() - 60, "host-c/3": time.time() - 3600})
            m = _scrape(c)
            assert _v(m, "iowatt_workers", state="alive") == 1 and _v(m, "iowatt_workers", state="stale") == 1
            assert 0 <= _v(m, "iowatt_worker_heartbeat_age_seconds") < 12
            assert set(rc.hkeys(WORKERS_SEEN_KEY)) == {b"host-a/1", b"host-b/2"}  # the old one dropped

        u, agent_id = _committed_user(url)
        created = c.post("/api/v1/runs", json=run_body(agent_id), headers=u.headers)
        assert created.status_code == 201, created.text
        m = _scrape(c)
        assert _v(m, "iowatt_runs", status="queued") == _v(before, "iowatt_runs", status="queued") + 1
        assert _v(m, "iowatt_queue_messages", queue="celery") >= 1  # its dispatch task, unconsumed
        # a task at the background priority waits in another list of the same queue: counted too
        with unit_of_work() as s:
            enqueue(s, "energy.compute_run", run_id=str(uuid.uuid4()))
        with_background = _v(_scrape(c), "iowatt_queue_messages", queue="celery")
        assert with_background == _v(m, "iowatt_queue_messages", queue="celery") + 1
        assert _v(m, "iowatt_agents", online="true") == _v(before, "iowatt_agents", online="true") + 1
        # the latency histogram is this process's (one registry per API process, as Prometheus
        # expects): earlier tests in the same pytest worker counted their own requests in it, so
        # this request is the one observation added since `before`
        key = {"method": "POST", "route": "/api/v1/runs", "status": "201"}
        for name, labels in (
            ("iowatt_http_request_duration_seconds_count", key),
            ("iowatt_http_request_duration_seconds_bucket", {**key, "le": "60.0"}),
        ):
            assert _v(m, name, **labels) == _v(before, name, **labels) + 1, name
        # a long-poll lasts its wait (80 s by default, ADR 0053): a finite bucket holds it, not +Inf
        poll = {"method": "POST", "route": "/api/v1/agents/{agent_id}/lease", "status": "200"}
        observe_request("POST", poll["route"], 200, 80.0)
        polled = _scrape(c)
        for le, added in (("60.0", 0), ("90.0", 1), ("300.0", 1)):
            bucket = "iowatt_http_request_duration_seconds_bucket"
            assert _v(polled, bucket, **poll, le=le) == _v(m, bucket, **poll, le=le) + added, le

        # an upload retried after it landed
        run_id, body, agent_headers = _leased_run(url, c)
        assert _v(_scrape(c), "iowatt_leases") >= 1
        assert c.put(f"/api/v1/runs/{run_id}/result", json=body, headers=agent_headers).status_code == 201
        dup = c.put(f"/api/v1/runs/{run_id}/result", json=body, headers=agent_headers)
        assert dup.status_code == 200 and dup.json()["duplicate"] is True
        m = _scrape(c)
        assert _v(m, "iowatt_upload_duplicates_total") == _v(before, "iowatt_upload_duplicates_total") + 1
        # what the upload stored, counted once it committed; the duplicate stored (and counted) nothing
        added = {
            k: _v(m, "iowatt_ingested_total", kind=k) - _v(before, "iowatt_ingested_total", kind=k)
            for k in INGESTED
        }
        assert added["results"] == 1 and added["result_jobs"] == 1 and added["series_points"] >= 1, added
        assert added["power_samples"] == len(body["power"]["samples"]["t_ns"]), added

        # a lease that expired before its run started (the worker's task, on this database)
        eng = create_engine(url)
        with Session(eng) as s:
            u2 = create_user(s)
            a2 = create_agent(s, team=u2.team)
            stale = create_run(s, agent=a2.agent)
            run_service.dispatch(s, run_id=stale.id)
            stale.lease_expires_at = utcnow() - timedelta(seconds=1)
            s.commit()
        assert _v(_scrape(c), "iowatt_leases_overdue") >= 1  # past its expiry, not yet expired
        assert expire_stale_leases()[0] >= 1
        m = _scrape(c)
        assert _v(m, "iowatt_lease_expiries_total", outcome="requeued") >= 1

        # the outbox backlog: a row nobody sent yet
        with Session(eng) as s:
            s.add(OutboxTask(name="test.never", kwargs={}, created_at=utcnow() - timedelta(seconds=30)))
            s.commit()
        m = _scrape(c)
        assert _v(m, "iowatt_outbox_unsent") >= 1
        assert _v(m, "iowatt_outbox_oldest_unsent_age_seconds") >= 29
        eng.dispose()

        # Redis down: the scrape still answers, saying so, without the Redis figures
        r.stop()
        try:
            m = _scrape(c)
        finally:
            r.start()
        assert _v(m, "iowatt_redis_up") == 0 and ("iowatt_runs", (("status", "queued"),)) in m
        assert not [k for k in m if k[0] in ("iowatt_queue_messages", "iowatt_workers")]


# --- Redis down during POST /runs ------------------------------------------------------------------


def _queued_messages(url: str) -> list[dict[str, Any]]:
    out = []
    with redis.Redis.from_url(url) as rc:
        while (raw := cast(bytes | None, rc.rpop("celery"))) is not None:
            msg = json.loads(raw)
            _, kwargs, _ = json.loads(base64.b64decode(msg["body"]))
            out.append({"task": msg["headers"]["task"], "kwargs": kwargs, "headers": msg["headers"]})
    return out


def test_redis_down_during_post_runs_answers_201_and_the_run_is_dispatched_later(
    outbox_env: tuple[str, LocalRedis],
) -> None:
    """Nothing after the commit may fail the request: the outbox keeps the dispatch task and the
    wake-up is best-effort. The request id travels with the task to the worker."""
    from worker.app import celery_app
    from worker.tasks.outbox import send

    url, r = outbox_env
    with TestClient(create_app(), raise_server_exceptions=False) as c:
        u, agent_id = _committed_user(url)
        r.stop()
        created = c.post(
            "/api/v1/runs", json=run_body(agent_id), headers={**u.headers, "X-Request-ID": "queue-it-1"}
        )
    assert created.status_code == 201, created.text
    run_id = uuid.UUID(created.json()["id"])
    eng = create_engine(url)
    with Session(eng) as s:
        assert s.scalar(select(func.count()).select_from(Run)) == 1  # created once
        unsent = s.scalars(select(OutboxTask).where(OutboxTask.sent_at.is_(None))).all()
        assert [(t.name, t.kwargs) for t in unsent] == [
            ("run.dispatch", {"run_id": str(run_id), "_request_id": "queue-it-1"})
        ]
    r.start()  # Redis is back: beat's sender publishes the row
    send()
    [msg] = _queued_messages(r.url)
    assert msg["task"] == "run.dispatch" and msg["kwargs"] == {"run_id": str(run_id)}
    assert msg["headers"]["iowatt_request_id"] == "queue-it-1"
    celery_app.loader.import_default_modules()
    assert celery_app.tasks["run.dispatch"].run(**msg["kwargs"]) is True
    with Session(eng) as s:
        assert s.get(Run, run_id).status == RunStatus.assigned  # type: ignore[union-attr]
    eng.dispose()
