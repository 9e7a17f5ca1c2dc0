"""Several API processes behind one deployment (docs/adr/0016): a long-poll superseded by a newer
poll of the same agent in ANOTHER process, a dispatched run's wake-up reaching the process where
the agent waits, Prometheus metrics summed across processes, /health alike in each, and
`backend.serve` starting N processes on one port. Real uvicorn processes, PostgreSQL and Redis.
Timings are only checked against bounds an order of magnitude apart. The pair of API processes is
tests/backend/conftest.py's, shared with test_longpoll.py in one test process (LIVE_API_GROUP)."""

import concurrent.futures
import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families
from sqlalchemy import create_engine, update
from sqlalchemy.orm import Session

from backend.agent import wake
from backend.models import Agent
from backend.run import service as run_service
from tests.backend.conftest import LIVE_API_GROUP, Api, Pair, children, start_api, stop_api, until_up
from tests.conftest import REPO
from tests.factories import AgentCtx, create_agent, create_run, create_user
from tests.services import free_port
from tests.stack import TLS
from tests.waiting import wait_until

pytestmark = pytest.mark.xdist_group(LIVE_API_GROUP)


@pytest.fixture
def committed(pair: Pair) -> Iterator[Session]:
    eng = create_engine(pair.db_url)
    with Session(eng, expire_on_commit=False) as s:
        yield s
    eng.dispose()


def _poll(api: Api, a: AgentCtx, wait_s: float) -> tuple[httpx.Response, float]:
    t0 = time.monotonic()
    r = httpx.post(
        f"{api.url}/agents/{a.agent.id}/lease",
        params={"wait_s": wait_s},
        headers=a.headers,
        timeout=wait_s + 15,
        verify=TLS,
    )
    return r, time.monotonic() - t0


def _stale(s: Session, a: AgentCtx) -> datetime:
    """The agent last seen a minute ago, so the next poll's first look stamps it; returns now."""
    s.execute(
        update(Agent)
        .where(Agent.id == a.agent.id)
        .values(last_heartbeat_at=datetime.now(UTC) - timedelta(minutes=1))
    )
    s.commit()
    return datetime.now(UTC)


def _await_first_look(db_url: str, a: AgentCtx, since: datetime) -> None:
    eng = create_engine(db_url)

    def looked() -> bool:
        with eng.connect() as c:
            seen = c.execute(
                Agent.__table__.select()
                .with_only_columns(Agent.last_heartbeat_at)
                .where(Agent.id == a.agent.id)
            ).scalar_one()
            return seen is not None and seen >= since

    try:
        wait_until(looked, timeout=30, message="the long-poll made its first look")
    finally:
        eng.dispose()


def test_a_poll_in_another_process_supersedes_the_waiting_one(pair: Pair, committed: Session) -> None:
    """Issue 11 with several API processes: a restarted agent's new poll lands in process B while
    its dead process's poll still waits in process A. A's poll ends at once with no lease; the run
    dispatched next goes to B's poll (a wake-up reaches every process)."""
    u = create_user(committed)
    a = create_agent(committed, team=u.team)
    committed.commit()
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        since = _stale(committed, a)
        old = pool.submit(_poll, pair.a, a, 25)
        _await_first_look(pair.db_url, a, since)
        assert not old.done()
        since = _stale(committed, a)
        new = pool.submit(_poll, pair.b, a, 25)
        _await_first_look(pair.db_url, a, since)  # B's poll waits now
        r_old, took_old = old.result(timeout=15)
        assert r_old.status_code == 200 and r_old.json()["lease"] is None
        assert took_old < 12, took_old  # ended by B's poll, not by its own 25 s wait
        time.sleep(0.5)
        assert not new.done()  # nothing ends the newer poll meanwhile
        run = create_run(committed, agent=a.agent)
        assert run_service.dispatch(committed, run_id=run.id) == a.agent.id
        committed.commit()
        t0 = time.monotonic()
        wake.wake(a.agent.id)
        r_new, _ = new.result(timeout=30)
        after_wake = time.monotonic() - t0
    assert r_new.status_code == 200, r_new.text
    assert r_new.json()["lease"]["run_id"] == str(run.id)
    assert after_wake < 3.0, after_wake  # woken, not found by the periodic re-check


