"""Invitations: admins invite by e-mail and role; the link (shown once, stored hashed) works once,
expires and can be revoked (410 naming which), unknown is 404; accepting creates a working login or
joins an existing account that carries its own token; mail goes through a real SMTP server."""

import email
import threading
import uuid
from collections.abc import Iterator
from datetime import timedelta
from email.message import Message
from typing import Any

import pytest
from aiosmtpd.controller import Controller
from fastapi.testclient import TestClient
from sqlalchemy import select
from sqlalchemy.engine import Engine
from sqlalchemy.orm import Session

from backend.config import get_settings
from backend.kit.security import token_hash
from backend.kit.time import utcnow
from backend.models import Invitation, Role, Team, User
from tests.factories import create_user
from tests.services import free_port

API = "/api/v1"
PASSWORD = "a long enough password"


def _invite(
    client: TestClient, admin: Any, email_: str, role: str = "viewer", **extra: Any
) -> dict[str, Any]:
    r = client.post(
        f"{API}/teams/{admin.team.id}/invitations",
        json={"email": email_, "role": role, **extra},
        headers=admin.headers,
    )
    assert r.status_code == 201, r.text
    return dict(r.json())


def _token(created: dict[str, Any]) -> str:
    return str(created["url"]).rsplit("/invite/", 1)[1]


def _new_email() -> str:
    return f"new-{uuid.uuid4().hex[:8]}@example.test"


def test_an_invited_person_joins_with_a_new_account_that_signs_in(
    client: TestClient, session: Session
) -> None:
    admin = create_user(session)
    address = _new_email()
    made = _invite(client, admin, address.upper(), role="viewer")
    assert made["url"].startswith(get_settings().public_url + "/invite/iwi_")
    assert made["email"] == address and made["role"] == "viewer" and made["mailed"] is False
    raw = _token(made)
    # stored hashed: the token itself is nowhere in the database
    row = session.get(Invitation, uuid.UUID(made["id"]))
    assert row is not None and row.token_hash == token_hash(raw) and raw not in row.token_hash

    preview = client.get(f"{API}/invitations/{raw}")
    assert preview.status_code == 200, preview.text
    p = preview.json()
    assert (p["team_name"], p["inviter"], p["role"], p["email"], p["state"]) == (
        admin.team.name,
        admin.user.display_name,
        "viewer",
        address,
        "pending",
    )
    assert "account_exists" not in p  # the preview never says (issue 22)

    r = client.post(f"{API}/invitations/{raw}/accept", json={"display_name": "Ada", "password": PASSWORD})
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["user"]["email"] == address and body["user"]["display_name"] == "Ada"
    assert body["user"]["teams"] == [{"id": str(admin.team.id), "name": admin.team.name, "role": "viewer"}]
    # the session token works, and so does a login with the new password
    signed_in = {"Authorization": f"Bearer {body['access_token']}"}
    assert client.get(f"{API}/auth/me", headers=signed_in).json()["email"] == address
    login = client.post(f"{API}/auth/login", json={"email": address, "password": PASSWORD})
    assert login.status_code == 200, login.text
    # the viewer sees the team but may not change it
    assert client.get(f"{API}/teams/{admin.team.id}", headers=signed_in).json()["role"] == "viewer"
    env = {"team_id": str(admin.team.id), "name": "x", "kind": "local"}
    forbidden = client.post(f"{API}/environments", json=env, headers=signed_in)
    assert forbidden.status_code == 403 and "member" in forbidden.json()["message"]
    # audited: created by the admin, accepted by the new account
    events = client.get(f"{API}/teams/{admin.team.id}/audit", headers=admin.headers).json()["items"]
    assert {(e["action"], e["actor"]) for e in events} >= {
        ("invitation.accepted", address),
        ("invitation.created", admin.user.email),
    }
    # and it is listed as accepted
    listed = client.get(f"{API}/teams/{admin.team.id}/invitations", headers=admin.headers).json()
    assert [(i["email"], i["state"], i["invited_by"]) for i in listed["items"]] == [
        (address, "accepted", admin.user.email)
    ]


def test_a_used_link_is_410_and_works_once(client: TestClient, session: Session) -> None:
    admin = create_user(session)
    raw = _token(_invite(client, admin, _new_email()))
    first = client.post(f"{API}/invitations/{raw}/accept", json={"display_name": "A", "password": PASSWORD})
    assert first.status_code == 200, first.text
    for r in (
        client.get(f"{API}/invitations/{raw}"),
        client.post(f"{API}/invitations/{raw}/accept", json={"display_name": "B", "password": PASSWORD}),
    ):
        assert r.status_code == 410 and r.json()["error"] == "invitation_used", r.text
        assert "already used" in r.json()["message"] and r.json()["detail"]["state"] == "accepted"


