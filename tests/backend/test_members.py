"""Members: any member lists them; admins change roles and remove; anyone leaves; the last admin
can neither leave nor be demoted nor removed (409 last_admin), also when two admins act at once."""

import threading
import uuid

from fastapi.testclient import TestClient
from sqlalchemy import select
from sqlalchemy.engine import Engine
from sqlalchemy.orm import Session

from backend.auth.principal import UserPrincipal
from backend.auth.repository import roles_of
from backend.errors import Conflict
from backend.models import AuditEvent, Membership, Role, Team, User
from backend.team import service as team_service
from tests.factories import create_user

API = "/api/v1"


def _url(team_id: uuid.UUID, user_id: uuid.UUID | None = None) -> str:
    base = f"{API}/teams/{team_id}/members"
    return base if user_id is None else f"{base}/{user_id}"


def test_any_member_lists_the_members_admins_first(client: TestClient, session: Session) -> None:
    admin = create_user(session)
    viewer = create_user(session, role=Role.viewer, team=admin.team)
    stranger = create_user(session)
    r = client.get(_url(admin.team.id), headers=viewer.headers)
    assert r.status_code == 200, r.text
    rows = r.json()
    assert [(m["user_id"], m["role"]) for m in rows] == [
        (str(admin.user.id), "admin"),
        (str(viewer.user.id), "viewer"),
    ]
    assert set(rows[0]) == {"user_id", "email", "display_name", "role", "joined_at"}
    assert rows[0]["email"] == admin.user.email
    r = client.get(_url(admin.team.id), headers=stranger.headers)
    assert r.status_code == 404 and admin.user.email not in r.text


def test_admins_change_roles_others_get_403_naming_the_role(client: TestClient, session: Session) -> None:
    admin = create_user(session)
    member = create_user(session, role=Role.member, team=admin.team)
    viewer = create_user(session, role=Role.viewer, team=admin.team)
    r = client.patch(_url(admin.team.id, viewer.user.id), json={"role": "admin"}, headers=member.headers)
    assert r.status_code == 403 and "admin role" in r.json()["message"], r.text
    r = client.patch(_url(admin.team.id, viewer.user.id), json={"role": "member"}, headers=admin.headers)
    assert r.status_code == 200 and r.json()["role"] == "member", r.text
    # the new role is what the viewer's token may do from the next request on
    env = {"team_id": str(admin.team.id), "name": "lab", "kind": "local"}
    assert client.post(f"{API}/environments", json=env, headers=viewer.headers).status_code == 201
    events = client.get(f"{API}/teams/{admin.team.id}/audit", headers=admin.headers).json()["items"]
    changed = [e for e in events if e["action"] == "member.role_changed"]
    assert len(changed) == 1 and changed[0]["details"] == {
        "email": viewer.user.email,
        "from": "viewer",
        "to": "member",
    }
    assert changed[0]["target_id"] == str(viewer.user.id) and changed[0]["actor"] == admin.user.email


def test_bad_roles_are_422_and_unknown_members_404(client: TestClient, session: Session) -> None:
    admin = create_user(session)
    r = client.patch(_url(admin.team.id, admin.user.id), json={"role": "owner"}, headers=admin.headers)
    assert r.status_code == 422 and r.json()["detail"][0]["field"] == "role", r.text
    r = client.patch(_url(admin.team.id, uuid.uuid4()), json={"role": "viewer"}, headers=admin.headers)
    assert r.status_code == 404, r.text
    other = create_user(session)  # a user of another team is no member here
    assert client.delete(_url(admin.team.id, other.user.id), headers=admin.headers).status_code == 404


