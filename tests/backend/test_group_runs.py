"""Group runs: one workload on targets of several agents, started at one instant (ADR 0038). The
request's checks (422 naming members.N.*), the all-or-none dispatch, the start barrier (ready,
the instant set when the last member is ready, the prepare timeout), the members' skew and the
unsynchronized flag, the combined figure rebuilt from the members' results (never counted
twice), and a member's failure or a cancel stopping the whole group."""

import uuid
from datetime import timedelta
from typing import Any

import pytest
from fastapi.testclient import TestClient
from hypothesis import example, given, settings
from hypothesis import strategies as st
from sqlalchemy.orm import Session

from backend.kit.time import utcnow
from backend.models import Run
from backend.run import service as run_service
from tests.factories import AgentCtx, MiB, UserCtx, create_agent, create_user, engine_document


@pytest.fixture
def user(session: Session) -> UserCtx:
    return create_user(session)


def _body(*members: tuple[AgentCtx, str], **over: Any) -> dict[str, Any]:
    job = {"name": "j", "rw": "randread", "bs_bytes": 4096, "size_bytes": 4 * MiB, "runtime_s": 1}
    return {
        "members": [{"agent_id": str(a.agent.id), "target_path": p} for a, p in members],
        "workload": {"jobs": [job]},
        **over,
    }


def _field(r: Any) -> str:
    assert r.status_code == 422, r.text
    return str(r.json()["detail"][0]["field"])


def _queue(client: TestClient, user: UserCtx, *members: tuple[AgentCtx, str], **over: Any) -> dict[str, Any]:
    r = client.post("/api/v1/run-groups", json=_body(*members, **over), headers=user.headers)
    assert r.status_code == 201, r.text
    return dict(r.json())


def _lease_and_start(client: TestClient, a: AgentCtx) -> dict[str, Any]:
    lease = client.post(f"/api/v1/agents/{a.agent.id}/lease?wait_s=0", headers=a.headers).json()["lease"]
    assert lease is not None and lease["group"] is not None
    r = client.post(
        f"/api/v1/runs/{lease['run_id']}/start", json={"lease_id": lease["lease_id"]}, headers=a.headers
    )
    assert r.status_code == 200, r.text
    return dict(lease)


def _ready(
    client: TestClient, a: AgentCtx, lease: dict[str, Any], round_trip_ns: int = 400_000
) -> dict[str, Any]:
    body = {"lease_id": lease["lease_id"], "clock": {"offset_ns": 1_000, "round_trip_ns": round_trip_ns}}
    r = client.post(f"/api/v1/runs/{lease['run_id']}/ready?wait_s=0", json=body, headers=a.headers)
    assert r.status_code == 200, r.text
    return dict(r.json())


def _dispatch(session: Session, group: dict[str, Any]) -> uuid.UUID | None:
    return run_service.dispatch(session, run_id=uuid.UUID(group["members"][0]["run_id"]))


def test_a_request_names_the_member_field_it_refuses(
    client: TestClient, session: Session, user: UserCtx
) -> None:
    a = create_agent(session, team=user.team)
    b = create_agent(session, team=user.team)
    post = lambda body: client.post("/api/v1/run-groups", json=body, headers=user.headers)  # noqa: E731
    assert _field(post(_body((a, "/srv/a"), (a, "/srv/b")))) == "members.1.agent_id"
    refused = post(_body((a, "/srv/a"), (b, "/srv/nowhere")))
    assert _field(refused) == "members.1.target_path" and refused.json()["error"] == "host_policy_refused"
    assert _field(post(_body((a, "/srv/a")))) == "members"
    assert _field(post(_body((a, "/srv/a"), (b, "/srv/b"), start_tolerance_ns=-1))) == "start_tolerance_ns"
    outsider = create_agent(session, team=create_user(session).team)
    assert _field(post(_body((a, "/srv/a"), (outsider, "/srv/b")))) == "members.1.agent_id"


