"""Who owns an e-mail (issue 22, docs/adr/0026): the account pre-hijack through an invitation is
reproduced step by step and now fails; the ways back for the address's real owner (a reset by mail,
an instance admin's reset link, e-mail verification) work once, expire and say nothing about who
has an account; who may create teams is the instance's setting."""

import email
import re
import threading
import uuid
from collections.abc import Iterator
from datetime import timedelta
from email.message import Message
from typing import Any

import pytest
from aiosmtpd.controller import Controller
from fastapi.testclient import TestClient
from sqlalchemy import delete, select
from sqlalchemy.orm import Session

from backend.auth.throttle import get_redis
from backend.config import get_settings
from backend.kit.time import utcnow
from backend.models import AccountToken, Role, User
from tests.factories import UserCtx, create_user
from tests.services import free_port

API = "/api/v1"
SQUATTER_PASSWORD = "the squatter's password"
OWNER_PASSWORD = "the real owner's password"


def _auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


class Inbox:
    """A real SMTP server's (aiosmtpd) handler keeping what it receives."""

    def __init__(self) -> None:
        self.messages: list[tuple[list[str], Message]] = []
        self.got = threading.Event()

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:  # noqa: N802 - aiosmtpd's name
        content = envelope.content if isinstance(envelope.content, bytes) else envelope.content.encode()
        self.messages.append((list(envelope.rcpt_tos), email.message_from_bytes(content)))
        self.got.set()
        return "250 OK"

    def text_to(self, address: str) -> str:
        assert self.got.wait(10), "no mail arrived"
        for rcpt, msg in reversed(self.messages):
            if rcpt == [address]:
                return str(msg.get_payload(decode=True).decode())  # type: ignore[union-attr]
        raise AssertionError(f"no mail to {address}: {[r for r, _ in self.messages]}")

    def token_to(self, address: str, page: str) -> str:
        found = re.search(rf"/{page}#token=(\S+)", self.text_to(address))
        assert found is not None
        return found.group(1)


@pytest.fixture(autouse=True)
def _fresh_rate_counts(db_url: str) -> None:
    """The per-client reset request counts live in the shared Redis: each test starts at zero."""
    r = get_redis()
    for key in r.scan_iter("iowatt:rate:*"):
        r.delete(key)


@pytest.fixture
def smtp(monkeypatch: pytest.MonkeyPatch, db_url: str) -> Iterator[Inbox]:
    inbox = Inbox()
    port = free_port()
    controller = Controller(inbox, hostname="127.0.0.1", port=port)
    controller.start()
    monkeypatch.setenv("IOWATT_SMTP_URL", f"smtp://127.0.0.1:{port}")
    monkeypatch.setenv("IOWATT_PUBLIC_URL", "https://iowatt.example.test")
    get_settings.cache_clear()
    try:
        yield inbox
    finally:
        controller.stop()
        monkeypatch.undo()
        get_settings.cache_clear()


@pytest.fixture
def anyone_creates_teams(monkeypatch: pytest.MonkeyPatch, db_url: str) -> Iterator[None]:
    monkeypatch.setenv("IOWATT_TEAM_CREATORS", "users")
    get_settings.cache_clear()
    yield
    monkeypatch.undo()
    get_settings.cache_clear()


def squat(client: TestClient, attacker: UserCtx, victim_email: str) -> str:
    """The attack of issue 22: a new team, an invitation to the victim's address, accepted with no
    token and a password of the attacker's choice. The squatter's session token."""
    r = client.post(f"{API}/teams", json={"name": f"squat-{uuid.uuid4().hex[:6]}"}, headers=attacker.headers)
    assert r.status_code == 201, r.text
    team_id = r.json()["id"]
    r = client.post(
        f"{API}/teams/{team_id}/invitations",
        json={"email": victim_email, "role": "viewer"},
        headers=attacker.headers,
    )
    assert r.status_code == 201, r.text
    raw = r.json()["url"].rsplit("/invite/", 1)[1]
    r = client.post(
        f"{API}/invitations/{raw}/accept", json={"display_name": "CEO", "password": SQUATTER_PASSWORD}
    )
    assert r.status_code == 200, r.text
    return str(r.json()["access_token"])


def test_by_default_only_instance_admins_create_teams(client: TestClient, session: Session) -> None:
    viewer = create_user(session, role=Role.viewer)
    me = client.get(f"{API}/auth/me", headers=viewer.headers).json()
    assert me["can_create_teams"] is False and me["is_instance_admin"] is False
    r = client.post(f"{API}/teams", json={"name": "mine"}, headers=viewer.headers)
    assert r.status_code == 403 and r.json()["error"] == "team_creation_restricted", r.text
    boss = create_user(session, instance_admin=True)
    assert client.get(f"{API}/auth/me", headers=boss.headers).json()["can_create_teams"] is True
    assert client.post(f"{API}/teams", json={"name": "mine"}, headers=boss.headers).status_code == 201


