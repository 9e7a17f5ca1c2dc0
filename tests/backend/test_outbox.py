"""The transactional outbox (ADR 0012) on real PostgreSQL and a real Redis we stop and restart."""

import base64
import contextlib
import json
import os
import shutil
import socket
import subprocess
import tempfile
import time
import uuid
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any, cast

import kombu
import pytest
import redis
from fastapi.testclient import TestClient
from sqlalchemy import create_engine, select
from sqlalchemy.orm import Session

from backend.kit.time import utcnow
from backend.models import OutboxTask, Run, RunEnergy, RunResult, RunStatus
from backend.outbox import enqueue, producer
from backend.outbox.repair import repair_missing_energy, runs_missing_energy
from backend.run import service as run_service
from tests.backend.test_energy import power_doc, upload
from tests.conftest import reset_settings_caches
from tests.factories import create_agent, create_run, create_user, engine_document
from tests.services import Postgres, free_port


class LocalRedis:
    """A redis-server on a fixed port that a test can stop ("Redis is down") and start again."""

    def __init__(self) -> None:
        self.port = free_port()
        self.dir = Path(tempfile.mkdtemp(prefix="iowatt-test-outbox-redis-"))
        self.proc: subprocess.Popen[bytes] | None = None
        self.url = f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        exe = shutil.which("redis-server") or "redis-server"
        args = [exe, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"]
        self.proc = subprocess.Popen(
            [*args, "--dir", str(self.dir)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            with (
                contextlib.suppress(OSError),
                socket.create_connection(("127.0.0.1", self.port), timeout=0.2),
            ):
                return
            time.sleep(0.05)
        raise RuntimeError("redis-server did not start")

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.terminate()
            self.proc.wait(timeout=10)
            self.proc = None

    def messages(self, queue: str = "celery") -> list[tuple[str, dict[str, Any]]]:
        """Pop every message the producer published: (task name, kwargs), in the order a worker
        takes them (kombu's Redis transport: a list per priority step, the first non-empty one,
        oldest first)."""
        out = []
        with redis.Redis.from_url(self.url) as r:
            for key in (queue, *(f"{queue}\x06\x16{p}" for p in (3, 6, 9))):
                while (raw := cast(bytes | None, r.rpop(key))) is not None:
                    msg = json.loads(raw)
                    _, kwargs, _ = json.loads(base64.b64decode(msg["body"]))
                    out.append((msg["headers"]["task"], kwargs))
        return out


@pytest.fixture
def env(pg: Postgres, db_url: str) -> Iterator[tuple[str, LocalRedis]]:
    """A committed database and a Redis of this test's own, as the server's settings."""
    url = pg.migrated_database("iowatt_outbox")
    r = LocalRedis()
    r.start()
    saved = {k: os.environ[k] for k in ("IOWATT_DATABASE_URL", "IOWATT_REDIS_URL")}
    os.environ.update(IOWATT_DATABASE_URL=url, IOWATT_REDIS_URL=r.url)
    reset_settings_caches()
    producer.cache_clear()
    try:
        yield url, r
    finally:
        from backend.db import get_engine

        get_engine().dispose()
        os.environ.update(saved)
        reset_settings_caches()
        producer.cache_clear()
        r.stop()
        shutil.rmtree(r.dir, ignore_errors=True)


def _drain(r: LocalRedis) -> list[str]:
    """What the worker does: the beat sender publishes unsent rows, then each task runs by name."""
    from worker.app import celery_app
    from worker.tasks.outbox import send

    celery_app.loader.import_default_modules()  # the task modules, as a worker imports them
    send()
    names = []
    for name, kwargs in r.messages():
        celery_app.tasks[name].run(**kwargs)
        names.append(name)
    return names


def test_a_savepoint_released_inside_a_rolled_back_transaction_sends_nothing(
    env: tuple[str, LocalRedis],
) -> None:
    from backend.db import get_engine, unit_of_work
    from worker.tasks.outbox import send

    url, r = env
    with get_engine().connect() as conn:
        outer = conn.begin()
        s = Session(bind=conn, join_transaction_mode="create_savepoint")
        with s.begin_nested():
            enqueue(s, "test.never", n=1)
        s.commit()  # releases the savepoint: `after_commit` fires, yet nothing is committed
        s.close()
        outer.rollback()
    assert r.messages() == []
    assert send() == 0
    assert r.messages() == []
    # the control: a committed transaction's task is sent right after its commit, once
    with unit_of_work() as s2:
        with s2.begin_nested():  # its release must not send (nor forget) the task: the commit sends
            enqueue(s2, "test.sent", n=2)
        assert r.messages() == []
    assert r.messages() == [("test.sent", {"n": 2})]
    assert send() == 0
    with unit_of_work() as s3:
        rows = s3.scalars(select(OutboxTask)).all()
    assert [(t.name, t.sent_at is not None) for t in rows] == [("test.sent", True)]


def test_a_run_dispatch_is_taken_before_the_derived_tasks_queued_ahead_of_it(
    env: tuple[str, LocalRedis],
) -> None:
    """A worker busy with derived data (energy, a series' tracking: up to a second each under load)
    takes `run.dispatch` next, not after every task queued before it: the dispatch path's tasks are
    published at the broker's first priority (backend.outbox.priority_of). Read here through the
    worker's own transport (kombu's Redis channel, as the worker's consumer reads)."""
    from backend.db import unit_of_work
    from worker.app import celery_app

    _, r = env
    with unit_of_work() as s:  # in the order a busy server queues them: results first
        for name in ("energy.compute_run", "series.track_run", "energy.compute_run", "alert.deliver"):
            enqueue(s, name, run_id=str(uuid.uuid4()))
        enqueue(s, "run.dispatch", run_id="the-run")
        enqueue(s, "series.track_run", run_id=str(uuid.uuid4()))
    taken = []
    with kombu.Connection(r.url) as conn:  # (the worker app's broker is the first test's Redis)
        queue = conn.SimpleQueue("celery", no_ack=True)
        for _ in range(6):
            taken.append(queue.get(timeout=5).headers["task"])
        queue.close()
    assert taken[0] == "run.dispatch", taken
    assert (
        sorted(taken[1:])
        == ["alert.deliver", "energy.compute_run", "energy.compute_run"] + ["series.track_run"] * 2
    )
    # the beat's periodic dispatch-path tasks go first too, the periodic derived ones after
    beat = {e["task"]: e["options"]["priority"] for e in celery_app.conf.beat_schedule.values()}
    assert beat["run.dispatch_pending"] < beat["alert.scan"] and beat["outbox.send"] < beat["schedule.tick"]


def _leased_run(url: str, client: TestClient) -> tuple[uuid.UUID, dict[str, Any], dict[str, str]]:
    eng = create_engine(url)
    with Session(eng, expire_on_commit=False) as s:
        u = create_user(s)
        a = create_agent(s, team=u.team)
        run = create_run(s, agent=a.agent)
        run_service.dispatch(s, run_id=run.id)
        s.commit()
    eng.dispose()
    lid = client.post(f"/api/v1/agents/{a.agent.id}/lease?wait_s=0", headers=a.headers).json()["lease"][
        "lease_id"
    ]
    assert (
        client.post(f"/api/v1/runs/{run.id}/start", json={"lease_id": lid}, headers=a.headers).status_code
        == 200
    )
    body = {
        "lease_id": lid,
        "upload_id": str(uuid.uuid4()),
        "engine_result": engine_document(ios=1_000_000),
        "engine_exit_code": 0,
        "started_at": "2026-11-21T10:00:00Z",
        "finished_at": "2026-11-21T10:00:25Z",
        "power": power_doc(),
    }
    return run.id, body, a.headers


def test_redis_down_during_a_commit_loses_no_task(env: tuple[str, LocalRedis]) -> None:
    from backend.db import unit_of_work
    from backend.main import create_app

    url, r = env
    with TestClient(create_app(), raise_server_exceptions=True) as client:
        run_id, body, agent_headers = _leased_run(url, client)
        r.messages()
        r.stop()
        t0 = time.monotonic()
        resp = client.put(f"/api/v1/runs/{run_id}/result", json=body, headers=agent_headers)
        assert resp.status_code in (200, 201), resp.text  # committed data answers 2xx, Redis or not
        assert time.monotonic() - t0 < 4  # a failed publish is not retried for seconds in the request
        with unit_of_work() as s:
            assert s.get(Run, run_id).status == RunStatus.succeeded  # type: ignore[union-attr]
            unsent = s.scalars(select(OutboxTask).where(OutboxTask.sent_at.is_(None))).all()
            # the result's commit queues the run's energy, the next dispatch and its series' tracking
            queued = {"energy.compute_run", "run.dispatch_pending", "series.track_run"}
            assert {t.name for t in unsent} == queued
            assert any(t.attempts >= 1 and t.last_error for t in unsent)  # the send after commit failed
        r.start()
        names = _drain(r)
        assert sorted(names) == ["energy.compute_run", "run.dispatch_pending", "series.track_run"]
        with unit_of_work() as s:
            assert s.scalars(select(OutboxTask).where(OutboxTask.sent_at.is_(None))).all() == []
            assert s.get(RunEnergy, run_id) is not None


def test_a_duplicate_upload_still_ends_with_energy(env: tuple[str, LocalRedis]) -> None:
    from backend.main import create_app

    url, r = env
    with TestClient(create_app(), raise_server_exceptions=True) as client:
        run_id, body, agent_headers = _leased_run(url, client)
        r.stop()
        first = client.put(f"/api/v1/runs/{run_id}/result", json=body, headers=agent_headers)
        assert first.status_code in (200, 201), first.text
        r.start()
        again = client.put(f"/api/v1/runs/{run_id}/result", json=body, headers=agent_headers)
        assert again.status_code in (200, 201) and again.json()["duplicate"] is True
        assert "energy.compute_run" in _drain(r)
        eng = create_engine(url)
        with Session(eng) as s:
            energy = s.get(RunEnergy, run_id)
            assert energy is not None and energy.total_j > 0
        eng.dispose()


def test_the_beat_repair_task_brings_back_energy_whose_task_was_lost(env: tuple[str, LocalRedis]) -> None:
    from backend.db import unit_of_work
    from backend.main import create_app
    from worker.tasks.outbox import repair

    url, r = env
    with TestClient(create_app(), raise_server_exceptions=True) as client:
        run_id, body, agent_headers = _leased_run(url, client)
        assert client.put(f"/api/v1/runs/{run_id}/result", json=body, headers=agent_headers).status_code in (
            200,
            201,
        )
    assert "energy.compute_run" in [name for name, _ in r.messages()]  # sent, then lost: never run
    assert repair() == 0  # the result was uploaded just now
    with unit_of_work() as s:
        s.get(RunResult, run_id).uploaded_at = utcnow() - timedelta(minutes=10)  # type: ignore[union-attr]
    assert repair() == 1
    assert _drain(r) == ["energy.compute_run"]
    with unit_of_work() as s:
        assert s.get(RunEnergy, run_id) is not None
    assert repair() == 0


def test_the_repair_job_finds_a_run_with_missing_energy(client: TestClient, session: Session) -> None:
    u = create_user(session)
    a = create_agent(session, team=u.team)
    run_id, resp = upload(client, session, u, a, power_doc())
    assert resp.status_code in (200, 201), resp.text
    result = session.get(RunResult, run_id)
    assert result is not None
    assert runs_missing_energy(session) == []  # just uploaded
    result.uploaded_at = utcnow() - timedelta(minutes=10)
    session.flush()
    assert runs_missing_energy(session) == []  # its energy task is still waiting in the outbox
    for row in session.scalars(select(OutboxTask).where(OutboxTask.sent_at.is_(None))):
        row.sent_at = utcnow()  # sent, and then the task failed: energy never appeared
    session.flush()
    assert runs_missing_energy(session) == [run_id]
    assert repair_missing_energy(session) == [run_id]
    queued = session.scalars(select(OutboxTask).where(OutboxTask.sent_at.is_(None))).all()
    assert [(t.name, t.kwargs) for t in queued] == [("energy.compute_run", {"run_id": str(run_id)})]
    assert repair_missing_energy(session) == []  # not queued twice while the first is unsent


def test_a_late_upload_of_a_run_that_ended_long_ago_is_not_repaired_beside_its_own_task(
    client: TestClient, session: Session
) -> None:
    """A result spooled on the host for an hour: `finished_at` (the engine's end) is an hour old,
    but its energy task was queued at the upload. Only the upload's age counts, so the repair does
    not queue a second computation while the first has had no time to run."""
    u = create_user(session)
    a = create_agent(session, team=u.team)
    run_id, resp = upload(client, session, u, a, power_doc())
    assert resp.status_code in (200, 201), resp.text
    run, result = session.get(Run, run_id), session.get(RunResult, run_id)
    assert run is not None and result is not None
    run.started_at = utcnow() - timedelta(hours=1, seconds=30)
    run.finished_at = utcnow() - timedelta(hours=1)
    for row in session.scalars(select(OutboxTask).where(OutboxTask.sent_at.is_(None))):
        row.sent_at = utcnow()  # the upload's task was sent and is running now
    session.flush()
    assert runs_missing_energy(session) == []
    result.uploaded_at = utcnow() - timedelta(minutes=6)  # it never produced energy: repair it
    session.flush()
    assert runs_missing_energy(session) == [run_id]


def test_the_backend_imports_nothing_from_the_worker() -> None:
    import ast

    from tests.conftest import REPO

    offenders = []
    for path in sorted(Path(REPO, "backend").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            names = (
                [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
                if isinstance(node, ast.ImportFrom)
                else []
            )
            offenders += [f"{path.name}: {n}" for n in names if n == "worker" or n.startswith("worker.")]
    assert offenders == []


def test_a_recompute_runs_in_bounded_batches_each_queueing_the_next(
    env: tuple[str, LocalRedis], monkeypatch: pytest.MonkeyPatch
) -> None:
    """energy.recompute_device (and _environment) takes RECOMPUTE_BATCH runs and queues the rest
    as a task of its own: no task outlasts worker/app.py's time limits, whatever the history."""
    from sqlalchemy import update

    from backend.db import unit_of_work
    from backend.main import create_app
    from backend.models import Run
    from worker.tasks import energy

    url, r = env
    with TestClient(create_app(), raise_server_exceptions=True) as client:
        leased = [_leased_run(url, client) for _ in range(3)]
        for run_id, body, headers in leased:
            assert client.put(f"/api/v1/runs/{run_id}/result", json=body, headers=headers).status_code == 201
    _drain(r)  # each run's own energy.compute_run
    ids = sorted(run_id for run_id, _, _ in leased)
    with unit_of_work() as s:  # the three runs on one device
        device_id = s.get(Run, ids[0]).device_id  # type: ignore[union-attr]
        s.execute(update(Run).where(Run.id.in_(ids)).values(device_id=device_id))
    monkeypatch.setattr(energy, "RECOMPUTE_BATCH", 2)
    assert energy.recompute_device(str(device_id)) == 2
    nxt = r.messages()
    assert nxt == [("energy.recompute_device", {"device_id": str(device_id), "after_id": str(ids[1])})]
    assert energy.recompute_device(**nxt[0][1]) == 1  # the last run, and nothing queued after it
    assert r.messages() == []
