"""Agents and enrolment tokens on the server: enrolment, token use counts and expiry, listing and
revoking tokens, replace rules, revoking and deleting agents, inventory bounds, the lease route."""

import uuid
from datetime import timedelta
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from backend.agent import service as agent_service
from backend.agent.schemas import EnrollmentTokenCreate, Inventory
from backend.compare.fingerprint import host_facts
from backend.kit.time import utcnow
from backend.models import Agent, EnrollmentToken, Membership, Role, RunStatus
from backend.run import service as run_service
from tests.factories import INVENTORY, UserCtx, create_agent, create_run, create_user

TOKENS = "/api/v1/agents/enrollment-tokens"


def _enrollment_token(client: TestClient, u: UserCtx, **body: Any) -> str:
    r = client.post(TOKENS, json={"team_id": str(u.team.id), **body}, headers=u.headers)
    assert r.status_code == 201, r.text
    return str(r.json()["token"])


def _enroll(client: TestClient, token: str, name: str = "lab-1", **over: Any) -> Any:
    body = {"enrollment_token": token, "name": name, "hostname": f"{name}.example", **over}
    return client.post("/api/v1/agents/enroll", json=body)


def _hb(client: TestClient, agent_id: str, token: str) -> int:
    hdr = {"Authorization": f"Bearer {token}"}
    return client.post(
        f"/api/v1/agents/{agent_id}/heartbeat", json={"state": "idle"}, headers=hdr
    ).status_code


def test_enroll_heartbeat_and_list(client: TestClient, session: Session) -> None:
    u = create_user(session)
    r = _enroll(client, _enrollment_token(client, u), inventory=INVENTORY)
    assert r.status_code == 201, r.text
    agent_id, agent_token = r.json()["agent_id"], r.json()["agent_token"]
    assert _hb(client, agent_id, agent_token) == 200
    listed = client.get("/api/v1/agents", headers=u.headers).json()
    assert listed["total"] == 1
    item = listed["items"][0]
    assert item["online"] is True and item["inventory"]["hostname"] == "host-a"
    assert item["revoked_at"] is None
    policy = item["policy"]
    assert [t["path"] for t in policy["targets"]] == [
        "/srv/bench",
        "/srv/a",
        "/srv/b",
        "/dev/shm/x",
        "/dev/shm/b",
    ]
    assert policy["targets"][0] == {
        "path": "/srv/bench",
        "kind": "directory",
        "writable": True,
        "destructive": False,
        "model": None,
        "serial_sha256": None,
        "size_bytes": None,
        "free_inodes": None,
    }
    # idle_s: null from an agent that does not report its meter's idle baseline (issue 25)
    assert policy["meters"] == [{"name": "plug", "driver": "shelly", "tier": "plug", "idle_s": None}]
    assert policy["default_meter"] is None
    # limits the agent did not send read as the host's defaults (libs/policy's)
    assert policy["limits"]["max_threads"] == 64 and policy["limits"]["max_bytes_written"] is None
    # issue 22: no RAM reported, so no memory limit in force here; files: the host's default
    assert policy["limits"]["max_memory_bytes"] is None and policy["limits"]["max_files"] == "auto"


def test_an_agent_without_a_policy_reads_policy_null(client: TestClient, session: Session) -> None:
    u = create_user(session)
    old = {k: v for k, v in INVENTORY.items() if k != "policy"}
    r = _enroll(client, _enrollment_token(client, u), inventory=old)
    assert r.status_code == 201
    assert client.get(f"/api/v1/agents/{r.json()['agent_id']}", headers=u.headers).json()["policy"] is None


def test_enrollment_tokens_are_single_use_by_default(client: TestClient, session: Session) -> None:
    u = create_user(session)
    tok = _enrollment_token(client, u)
    assert _enroll(client, tok, "a1").status_code == 201
    again = _enroll(client, tok, "a2")
    assert again.status_code == 401 and again.json()["error"] == "bad_enrollment_token"


