"""A real Celery worker process consuming real tasks from Redis against PostgreSQL."""

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import create_engine, select
from sqlalchemy.orm import Session

from backend.models import OutboxTask, Run, RunStatus
from tests.conftest import REPO
from tests.factories import create_agent, create_run, create_user
from tests.services import Postgres
from tests.waiting import wait_until


@pytest.fixture
def committed_db(pg: Postgres, redis_url: str, db_url: str) -> Iterator[str]:
    url = pg.migrated_database("iowatt_worker")
    yield url


def test_worker_dispatches_a_queued_run_and_wakes_the_agent(committed_db: str, redis_url: str) -> None:
    import redis

    eng = create_engine(committed_db)
    with Session(eng) as s:
        u = create_user(s)
        a = create_agent(s, team=u.team)
        run = create_run(s, agent=a.agent)
        s.commit()
        run_id, agent_id = run.id, a.agent.id
    env = {**os.environ, "IOWATT_DATABASE_URL": committed_db, "IOWATT_REDIS_URL": redis_url}
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "worker.app",
            "worker",
            "--pool=solo",
            "--concurrency=1",
            "--loglevel=INFO",
            "-Q",
            "celery",
            "--without-mingle",
            "--without-gossip",
        ],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        from celery import Celery

        wakes = redis.Redis.from_url(redis_url).pubsub()
        wakes.subscribe(f"iowatt:wake:{agent_id}")  # what the API's long-polls listen on
        producer = Celery(broker=redis_url)
        producer.send_task("run.dispatch", kwargs={"run_id": str(run_id)})
        deadline = time.monotonic() + 60

        def status() -> RunStatus:
            with Session(eng) as s:
                return s.get(Run, run_id).status  # type: ignore[union-attr]

        wait_until(lambda: status() == RunStatus.assigned, timeout=60, message=lambda: f"run {status()}")
        woke = None
        while woke is None and time.monotonic() < deadline:
            msg = wakes.get_message(ignore_subscribe_messages=True, timeout=1.0)
            woke = msg if msg and msg["type"] == "message" else None
        assert woke is not None and woke["channel"] == f"iowatt:wake:{agent_id}".encode()
        wakes.close()
        # the worker announced itself for /health
        assert redis.Redis.from_url(redis_url).get("iowatt:worker:last_seen") is not None
    finally:
        proc.terminate()
        try:
            out, _ = proc.communicate(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            out, _ = proc.communicate()
        eng.dispose()
    assert "run.dispatch" in out


def test_beat_sends_an_outbox_row_that_was_never_sent(
    committed_db: str, redis_url: str, tmp_path: Path
) -> None:
    """A row committed while Redis was down (nothing sent after its commit) reaches a real worker
    through the beat sender `outbox.send` (ADR 0012)."""
    eng = create_engine(committed_db)
    with Session(eng) as s:
        u = create_user(s)
        a = create_agent(s, team=u.team)
        run = create_run(s, agent=a.agent)
        s.flush()
        # written as `enqueue` writes it, but added directly so no send follows the commit
        s.add(OutboxTask(name="run.dispatch", kwargs={"run_id": str(run.id)}))
        s.commit()
        run_id = run.id
    redis_db = redis_url.rsplit("/", 1)[0] + "/5"  # a queue no other test's worker consumes
    env = {**os.environ, "IOWATT_DATABASE_URL": committed_db, "IOWATT_REDIS_URL": redis_db}
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "worker.app",
            "worker",
            "-B",
            "--schedule",
            str(tmp_path / "beat-schedule"),
            "--pool=solo",
            "--loglevel=INFO",
            "--without-mingle",
            "--without-gossip",
        ],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:

        def state() -> tuple[RunStatus, object]:
            with Session(eng) as s:
                return s.get(Run, run_id).status, s.scalars(select(OutboxTask.sent_at)).one()  # type: ignore[union-attr]

        # the beat's sender sent the row and the worker ran the task
        wait_until(
            lambda: state()[0] == RunStatus.assigned and state()[1] is not None,
            timeout=60,
            message=lambda: f"{state()}",
        )
    finally:
        proc.terminate()
        try:
            out, _ = proc.communicate(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            out, _ = proc.communicate()
        eng.dispose()
    assert "outbox.send" in out
