"""The control lane ahead of page reads (backend/kit/lanes.py, docs/adr/0056).

Every route says its lane where it is declared; an agent's route is never in the bulk lane. With a
process's bulk slots held by real reads (blocked on a table lock this test holds), a heartbeat and a
lease still answer, the next reads wait and then answer, the queue's bound sheds with 503, and the
metrics count it. The gate itself: first come, first served, its time bound, a request that goes
away while it waits."""

import asyncio
import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import psycopg
import pytest
from fastapi import FastAPI, Request
from fastapi.routing import APIRoute, iter_route_contexts
from sqlalchemy import create_engine
from sqlalchemy.engine import Engine
from sqlalchemy.orm import Session
from starlette.testclient import TestClient

from backend.config import get_settings
from backend.kit import lanes
from backend.kit.lanes import LANE_OF, BulkGate, ClientGone, Lane, Overloaded, bulk_lane
from tests.conftest import reset_settings_caches
from tests.factories import AgentCtx, UserCtx, create_agent, create_user
from tests.security.test_authz_matrix import EXPECTED
from tests.services import Postgres
from tests.sql import blocked_on_locks
from tests.waiting import wait_until

# routes that are no FastAPI route and so take no dependency: the static files of the UI and of
# /docs (served on the event loop by Starlette: no thread, no session) and FastAPI's own document
NOT_ROUTES = {("Mount", "/assets"), ("Mount", "/api-docs"), ("Route", "/openapi.json")}


def _lanes_of(route: Any) -> list[Lane]:
    return [LANE_OF[d.call] for d in route.dependant.dependencies if d.call in LANE_OF]


def _routes(app: FastAPI) -> dict[str, list[Lane]]:
    out: dict[str, list[Lane]] = {}
    for r in iter_route_contexts(app.routes):
        if isinstance(r.original_route, APIRoute):
            for method in r.methods or ():
                out[f"{method} {r.path}"] = _lanes_of(r)
        else:
            assert (type(r.original_route).__name__, getattr(r, "path", None)) in NOT_ROUTES, r
    return out


def test_every_route_has_one_lane_and_the_agents_protocol_is_the_control_lane(
    app_client: TestClient,
) -> None:
    app = app_client.app
    assert isinstance(app, FastAPI)
    routes = _routes(app)
    assert len(routes) > 150
    unclassified = sorted(k for k, v in routes.items() if len(v) != 1)
    assert not unclassified, f"routes without exactly one lane (backend/kit/lanes.py): {unclassified}"
    lane = {k: v[0] for k, v in routes.items()}
    # the authorization matrix's rows that refuse every user (403) and not both agents (an agent's
    # token only), and enrolment: an agent's whole protocol
    agents = {op for op, row in EXPECTED.items() if set(row[1:5]) == {"403"} and set(row[5:7]) != {"403"}} | {
        "POST /api/v1/agents/enroll"
    }
    assert len(agents) == 11, agents
    assert {op: lane[op] for op in agents} == dict.fromkeys(agents, Lane.CONTROL)
    # the writes that put work on the queue or take it off, and what watches the server
    control = {k for k, v in lane.items() if v is Lane.CONTROL}
    assert control - agents == {
        "POST /api/v1/runs",
        "POST /api/v1/runs/{run_id}/cancel",
        "POST /api/v1/run-groups",
        "POST /api/v1/run-groups/{group_id}/cancel",
        "POST /api/v1/campaigns",
        "GET /api/v1/health",
        "GET /api/v1/health/live",
        "GET /metrics",
    }
    assert lane["GET /api/v1/runs"] is Lane.BULK and lane["GET /api/v1/compare"] is Lane.BULK