def test_max_uses_allows_that_many_enrolments(client: TestClient, session: Session) -> None:
    u = create_user(session)
    tok = _enrollment_token(client, u, max_uses=3)
    assert [_enroll(client, tok, f"a{i}").status_code for i in range(4)] == [201, 201, 201, 401]
    listed = client.get(TOKENS, headers=u.headers).json()["items"]
    assert [(t["uses"], t["max_uses"]) for t in listed] == [(3, 3)]


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"ttl_s": 59}, "ttl_s"),
        ({"ttl_s": 30 * 24 * 3600 + 1}, "ttl_s"),
        ({"ttl_s": 10**30}, "ttl_s"),  # once a date overflow (500)
        ({"ttl_s": None}, "ttl_s"),  # tokens always expire
        ({"max_uses": 0}, "max_uses"),
        ({"max_uses": 1001}, "max_uses"),
    ],
)
def test_enrollment_token_bounds_are_422(
    client: TestClient, session: Session, body: dict[str, Any], field: str
) -> None:
    u = create_user(session)
    r = client.post(TOKENS, json={"team_id": str(u.team.id), **body}, headers=u.headers)
    assert r.status_code == 422, r.text
    assert [d["field"] for d in r.json()["detail"]] == [field]


def test_ttl_bounds_are_accepted_and_set_the_expiry(client: TestClient, session: Session) -> None:
    u = create_user(session)
    for ttl in (60, 30 * 24 * 3600):
        r = client.post(TOKENS, json={"team_id": str(u.team.id), "ttl_s": ttl}, headers=u.headers)
        assert r.status_code == 201, r.text
        row = session.get(EnrollmentToken, uuid.UUID(r.json()["id"]))
        assert row is not None and row.expires_at is not None
        assert abs((row.expires_at - utcnow()).total_seconds() - ttl) < 30


def test_an_expired_token_is_401(client: TestClient, session: Session) -> None:
    u = create_user(session)
    tok = _enrollment_token(client, u, max_uses=5)
    session.execute(EnrollmentToken.__table__.update().values(expires_at=utcnow() - timedelta(seconds=1)))
    assert _enroll(client, tok).status_code == 401


def test_list_and_revoke_enrollment_tokens_admin_only(client: TestClient, session: Session) -> None:
    admin = create_user(session)
    member = create_user(session, role=Role.member, team=admin.team)
    outsider = create_user(session)  # admin of another team
    tok = _enrollment_token(client, admin, max_uses=2)
    listed = client.get(TOKENS, headers=admin.headers)
    assert listed.status_code == 200
    items = listed.json()["items"]
    assert len(items) == 1
    assert set(items[0]) == {
        "id",
        "team_id",
        "created_by",
        "created_at",
        "expires_at",
        "uses",
        "max_uses",
        "revoked_at",
    }
    assert tok not in listed.text  # never the token
    assert items[0]["created_by"] == str(admin.user.id) and items[0]["revoked_at"] is None
    assert client.get(TOKENS, headers=member.headers).status_code == 403
    assert client.get(f"{TOKENS}?team_id={admin.team.id}", headers=member.headers).status_code == 403
    assert client.get(TOKENS, headers=outsider.headers).json()["items"] == []
    tid = items[0]["id"]
    assert client.delete(f"{TOKENS}/{tid}", headers=member.headers).status_code == 403
    assert client.delete(f"{TOKENS}/{tid}", headers=outsider.headers).status_code == 404
    assert client.delete(f"{TOKENS}/{uuid.uuid4()}", headers=admin.headers).status_code == 404
    assert client.delete(f"{TOKENS}/{tid}", headers=admin.headers).status_code == 204
    assert client.delete(f"{TOKENS}/{tid}", headers=admin.headers).status_code == 204  # idempotent
    assert client.get(TOKENS, headers=admin.headers).json()["items"][0]["revoked_at"] is not None
    assert _enroll(client, tok).status_code == 401


def test_only_team_admins_create_enrollment_tokens(client: TestClient, session: Session) -> None:
    admin = create_user(session)
    member = create_user(session, role=Role.member, team=admin.team)
    r = client.post(TOKENS, json={"team_id": str(admin.team.id)}, headers=member.headers)
    assert r.status_code == 403