def test_the_squatted_account_does_not_own_its_address(
    client: TestClient, session: Session, anyone_creates_teams: None
) -> None:
    attacker = create_user(session, role=Role.viewer)
    token = squat(client, attacker, "ceo@bigcorp.example")
    me = client.get(f"{API}/auth/me", headers=_auth(token)).json()
    assert me["email"] == "ceo@bigcorp.example" and me["email_verified"] is False
    # a real team's invitation to that address: the preview no longer says "account exists"
    owner = create_user(session)
    r = client.post(
        f"{API}/teams/{owner.team.id}/invitations",
        json={"email": "ceo@bigcorp.example", "role": "admin"},
        headers=owner.headers,
    )
    preview = client.get(f"{API}/invitations/{r.json()['url'].rsplit('/invite/', 1)[1]}").json()
    assert "account_exists" not in preview


def test_the_real_owner_takes_the_address_back_by_a_mailed_reset(
    client: TestClient, session: Session, anyone_creates_teams: None, smtp: Inbox
) -> None:
    attacker = create_user(session, role=Role.viewer)
    victim = "ceo@bigcorp.example"
    squatter_token = squat(client, attacker, victim)
    squatter_pat = client.post(
        f"{API}/auth/tokens", json={"name": "keep"}, headers=_auth(squatter_token)
    ).json()

    r = client.post(f"{API}/auth/password-reset", json={"email": victim})
    assert r.status_code == 202, r.text
    unknown = client.post(f"{API}/auth/password-reset", json={"email": "nobody@bigcorp.example"})
    assert unknown.status_code == 202 and unknown.json() == r.json()  # the same answer either way
    raw = smtp.token_to(victim, "reset-password")
    stored = session.scalars(select(AccountToken).where(AccountToken.purpose == "password_reset")).all()
    assert [t.token_hash for t in stored if raw in t.token_hash] == []  # only its hash is kept

    done = client.post(f"{API}/auth/password-reset/confirm", json={"token": raw, "password": OWNER_PASSWORD})
    assert done.status_code == 200, done.text
    assert done.json()["user"]["email_verified"] is True
    # the squatter is out: their session, their API token and their password
    assert client.get(f"{API}/auth/me", headers=_auth(squatter_token)).status_code == 401
    assert client.get(f"{API}/auth/me", headers=_auth(squatter_pat["token"])).status_code == 401
    login = client.post(f"{API}/auth/login", json={"email": victim, "password": SQUATTER_PASSWORD})
    assert login.status_code == 401
    assert (
        client.post(f"{API}/auth/login", json={"email": victim, "password": OWNER_PASSWORD}).status_code
        == 200
    )
    # the link worked once
    again = client.post(f"{API}/auth/password-reset/confirm", json={"token": raw, "password": "another one!"})
    assert again.status_code == 410 and again.json()["error"] == "account_token_gone"


def test_a_reset_link_expires_and_a_newer_one_voids_the_older(
    client: TestClient, session: Session, smtp: Inbox
) -> None:
    u = create_user(session, email_verified=False)
    assert client.post(f"{API}/auth/password-reset", json={"email": u.user.email}).status_code == 202
    first = smtp.token_to(u.user.email, "reset-password")
    smtp.got.clear()
    assert client.post(f"{API}/auth/password-reset", json={"email": u.user.email}).status_code == 202
    second = smtp.token_to(u.user.email, "reset-password")
    assert first != second
    r = client.post(f"{API}/auth/password-reset/confirm", json={"token": first, "password": OWNER_PASSWORD})
    assert r.status_code == 410
    row = session.scalars(
        select(AccountToken).where(AccountToken.user_id == u.user.id, AccountToken.used_at.is_(None))
    ).one()
    row.expires_at = utcnow() - timedelta(seconds=1)
    session.flush()
    r = client.post(f"{API}/auth/password-reset/confirm", json={"token": second, "password": OWNER_PASSWORD})
    assert r.status_code == 410
    for bad in ("iwp_" + "x" * 40, "not-a-token-at-all"):
        r = client.post(f"{API}/auth/password-reset/confirm", json={"token": bad, "password": OWNER_PASSWORD})
        assert r.status_code == 410, r.text