def test_an_expired_link_is_410_expired(client: TestClient, session: Session) -> None:
    admin = create_user(session)
    made = _invite(client, admin, _new_email(), ttl_s=60)
    row = session.get(Invitation, uuid.UUID(made["id"]))
    assert row is not None
    row.expires_at = utcnow() - timedelta(seconds=1)
    session.flush()
    raw = _token(made)
    for r in (
        client.get(f"{API}/invitations/{raw}"),
        client.post(f"{API}/invitations/{raw}/accept", json={"display_name": "A", "password": PASSWORD}),
    ):
        assert r.status_code == 410 and r.json()["error"] == "invitation_expired", r.text
        assert "expired" in r.json()["message"]
    listed = client.get(f"{API}/teams/{admin.team.id}/invitations", headers=admin.headers).json()["items"]
    assert listed[0]["state"] == "expired"


def test_a_revoked_link_is_410_revoked_and_revoking_is_audited(client: TestClient, session: Session) -> None:
    admin = create_user(session)
    member = create_user(session, role=Role.member, team=admin.team)
    made = _invite(client, admin, _new_email())
    url = f"{API}/teams/{admin.team.id}/invitations/{made['id']}"
    r = client.delete(url, headers=member.headers)
    assert r.status_code == 403 and "admin" in r.json()["message"], r.text
    assert client.delete(url, headers=admin.headers).status_code == 204
    assert client.delete(url, headers=admin.headers).status_code == 204  # idempotent
    raw = _token(made)
    r = client.get(f"{API}/invitations/{raw}")
    assert (
        r.status_code == 410
        and r.json()["error"] == "invitation_revoked"
        and "revoked" in r.json()["message"]
    )
    r = client.post(f"{API}/invitations/{raw}/accept", json={"display_name": "A", "password": PASSWORD})
    assert r.status_code == 410 and r.json()["error"] == "invitation_revoked", r.text
    events = client.get(f"{API}/teams/{admin.team.id}/audit", headers=admin.headers).json()["items"]
    assert [e["action"] for e in events].count("invitation.revoked") == 1
    listed = client.get(f"{API}/teams/{admin.team.id}/invitations", headers=admin.headers).json()["items"]
    assert listed[0]["state"] == "revoked" and listed[0]["revoked_at"] is not None
    # an accepted invitation cannot be revoked: remove the member instead
    used = _invite(client, admin, _new_email())
    ok = client.post(
        f"{API}/invitations/{_token(used)}/accept", json={"display_name": "U", "password": PASSWORD}
    )
    assert ok.status_code == 200
    r = client.delete(f"{API}/teams/{admin.team.id}/invitations/{used['id']}", headers=admin.headers)
    assert r.status_code == 409 and r.json()["error"] == "invitation_used", r.text


def test_unknown_links_are_404(client: TestClient) -> None:
    for token in ("iwi_" + "x" * 43, "nope", "iwu_" + "y" * 43):
        r = client.get(f"{API}/invitations/{token}")
        assert r.status_code == 404 and r.json()["error"] == "invitation_not_found", r.text
        r = client.post(f"{API}/invitations/{token}/accept", json={"display_name": "A", "password": PASSWORD})
        assert r.status_code == 404, r.text


def test_only_admins_invite_and_list(client: TestClient, session: Session) -> None:
    admin = create_user(session)
    member = create_user(session, role=Role.member, team=admin.team)
    stranger = create_user(session)
    for who in (member, stranger):
        r = client.post(
            f"{API}/teams/{admin.team.id}/invitations",
            json={"email": _new_email(), "role": "viewer"},
            headers=who.headers,
        )
        assert r.status_code == 403 and "admin role" in r.json()["message"], r.text
        r = client.get(f"{API}/teams/{admin.team.id}/invitations", headers=who.headers)
        assert r.status_code == 403, r.text


