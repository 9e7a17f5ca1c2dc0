from fastapi.testclient import TestClient
from sqlalchemy.orm import Session

from backend.audit import service as audit
from backend.models import Role, User
from tests.factories import create_user


def test_admins_read_their_teams_log_newest_first_and_filtered(client: TestClient, session: Session) -> None:
    admin = create_user(session)
    audit.record(
        session,
        team_id=admin.team.id,
        action="run.deleted",
        target_kind="run",
        target_id="r1",
        user_id=admin.user.id,
    )
    audit.record(
        session, team_id=admin.team.id, action="agent.enrolled", target_kind="agent", actor="agent build-01"
    )
    session.flush()
    r = client.get(f"/api/v1/teams/{admin.team.id}/audit", headers=admin.headers)
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["total"] == 2
    assert {e["action"] for e in body["items"]} == {"run.deleted", "agent.enrolled"}
    by_action = {e["action"]: e for e in body["items"]}
    assert by_action["run.deleted"]["actor"] == admin.user.email
    assert by_action["agent.enrolled"]["actor"] == "agent build-01"
    only = client.get(
        f"/api/v1/teams/{admin.team.id}/audit", params={"action": "run."}, headers=admin.headers
    )
    assert [e["action"] for e in only.json()["items"]] == ["run.deleted"]


def test_the_actor_label_survives_the_users_deletion(client: TestClient, session: Session) -> None:
    admin = create_user(session)
    gone = create_user(session, role=Role.member, team=admin.team)
    audit.record(
        session,
        team_id=admin.team.id,
        action="share_link.created",
        target_kind="share_link",
        user_id=gone.user.id,
    )
    session.delete(session.get(User, gone.user.id))
    session.flush()
    item = client.get(f"/api/v1/teams/{admin.team.id}/audit", headers=admin.headers).json()["items"][0]
    assert item["actor"] == gone.user.email and item["actor_user_id"] is None


def test_members_and_strangers_may_not_read_it(client: TestClient, session: Session) -> None:
    admin = create_user(session)
    member = create_user(session, role=Role.member, team=admin.team)
    stranger = create_user(session)
    for who in (member, stranger):
        r = client.get(f"/api/v1/teams/{admin.team.id}/audit", headers=who.headers)
        assert r.status_code == 403 and "admin" in r.json()["message"]


def test_what_members_create_is_in_the_log_with_who_did_it(client: TestClient, session: Session) -> None:
    from tests.backend.test_runs import run_body
    from tests.factories import create_agent

    admin = create_user(session)
    member = create_user(session, role=Role.member, team=admin.team)
    agent = create_agent(session, team=admin.team)
    team = str(admin.team.id)
    env = client.post(
        "/api/v1/environments", json={"team_id": team, "name": "lab", "kind": "local"}, headers=member.headers
    )
    wl = client.post(
        "/api/v1/workloads",
        json={
            "team_id": team,
            "name": "mine",
            "spec": {"jobs": [{"name": "j", "rw": "randread", "bs_bytes": 4096, "size_bytes": 8 << 20}]},
        },
        headers=member.headers,
    )
    run = client.post("/api/v1/runs", json=run_body(agent.agent.id), headers=member.headers)
    assert env.status_code == 201 and wl.status_code == 201 and run.status_code == 201, (
        env.text,
        wl.text,
        run.text,
    )
    camp = client.post(
        "/api/v1/campaigns",
        json={
            "name": "c",
            "workload_id": wl.json()["id"],
            "targets": [{"agent_id": str(agent.agent.id), "target_path": "/srv/bench"}],
        },
        headers=member.headers,
    )
    assert camp.status_code == 201, camp.text
    items = client.get(f"/api/v1/teams/{team}/audit", headers=admin.headers).json()["items"]
    seen = {(e["action"], e["target_id"]) for e in items}
    assert ("environment.created", env.json()["id"]) in seen
    assert ("workload.created", wl.json()["id"]) in seen
    assert ("run.created", run.json()["id"]) in seen
    assert ("campaign.created", camp.json()["id"]) in seen
    assert {e["actor"] for e in items} == {member.user.email}