def test_enroll_conflict_then_replace_rotates_the_token(client: TestClient, session: Session) -> None:
    u = create_user(session)
    first = _enroll(client, _enrollment_token(client, u)).json()
    dup = _enroll(client, _enrollment_token(client, u))
    assert dup.status_code == 409 and dup.json()["error"] == "agent_name_taken"
    again = _enroll(client, _enrollment_token(client, u), replace=True)
    assert again.status_code == 201 and again.json()["agent_id"] == first["agent_id"]
    assert _hb(client, first["agent_id"], first["agent_token"]) == 401
    assert _hb(client, first["agent_id"], again.json()["agent_token"]) == 200


def test_replace_needs_a_token_of_a_current_admin(client: TestClient, session: Session) -> None:
    u = create_user(session)
    assert _enroll(client, _enrollment_token(client, u)).status_code == 201
    tok = _enrollment_token(client, u)
    # the creator is demoted before the token is used: the role counts at use time
    m = session.scalar(select(Membership).where(Membership.user_id == u.user.id))
    assert m is not None
    m.role = Role.member
    session.flush()
    r = _enroll(client, tok, replace=True)
    assert r.status_code == 403 and r.json()["error"] == "replace_needs_admin_token"
    # a token from the server's operator (iowatt-server enrollment-token) may replace
    raw, _ = agent_service.create_enrollment_token(
        session, principal=None, body=EnrollmentTokenCreate(team_id=u.team.id, ttl_s=600)
    )
    assert _enroll(client, raw, replace=True).status_code == 201


def test_revoke_refuses_the_token_at_once_fails_its_runs_and_keeps_the_name(
    client: TestClient, session: Session
) -> None:
    admin = create_user(session)
    member = create_user(session, role=Role.member, team=admin.team)
    enrolled = _enroll(client, _enrollment_token(client, admin), inventory=INVENTORY).json()
    agent = session.get(Agent, uuid.UUID(enrolled["agent_id"]))
    assert agent is not None
    queued = create_run(session, agent=agent)
    running = create_run(session, agent=agent, target_path="/dev/shm/r")
    assert run_service.dispatch(session, run_id=running.id) is not None
    running.status = RunStatus.running
    session.flush()
    path = f"/api/v1/agents/{enrolled['agent_id']}/revoke"
    assert client.post(path, headers=member.headers).status_code == 403
    r = client.post(path, headers=admin.headers)
    assert r.status_code == 200 and r.json()["revoked_at"] is not None and r.json()["online"] is False
    assert client.post(path, headers=admin.headers).status_code == 200  # idempotent
    assert _hb(client, enrolled["agent_id"], enrolled["agent_token"]) == 401
    hdr = {"Authorization": f"Bearer {enrolled['agent_token']}"}
    assert (
        client.post(f"/api/v1/agents/{enrolled['agent_id']}/lease?wait_s=0", headers=hdr).status_code == 401
    )
    for run in (queued, running):
        session.refresh(run)
        assert run.status == RunStatus.failed and run.error == "the agent was revoked"
    # never un-revoked: not by a new enrolment, not by replace; the name stays taken
    plain = _enroll(client, _enrollment_token(client, admin))
    assert plain.status_code == 409 and plain.json()["error"] == "agent_revoked"
    repl = _enroll(client, _enrollment_token(client, admin), replace=True)
    assert repl.status_code == 409 and repl.json()["error"] == "agent_revoked"
    session.refresh(agent)
    assert agent.revoked_at is not None
    # runs cannot be queued on it
    job = {"name": "j", "rw": "randread", "bs_bytes": 4096, "size_bytes": 1 << 20, "runtime_s": 1}
    body = {"agent_id": enrolled["agent_id"], "target_path": "/srv/x", "workload": {"jobs": [job]}}
    r = client.post("/api/v1/runs", json=body, headers=admin.headers)
    assert r.status_code == 422 and r.json()["detail"][0]["field"] == "agent_id"