def test_bad_invitations_are_422_naming_the_field_and_members_409(
    client: TestClient, session: Session
) -> None:
    admin = create_user(session)
    member = create_user(session, role=Role.member, team=admin.team)
    cases = [
        ({"email": "not-an-email", "role": "viewer"}, "email"),
        ({"email": _new_email(), "role": "owner"}, "role"),
        ({"email": _new_email(), "role": "viewer", "ttl_s": 0}, "ttl_s"),
        ({"email": _new_email(), "role": "viewer", "ttl_s": 400 * 24 * 3600}, "ttl_s"),
        ({"role": "viewer"}, "email"),
    ]
    for body, field in cases:
        r = client.post(f"{API}/teams/{admin.team.id}/invitations", json=body, headers=admin.headers)
        assert r.status_code == 422, (body, r.text)
        assert r.json()["detail"][0]["field"] == field, (body, r.text)
    r = client.post(
        f"{API}/teams/{admin.team.id}/invitations",
        json={"email": member.user.email, "role": "admin"},
        headers=admin.headers,
    )
    assert r.status_code == 409 and r.json()["error"] == "already_member", r.text


def test_a_new_account_needs_a_name_and_a_password(client: TestClient, session: Session) -> None:
    admin = create_user(session)
    raw = _token(_invite(client, admin, _new_email()))
    for body, field in (
        ({"password": PASSWORD}, "display_name"),
        ({"display_name": "A"}, "password"),
        ({"display_name": "A", "password": "short"}, "password"),
    ):
        r = client.post(f"{API}/invitations/{raw}/accept", json=body)
        assert r.status_code == 422 and r.json()["detail"][0]["field"] == field, (body, r.text)
    # nothing was used up by the refusals
    assert client.get(f"{API}/invitations/{raw}").json()["state"] == "pending"


def test_an_existing_user_joins_with_their_own_token(client: TestClient, session: Session) -> None:
    admin = create_user(session)
    existing = create_user(session)  # admin of another team
    someone_else = create_user(session)
    raw = _token(_invite(client, admin, existing.user.email, role="member"))
    assert "account_exists" not in client.get(f"{API}/invitations/{raw}").json()
    # without a token: sign in first (no account is created, the link stays usable)
    r = client.post(f"{API}/invitations/{raw}/accept", json={"display_name": "X", "password": PASSWORD})
    assert r.status_code == 401 and r.json()["error"] == "sign_in_required", r.text
    # another account's token: refused
    r = client.post(f"{API}/invitations/{raw}/accept", json={}, headers=someone_else.headers)
    assert r.status_code == 403 and r.json()["error"] == "wrong_account", r.text
    # the account's own token joins it, keeping its password and other team
    r = client.post(f"{API}/invitations/{raw}/accept", json={}, headers=existing.headers)
    assert r.status_code == 200, r.text
    teams = {t["id"]: t["role"] for t in r.json()["user"]["teams"]}
    assert teams == {str(existing.team.id): "admin", str(admin.team.id): "member"}
    assert session.scalar(select(User).where(User.email == existing.user.email)) is not None
    fresh = {"Authorization": f"Bearer {r.json()['access_token']}"}
    assert client.get(f"{API}/teams/{admin.team.id}", headers=fresh).json()["role"] == "member"
    r = client.post(f"{API}/invitations/{raw}/accept", json={}, headers=existing.headers)
    assert r.status_code == 410, r.text


def test_a_link_is_used_once_when_two_accept_at_the_same_time(engine: Engine) -> None:
    """Two real transactions accept the same link at once: the row lock lets one through; the other
    answers 410 used (no second account, no second membership)."""
    from backend.errors import AppError
    from backend.invitation import service as invitation_service
    from backend.invitation.schemas import InvitationAccept, InvitationCreate

    with Session(engine) as s:
        admin = create_user(s)
        team_id, admin_email = admin.team.id, admin.user.email
        made = invitation_service.create(
            s,
            principal=_principal(s, admin.user.id),
            team_id=team_id,
            body=InvitationCreate(email=_new_email(), role=Role.viewer),
        )
        s.commit()
    raw = _token(made.model_dump())
    barrier = threading.Barrier(2)
    outcomes: list[str] = []

    def accept(name: str) -> None:
        with Session(engine) as s:
            barrier.wait()
            try:
                invitation_service.accept(
                    s, raw=raw, body=InvitationAccept(display_name=name, password=PASSWORD), bearer=None
                )
                s.commit()
                outcomes.append("ok")
            except AppError as exc:
                s.rollback()
                outcomes.append(f"{exc.status_code} {exc.code}")

    try:
        threads = [threading.Thread(target=accept, args=(n,)) for n in ("A", "B")]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        assert sorted(outcomes) == ["410 invitation_used", "ok"]
        with Session(engine) as s:
            assert s.scalar(select(User).where(User.email == made.email)) is not None
    finally:
        with Session(engine) as s:
            for u in s.scalars(select(User).where(User.email.in_([made.email, admin_email]))):
                s.delete(u)
            s.delete(s.get(Team, team_id))
            s.commit()