def test_the_group_is_assigned_all_or_none_and_starts_at_one_instant(
    client: TestClient, session: Session, user: UserCtx
) -> None:
    a = create_agent(session, team=user.team)
    b = create_agent(session, team=user.team, online=False)
    group = _queue(client, user, (a, "/srv/a"), (b, "/srv/b"), start_tolerance_ns=5_000_000)
    assert group["status"] == "queued" and len(group["members"]) == 2
    assert _dispatch(session, group) is None  # b is offline: a is not assigned alone
    assert {r.status.value for r in session.query(Run).filter(Run.group_id == uuid.UUID(group["id"]))} == {
        "queued"
    }
    b.agent.online = True
    session.flush()
    assert _dispatch(session, group) in (a.agent.id, b.agent.id)  # one is woken by the caller
    la, lb = _lease_and_start(client, a), _lease_and_start(client, b)
    # 120 s + the default idle baseline (30 s) + 4 MiB at 20 MiB/s, in whole seconds
    assert la["group"] == {
        "group_id": group["id"], "members": 2, "start_tolerance_ns": 5_000_000, "prepare_timeout_s": 150.0
    }  # fmt: skip
    silent_since = a.agent.last_heartbeat_at = utcnow() - timedelta(seconds=60)
    session.flush()
    first = _ready(client, a, la)
    assert first["start_at"] is None and first["stop"] is None  # b has not prepared yet
    session.refresh(a.agent)  # a member at the barrier sends no progress: its looks keep it online
    assert a.agent.last_heartbeat_at is not None and a.agent.last_heartbeat_at > silent_since  # ADR 0051
    last = _ready(client, b, lb)
    assert last["start_at"] is not None
    assert _ready(client, a, la)["start_at"] == last["start_at"]  # one instant for all
    # a starts on time, b 30 ms late (beyond 5 ms + half its 0.4 ms round trip)
    start_at = utcnow().fromisoformat(last["start_at"])
    on_time = (start_at - timedelta(microseconds=1)).isoformat()  # its clock is 1 µs behind
    late = (start_at + timedelta(milliseconds=30)).isoformat()
    ra = client.post(
        f"/api/v1/runs/{la['run_id']}/started",
        json={"lease_id": la["lease_id"], "started_at": on_time},
        headers=a.headers,
    )
    assert ra.status_code == 200 and ra.json() == {"start_skew_ns": 0, "missed_start": False}, ra.text
    rb = client.post(
        f"/api/v1/runs/{lb['run_id']}/started",
        json={"lease_id": lb["lease_id"], "started_at": late},
        headers=b.headers,
    )
    assert rb.json()["missed_start"] is True and rb.json()["start_skew_ns"] == 30_001_000
    read = client.get(f"/api/v1/run-groups/{group['id']}", headers=user.headers).json()
    assert read["unsynchronized"] is True and read["max_start_skew_ns"] == 30_001_000
    assert [m["missed_start"] for m in read["members"]] == [
        m["run_id"] == lb["run_id"] for m in read["members"]
    ]
    run = client.get(f"/api/v1/runs/{la['run_id']}", headers=user.headers).json()
    assert run["group"]["unsynchronized"] is True and run["group"]["members"] == 2
    flags = client.get(f"/api/v1/runs/{la['run_id']}/system", headers=user.headers).json()["validity"]
    assert "unsynchronized" in [f["flag"] for f in flags]

    # results: each member's once; the combined figure sums them however often an upload is retried
    for ctx, lease, ios in ((a, la, 1000), (b, lb, 3000)):
        up = {
            "lease_id": lease["lease_id"],
            "upload_id": str(uuid.uuid4()),
            "engine_exit_code": 0,
            "engine_result": engine_document(ios=ios),
            "started_at": "2026-12-06T03:00:00Z",
            "finished_at": "2026-12-06T03:00:03Z",
        }
        url = f"/api/v1/runs/{lease['run_id']}/result"
        assert client.put(url, json=up, headers=ctx.headers).status_code == 201
        assert client.put(url, json=up, headers=ctx.headers).status_code == 200  # a retry: stored once
    read = client.get(f"/api/v1/run-groups/{group['id']}", headers=user.headers).json()
    assert read["status"] == "succeeded" and read["combined"]["members"] == 2
    combined = read["combined"]["jobs"][0]["read"]
    assert combined["total_ios"] == 4000 and combined["io_bytes"] == 4000 * 4096
    assert read["combined"]["latency"] == "not_combined"  # the documents carry no bins


