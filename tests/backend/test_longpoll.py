"""The lease long-poll against a real uvicorn server on a committed database: a dispatched run
wakes it at once, revoking the agent ends it with a 401, and waiting agents hold no worker
thread (other requests still answer while more long-polls wait than the threadpool has threads).
Timings are only checked against bounds an order of magnitude apart; speed is measured in
bench/longpoll/. The API is tests/backend/conftest.py's (LIVE_API_GROUP: one test process)."""

import concurrent.futures
import contextlib
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient
from sqlalchemy import Connection, String, create_engine, func, literal_column, select, update
from sqlalchemy.orm import Session

from backend.agent import service as agent_service
from backend.agent import wake
from backend.models import Agent
from backend.run import service as run_service
from tests.backend.conftest import LIVE_API_GROUP, Pair
from tests.factories import AgentCtx, UserCtx, create_agent, create_run, create_user
from tests.services import free_port
from tests.sql import SAVEPOINTS, captured_sql
from tests.stack import TLS, http
from tests.waiting import wait_until

pytestmark = pytest.mark.xdist_group(LIVE_API_GROUP)


@dataclass
class Live:
    url: str
    db_url: str
    log: Path


@pytest.fixture(scope="module")
def live_api(pair: Pair) -> Live:
    """The first of tests/backend/conftest.py's pair of API processes (a real uvicorn process on a
    migrated database of its own), shared with test_multiproc.py in one test process."""
    return Live(url=pair.a.url, db_url=pair.db_url, log=pair.a.log)


@pytest.fixture
def committed(live_api: Live) -> Iterator[Session]:
    eng = create_engine(live_api.db_url)
    with Session(eng, expire_on_commit=False) as s:
        yield s
    eng.dispose()


def _setup(s: Session, n_agents: int = 1) -> tuple[UserCtx, list[AgentCtx]]:
    """Agents online but last seen a minute ago, so a long-poll's first look stamps them."""
    u = create_user(s)
    agents = [create_agent(s, team=u.team) for _ in range(n_agents)]
    for a in agents:
        a.agent.last_heartbeat_at = datetime.now(UTC) - timedelta(minutes=1)
    s.commit()
    return u, agents


def _await_first_looks(live: Live, agents: list[AgentCtx], since: datetime) -> None:
    """The agents' long-polls have made their first look, which stamps `last_heartbeat_at` (last
    stamped a minute ago: older than LIVENESS_STAMP_S): from then on each waits for a wake-up (its
    waiter was registered before the look)."""
    ids = [a.agent.id for a in agents]
    eng = create_engine(live.db_url)

    def looked() -> bool:
        with eng.connect() as c:
            q = select(func.count()).where(Agent.id.in_(ids), Agent.last_heartbeat_at >= since)
            return c.execute(q).scalar_one() == len(ids)

    try:
        wait_until(looked, timeout=30, message=f"{len(ids)} long-polls made their first look")
    finally:
        eng.dispose()


def _poll(
    live: Live, a: AgentCtx, wait_s: float, client: httpx.Client | None = None
) -> tuple[httpx.Response, float]:
    t0 = time.monotonic()
    with contextlib.ExitStack() as stack:
        c = client or stack.enter_context(http())
        r = c.post(
            f"{live.url}/agents/{a.agent.id}/lease",
            params={"wait_s": wait_s},
            headers=a.headers,
            timeout=wait_s + 15,
        )
    return r, time.monotonic() - t0


def test_a_dispatched_run_wakes_the_waiting_long_poll(live_api: Live, committed: Session) -> None:
    """With a wait past the offline threshold (45 s), as the server names to a large fleet (ADR
    0053; the server honoured up to 30 s before): a run queued mid-wait is leased at once."""
    _, [a] = _setup(committed)
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        since = datetime.now(UTC)
        fut = pool.submit(_poll, live_api, a, 60)
        _await_first_looks(live_api, [a], since)  # the long-poll is waiting now
        assert not fut.done()
        run = create_run(committed, agent=a.agent)
        assert run_service.dispatch(committed, run_id=run.id) == a.agent.id
        committed.commit()
        wake.wake(a.agent.id)  # what worker.tasks.run.dispatch does after its commit
        r, took = fut.result(timeout=30)
    assert r.status_code == 200, r.text
    assert r.json()["lease"]["run_id"] == str(run.id)
    assert took < 10  # woken, not timed out at 60 s


