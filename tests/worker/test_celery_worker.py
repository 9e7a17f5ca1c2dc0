"""A real Celery worker process consuming real tasks from Redis against PostgreSQL: one worker (with
its beat, `-B`) for the module's tests, which each make their own user, host and run on its
database and read its log from where they began (a worker's start, ~2 CPU-s of imports, once)."""

import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine, create_engine, select
from sqlalchemy.orm import Session

from backend.models import OutboxTask, Run, RunStatus
from tests.conftest import REPO
from tests.factories import create_agent, create_run, create_user
from tests.services import Postgres, celery_worker_argv, stop
from tests.waiting import wait_until

# the module's tests share its worker: one test process
pytestmark = pytest.mark.xdist_group("celery-worker")


@dataclass
class Worker:
    proc: subprocess.Popen[bytes]
    log: Path
    broker: str  # the Redis database it consumes (no other test's worker consumes it)
    engine: Engine  # its database

    def output_since(self, offset: int) -> str:
        with self.log.open("rb") as f:
            f.seek(offset)
            return f.read().decode(errors="replace")


@pytest.fixture(scope="module")
def worker(pg: Postgres, redis_url: str, db_url: str) -> Iterator[Worker]:
    """`celery -A worker.app worker -B --pool=solo` on a copy of the migrated template and a Redis
    database of its own."""
    url = pg.migrated_database("iowatt_worker")
    broker = redis_url.rsplit("/", 1)[0] + "/5"
    work = Path(tempfile.mkdtemp(prefix="iowatt-worker-test-"))
    log = work / "worker.log"
    env = {**os.environ, "IOWATT_DATABASE_URL": url, "IOWATT_REDIS_URL": broker}
    with log.open("wb") as out:
        proc = subprocess.Popen(
            celery_worker_argv("-B", "--schedule", str(work / "beat-schedule"), "-Q", "celery"),
            cwd=REPO,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    eng = create_engine(url)
    try:
        yield Worker(proc, log, broker, eng)
    finally:
        stop(proc)
        eng.dispose()
        shutil.rmtree(work)


def test_worker_dispatches_a_queued_run_and_wakes_the_agent(worker: Worker) -> None:
    import redis
    from celery import Celery

    offset = worker.log.stat().st_size
    with Session(worker.engine) as s:
        u = create_user(s)
        a = create_agent(s, team=u.team)
        s.commit()
        agent_id = a.agent.id
        wakes = redis.Redis.from_url(worker.broker).pubsub()
        # what the API's long-polls listen on; before the run exists, so no wake-up is missed (beat's
        # dispatch-pending may be the one that dispatches it)
        wakes.subscribe(f"iowatt:wake:{agent_id}")
        run = create_run(s, agent=a.agent)
        s.commit()
        run_id = run.id
    producer = Celery(broker=worker.broker)
    producer.send_task("run.dispatch", kwargs={"run_id": str(run_id)})

    def status() -> RunStatus:
        with Session(worker.engine) as s:
            return s.get(Run, run_id).status  # type: ignore[union-attr]

    # (each look is a session and a query: ten a second, not fifty, for a wait of a second or two)
    wait_until(
        lambda: status() == RunStatus.assigned, timeout=60, interval=0.1, message=lambda: f"run {status()}"
    )

    def woke() -> dict[str, Any] | None:
        msg = wakes.get_message(ignore_subscribe_messages=True, timeout=1.0)
        return msg if msg and msg["type"] == "message" else None

    message = wait_until(woke, timeout=60, interval=0, message="the agent's wake-up")
    assert message["channel"] == f"iowatt:wake:{agent_id}".encode()
    wakes.close()
    # the worker announced itself for /health
    assert redis.Redis.from_url(worker.broker).get("iowatt:worker:last_seen") is not None
    assert "run.dispatch" in worker.output_since(offset)


def test_beat_sends_an_outbox_row_that_was_never_sent(worker: Worker) -> None:
    """A row committed while Redis was down (nothing sent after its commit) reaches a real worker
    through the beat sender `outbox.send` (ADR 0012)."""
    offset = worker.log.stat().st_size
    with Session(worker.engine) as s:
        u = create_user(s)
        a = create_agent(s, team=u.team)
        run = create_run(s, agent=a.agent)
        s.flush()
        # written as `enqueue` writes it, but added directly so no send follows the commit
        row = OutboxTask(name="run.dispatch", kwargs={"run_id": str(run.id)})
        s.add(row)
        s.commit()
        run_id, row_id = run.id, row.id

    def state() -> tuple[RunStatus, object]:
        with Session(worker.engine) as s:
            sent = s.scalars(select(OutboxTask.sent_at).where(OutboxTask.id == row_id)).one()
            return s.get(Run, run_id).status, sent  # type: ignore[union-attr]

    # the beat's sender sent the row and the worker ran the task
    wait_until(
        lambda: state()[0] == RunStatus.assigned and state()[1] is not None,
        timeout=60,
        interval=0.1,
        message=lambda: f"{state()}",
    )
    assert "outbox.send" in worker.output_since(offset)