def test_a_failed_member_stops_the_group_and_keeps_every_result(
    client: TestClient, session: Session, user: UserCtx
) -> None:
    a = create_agent(session, team=user.team)
    b = create_agent(session, team=user.team)
    group = _queue(client, user, (a, "/srv/a"), (b, "/srv/b"))
    assert _dispatch(session, group) is not None
    la, lb = _lease_and_start(client, a), _lease_and_start(client, b)
    _ready(client, a, la)
    _ready(client, b, lb)
    progress = {"lease_id": la["lease_id"], "job_index": 0, "job_name": "j", "percent": 50, "elapsed_ns": 1}
    assert (
        client.post(f"/api/v1/runs/{la['run_id']}/progress", json=progress, headers=a.headers).json()[
            "cancel_requested"
        ]
        is False
    )
    fail = {
        "lease_id": lb["lease_id"],
        "upload_id": str(uuid.uuid4()),
        "reason": "engine exited with code 1",
        "exit_code": 1,
        "stderr_tail": "",
        "cancelled": False,
    }
    assert (
        client.post(f"/api/v1/runs/{lb['run_id']}/failure", json=fail, headers=b.headers).status_code == 200
    )
    # a is told at its next progress report, stops its engine and reports it cancelled
    assert (
        client.post(f"/api/v1/runs/{la['run_id']}/progress", json=progress, headers=a.headers).json()[
            "cancel_requested"
        ]
        is True
    )
    stopped = {
        **fail,
        "lease_id": la["lease_id"],
        "upload_id": str(uuid.uuid4()),
        "reason": "cancelled by the server",
        "exit_code": None,
        "cancelled": True,
    }
    assert (
        client.post(f"/api/v1/runs/{la['run_id']}/failure", json=stopped, headers=a.headers).status_code
        == 200
    )
    read = client.get(f"/api/v1/run-groups/{group['id']}", headers=user.headers).json()
    assert read["status"] == "failed" and f"{b.agent.name}:/srv/b failed" in read["stop_reason"]
    by_run = {m["run_id"]: m for m in read["members"]}
    assert (
        by_run[la["run_id"]]["status"] == "cancelled" and "the group stopped" in by_run[la["run_id"]]["error"]
    )
    # a result that still arrives for the cancelled member is stored (nothing measured is lost)
    up = {
        "lease_id": la["lease_id"],
        "upload_id": str(uuid.uuid4()),
        "engine_exit_code": 0,
        "engine_result": engine_document(ios=500),
        "started_at": "2026-12-06T03:00:00Z",
        "finished_at": "2026-12-06T03:00:03Z",
    }
    assert client.put(f"/api/v1/runs/{la['run_id']}/result", json=up, headers=a.headers).status_code == 201
    read = client.get(f"/api/v1/run-groups/{group['id']}", headers=user.headers).json()
    by_run = {m["run_id"]: m for m in read["members"]}
    assert by_run[la["run_id"]]["jobs"][0]["read"]["total_ios"] == 500
    # one member's figure is not the group's: no combined figure of a group that did not all succeed
    assert read["status"] == "failed" and read["combined"] is None


def test_a_member_not_ready_in_time_or_a_cancel_stops_the_group_before_anything_starts(
    client: TestClient, session: Session, user: UserCtx
) -> None:
    a = create_agent(session, team=user.team)
    b = create_agent(session, team=user.team)
    group = _queue(client, user, (a, "/srv/a"), (b, "/srv/b"), prepare_timeout_s=5)
    assert _dispatch(session, group) is not None
    la, _ = _lease_and_start(client, a), _lease_and_start(client, b)
    assert _ready(client, a, la)["start_at"] is None
    member = session.get(Run, uuid.UUID(la["run_id"]))
    assert member is not None and member.ready_at is not None
    member.ready_at -= timedelta(seconds=6)  # b has not been ready for longer than the timeout
    session.flush()
    answer = _ready(client, a, la)
    assert answer["start_at"] is None and f"{b.agent.name}:/srv/b" in answer["stop"]

    # a queued group cancelled: every member at once; cancelling again is a 409
    c = create_agent(session, team=user.team)
    d = create_agent(session, team=user.team)
    queued = _queue(client, user, (c, "/srv/a"), (d, "/srv/b"))
    r = client.post(f"/api/v1/run-groups/{queued['id']}/cancel", headers=user.headers)
    assert r.status_code == 200 and r.json()["status"] == "cancelled", r.text
    assert {m["status"] for m in r.json()["members"]} == {"cancelled"}
    assert client.post(f"/api/v1/run-groups/{queued['id']}/cancel", headers=user.headers).status_code == 409
    assert client.get(f"/api/v1/run-groups/{uuid.uuid4()}", headers=user.headers).status_code == 404