def test_delete_frees_the_name_and_keeps_the_runs(client: TestClient, session: Session) -> None:
    admin = create_user(session)
    member = create_user(session, role=Role.member, team=admin.team)
    enrolled = _enroll(client, _enrollment_token(client, admin), inventory=INVENTORY).json()
    agent = session.get(Agent, uuid.UUID(enrolled["agent_id"]))
    assert agent is not None
    done = create_run(session, agent=agent, status=RunStatus.succeeded)
    path = f"/api/v1/agents/{enrolled['agent_id']}"
    assert client.delete(path, headers=member.headers).status_code == 403
    assert client.delete(path, headers=admin.headers).status_code == 204
    assert client.get(path, headers=admin.headers).status_code == 404
    assert client.delete(path, headers=admin.headers).status_code == 404
    assert client.get("/api/v1/agents", headers=admin.headers).json()["total"] == 0
    assert _hb(client, enrolled["agent_id"], enrolled["agent_token"]) == 401
    kept = client.get(f"/api/v1/runs/{done.id}", headers=admin.headers)
    assert kept.status_code == 200 and kept.json()["agent_name"] == "lab-1"
    fresh = _enroll(client, _enrollment_token(client, admin))
    assert fresh.status_code == 201 and fresh.json()["agent_id"] != enrolled["agent_id"]
    n = session.scalar(select(func.count()).select_from(Agent).where(Agent.name == "lab-1"))
    assert n == 2


def test_agent_tokens_act_only_for_their_own_agent(client: TestClient, session: Session) -> None:
    u = create_user(session)
    a = create_agent(session, team=u.team)
    b = create_agent(session, team=u.team)
    calls = [
        ("post", f"/api/v1/agents/{b.agent.id}/heartbeat", {"state": "idle"}),
        ("put", f"/api/v1/agents/{b.agent.id}/inventory", INVENTORY),
        ("post", f"/api/v1/agents/{b.agent.id}/lease?wait_s=0", None),
    ]
    for method, path, body in calls:
        r = client.request(method, path, json=body, headers=a.headers)
        assert r.status_code == 403 and r.json()["error"] == "wrong_agent", (path, r.text)
    # and agent tokens cannot use user routes
    assert client.get("/api/v1/agents", headers=a.headers).status_code == 403
    assert client.post(f"/api/v1/agents/{b.agent.id}/revoke", headers=a.headers).status_code == 403


@pytest.mark.parametrize(
    ("inventory", "field"),
    [
        ({**INVENTORY, "hostname": "a\u0000b"}, "hostname"),
        (
            {**INVENTORY, "mounts": [{"mountpoint": "/\u0000", "source": "x", "fstype": "ext4"}]},
            "mounts.0.mountpoint",
        ),
        ({**INVENTORY, "block_devices": [{"name": "d"}] * 1001}, "block_devices"),
        ({**INVENTORY, "hostname": "h" * 256}, "hostname"),
        ({**INVENTORY, "mem_bytes": 2**64}, "mem_bytes"),
        (
            {**INVENTORY, "policy": {"targets": [{"path": "/x", "kind": "socket", "writable": True}]}},
            "policy.targets.0.kind",
        ),
        (
            {**INVENTORY, "policy": {"meters": [{"name": "m", "driver": "d", "tier": "plug"}] * 51}},
            "policy.meters",
        ),
    ],
)
def test_inventory_is_a_bounded_schema(
    client: TestClient, session: Session, inventory: dict[str, Any], field: str
) -> None:
    u = create_user(session)
    a = create_agent(session, team=u.team)
    r = client.put(f"/api/v1/agents/{a.agent.id}/inventory", json=inventory, headers=a.headers)
    assert r.status_code == 422, r.text
    assert field in [d["field"] for d in r.json()["detail"]], r.json()
    session.refresh(a.agent)
    assert a.agent.inventory == INVENTORY  # unchanged
    # the same bounds at enrolment
    e = _enroll(client, _enrollment_token(client, u), inventory=inventory)
    assert e.status_code == 422


