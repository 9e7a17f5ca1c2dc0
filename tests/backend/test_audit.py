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