def test_the_older_poll_does_not_supersede_the_newer_across_processes(pair: Pair, committed: Session) -> None:
    """Generations are ordered: a poll of the same agent that started earlier in the other process
    never ends the newer one (both processes see the announcements in the same order)."""
    u = create_user(committed)
    a = create_agent(committed, team=u.team)
    committed.commit()
    with concurrent.futures.ThreadPoolExecutor(3) as pool:
        since = _stale(committed, a)
        first = pool.submit(_poll, pair.a, a, 20)
        _await_first_look(pair.db_url, a, since)  # its generation is taken (before its first look)
        second = pool.submit(_poll, pair.b, a, 20)
        r_first, _ = first.result(timeout=15)
        assert r_first.json()["lease"] is None
        time.sleep(1.0)
        assert not second.done()  # the newest poll, in B, still waits
        third = pool.submit(_poll, pair.a, a, 20)  # and a newer one in A ends it
        r_second, took = second.result(timeout=15)
        assert r_second.json()["lease"] is None and took < 12
        time.sleep(0.5)
        assert not third.done()
        run = create_run(committed, agent=a.agent)
        assert run_service.dispatch(committed, run_id=run.id) == a.agent.id
        committed.commit()
        wake.wake(a.agent.id)
        r_third, _ = third.result(timeout=30)
    assert r_third.json()["lease"]["run_id"] == str(run.id)


def _metrics(api: Api) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    r = httpx.get(f"{api.base}/metrics", timeout=15, verify=TLS)
    assert r.status_code == 200, r.text
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for fam in text_string_to_metric_families(r.text)
        for s in fam.samples
    }


def test_request_metrics_are_summed_across_processes(pair: Pair) -> None:
    key = (
        "iowatt_http_request_duration_seconds_count",
        (("method", "GET"), ("route", "/api/v1/health"), ("status", "200")),
    )
    before_a, before_b = _metrics(pair.a).get(key, 0.0), _metrics(pair.b).get(key, 0.0)
    assert before_a == before_b  # whichever process answers the scrape, the same sum
    for api, n in ((pair.a, 3), (pair.b, 4)):
        for _ in range(n):
            assert httpx.get(f"{api.url}/health", timeout=10, verify=TLS).status_code == 200
    assert _metrics(pair.a)[key] == before_a + 7
    assert _metrics(pair.b)[key] == before_a + 7
    # each process wrote its own file: the sum is of two processes, not one counting everything
    pids = {p.name.rsplit("_", 1)[-1].removesuffix(".db") for p in pair.metrics_dir.glob("histogram_*.db")}
    assert {str(pair.a.pid), str(pair.b.pid)} <= pids
    # and an upload answered "already stored" is counted in the family every process writes to
    families = {
        fam.name
        for fam in text_string_to_metric_families(httpx.get(f"{pair.b.base}/metrics", verify=TLS).text)
    }
    assert "iowatt_upload_duplicates" in families
    # the bulk lane's figures (docs/adr/0056), summed the same way: each admitted bulk request's wait
    # is counted once, in the process that served it; the gauges sum the live processes' values
    waits = ("iowatt_api_bulk_wait_seconds_count", ())
    before = _metrics(pair.a).get(waits, 0.0)
    for api, n in ((pair.a, 2), (pair.b, 3)):
        for _ in range(n):  # anonymous and in the bulk lane
            assert httpx.get(f"{api.url}/auth/oidc", timeout=10, verify=TLS).status_code == 200
    after_a, after_b = _metrics(pair.a), _metrics(pair.b)
    assert after_a[waits] == after_b[waits] == before + 5
    assert after_a[("iowatt_api_bulk_waiting", ())] == after_a[("iowatt_api_bulk_running", ())] == 0


def test_health_answers_alike_in_every_process(pair: Pair) -> None:
    answers = [httpx.get(f"{api.url}/health", timeout=10, verify=TLS) for api in (pair.a, pair.b)]
    assert [r.status_code for r in answers] == [200, 200]
    assert answers[0].json() == answers[1].json() == {"status": answers[0].json()["status"]}