def test_reset_mails_are_limited_per_account_and_requests_per_client(
    client: TestClient, session: Session, smtp: Inbox, monkeypatch: pytest.MonkeyPatch
) -> None:
    u = create_user(session)
    for _ in range(get_settings().account_mail_per_hour + 2):
        assert client.post(f"{API}/auth/password-reset", json={"email": u.user.email}).status_code == 202
    mailed = session.scalar(
        select(AccountToken).where(AccountToken.user_id == u.user.id).order_by(AccountToken.created_at.desc())
    )
    assert mailed is not None
    count = len(session.scalars(select(AccountToken).where(AccountToken.user_id == u.user.id)).all())
    assert count == get_settings().account_mail_per_hour  # the rest were answered, not mailed
    statuses = [
        client.post(f"{API}/auth/password-reset", json={"email": f"x{i}@example.test"}).status_code
        for i in range(30)
    ]
    assert 429 in statuses and statuses.index(429) <= 20


def test_without_mail_a_reset_request_says_so_whoever_asks(client: TestClient, session: Session) -> None:
    u = create_user(session)
    for address in (u.user.email, "nobody@example.test"):
        r = client.post(f"{API}/auth/password-reset", json={"email": address})
        assert r.status_code == 404 and r.json()["error"] == "mail_not_configured"
        assert "instance administrator" in r.json()["message"]


def test_an_instance_admin_reclaims_a_squatted_address_with_a_reset_link(
    client: TestClient, session: Session, anyone_creates_teams: None
) -> None:
    attacker = create_user(session, role=Role.viewer)
    squatter_token = squat(client, attacker, "cfo@bigcorp.example")
    victim = session.scalars(select(User).where(User.email == "cfo@bigcorp.example")).one()
    # only an instance administrator lists accounts and issues links (not a team admin, not the squatter)
    for who in (attacker.headers, _auth(squatter_token)):
        assert client.get(f"{API}/admin/users", headers=who).status_code == 403
        r = client.post(f"{API}/admin/users/{victim.id}/reset-link", headers=who)
        assert r.status_code == 403 and r.json()["error"] == "not_instance_admin"
    boss = create_user(session, instance_admin=True)
    listed = client.get(f"{API}/admin/users", params={"q": "cfo@big"}, headers=boss.headers).json()
    assert [(u["email"], u["email_verified"], u["password_set"]) for u in listed["items"]] == [
        ("cfo@bigcorp.example", False, True)
    ]
    assert (
        client.post(f"{API}/admin/users/{uuid.uuid4()}/reset-link", headers=boss.headers).status_code == 404
    )
    made = client.post(f"{API}/admin/users/{victim.id}/reset-link", headers=boss.headers)
    assert made.status_code == 201, made.text
    url = made.json()["url"]
    assert url.startswith(get_settings().public_url + "/reset-password#token=iwp_")
    # issuing ends nothing yet; using it does
    assert client.get(f"{API}/auth/me", headers=_auth(squatter_token)).status_code == 200
    raw = url.split("#token=", 1)[1]
    r = client.post(f"{API}/auth/password-reset/confirm", json={"token": raw, "password": OWNER_PASSWORD})
    assert r.status_code == 200 and r.json()["user"]["email_verified"] is True
    assert client.get(f"{API}/auth/me", headers=_auth(squatter_token)).status_code == 401
    r = client.post(f"{API}/auth/password-reset/confirm", json={"token": raw, "password": OWNER_PASSWORD})
    assert r.status_code == 410


def test_a_verification_link_proves_the_address_only_for_its_own_signed_in_account(
    client: TestClient, session: Session, smtp: Inbox
) -> None:
    owner = create_user(session, email_verified=False)
    other = create_user(session)
    sent = client.post(f"{API}/auth/email-verification", headers=owner.headers)
    assert sent.status_code == 202, sent.text
    raw = smtp.token_to(owner.user.email, "verify-email")
    # someone else signed in (the victim clicking a squatter's link) proves nothing
    r = client.post(f"{API}/auth/email-verification/confirm", json={"token": raw}, headers=other.headers)
    assert r.status_code == 403 and r.json()["error"] == "wrong_account"
    assert client.post(f"{API}/auth/email-verification/confirm", json={"token": raw}).status_code == 401
    r = client.post(f"{API}/auth/email-verification/confirm", json={"token": raw}, headers=owner.headers)
    assert r.status_code == 204, r.text
    assert client.get(f"{API}/auth/me", headers=owner.headers).json()["email_verified"] is True
    r = client.post(f"{API}/auth/email-verification/confirm", json={"token": raw}, headers=owner.headers)
    assert r.status_code == 410
    # proven already: no more mail
    r = client.post(f"{API}/auth/email-verification", headers=owner.headers)
    assert r.status_code == 409 and r.json()["error"] == "email_verified"
    # a reset token is not a verification token
    assert client.post(f"{API}/auth/password-reset", json={"email": owner.user.email}).status_code == 202
    reset = smtp.token_to(owner.user.email, "reset-password")
    r = client.post(f"{API}/auth/email-verification/confirm", json={"token": reset}, headers=owner.headers)
    assert r.status_code == 410