def test_inventory_stores_what_was_sent_and_keeps_keys_from_newer_agents(
    client: TestClient, session: Session
) -> None:
    u = create_user(session)
    a = create_agent(session, team=u.team)
    disk = {**INVENTORY["block_devices"][0], "zoned": "host-managed"}
    body = {**INVENTORY, "mem_bytes": 8 << 30, "from_the_future": {"x": 1}, "block_devices": [disk]}
    r = client.put(f"/api/v1/agents/{a.agent.id}/inventory", json=body, headers=a.headers)
    assert r.status_code == 200, r.text
    served = r.json()["inventory"]
    assert served["from_the_future"] == {"x": 1} and served["block_devices"][0]["zoned"] == "host-managed"
    session.refresh(a.agent)
    assert a.agent.inventory is not None
    assert a.agent.inventory["mem_bytes"] == 8 << 30 and a.agent.inventory["from_the_future"] == {"x": 1}
    assert "os" not in a.agent.inventory  # not sent, not invented
    assert (
        client.put(f"/api/v1/agents/{a.agent.id}/inventory", json=[1], headers=a.headers).status_code == 422
    )
    # a NUL in a key the server does not know is still a 422 naming where, not a 500 from PostgreSQL
    bad = {**INVENTORY, "block_devices": [{**disk, "zoned": "a\x00b"}]}
    r = client.put(f"/api/v1/agents/{a.agent.id}/inventory", json=bad, headers=a.headers)
    assert r.status_code == 422 and "block_devices.0" in r.json()["detail"][0]["field"], r.text


def test_an_inventory_stored_before_todays_bounds_is_served_without_its_bad_parts(
    client: TestClient, session: Session
) -> None:
    u = create_user(session)
    long_name = {"name": "x" * 400, "size_bytes": 1}
    old = {
        "hostname": "old-host",
        "mem_bytes": -1,  # today: >= 0
        "os": "Linux 4.19",  # today: an object
        "block_devices": [long_name, {"name": "sda", "size_bytes": 1 << 40}, {"model": "no name"}],
        "mounts": "none",
        "policy": {"targets": [{"path": "/srv", "kind": "directory"}], "meters": [], "limits": {}},
    }
    a = create_agent(session, team=u.team, inventory=old)
    r = client.get("/api/v1/agents", headers=u.headers)
    assert r.status_code == 200, r.text
    inv = next(x for x in r.json()["items"] if x["id"] == str(a.agent.id))["inventory"]
    assert inv["hostname"] == "old-host" and [d["name"] for d in inv["block_devices"]] == ["sda"]
    assert inv["mem_bytes"] is None and inv["os"] is None and inv["mounts"] == []
    assert inv["policy"]["targets"][0]["path"] == "/srv"