def test_the_prepare_timeout_follows_what_the_members_lay_out_and_a_bad_one_is_a_422(
    client: TestClient, session: Session, user: UserCtx
) -> None:
    """Default: 120 s + the idle baseline + the largest member's layout at 20 MiB/s (at most 3600 s),
    given to each member in its lease; a given value is kept; out of 1..3600 or not a number: 422."""
    from backend.run import prepare

    assert prepare.layout_bytes({"jobs": [{"size_bytes": 4 * MiB, "numjobs": 2}]}, targets=3) == 24 * MiB
    assert prepare.layout_bytes({"kind": "postmark", "jobs": []}) == 0
    assert prepare.default_timeout_s([0, 0], idle_s=0) == 120
    assert prepare.default_timeout_s([4 * MiB, 0], idle_s=None) == 120 + prepare.DEFAULT_IDLE_S
    assert prepare.default_timeout_s([20 * 1024 * MiB, 10 * MiB], idle_s=30) == 120 + 30 + 1024
    assert prepare.default_timeout_s([1 << 40], idle_s=0) == 3600

    a = create_agent(session, team=user.team)
    b = create_agent(session, team=user.team)
    big = {"name": "big", "rw": "write", "bs_bytes": 1 * MiB, "size_bytes": 2048 * MiB, "numjobs": 2}
    body = _body((a, "/srv/a"), (b, "/srv/b"), idle_s=5)
    body["workload"] = {"jobs": [big]}
    r = client.post("/api/v1/run-groups", json=body, headers=user.headers)
    assert r.status_code == 201, r.text
    group = r.json()
    assert group["prepare_timeout_s"] == round(120 + 5 + 4096 / 20)
    assert _dispatch(session, group) is not None
    lease = client.post(f"/api/v1/agents/{a.agent.id}/lease?wait_s=0", headers=a.headers).json()["lease"]
    assert lease["group"]["prepare_timeout_s"] == group["prepare_timeout_s"]

    given = _queue(client, user, (create_agent(session, team=user.team), "/srv/a"),
                   (create_agent(session, team=user.team), "/srv/b"), prepare_timeout_s=45)  # fmt: skip
    assert given["prepare_timeout_s"] == 45
    for bad in (0, 0.5, 3601, "soon", -1):
        refused = client.post(
            "/api/v1/run-groups", json=_body((a, "/srv/a"), (b, "/srv/b"), prepare_timeout_s=bad),
            headers=user.headers,
        )  # fmt: skip
        assert _field(refused) == "prepare_timeout_s", bad


@settings(max_examples=60, deadline=None, derandomize=True)
@example(spec={"jobs": 5}, targets=1)
@example(spec={"jobs": [{"size_bytes": 2**70, "numjobs": True}], "kind": ["block"]}, targets=0)
@given(
    spec=st.recursive(
        st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats() | st.text(max_size=8),
        lambda inner: st.lists(inner, max_size=4)
        | st.dictionaries(
            st.sampled_from(["kind", "jobs", "size_bytes", "numjobs", "name"]), inner, max_size=5
        ),
        max_leaves=20,
    ),
    targets=st.integers(-2, 20),
)
def test_the_layout_estimate_takes_any_stored_spec_without_failing(spec: Any, targets: int) -> None:
    """A stored spec is the server's own, but an old or odd one must still give a timeout."""
    from backend.run import prepare

    doc = spec if isinstance(spec, dict) else {"jobs": spec}
    got = prepare.layout_bytes(doc, targets)
    assert isinstance(got, int) and got >= 0
    assert 120 <= prepare.default_timeout_s([got], idle_s=0) <= prepare.MAX_PREPARE_TIMEOUT_S
