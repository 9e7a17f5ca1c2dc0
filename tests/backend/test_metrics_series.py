"""Issue 30: the series the shipped alert rules and dashboard read (deploy/monitoring) appear and
move on a real database and Redis: workers alive and stale from their own heartbeats, the newest
heartbeat's age, the Celery queue, leases held and overdue, agents in both states, what uploads
stored (counted at commit), the database's size, and Redis unreachable as iowatt_redis_up 0."""

import time
from datetime import timedelta

import redis
from fastapi.testclient import TestClient
from sqlalchemy import create_engine
from sqlalchemy.orm import Session

from backend.health import WORKERS_SEEN_KEY
from backend.kit.time import utcnow
from backend.main import create_app
from backend.run import service as run_service
from tests.backend import test_outbox
from tests.backend.test_observability import _committed_user, _scrape, _v
from tests.backend.test_outbox import LocalRedis, _leased_run
from tests.backend.test_runs import run_body
from tests.factories import create_agent, create_run, create_user

outbox_env = test_outbox.env  # a committed database and a Redis of the test's own


def test_monitoring_series_appear_and_move(outbox_env: tuple[str, LocalRedis]) -> None:
    from worker.observe import beat_once

    url, r = outbox_env
    with TestClient(create_app(), raise_server_exceptions=False) as c:
        m = _scrape(c)
        assert _v(m, "iowatt_redis_up") == 1 and _v(m, "iowatt_database_size_bytes") > 1e6
        assert _v(m, "iowatt_worker_heartbeat_age_seconds") == float("inf")  # no worker ever
        assert ("iowatt_workers", (("state", "alive"),)) in m and _v(m, "iowatt_workers", state="alive") == 0
        for online in ("true", "false"):  # both states, zero or not
            assert ("iowatt_agents", (("online", online),)) in m
        for kind in ("results", "result_jobs", "series_points", "power_samples"):
            assert ("iowatt_ingested_total", (("kind", kind),)) in m, kind
        before = m

        # workers: one beating, one silent for a minute (stale), one gone for longer (forgotten)
        beat_once("host-a/1")
        with redis.Redis.from_url(r.url) as rc:
            rc.hset(WORKERS_SEEN_KEY, mapping={"host-b/2": time.time() - 60, "host-c/3": time.time() - 3600})
            m = _scrape(c)
            assert _v(m, "iowatt_workers", state="alive") == 1
            assert _v(m, "iowatt_workers", state="stale") == 1
            assert 0 <= _v(m, "iowatt_worker_heartbeat_age_seconds") < 12
            assert set(rc.hkeys(WORKERS_SEEN_KEY)) == {b"host-a/1", b"host-b/2"}  # the old one dropped

        # a queued run's dispatch task waits in the Celery queue (no worker consumes it here)
        u, agent_id = _committed_user(url)
        assert c.post("/api/v1/runs", json=run_body(agent_id), headers=u.headers).status_code == 201
        m = _scrape(c)
        assert _v(m, "iowatt_queue_messages", queue="celery") >= 1
        assert _v(m, "iowatt_agents", online="true") == _v(before, "iowatt_agents", online="true") + 1

        # an upload: its result, jobs, series points and power samples counted once it committed
        run_id, body, agent_headers = _leased_run(url, c)
        m = _scrape(c)
        assert _v(m, "iowatt_leases") >= 1
        assert c.put(f"/api/v1/runs/{run_id}/result", json=body, headers=agent_headers).status_code == 201
        m = _scrape(c)
        added = {k: _v(m, "iowatt_ingested_total", kind=k) - _v(before, "iowatt_ingested_total", kind=k)
                 for k in ("results", "result_jobs", "series_points", "power_samples")}  # fmt: skip
        assert added["results"] == 1 and added["result_jobs"] == 1, added
        assert added["series_points"] >= 1 and added["power_samples"] == len(body["power"]["samples"]["t_ns"])
        # a repeated upload stores nothing: nothing counted
        assert c.put(f"/api/v1/runs/{run_id}/result", json=body, headers=agent_headers).status_code == 200
        again = _scrape(c)
        results = "iowatt_ingested_total"
        assert _v(again, results, kind="results") == _v(m, results, kind="results")

        # a lease past its expiry that nobody expired
        eng = create_engine(url)
        with Session(eng) as s:
            u2 = create_user(s)
            a2 = create_agent(s, team=u2.team)
            stale = create_run(s, agent=a2.agent)
            run_service.dispatch(s, run_id=stale.id)
            stale.lease_expires_at = utcnow() - timedelta(seconds=30)
            s.commit()
        eng.dispose()
        assert _v(_scrape(c), "iowatt_leases_overdue") >= 1

        # Redis down: the scrape still answers, saying so, without the Redis figures
        r.stop()
        try:
            m = _scrape(c)
        finally:
            r.start()
        assert _v(m, "iowatt_redis_up") == 0
        assert not [k for k in m if k[0] in ("iowatt_queue_messages", "iowatt_workers")]
        assert ("iowatt_runs", (("status", "queued"),)) in m  # the database figures are there