def test_an_idle_long_poll_ends_after_wait_s_with_no_lease(live_api: Live, committed: Session) -> None:
    _, [a] = _setup(committed)
    r, took = _poll(live_api, a, 1.5)
    assert r.status_code == 200 and r.json()["lease"] is None
    assert 1.4 <= took < 10


def test_revoking_the_agent_ends_its_waiting_long_poll_with_401(live_api: Live, committed: Session) -> None:
    u, [a] = _setup(committed)
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        since = datetime.now(UTC)
        fut = pool.submit(_poll, live_api, a, 25)
        _await_first_looks(live_api, [a], since)
        assert not fut.done()
        r = httpx.post(
            f"{live_api.url}/agents/{a.agent.id}/revoke", headers=u.headers, timeout=10, verify=TLS
        )
        assert r.status_code == 200, r.text
        poll, took = fut.result(timeout=40)
    assert poll.status_code == 401 and poll.json()["error"] == "bad_token"
    assert took < 12  # ended by the revocation, not by the 25 s wait


def test_waiting_long_polls_hold_no_worker_thread(live_api: Live, committed: Session) -> None:
    """More long-polls than the threadpool's 40 threads: the API still answers other requests at
    once (a thread per waiting poll would queue them behind the polls for the whole wait)."""
    n, wait_s = 60, 10.0
    u, agents = _setup(committed, n)
    # one client for all polls: building an SSL context per request would starve this process
    with (
        http(limits=httpx.Limits(max_connections=n + 5)) as shared,
        concurrent.futures.ThreadPoolExecutor(n) as pool,
    ):
        since = datetime.now(UTC)
        polls = [pool.submit(_poll, live_api, a, wait_s, shared) for a in agents]
        _await_first_looks(live_api, agents, since)  # all are waiting now
        slowest = 0.0
        with http(headers=u.headers, timeout=10) as c:
            for _ in range(10):
                t0 = time.monotonic()
                assert c.get(f"{live_api.url}/agents").status_code == 200
                slowest = max(slowest, time.monotonic() - t0)
        waiting = sum(not p.done() for p in polls)
        results = [p.result(timeout=60) for p in polls]
    assert waiting == n  # the polls were still waiting while the list answered
    assert slowest < 2.0, slowest  # not queued behind the polls' wait
    assert all(r.status_code == 200 and r.json()["lease"] is None for r, _ in results)


