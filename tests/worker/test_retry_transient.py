"""Tasks retry transient errors (issue 11): the dispatch task survives a real PostgreSQL fast
restart in the middle of its transaction (AdminShutdown), with bounded backoff; other errors fail
at once."""

import concurrent.futures
import os
import subprocess
import time
from collections.abc import Iterator

import pytest
import redis
import sqlalchemy.exc
from sqlalchemy import create_engine, text
from sqlalchemy.orm import Session

from backend.models import Agent, Run, RunStatus
from tests.conftest import reset_settings_caches
from tests.factories import create_agent, create_run, create_user
from tests.services import PG_BIN, Postgres, _as_pg_user, postgres
from tests.waiting import wait_until
from worker.observe import BACKOFF_S, is_transient, retry_transient


@pytest.fixture
def own_pg(redis_url: str, db_url: str) -> Iterator[tuple[Postgres, str]]:
    """A PostgreSQL of this test's own (it is restarted), as the server's settings."""
    with postgres() as server:
        url = server.migrated_database("iowatt_retry")  # the schema at the migrations' head
        saved = os.environ["IOWATT_DATABASE_URL"]
        os.environ["IOWATT_DATABASE_URL"] = url
        reset_settings_caches()
        try:
            yield server, url
        finally:
            from backend.db import get_engine

            get_engine().dispose()
            os.environ["IOWATT_DATABASE_URL"] = saved
            reset_settings_caches()


def _lock_waiters(url: str) -> int:
    eng = create_engine(url)
    try:
        with eng.connect() as c:
            return int(
                c.scalar(
                    text(
                        "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
                        "AND datname = current_database()"
                    )
                )
                or 0
            )
    finally:
        eng.dispose()


def test_dispatch_survives_a_postgres_fast_restart_mid_task(
    own_pg: tuple[Postgres, str], capfd: pytest.CaptureFixture[str]
) -> None:
    from worker.app import celery_app

    server, url = own_pg
    celery_app.loader.import_default_modules()
    eng = create_engine(url)
    with Session(eng, expire_on_commit=False) as s:
        u = create_user(s)
        a = create_agent(s, team=u.team)
        run = create_run(s, agent=a.agent)
        s.commit()
    locker = Session(eng)
    locker.get(Agent, a.agent.id, with_for_update=True)  # the task will wait on this row lock
    capfd.readouterr()
    pool = concurrent.futures.ThreadPoolExecutor(1)
    try:
        fut = pool.submit(celery_app.tasks["run.dispatch"].run, str(run.id))
        # the task is inside its transaction, blocked (a wait for a state, not a timing claim: a
        # loaded 2-core machine may take a while to get the task's thread that far)
        wait_until(
            lambda: fut.done() or _lock_waiters(url) >= 1,
            timeout=120,
            interval=0.1,
            message="the task waiting on the agent's row lock",
        )
        assert not fut.done(), fut.result()
        t0 = time.monotonic()
        data = server.root / "data"
        pg_ctl = [str(PG_BIN / "pg_ctl"), "-D", str(data), "-l", str(data / "server.log")]
        # the new postmaster must not inherit our pipes (-l): a fast restart ends every session
        subprocess.run(
            _as_pg_user([*pg_ctl, "-m", "fast", "-w", "restart"]),
            check=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            timeout=60,
        )
        assert fut.result(timeout=60) is True  # retried after the restart, and assigned the run
        took = time.monotonic() - t0
    finally:
        # its connection ended with the restart; on a failure before the restart this releases
        # the row lock, so the task ends and the executor's wait returns: the failure shows, not
        # pytest-timeout's "Timeout >300s" of a test waiting forever on a blocked thread
        locker.invalidate()
        pool.shutdown(wait=True)
    eng.dispose()
    assert took < sum(BACKOFF_S) + 10
    eng = create_engine(url)
    with Session(eng) as s:
        assert s.get(Run, run.id).status == RunStatus.assigned  # type: ignore[union-attr]
    eng.dispose()
    err = capfd.readouterr().err
    retried = [line for line in err.splitlines() if '"task.transient_error"' in line]
    assert retried, err[-2000:]
    assert "OperationalError" in retried[0] or "AdminShutdown" in retried[0]


def test_retry_transient_backs_off_bounded_and_gives_up() -> None:
    sleeps: list[float] = []
    calls = 0

    def flaky() -> str:
        nonlocal calls
        calls += 1
        if calls < 3:
            raise redis.ConnectionError("Redis is restarting")
        return "done"

    assert retry_transient(flaky, sleep=sleeps.append)() == "done"
    assert sleeps == list(BACKOFF_S[:2])

    def always_down() -> None:
        raise sqlalchemy.exc.OperationalError("SELECT 1", {}, Exception("terminating connection"))

    sleeps.clear()
    with pytest.raises(sqlalchemy.exc.OperationalError):
        retry_transient(always_down, sleep=sleeps.append)()
    assert sleeps == list(BACKOFF_S) and sum(sleeps) <= 20  # bounded: then the task fails

    def bug() -> None:
        raise ValueError("not transient")

    sleeps.clear()
    with pytest.raises(ValueError):
        retry_transient(bug, sleep=sleeps.append)()
    assert sleeps == []
    assert not is_transient(sqlalchemy.exc.IntegrityError("INSERT", {}, Exception("duplicate key")))