def test_an_agent_read_validates_its_inventory_once_and_an_inventory_put_not_again(
    client: TestClient, session: Session, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each read of a stored inventory validates the whole document (a real host's 9 KB: ~2 ms of
    CPU): GET /agents reads each agent's once for the answer and its policy (twice before), and PUT
    /inventory answers from the body it validated (it read the stored one twice before; a fleet's
    start sends one per agent: docs/benchmarks.md § A thousand agents). The answers are the same."""
    u = create_user(session)
    agents = [create_agent(session, team=u.team) for _ in range(3)]
    reads: list[object] = []
    original = Inventory.read.__func__  # type: ignore[attr-defined]

    def counted(cls: type[Inventory], raw: object) -> Inventory | None:
        reads.append(raw)
        result: Inventory | None = original(cls, raw)
        return result

    monkeypatch.setattr(Inventory, "read", classmethod(counted))
    listed = client.get("/api/v1/agents", headers=u.headers)
    assert listed.status_code == 200, listed.text
    assert len(reads) == 3, len(reads)
    a = agents[0]
    reads.clear()
    put = client.put(f"/api/v1/agents/{a.agent.id}/inventory", json=INVENTORY, headers=a.headers)
    assert put.status_code == 200, put.text
    assert reads == []
    got = next(x for x in listed.json()["items"] if x["id"] == str(a.agent.id))
    assert {k: put.json()[k] for k in ("inventory", "policy")} == {k: got[k] for k in ("inventory", "policy")}


def test_lease_wait_s_is_bounded_by_what_the_server_honours(client: TestClient, session: Session) -> None:
    u = create_user(session)
    a = create_agent(session, team=u.team)
    # the route's bound (the server waits up to IOWATT_LONGPOLL_MAX_WAIT_S; 30 before ADR 0053)
    r = client.post(f"/api/v1/agents/{a.agent.id}/lease?wait_s=301", headers=a.headers)
    assert r.status_code == 422 and r.json()["detail"][0]["field"] == "wait_s"
    r = client.post(f"/api/v1/agents/{a.agent.id}/lease?wait_s=0", headers=a.headers)
    assert r.status_code == 200 and r.json()["lease"] is None


def test_bad_enrollment_token_is_401(client: TestClient) -> None:
    r = _enroll(client, "iwe_nope", "x")
    assert r.status_code == 401 and r.json()["error"] == "bad_enrollment_token"


def test_unknown_api_path_is_a_json_404_not_the_ui(client: TestClient) -> None:
    r = client.get("/api/v1/nothing-here")
    assert r.status_code == 404 and r.json()["error"] in ("not_found", "http_error")


def test_metrics_exposes_runs_and_agents(client: TestClient) -> None:
    r = client.get("/metrics")
    assert r.status_code == 200
    assert "# TYPE iowatt_runs gauge" in r.text and "# TYPE iowatt_agents gauge" in r.text


def test_compare_reads_host_facts_through_the_inventory_schema() -> None:
    assert host_facts({"os": {"kernel": "6.1.0-18-amd64"}}, {"fstype": "xfs"})["kernel"] == "6.1.0-18-amd64"
    # a row stored before today's schema: its bad part reads as not reported, never a 500
    assert host_facts({"os": "Linux 4.19"}, None) == {"kernel": None, "fstype": None, "mount_options": None}
    assert host_facts(None, None)["kernel"] is None


def test_idle_agents_heartbeats_are_paced_by_the_fleets_size(
    client: TestClient, session: Session, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An idle agent's long-poll keeps it online: its heartbeats are paced so a large fleet's idle
    heartbeats stay near idle_heartbeats_per_s (1,000 agents every 10 s were most of the API's idle
    work); a busy agent, or one a run waits for, keeps heartbeat_interval_s."""
    from backend.config import get_settings

    u = create_user(session)
    a = create_agent(session, team=u.team)
    hdr = {"Authorization": f"Bearer {a.token}"}
    s = get_settings()

    def interval(state: str = "idle") -> int:
        monkeypatch.setattr(agent_service, "_online_count", (float("-inf"), 0))  # counted afresh
        r = client.post(f"/api/v1/agents/{a.agent.id}/heartbeat", json={"state": state}, headers=hdr)
        assert r.status_code == 200, r.text
        return int(r.json()["heartbeat_interval_s"])

    assert interval() == s.heartbeat_interval_s  # a small fleet
    # a fleet of 1,000 at the default 5 heartbeats a second in all (this one agent at 1/200 a
    # second): every 200 s, not bound to the offline threshold (45 s): idle agents' polls stamp them
    # alive, busy agents' run reports do (ADR 0051)
    monkeypatch.setattr(s, "idle_heartbeats_per_s", 1 / 200)
    paced = [interval() for _ in range(8)]
    # within ±25 % of 200 s, not all the same: a fleet started at once does not beat at once
    assert all(150 <= p <= 250 for p in paced) and len(set(paced)) > 1, paced
    monkeypatch.setattr(s, "idle_heartbeats_per_s", 0.001)  # as a huge fleet
    assert s.idle_heartbeat_max_s * 3 // 4 <= interval() <= s.idle_heartbeat_max_s  # at most
    assert interval("busy") == s.heartbeat_interval_s
    create_run(session, agent=a.agent, status=RunStatus.assigned)
    assert interval() == s.heartbeat_interval_s  # a run waits for it