@pytest.fixture
def own_database(pg: Postgres, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """A database of its own whose rows are committed (the requests below run side by side on
    connections of their own); the session's database and settings put back after."""
    url = pg.migrated_database(f"iowatt_lanes_{uuid.uuid4().hex[:8]}")
    monkeypatch.setenv("IOWATT_DATABASE_URL", url)
    reset_settings_caches()
    try:
        yield url
    finally:
        monkeypatch.undo()
        reset_settings_caches()


async def _until(condition: Any, message: str) -> None:
    # the condition looks from a thread: the event loop keeps serving the requests meanwhile
    await asyncio.to_thread(wait_until, condition, timeout=30, message=message)


async def _scenario(app: FastAPI, engine: Engine, url: str, user: UserCtx, agent: AgentCtx) -> None:
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://lanes.test") as c:
        reviews = "/api/v1/reviews"
        with psycopg.connect(url.replace("postgresql+psycopg://", "postgresql://")) as locker:
            # a real read held as long as this test likes: GET /reviews waits for the table's lock
            locker.execute("LOCK TABLE reviews IN ACCESS EXCLUSIVE MODE")
            held = [asyncio.create_task(c.get(reviews, headers=user.headers)) for _ in range(2)]
            await _until(lambda: blocked_on_locks(engine) == 2, "two reads blocked on the lock")
            gate = lanes.gate()
            assert (gate.running, gate.waiting) == (2, 0)
            queued = [asyncio.create_task(c.get(reviews, headers=user.headers)) for _ in range(2)]
            await _until(lambda: gate.waiting == 2, "the third and fourth read wait for a slot")

            # the control lane: both bulk slots held, two reads waiting, the agent is answered
            hb = await c.post(
                f"/api/v1/agents/{agent.agent.id}/heartbeat", json={"state": "idle"}, headers=agent.headers
            )
            assert hb.status_code == 200, hb.text
            lease = await c.post(
                f"/api/v1/agents/{agent.agent.id}/lease?wait_s=0",
                json={"boot_id": str(uuid.uuid4())},
                headers=agent.headers,
            )
            assert lease.status_code == 200 and lease.json()["lease"] is None, lease.text

            # past the queue's bound (2 here): shed at once, nothing done, a clear answer
            shed = await c.get(reviews, headers=user.headers)
            assert shed.status_code == 503, shed.text
            body = shed.json()
            assert body["error"] == "overloaded" and body["detail"]["reason"] == "queue_full", body
            assert int(shed.headers["Retry-After"]) >= 1 and body["request_id"]
            assert body["detail"]["retry_after_s"] == int(shed.headers["Retry-After"])  # the UI reads it
            assert not any(t.done() for t in held + queued)
            assert (gate.running, gate.waiting) == (2, 2)
            locker.commit()  # the lock goes: the held reads end, the waiting ones run in turn

        answers = await asyncio.gather(*held, *queued)
        assert [a.status_code for a in answers] == [200] * 4, [a.text for a in answers]
        assert (gate.running, gate.waiting) == (0, 0)
        metrics = (await c.get("/metrics")).text
    shed_line = 'iowatt_api_bulk_shed_total{reason="queue_full"}'
    assert any(line.startswith(shed_line) and float(line.split()[-1]) >= 1 for line in metrics.splitlines())
    assert "iowatt_api_bulk_wait_seconds_count" in metrics and "iowatt_api_bulk_waiting" in metrics


def test_reads_holding_the_bulk_slots_leave_heartbeats_and_leases_answered(
    own_database: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = get_settings()
    monkeypatch.setattr(settings, "bulk_concurrency", 2)
    monkeypatch.setattr(settings, "bulk_queue", 2)
    monkeypatch.setattr(settings, "bulk_wait_s", 60.0)
    engine = create_engine(own_database)
    try:
        with Session(engine, expire_on_commit=False) as s:
            user = create_user(s)
            agent = create_agent(s, team=user.team)
            s.commit()
        from backend.main import create_app

        asyncio.run(_scenario(create_app(), engine, own_database, user, agent))
    finally:
        engine.dispose()


def test_the_gate_admits_first_come_first_served_and_bounds_the_wait() -> None:
    async def scenario() -> None:
        gate = BulkGate(limit=1, max_waiting=10, max_wait_s=30.0)
        admitted: list[str] = []

        async def request(name: str) -> None:
            await gate.enter()
            admitted.append(name)
            gate.exit()

        assert await gate.enter() == 0.0  # the one slot, held
        tasks = []
        for name in "abcd":
            tasks.append(asyncio.create_task(request(name)))
            await asyncio.sleep(0)  # each queues before the next is made (no time passes)
        assert gate.waiting == 4 and admitted == []
        tasks[2].cancel()  # "c" goes away while it waits: its place is given up
        with pytest.raises(asyncio.CancelledError):
            await tasks[2]
        assert gate.waiting == 3
        gate.exit()
        await asyncio.gather(tasks[0], tasks[1], tasks[3])
        assert admitted == ["a", "b", "d"] and (gate.running, gate.waiting) == (0, 0)

        # the time bound: a slot held past it sheds the waiting request (the wait is what is tested)
        short = BulkGate(limit=1, max_waiting=10, max_wait_s=0.05)
        await short.enter()
        with pytest.raises(Overloaded) as shed:
            await short.enter()
        assert shed.value.detail["reason"] == "wait_timeout" and shed.value.status_code == 503
        assert short.waiting == 0 and short.running == 1
        short.exit()
        assert short.running == 0

        # 0: no limit, nothing counted
        off = BulkGate(limit=0, max_waiting=0, max_wait_s=1.0)
        for _ in range(100):
            await off.enter()
        assert (off.running, off.waiting) == (0, 0)

    asyncio.run(scenario())


def test_a_read_whose_client_left_while_it_waited_is_not_run() -> None:
    """The client goes away while its request waits (uvicorn then answers `receive()` with
    http.disconnect): once its turn comes the request is not run, its slot passes on, the log says
    499. One that did not wait is not asked: it is as fresh as any."""

    asked: list[str] = []

    def request(gone: asyncio.Event, method: str = "GET") -> Request:
        async def receive() -> dict[str, Any]:
            asked.append(method)
            await gone.wait()
            return {"type": "http.disconnect"}

        return Request({"type": "http", "method": method, "path": "/", "headers": []}, receive)

    async def scenario() -> None:
        g = lanes.gate()  # this loop's gate, from the settings (2 by default)
        assert g.limit >= 1
        gone, stays = asyncio.Event(), asyncio.Event()
        held = [bulk_lane(request(stays)) for _ in range(g.limit)]
        for h in held:
            await anext(h)  # admitted at once: each holds a slot

        async def admitted() -> None:
            await anext(bulk_lane(request(gone)))

        waiting = asyncio.create_task(admitted())
        await asyncio.sleep(0)
        assert g.waiting == 1
        gone.set()  # its client leaves while it waits
        await held[0].aclose()  # a slot passes to it
        with pytest.raises(ClientGone) as left:
            await waiting
        assert left.value.status_code == 499
        assert (g.running, g.waiting) == (g.limit - 1, 0)  # its slot went back, not kept
        # a POST that waited is not asked: its next message may be its body, unread yet (an import)
        extra = bulk_lane(request(stays))
        await anext(extra)  # every slot held again
        post = bulk_lane(request(gone, "POST"))

        async def post_admitted() -> None:
            await anext(post)

        queued = asyncio.create_task(post_admitted())
        await asyncio.sleep(0)
        assert g.waiting == 1
        await extra.aclose()
        await queued
        assert asked == ["GET"]
        await post.aclose()
        for h in held[1:]:
            await h.aclose()
        assert g.running == 0

    asyncio.run(scenario())


def test_a_route_waiting_on_another_process_hands_its_slot_on() -> None:
    """`lanes.hand_back` (a review's PDF while Chromium prints): from the route's thread, the slot
    goes to the oldest waiting request at once; the request's end gives nothing back twice."""

    def request() -> Request:
        async def receive() -> dict[str, Any]:
            return {"type": "http.request", "body": b"", "more_body": False}

        return Request({"type": "http", "method": "GET", "path": "/", "headers": []}, receive)

    async def scenario() -> None:
        g = lanes.gate()
        printing = request()
        held = [bulk_lane(printing)] + [bulk_lane(request()) for _ in range(g.limit - 1)]
        for h in held:
            await anext(h)
        waiting = asyncio.create_task(anext(bulk_lane(request())))
        await asyncio.sleep(0)
        assert (g.running, g.waiting) == (g.limit, 1)
        # the sync route's thread hands it back (twice: once counts); the waiting read runs
        await asyncio.to_thread(lambda: (lanes.hand_back(printing), lanes.hand_back(printing)))
        await asyncio.wait_for(waiting, timeout=30)
        assert (g.running, g.waiting) == (g.limit, 0)
        await held[0].aclose()  # the printing request ends: its slot was already given
        assert g.running == g.limit
        lanes.hand_back(request())  # a request that holds no slot (the control lane): nothing
        assert g.running == g.limit

    asyncio.run(scenario())


def test_an_upload_arrives_outside_its_slot_and_takes_one_again_in_turn() -> None:
    """`lanes.outside` (POST /imports receiving its body): the slot serves the next request while
    the bytes arrive, and the upload then waits its turn for one, behind what queued meanwhile."""

    def request() -> Request:
        async def receive() -> dict[str, Any]:
            return {"type": "http.request", "body": b"", "more_body": False}

        return Request({"type": "http", "method": "POST", "path": "/", "headers": []}, receive)

    async def scenario() -> None:
        g = lanes.gate()
        importing = request()
        held = [bulk_lane(importing)] + [bulk_lane(request()) for _ in range(g.limit - 1)]
        for h in held:
            await anext(h)
        read = bulk_lane(request())
        waiting = asyncio.create_task(anext(read))
        await asyncio.sleep(0)
        assert g.waiting == 1
        arrived = asyncio.Event()

        async def upload() -> None:
            async with lanes.outside(importing):
                await asyncio.wait_for(waiting, timeout=30)  # the read runs while the bytes arrive
                assert (g.running, g.waiting) == (g.limit, 0)
            arrived.set()  # the import's work: only once it holds a slot again

        parsing = asyncio.create_task(upload())
        for _ in range(100):  # a few turns of the loop: the read runs, the upload queues again
            if waiting.done() and g.waiting == 1:
                break
            await asyncio.sleep(0)
        # the body is in; its turn is behind the read, which runs
        assert waiting.done() and g.waiting == 1 and not arrived.is_set()
        await read.aclose()  # the read ends: its slot goes to the import
        await asyncio.wait_for(parsing, timeout=30)
        assert arrived.is_set() and (g.running, g.waiting) == (g.limit, 0)
        for h in held:
            await h.aclose()  # the import's end gives back the slot it took again
        assert g.running == 0

    asyncio.run(scenario())
