"""Teams: create (instance admins by default: IOWATT_TEAM_CREATORS), read, rename; the caller's role
and the member count; names unique among the caller's teams; audit."""

import uuid

from fastapi.testclient import TestClient
from sqlalchemy.orm import Session

from backend.models import Role
from tests.factories import create_user

API = "/api/v1"


def _actions(client: TestClient, team_id: str, headers: dict[str, str]) -> list[str]:
    r = client.get(f"{API}/teams/{team_id}/audit", headers=headers)
    assert r.status_code == 200, r.text
    return [e["action"] for e in r.json()["items"]]


def test_an_instance_admin_creates_a_team_and_becomes_its_admin(client: TestClient, session: Session) -> None:
    # a viewer in their team, and an instance administrator (who may create teams by default)
    viewer = create_user(session, role=Role.viewer, instance_admin=True)
    name = f"storage-{uuid.uuid4().hex[:6]}"
    r = client.post(f"{API}/teams", json={"name": name}, headers=viewer.headers)
    assert r.status_code == 201, r.text
    team = r.json()
    assert team["name"] == name and team["role"] == "admin" and team["member_count"] == 1
    me = client.get(f"{API}/auth/me", headers=viewer.headers).json()
    assert {"id": team["id"], "name": name, "role": "admin"} in me["teams"]
    assert {t["role"] for t in me["teams"]} == {"admin", "viewer"}
    got = client.get(f"{API}/teams/{team['id']}", headers=viewer.headers)
    assert got.status_code == 200 and got.json()["member_count"] == 1
    events = client.get(f"{API}/teams/{team['id']}/audit", headers=viewer.headers).json()["items"]
    assert [(e["action"], e["actor"], e["details"]["name"]) for e in events] == [
        ("team.created", viewer.user.email, name)
    ]


def test_team_names_are_unique_case_insensitively_among_the_callers_teams(
    client: TestClient, session: Session
) -> None:
    # issue 22: a name another team uses is not refused (a refusal would tell a stranger it exists)
    a = create_user(session)
    b = create_user(session, instance_admin=True)
    r = client.post(f"{API}/teams", json={"name": a.team.name.upper()}, headers=b.headers)
    assert r.status_code == 201, r.text
    r = client.post(f"{API}/teams", json={"name": b.team.name.upper()}, headers=b.headers)
    assert r.status_code == 409 and r.json()["error"] == "team_name_taken", r.text
    r = client.patch(f"{API}/teams/{b.team.id}", json={"name": a.team.name.lower()}, headers=b.headers)
    assert r.status_code == 409 and r.json()["error"] == "team_name_taken", r.text


def test_bad_names_are_422_naming_the_field(client: TestClient, session: Session) -> None:
    u = create_user(session)
    for body in ({"name": ""}, {"name": "x" * 121}, {}, {"name": "ok", "extra": 1}):
        r = client.post(f"{API}/teams", json=body, headers=u.headers)
        assert r.status_code == 422, (body, r.text)
        assert r.json()["detail"][0]["field"] in ("name", "extra"), r.text


def test_members_see_the_team_strangers_get_404(client: TestClient, session: Session) -> None:
    admin = create_user(session)
    viewer = create_user(session, role=Role.viewer, team=admin.team)
    stranger = create_user(session)
    r = client.get(f"{API}/teams/{admin.team.id}", headers=viewer.headers)
    assert r.status_code == 200, r.text
    assert r.json()["role"] == "viewer" and r.json()["member_count"] == 2
    r = client.get(f"{API}/teams/{admin.team.id}", headers=stranger.headers)
    assert r.status_code == 404 and admin.team.name not in r.text
    assert client.get(f"{API}/teams/{uuid.uuid4()}", headers=admin.headers).status_code == 404


def test_only_admins_rename_and_it_is_audited(client: TestClient, session: Session) -> None:
    admin = create_user(session)
    member = create_user(session, role=Role.member, team=admin.team)
    old = admin.team.name
    new = f"renamed-{uuid.uuid4().hex[:6]}"
    r = client.patch(f"{API}/teams/{admin.team.id}", json={"name": new}, headers=member.headers)
    assert r.status_code == 403 and "admin" in r.json()["message"], r.text
    r = client.patch(f"{API}/teams/{admin.team.id}", json={"name": new}, headers=admin.headers)
    assert r.status_code == 200 and r.json()["name"] == new, r.text
    assert client.get(f"{API}/teams", headers=member.headers).json()[0]["name"] == new
    events = client.get(f"{API}/teams/{admin.team.id}/audit", headers=admin.headers).json()["items"]
    assert events[0]["action"] == "team.renamed" and events[0]["details"] == {"from": old, "to": new}
    # the same name again changes nothing and records nothing
    assert (
        client.patch(f"{API}/teams/{admin.team.id}", json={"name": new}, headers=admin.headers).status_code
        == 200
    )
    assert _actions(client, str(admin.team.id), admin.headers).count("team.renamed") == 1


def test_a_read_token_cannot_create_a_team(client: TestClient, session: Session) -> None:
    u = create_user(session)
    tok = client.post(f"{API}/auth/tokens", json={"name": "ro", "scope": "read"}, headers=u.headers).json()
    r = client.post(
        f"{API}/teams", json={"name": "nope"}, headers={"Authorization": f"Bearer {tok['token']}"}
    )
    assert r.status_code == 403 and r.json()["error"] == "scope_read", r.text