def test_a_token_is_void_once_the_address_changes(client: TestClient, session: Session, smtp: Inbox) -> None:
    u = create_user(session, email_verified=False)
    assert client.post(f"{API}/auth/email-verification", headers=u.headers).status_code == 202
    raw = smtp.token_to(u.user.email, "verify-email")
    u.user.email = f"moved-{uuid.uuid4().hex[:6]}@example.test"
    session.flush()
    r = client.post(f"{API}/auth/email-verification/confirm", json={"token": raw}, headers=u.headers)
    assert r.status_code == 410


def test_verification_mails_are_limited_and_need_a_mail_server(
    client: TestClient, session: Session, smtp: Inbox, monkeypatch: pytest.MonkeyPatch
) -> None:
    u = create_user(session, email_verified=False)
    n = get_settings().account_mail_per_hour
    codes = [
        client.post(f"{API}/auth/email-verification", headers=u.headers).status_code for _ in range(n + 1)
    ]
    assert codes == [202] * n + [429]
    monkeypatch.setenv("IOWATT_SMTP_URL", "")
    get_settings.cache_clear()
    v = create_user(session, email_verified=False)
    r = client.post(f"{API}/auth/email-verification", headers=v.headers)
    assert r.status_code == 404 and r.json()["error"] == "mail_not_configured"


def test_a_team_name_conflict_says_nothing_about_other_teams(
    client: TestClient, session: Session, anyone_creates_teams: None
) -> None:
    stranger_team = create_user(session)
    stranger_team.team.name = "Skunkworks"
    session.flush()
    outsider = create_user(session)
    r = client.post(f"{API}/teams", json={"name": "Skunkworks"}, headers=outsider.headers)
    assert r.status_code == 201, r.text  # another team's name is no business of the outsider's
    r = client.post(f"{API}/teams", json={"name": "skunkworks"}, headers=outsider.headers)
    assert r.status_code == 409 and r.json()["error"] == "team_name_taken"
    assert "your teams" in r.json()["message"]
    r = client.patch(f"{API}/teams/{outsider.team.id}", json={"name": "SKUNKWORKS"}, headers=outsider.headers)
    assert r.status_code == 409


def test_deleting_ones_account_counts_wrong_passwords_like_a_login(
    client: TestClient, session: Session, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("IOWATT_LOGIN_MAX_FAILURES_PER_ACCOUNT", "2")
    get_settings.cache_clear()
    u = create_user(session, role=Role.member)
    codes = [
        client.request(
            "DELETE", f"{API}/auth/me", json={"password": f"guess {i}"}, headers=u.headers
        ).status_code
        for i in range(3)
    ]
    assert codes == [422, 422, 429]
    # the login is throttled as well: one counter per account
    r = client.post(f"{API}/auth/login", json={"email": u.user.email, "password": "correct horse"})
    assert r.status_code == 429


def test_the_cli_makes_and_unmakes_an_instance_admin(db_url: str, engine: Any) -> None:
    """`iowatt-server instance-admin EMAIL [--revoke]` (committed for real, then removed)."""
    from typer.testing import CliRunner

    from backend.auth import service as auth_service
    from backend.cli import app

    email = f"cli-{uuid.uuid4().hex[:8]}@example.test"
    with Session(engine) as s:
        auth_service.create_user(
            s, email=email, password="cli password", display_name="C", email_verified=True
        )
        s.commit()

    def flag() -> bool:
        with Session(engine) as s:
            return bool(s.scalar(select(User.is_instance_admin).where(User.email == email)))

    try:
        runner = CliRunner()
        r = runner.invoke(app, ["instance-admin", email])
        assert r.exit_code == 0 and flag() is True, r.output
        r = runner.invoke(app, ["instance-admin", email, "--revoke"])
        assert r.exit_code == 0 and flag() is False, r.output
        r = runner.invoke(app, ["instance-admin", "nobody-at-all@example.test"])
        assert r.exit_code == 2 and "no account uses" in r.output
    finally:
        with Session(engine) as s:
            s.execute(delete(User).where(User.email == email))
            s.commit()