def _principal(s: Session, user_id: uuid.UUID) -> Any:
    from backend.auth.principal import UserPrincipal
    from backend.auth.repository import roles_of

    return UserPrincipal(user_id=user_id, roles=roles_of(s, user_id))


class _Inbox:
    """An aiosmtpd handler keeping what it receives."""

    def __init__(self) -> None:
        self.messages: list[tuple[str, list[str], Message]] = []
        self.got = threading.Event()

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:  # noqa: N802 - aiosmtpd's name
        content = envelope.content if isinstance(envelope.content, bytes) else envelope.content.encode()
        self.messages.append((envelope.mail_from, list(envelope.rcpt_tos), email.message_from_bytes(content)))
        self.got.set()
        return "250 OK"


@pytest.fixture
def smtp(monkeypatch: pytest.MonkeyPatch, db_url: str) -> Iterator[_Inbox]:
    """A real SMTP server (aiosmtpd) on a free port, and the server's settings pointing at it."""
    inbox = _Inbox()
    port = free_port()
    controller = Controller(inbox, hostname="127.0.0.1", port=port)
    controller.start()
    monkeypatch.setenv("IOWATT_SMTP_URL", f"smtp://127.0.0.1:{port}")
    monkeypatch.setenv("IOWATT_SMTP_FROM", "iowatt <noreply@iowatt.test>")
    monkeypatch.setenv("IOWATT_PUBLIC_URL", "https://iowatt.example.test")
    get_settings.cache_clear()
    try:
        yield inbox
    finally:
        controller.stop()
        monkeypatch.undo()
        get_settings.cache_clear()


def test_the_invitation_is_mailed_when_smtp_is_configured(
    client: TestClient, session: Session, smtp: _Inbox
) -> None:
    admin = create_user(session)
    address = _new_email()
    made = _invite(client, admin, address, role="member")
    assert made["mailed"] is True
    assert made["url"].startswith("https://iowatt.example.test/invite/iwi_")
    assert smtp.got.wait(10)
    mail_from, rcpt, msg = smtp.messages[0]
    assert mail_from == "noreply@iowatt.test" and rcpt == [address]
    assert admin.team.name in msg["Subject"]
    text = msg.get_payload(decode=True).decode()  # type: ignore[union-attr]
    assert made["url"] in text and "member" in text
    # the mailed link works
    raw = _token(made)
    r = client.post(f"{API}/invitations/{raw}/accept", json={"display_name": "M", "password": PASSWORD})
    assert r.status_code == 200, r.text