def test_the_last_admin_cannot_be_demoted_or_leave(client: TestClient, session: Session) -> None:
    admin = create_user(session)
    member = create_user(session, role=Role.member, team=admin.team)
    r = client.patch(_url(admin.team.id, admin.user.id), json={"role": "member"}, headers=admin.headers)
    assert r.status_code == 409 and r.json()["error"] == "last_admin", r.text
    assert "last admin" in r.json()["message"]
    r = client.delete(_url(admin.team.id, admin.user.id), headers=admin.headers)
    assert r.status_code == 409 and r.json()["error"] == "last_admin", r.text
    # with a second admin, the first may step down, and then the second is the last one
    r = client.patch(_url(admin.team.id, member.user.id), json={"role": "admin"}, headers=admin.headers)
    assert r.status_code == 200, r.text
    r = client.patch(_url(admin.team.id, admin.user.id), json={"role": "viewer"}, headers=admin.headers)
    assert r.status_code == 200 and r.json()["role"] == "viewer", r.text
    r = client.delete(_url(admin.team.id, member.user.id), headers=member.headers)
    assert r.status_code == 409 and r.json()["error"] == "last_admin", r.text


def test_admins_remove_members_and_anyone_leaves(client: TestClient, session: Session) -> None:
    admin = create_user(session)
    member = create_user(session, role=Role.member, team=admin.team)
    viewer = create_user(session, role=Role.viewer, team=admin.team)
    # a member cannot remove someone else
    r = client.delete(_url(admin.team.id, viewer.user.id), headers=member.headers)
    assert r.status_code == 403 and "admin" in r.json()["message"], r.text
    # ... but may leave
    assert client.delete(_url(admin.team.id, member.user.id), headers=member.headers).status_code == 204
    assert client.get(f"{API}/teams/{admin.team.id}", headers=member.headers).status_code == 404
    assert admin.team.name not in client.get(f"{API}/auth/me", headers=member.headers).text
    assert client.delete(_url(admin.team.id, viewer.user.id), headers=admin.headers).status_code == 204
    left = [m["user_id"] for m in client.get(_url(admin.team.id), headers=admin.headers).json()]
    assert left == [str(admin.user.id)]
    events = client.get(f"{API}/teams/{admin.team.id}/audit", headers=admin.headers).json()["items"]
    by_target = {
        e["target_id"]: (e["action"], e["actor"], e["details"]["email"])
        for e in events
        if e["action"].startswith("member.")
    }
    assert by_target == {
        str(member.user.id): ("member.left", member.user.email, member.user.email),
        str(viewer.user.id): ("member.removed", admin.user.email, viewer.user.email),
    }


def test_two_admins_demoting_each_other_at_once_leave_one_admin(engine: Engine) -> None:
    """Race-safe: each demotion locks the team's memberships, so the second sees the first's change
    and answers 409 last_admin. Real concurrent transactions on the real database (committed, then
    cleaned up)."""
    with Session(engine) as s:
        a = create_user(s)
        b = create_user(s, role=Role.admin, team=a.team)
        team_id, ids = a.team.id, (a.user.id, b.user.id)
        s.commit()
    barrier = threading.Barrier(2)
    outcomes: list[str] = []

    def demote(actor: uuid.UUID, target: uuid.UUID) -> None:
        with Session(engine) as s:
            principal = UserPrincipal(user_id=actor, roles=roles_of(s, actor))
            barrier.wait()
            try:
                team_service.change_role(
                    s, principal=principal, team_id=team_id, user_id=target, role=Role.member
                )
                s.commit()
                outcomes.append("ok")
            except Conflict as exc:
                s.rollback()
                outcomes.append(exc.code)

    try:
        threads = [threading.Thread(target=demote, args=(ids[i], ids[1 - i])) for i in (0, 1)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        assert sorted(outcomes) == ["last_admin", "ok"]
        with Session(engine) as s:
            roles = s.scalars(select(Membership.role).where(Membership.team_id == team_id)).all()
            assert sorted(r.value for r in roles) == ["admin", "member"]
    finally:
        with Session(engine) as s:
            s.execute(AuditEvent.__table__.delete().where(AuditEvent.team_id == team_id))
            s.delete(s.get(Team, team_id))
            for uid in ids:
                s.delete(s.get(User, uid))
            s.commit()
