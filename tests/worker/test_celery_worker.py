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

VISIBILITY_S = 5

# A worker that takes a task as ours do (acknowledged when it ends) and dies holding it
# (SIGKILLed: it never closes its connection, which would give the task back)
DYING_WORKER = """
import sys, time, kombu
with kombu.Connection(sys.argv[1]) as c:
    m = c.SimpleQueue(sys.argv[2]).get(timeout=30)
    print(m.headers["id"], flush=True)
    time.sleep(300)
"""
# that task's queue, which no worker consumes until the dying one took it
ORPHANS = "orphans"


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
    env = {
        **os.environ,
        "IOWATT_DATABASE_URL": url,
        "IOWATT_REDIS_URL": broker,
        # a task whose worker died is taken again after 5 s here, 300 s by default (worker/app.py)
        "IOWATT_TASK_VISIBILITY_TIMEOUT_S": str(VISIBILITY_S),
    }
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


def test_a_task_whose_worker_died_holding_it_runs_on_another_after_the_visibility_timeout(
    worker: Worker,
) -> None:
    """A whole worker that dies (SIGKILL, OOM, a node lost) tells nobody: its task waits, as
    unacknowledged, for the visibility timeout (worker/app.py; Celery's default was an hour), then
    a live worker puts it back and runs it (kombu looks every 10 s)."""
    import sys
    import time
    import uuid

    from celery import Celery

    offset = worker.log.stat().st_size
    task_id = str(uuid.uuid4())
    app = Celery(broker=worker.broker)
    app.send_task(
        "energy.recompute_device", kwargs={"device_id": str(uuid.uuid4())}, task_id=task_id, queue=ORPHANS
    )
    dying = subprocess.Popen(
        [sys.executable, "-c", DYING_WORKER, worker.broker, ORPHANS], stdout=subprocess.PIPE, text=True
    )
    try:
        assert dying.stdout is not None and dying.stdout.readline().strip() == task_id
    finally:
        dying.kill()
        dying.wait()
    died = time.monotonic()
    # the live worker takes the orphans' queue on from now (its restore looks at every queue's
    # unacknowledged tasks, and puts this one back on its own queue): once it is ready, since a
    # broadcast reaches only the workers listening when it is sent
    wait_until(lambda: " ready." in worker.output_since(0), timeout=60, interval=0.2, message="worker ready")
    assert app.control.add_consumer(ORPHANS, reply=True, timeout=10)
    ran = f'"task_id": "{task_id}"'
    wait_until(
        lambda: any(ran in ln and '"task.done"' in ln for ln in worker.output_since(offset).splitlines()),
        timeout=VISIBILITY_S + 30,
        interval=0.2,
        message=lambda: worker.output_since(offset)[-3000:],
    )
    took = time.monotonic() - died
    # not before the timeout (a task a live worker still runs is not taken from it), well before
    # an hour: the timeout and at most one 10 s look more, and a margin for a loaded machine
    assert VISIBILITY_S <= took < VISIBILITY_S + 25, took