def test_serve_runs_n_processes_on_one_port_and_sums_their_metrics(
    pair: Pair, committed: Session, redis_url: str, tmp_path: Path
) -> None:
    """`python -m backend.serve --workers 2` (as make up, compose and bench/load start the API):
    two worker processes answer on one port; a scrape sums what every process counted; the
    metrics directory it was given starts empty (old files of a previous run are removed). Stopped
    while an agent's long-poll waits, it exits after its shutdown grace (IOWATT_API_SHUTDOWN_GRACE_S,
    2 s here), not at the end of the poll's 30 s: the poll ends as a closed connection."""
    metrics = tmp_path / "metrics"
    metrics.mkdir()
    (metrics / "counter_999999.db").write_bytes(b"stale")
    port = free_port()
    env = {
        **os.environ,
        "IOWATT_DATABASE_URL": pair.db_url,
        "IOWATT_REDIS_URL": redis_url,
        "IOWATT_ENV": "test",
        "PROMETHEUS_MULTIPROC_DIR": str(metrics),
        "IOWATT_API_SHUTDOWN_GRACE_S": "2",
    }
    cmd = [sys.executable, "-m", "backend.serve", "--port", str(port), "--workers", "2"]
    log = tmp_path / "serve.log"
    api = until_up(start_api(cmd, env, log), log, port)
    try:
        assert not (metrics / "counter_999999.db").exists()
        wait_until(lambda: len(children(api.proc.pid)) >= 2, timeout=30, message="two worker processes")
        n = 30
        with concurrent.futures.ThreadPoolExecutor(6) as pool:
            # a client of its own per request (not tests.stack.TLS): requests made that slowly reach
            # both processes; made ten times faster, one process accepted all 30 at load 15
            codes = list(pool.map(lambda _: httpx.get(f"{api.url}/health", timeout=10).status_code, range(n)))
        assert codes == [200] * n
        key = (
            "iowatt_http_request_duration_seconds_count",
            (("method", "GET"), ("route", "/api/v1/health"), ("status", "200")),
        )
        # the readiness probes of _start counted too: at least n, and every scrape the same sum
        first, second = _metrics(api)[key], _metrics(api)[key]
        assert first >= n and second == first
        served = [p for p in metrics.glob("histogram_*.db") if p.stat().st_size > 0]
        assert len(served) >= 2, served  # both processes answered some: the sum is over both
        # a worker process killed (the kernel's OOM killer, a crash): the supervisor starts another
        # in its place and the port keeps answering (make up's and compose's model; tests/faults
        # kills processes of the several-port topology instead)
        own = Path(f"/proc/{api.proc.pid}/cmdline").read_bytes()

        def workers() -> list[int]:
            out = []
            for pid in children(api.proc.pid):
                with contextlib.suppress(OSError):
                    if Path(f"/proc/{pid}/cmdline").read_bytes() == own:
                        out.append(pid)
            return out

        victim = workers()[0]
        os.kill(victim, signal.SIGKILL)
        wait_until(
            lambda: victim not in workers() and len(workers()) >= 2,
            timeout=60,
            message="a new worker process in the killed one's place",
        )
        assert httpx.get(f"{api.url}/health", timeout=10).status_code == 200
        a = create_agent(committed, team=create_user(committed).team)
        committed.commit()
        with concurrent.futures.ThreadPoolExecutor(1) as pool:
            since = _stale(committed, a)
            poll = pool.submit(_poll, api, a, 30)
            _await_first_look(pair.db_url, a, since)  # the poll waits now
            t0 = time.monotonic()
            os.killpg(api.proc.pid, 15)
            api.proc.wait(timeout=40)
            stopped = time.monotonic() - t0
            with pytest.raises(httpx.HTTPError):  # cut, not answered
                poll.result(timeout=40)
        assert stopped < 20, stopped  # the grace (2 s) and the shutdown, not the poll's 30 s
    finally:
        stop_api(api.proc)


def test_serve_refuses_a_bad_worker_count() -> None:
    env = {**os.environ, "IOWATT_API_WORKERS": "many"}
    r = subprocess.run(
        [sys.executable, "-m", "backend.serve", "--port", str(free_port())],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 2
    assert "IOWATT_API_WORKERS" in r.stderr


def test_the_shutdown_grace_is_read_from_the_environment_or_refused_by_name() -> None:
    from backend.serve import DEFAULT_SHUTDOWN_GRACE_S, shutdown_grace_s

    assert shutdown_grace_s({}) == DEFAULT_SHUTDOWN_GRACE_S
    assert [shutdown_grace_s({"IOWATT_API_SHUTDOWN_GRACE_S": v}) for v in ("0", " 7 ", "300")] == [0, 7, 300]
    for bad in ("301", "-1", "1.5", "five"):
        with pytest.raises(ValueError, match="IOWATT_API_SHUTDOWN_GRACE_S"):
            shutdown_grace_s({"IOWATT_API_SHUTDOWN_GRACE_S": bad})