def test_an_unreachable_mail_server_costs_only_the_mail(
    client: TestClient, session: Session, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("IOWATT_SMTP_URL", f"smtp://127.0.0.1:{free_port()}")  # nobody listens
    get_settings.cache_clear()
    try:
        admin = create_user(session)
        made = _invite(client, admin, _new_email())
        assert made["mailed"] is False
        assert client.get(f"{API}/invitations/{_token(made)}").status_code == 200
    finally:
        monkeypatch.undo()
        get_settings.cache_clear()


def test_a_name_with_a_line_break_stays_one_subject_line(
    client: TestClient, session: Session, smtp: _Inbox
) -> None:
    admin = create_user(session)
    admin.user.display_name = "Eve\nBcc: everyone@example.test"
    session.flush()
    made = _invite(client, admin, _new_email())
    assert made["mailed"] is True and smtp.got.wait(10)
    _, rcpt, msg = smtp.messages[0]
    assert rcpt == [made["email"]] and msg["Bcc"] is None
    # and no address a user typed reaches the mail (issue 22): only plain words
    assert " ".join(msg["Subject"].split()).startswith("Eve Bcc everyone example test invites you")


def test_an_admins_invitation_dies_with_their_admin_role(client: TestClient, session: Session) -> None:
    """Issue 22: a demoted or removed admin's invitations are revoked, and an invitation whose
    creator is no longer an admin cannot be accepted (checked at accept time as well)."""
    owner = create_user(session)
    inviter = create_user(session, role=Role.admin, team=owner.team)
    made = _invite(client, inviter, _new_email(), role="admin")
    kept = _invite(client, owner, _new_email(), role="member")
    # demoted: the pending invitation is revoked and recorded
    r = client.patch(
        f"{API}/teams/{owner.team.id}/members/{inviter.user.id}",
        json={"role": "member"},
        headers=owner.headers,
    )
    assert r.status_code == 200, r.text
    states = {
        i["id"]: i["state"]
        for i in client.get(f"{API}/teams/{owner.team.id}/invitations", headers=owner.headers).json()["items"]
    }
    assert states == {made["id"]: "revoked", kept["id"]: "pending"}
    r = client.post(
        f"{API}/invitations/{_token(made)}/accept", json={"display_name": "X", "password": PASSWORD}
    )
    assert r.status_code == 410 and r.json()["error"] == "invitation_revoked"
    # even a row the demotion did not touch (made in the same moment) is checked at accept time
    row = session.get(Invitation, uuid.UUID(made["id"]))
    assert row is not None
    row.revoked_at = None
    session.flush()
    for r in (
        client.get(f"{API}/invitations/{_token(made)}"),
        client.post(
            f"{API}/invitations/{_token(made)}/accept", json={"display_name": "X", "password": PASSWORD}
        ),
    ):
        assert r.status_code == 410 and r.json()["error"] == "invitation_revoked", r.text
        assert "no longer an admin" in r.json()["message"]


def test_a_removed_or_deleted_admins_invitations_cannot_be_accepted(
    client: TestClient, session: Session
) -> None:
    owner = create_user(session)
    gone = create_user(session, role=Role.admin, team=owner.team)
    made = _invite(client, gone, _new_email(), role="admin")
    r = client.delete(f"{API}/teams/{owner.team.id}/members/{gone.user.id}", headers=owner.headers)
    assert r.status_code == 204
    r = client.post(
        f"{API}/invitations/{_token(made)}/accept", json={"display_name": "X", "password": PASSWORD}
    )
    assert r.status_code == 410 and r.json()["error"] == "invitation_revoked"
    # a deleted creator (created_by set null) is refused the same way
    other = _invite(client, owner, _new_email())
    row = session.get(Invitation, uuid.UUID(other["id"]))
    assert row is not None
    row.created_by = None
    session.flush()
    r = client.post(
        f"{API}/invitations/{_token(other)}/accept", json={"display_name": "X", "password": PASSWORD}
    )
    assert r.status_code == 410 and r.json()["error"] == "invitation_revoked"


def test_the_preview_says_the_same_whether_or_not_the_address_has_an_account(
    client: TestClient, session: Session
) -> None:
    admin = create_user(session)
    known = create_user(session, team=create_user(session).team)
    previews = [
        client.get(f"{API}/invitations/{_token(_invite(client, admin, address))}").json()
        for address in (known.user.email, _new_email())
    ]
    assert [sorted(p) for p in previews][0] == sorted(previews[1])
    for p in previews:
        p.pop("email"), p.pop("expires_at")
    assert previews[0] == previews[1]


def test_invitations_are_limited_per_creator(
    client: TestClient, session: Session, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("IOWATT_INVITATIONS_PER_CREATOR_PER_HOUR", "2")
    get_settings.cache_clear()
    admin = create_user(session)
    for _ in range(2):
        _invite(client, admin, _new_email())
    r = client.post(
        f"{API}/teams/{admin.team.id}/invitations",
        json={"email": _new_email(), "role": "viewer"},
        headers=admin.headers,
    )
    assert r.status_code == 429 and r.json()["error"] == "invitations_throttled"
    assert int(r.headers["Retry-After"]) > 0


def test_the_mail_carries_no_link_or_address_a_user_typed(
    client: TestClient, session: Session, smtp: _Inbox
) -> None:
    admin = create_user(session)
    admin.team.name = "Prizes! Claim at https://evil.example/claim now"
    admin.user.display_name = "IT desk <helpdesk@evil.example>"
    session.flush()
    made = _invite(client, admin, _new_email())
    assert made["mailed"] is True and smtp.got.wait(10)
    _, _, msg = smtp.messages[0]
    text = msg.get_payload(decode=True).decode()  # type: ignore[union-attr]
    for whole in (str(msg["Subject"]), text.replace(made["url"], "")):
        assert "evil.example" not in whole and "https://evil" not in whole and "@evil" not in whole, whole
    assert "Prizes Claim at https evil example claim now" in text
    assert made["url"] in text  # the server's own link is the only one