def test_without_redis_the_long_poll_degrades_to_polling_not_an_error(
    client: TestClient, session: Session, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.conftest import reset_settings_caches

    u = create_user(session)
    a = create_agent(session, team=u.team)
    monkeypatch.setenv("IOWATT_REDIS_URL", f"redis://127.0.0.1:{free_port()}/0")  # nobody listens
    reset_settings_caches()
    try:
        t0 = time.monotonic()
        r = client.post(f"/api/v1/agents/{a.agent.id}/lease?wait_s=3", headers=a.headers)
        took = time.monotonic() - t0
    finally:
        monkeypatch.undo()
        reset_settings_caches()
    assert r.status_code == 200 and r.json()["lease"] is None
    assert 2.5 <= took < 15


def test_replacing_the_agent_ends_the_old_processs_waiting_long_poll(
    live_api: Live, committed: Session
) -> None:
    u, _ = _setup(committed, 0)

    def enrol(replace: bool) -> dict[str, str]:
        tok = httpx.post(
            f"{live_api.url}/agents/enrollment-tokens",
            json={"team_id": str(u.team.id)},
            headers=u.headers,
            verify=TLS,
        ).json()["token"]
        body = {"enrollment_token": tok, "name": "lab-r", "hostname": "h", "replace": replace}
        r = httpx.post(f"{live_api.url}/agents/enroll", json=body, verify=TLS)
        assert r.status_code == 201, r.text
        return dict(r.json())

    old = enrol(False)
    old_ctx = AgentCtx(agent=_agent_row(committed, old["agent_id"]), token=old["agent_token"])
    # enrolment stamped it just now: seen a minute ago instead, so the poll's first look stamps it
    _set(committed, old_ctx.agent.id, last_heartbeat_at=datetime.now(UTC) - timedelta(minutes=1))
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        since = datetime.now(UTC)
        fut = pool.submit(_poll, live_api, old_ctx, 25)
        _await_first_looks(live_api, [old_ctx], since)
        assert not fut.done()
        new = enrol(True)
        poll, took = fut.result(timeout=40)
    assert new["agent_id"] == old["agent_id"]
    assert poll.status_code == 401 and took < 12
    new_ctx = AgentCtx(agent=old_ctx.agent, token=new["agent_token"])
    r, _ = _poll(live_api, new_ctx, 0)
    assert r.status_code == 200


def _agent_row(s: Session, agent_id: str) -> Any:
    from backend.models import Agent

    s.expire_all()
    return s.get(Agent, uuid.UUID(agent_id))


def test_a_new_poll_of_a_restarted_agent_gets_the_run_at_once(live_api: Live, committed: Session) -> None:
    """Issue 11: after an agent restart its dead process's long-poll still waits on the server.
    The new process's poll supersedes it and gets the dispatched run within a second."""
    _, [a] = _setup(committed)
    with contextlib.suppress(httpx.TimeoutException):  # the old process dies: its client is gone
        httpx.post(
            f"{live_api.url}/agents/{a.agent.id}/lease",
            params={"wait_s": 25},
            headers=a.headers,
            timeout=1.0,
            verify=TLS,
        )
    # the old poll's look stamped the agent: stale again, so the new poll's first look shows
    _set(committed, a.agent.id, last_heartbeat_at=datetime.now(UTC) - timedelta(minutes=1))
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        since = datetime.now(UTC)
        fut = pool.submit(_poll, live_api, a, 20)
        _await_first_looks(live_api, [a], since)  # the new poll is waiting (the old one superseded)
        assert not fut.done()
        run = create_run(committed, agent=a.agent)
        assert run_service.dispatch(committed, run_id=run.id) == a.agent.id
        committed.commit()
        t0 = time.monotonic()
        wake.wake(a.agent.id)
        r, _ = fut.result(timeout=30)
        after_wake = time.monotonic() - t0
    assert r.status_code == 200, r.text
    assert r.json()["lease"]["run_id"] == str(run.id)
    assert after_wake < 1.0, after_wake


def test_a_lost_wake_up_is_noticed_by_a_bounded_re_check(live_api: Live, committed: Session) -> None:
    """A run assigned while the wake-up was lost (Redis down at the dispatcher's commit) still
    reaches the waiting poll: the poll looks in the database again every few seconds. The same
    re-check keeps the agents of waiting polls online (ADR 0053): another agent, waiting 80 s
    (past the offline threshold) and looking no more, last seen "20 s ago" (as if its wait had
    gone on that long), is stamped by it, and one last seen 20 s ago whose poll is over is not."""
    _, [a, b, gone] = _setup(committed, 3)
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        since = datetime.now(UTC)
        fut = pool.submit(_poll, live_api, a, 25)
        waiting = pool.submit(_poll, live_api, b, 80)
        _await_first_looks(live_api, [a, b], since)  # they wait now: only a re-check can find the run
        assert _poll(live_api, gone, 0)[0].status_code == 200  # a poll that is over
        stale = datetime.now(UTC) - timedelta(seconds=20)
        for other in (b, gone):
            _set(committed, other.agent.id, last_heartbeat_at=stale)
        run = create_run(committed, agent=a.agent)
        assert run_service.dispatch(committed, run_id=run.id) == a.agent.id
        committed.commit()  # and no wake-up
        t0 = time.monotonic()
        r, _ = fut.result(timeout=40)
        took = time.monotonic() - t0
        # the re-check that woke `a` stamped `b` in the same transaction
        _, seen_b, online_b = _row(live_api, b.agent.id)
        assert seen_b > stale and online_b
        assert _row(live_api, gone.agent.id)[1] == stale
        assert not waiting.done()
        assert _poll(live_api, b, 0)[0].status_code == 200  # supersedes b's waiting poll: it ends
        r_b, took_b = waiting.result(timeout=10)
    assert r.status_code == 200 and r.json()["lease"]["run_id"] == str(run.id)
    assert took < wake.RECHECK_S + 2.0, took
    assert r_b.status_code == 200 and r_b.json()["lease"] is None and took_b < 40


def test_a_new_poll_of_the_same_agent_supersedes_the_waiting_one(live_api: Live, committed: Session) -> None:
    """The older poll ends at once with no lease and never takes the run meant for the newer."""
    _, [a] = _setup(committed)
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        since = datetime.now(UTC)
        old = pool.submit(_poll, live_api, a, 25)
        _await_first_looks(live_api, [a], since)
        assert not old.done()
        new = pool.submit(_poll, live_api, a, 25)
        r_old, took_old = old.result(timeout=10)
        assert r_old.status_code == 200 and r_old.json()["lease"] is None
        assert took_old < 5.0  # ended by the newer poll, not by its 25 s wait
        time.sleep(0.5)  # the behaviour under test: nothing ends the newer poll meanwhile
        assert not new.done()
        run = create_run(committed, agent=a.agent)
        assert run_service.dispatch(committed, run_id=run.id) == a.agent.id
        committed.commit()
        wake.wake(a.agent.id)
        r_new, _ = new.result(timeout=30)
    assert r_new.json()["lease"]["run_id"] == str(run.id)


def _row(live: Live, agent_id: uuid.UUID) -> tuple[str, datetime, bool]:
    """The agent row's version (xmin: every committed UPDATE changes it), stamp and online flag."""
    eng = create_engine(live.db_url)
    try:
        with eng.connect() as c:
            xmin_col = literal_column("xmin::text", type_=String)
            q = select(xmin_col, Agent.last_heartbeat_at, Agent.online).where(Agent.id == agent_id)
            xmin, seen, online = c.execute(q).one()
    finally:
        eng.dispose()
    return str(xmin), seen, bool(online)


def _set(s: Session, agent_id: uuid.UUID, **values: Any) -> None:
    s.execute(update(Agent).where(Agent.id == agent_id).values(**values))
    s.commit()


def test_idle_looks_and_heartbeats_of_a_live_agent_write_nothing(live_api: Live, committed: Session) -> None:
    """Issue 11 (bench/load): a waiting long-poll looks again every RECHECK_S and an agent
    heartbeats every 10 s; with 200 idle agents, stamping `last_heartbeat_at` at each made ~60
    write commits a second. A live agent seen less than LIVENESS_STAMP_S ago is not written to;
    a stale stamp, an offline agent or a new agent process (boot id) is stamped at once."""
    assert agent_service.LIVENESS_STAMP_S * 3 <= 45  # a stamp is never stale enough to go offline
    _, [a] = _setup(committed)
    _set(committed, a.agent.id, last_heartbeat_at=datetime.now(UTC) - timedelta(seconds=2))
    url = f"{live_api.url}/agents/{a.agent.id}"
    before = _row(live_api, a.agent.id)
    with http(headers=a.headers, timeout=15) as c:
        for _ in range(3):
            r = c.post(f"{url}/lease", params={"wait_s": 0})
            assert r.status_code == 200 and r.json()["lease"] is None
        assert c.post(f"{url}/heartbeat", json={"state": "idle"}).status_code == 200
        assert _row(live_api, a.agent.id) == before  # looks and a heartbeat, no write
        boot = str(uuid.uuid4())
        assert c.post(f"{url}/lease", params={"wait_s": 0}, json={"boot_id": boot}).status_code == 200
        after_boot = _row(live_api, a.agent.id)
        assert after_boot[1] > before[1]  # a new agent process speaks: stamped at once
        assert c.post(f"{url}/heartbeat", json={"state": "idle", "boot_id": boot}).status_code == 200
        assert _row(live_api, a.agent.id) == after_boot  # the same process again: nothing
        assert c.post(f"{url}/heartbeat", json={"state": "busy", "boot_id": boot}).status_code == 200
        assert _row(live_api, a.agent.id)[0] != after_boot[0]  # a state change is still written

        stale = datetime.now(UTC) - timedelta(seconds=agent_service.LIVENESS_STAMP_S + 1)
        _set(committed, a.agent.id, last_heartbeat_at=stale)
        t0 = datetime.now(UTC)
        assert c.post(f"{url}/lease", params={"wait_s": 0}, json={"boot_id": boot}).status_code == 200
        _, seen, online = _row(live_api, a.agent.id)
        assert seen >= t0 and online  # a look of an agent seen too long ago stamps it

        _set(committed, a.agent.id, online=False, last_heartbeat_at=datetime.now(UTC))
        t1 = datetime.now(UTC)
        assert c.post(f"{url}/heartbeat", json={"state": "idle", "boot_id": boot}).status_code == 200
        _, seen, online = _row(live_api, a.agent.id)
        assert online and seen >= t1  # an agent marked offline is back online at once


def test_an_idle_look_or_heartbeat_takes_no_row_lock_and_writes_nothing(
    client: TestClient, session: Session, connection: Connection, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The statements of a poll that finds nothing and of an idle agent's heartbeat: reads only
    (authentication, the agent, whether it holds a run), no FOR UPDATE, no UPDATE; a poll that
    finds an assigned run still takes it."""
    u = create_user(session)
    a = create_agent(session, team=u.team)
    # the process's count of online agents (a query per 15 s) was taken by a heartbeat or poll
    monkeypatch.setattr(agent_service, "_online_count", (time.monotonic(), 1))
    with captured_sql(connection) as statements:
        r = client.post(f"/api/v1/agents/{a.agent.id}/lease?wait_s=0", headers=a.headers)
        assert r.status_code == 200 and r.json() == {"lease": None, "poll_wait_s": 25}
        idle = [s for s in statements if not s.startswith(SAVEPOINTS)]
        hb = {"state": "idle", "boot_id": str(uuid.uuid4())}
        url = f"/api/v1/agents/{a.agent.id}/heartbeat"
        assert client.post(url, json=hb, headers=a.headers).status_code == 200  # a new process
        statements.clear()
        assert client.post(url, json=hb, headers=a.headers).status_code == 200  # the same again
        heartbeat = [s for s in statements if not s.startswith(SAVEPOINTS)]
        statements.clear()
        run = create_run(session, agent=a.agent)
        assert run_service.dispatch(session, run_id=run.id) == a.agent.id
        session.flush()
        r = client.post(f"/api/v1/agents/{a.agent.id}/lease?wait_s=0", headers=a.headers)
        assert r.status_code == 200 and r.json()["lease"]["run_id"] == str(run.id)
    assert idle and all(s.startswith("SELECT") and "FOR UPDATE" not in s for s in idle), idle
    # one: the look's authentication, which reads the agent with whether it holds a run; the
    # route authenticates in no transaction of its own first (2 statements before, 3 before that;
    # docs/benchmarks.md § A thousand agents, the CPU budget)
    assert len(idle) == 1, "\n".join(s[-200:] for s in idle)
    assert any("FOR UPDATE" in s for s in statements)  # the hand-out locks the run it takes
    # an idle agent's repeated heartbeat: reads only (no lost-run search under row locks)
    assert heartbeat and all(s.startswith("SELECT") and "FOR UPDATE" not in s for s in heartbeat), heartbeat
    # one read: authentication's (the agent, whether it holds a run), not a second of the agent
    assert len(heartbeat) == 1, "\n".join(s[-200:] for s in heartbeat)


def test_the_server_names_the_next_polls_wait_by_its_fleet(
    client: TestClient, session: Session, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each lease answer names the next poll's wait (ADR 0053): 25 s, what every agent asked
    before, while the fleet's polls at 25 s stay under idle_polls_per_s; paced past that, drawn
    within 80-100 % (a fleet started at once does not poll at once), up to longpoll_max_wait_s,
    below the Helm chart's nginx read timeout (90 s). An older agent asks for 25 s and gets it
    (test_an_idle_long_poll_ends_after_wait_s_with_no_lease); a wait past 30 s is honoured
    (test_a_dispatched_run_wakes_the_waiting_long_poll)."""
    from backend.config import get_settings

    s = get_settings()
    u = create_user(session)
    a = create_agent(session, team=u.team)

    def named(online: int, wait_s: float = 0) -> int:
        monkeypatch.setattr(agent_service, "_online_count", (time.monotonic(), online))
        r = client.post(f"/api/v1/agents/{a.agent.id}/lease", params={"wait_s": wait_s}, headers=a.headers)
        assert r.status_code == 200 and r.json()["lease"] is None, r.text
        return int(r.json()["poll_wait_s"])

    assert s.longpoll_max_wait_s == 80 and s.idle_polls_per_s == 12.5
    assert named(1) == named(312) == 25  # 312 agents at 25 s: 12.5 polls a second
    paced = [named(750) for _ in range(8)]  # 60 s
    assert all(48 <= p <= 60 for p in paced) and len(set(paced)) > 1, paced
    assert all(64 <= named(1000) <= 80 for _ in range(4))
    assert all(64 <= named(100_000) <= 80 for _ in range(4))  # bounded
    monkeypatch.setattr(s, "longpoll_max_wait_s", 20)
    assert named(100_000) == 20  # an operator's proxy needs shorter polls: never over the bound


def test_the_re_check_stamps_waiting_agents_in_one_statement(
    session: Session, connection: Connection
) -> None:
    """The re-check's stamp of the agents whose polls wait (agent.service.stamp_waiting): one
    UPDATE for all of them, whatever their number; written only where the stamp is older than
    LIVENESS_STAMP_S, never for an agent marked offline or revoked (its next look decides)."""
    u = create_user(session)
    stale = datetime.now(UTC) - timedelta(seconds=agent_service.LIVENESS_STAMP_S + 5)
    fresh = datetime.now(UTC) - timedelta(seconds=2)
    agents = [create_agent(session, team=u.team).agent for _ in range(5)]
    values = [
        {"last_heartbeat_at": stale},
        {"last_heartbeat_at": stale},
        {"last_heartbeat_at": fresh},
        {"last_heartbeat_at": stale, "online": False},
        {"last_heartbeat_at": stale, "revoked_at": datetime.now(UTC)},
    ]
    for agent, v in zip(agents, values, strict=True):
        session.execute(update(Agent).where(Agent.id == agent.id).values(**{"online": True, **v}))
    session.flush()
    with captured_sql(connection) as statements:
        t0 = datetime.now(UTC)
        assert agent_service.stamp_waiting(session, [x.id for x in agents]) == 2
    assert len(statements) == 1 and statements[0].startswith("UPDATE AGENTS"), statements
    rows = {
        i: (seen_at, online)
        for i, seen_at, online in session.execute(
            select(Agent.id, Agent.last_heartbeat_at, Agent.online).where(
                Agent.id.in_([x.id for x in agents])
            )
        )
    }
    assert [rows[x.id][0] >= t0 for x in agents] == [True, True, False, False, False]
    assert rows[agents[3].id][1] is False  # still offline
