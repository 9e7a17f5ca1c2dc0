"""Single sign-on meets an account whose owner never proved its address (issue 22, ADR 0026), and
the sign-in code bound to the browser that started the flow (login CSRF), against the real test
provider (panva's oidc-provider) that tests/backend/test_oidc.py uses."""

import uuid

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select
from sqlalchemy.orm import Session

from backend.config import get_settings
from backend.models import Role, User
from tests.backend.test_account_proof import OWNER_PASSWORD, SQUATTER_PASSWORD, squat
from tests.backend.test_oidc import (
    OIDC_GROUP,
    _at_provider,
    _callback,
    _session,
    _start,
    oidc,
    provider,
    sign_in,
)
from tests.factories import create_user
from tests.oidc.provider import OidcProvider

__all__ = ["oidc", "provider"]  # the fixtures

pytestmark = pytest.mark.xdist_group(OIDC_GROUP)
API = "/api/v1"


@pytest.fixture
def anyone_creates_teams(monkeypatch: pytest.MonkeyPatch, oidc: OidcProvider) -> None:
    monkeypatch.setenv("IOWATT_TEAM_CREATORS", "users")
    get_settings.cache_clear()


@pytest.mark.parametrize("auto_create", [False, True])
def test_the_pre_hijack_no_longer_links_the_victims_sso_to_the_squatters_account(
    client: TestClient,
    session: Session,
    oidc: OidcProvider,
    anyone_creates_teams: None,
    monkeypatch: pytest.MonkeyPatch,
    auto_create: bool,
) -> None:
    if auto_create:
        monkeypatch.setenv("IOWATT_OIDC_AUTO_CREATE", "true")
        get_settings.cache_clear()
    victim = f"ceo-{uuid.uuid4().hex[:6]}@bigcorp.example"
    attacker = create_user(session, role=Role.viewer)
    squat(client, attacker, victim)
    oidc.set_users({"ceo": {"email": victim, "email_verified": True, "name": "The CEO"}})

    # the real owner signs in with SSO: no session, the link step instead
    frag = sign_in(client, oidc, "ceo")
    assert set(frag) == {"link", "email"} and frag["email"] == victim, frag
    assert _session(client, frag["link"]).status_code == 401  # a link code is not a session code
    wrong = client.post(f"{API}/auth/oidc/link", json={"code": frag["link"], "password": "a guess"})
    assert wrong.status_code == 401 and wrong.json()["error"] == "bad_credentials"
    assert "password reset" in wrong.json()["message"]
    squatted = session.scalars(select(User).where(User.email == victim)).one()
    session.refresh(squatted)
    assert squatted.oidc_subject is None  # not linked: the squatter's password opens nothing of the victim's
    # and the squatter's password still logs in only to the squatter's own account, unlinked
    login = client.post(f"{API}/auth/login", json={"email": victim, "password": SQUATTER_PASSWORD})
    assert login.status_code == 200 and login.json()["user"]["teams"][0]["role"] == "viewer"
    assert session.scalars(select(User).where(User.email == victim)).all() == [
        squatted
    ]  # nothing auto-created

    # the owner takes the address back (an instance admin's link here), then SSO links by itself
    boss = create_user(session, instance_admin=True)
    url = client.post(f"{API}/admin/users/{squatted.id}/reset-link", headers=boss.headers).json()["url"]
    r = client.post(
        f"{API}/auth/password-reset/confirm",
        json={"token": url.split("#token=")[1], "password": OWNER_PASSWORD},
    )
    assert r.status_code == 200, r.text
    client.cookies.clear()
    frag = sign_in(client, oidc, "ceo")
    assert set(frag) == {"code"}, frag
    assert _session(client, frag["code"]).status_code == 200
    session.refresh(squatted)
    assert squatted.oidc_subject == "ceo"
    login = client.post(f"{API}/auth/login", json={"email": victim, "password": SQUATTER_PASSWORD})
    assert login.status_code == 401


def test_the_link_step_with_the_accounts_password_links_and_proves(
    client: TestClient, session: Session, oidc: OidcProvider
) -> None:
    u = create_user(
        session,
        email=f"owner-{uuid.uuid4().hex[:6]}@example.test",
        password=OWNER_PASSWORD,
        email_verified=False,
    )
    oidc.set_users({"owner": {"email": u.user.email}})
    frag = sign_in(client, oidc, "owner")
    assert "link" in frag, frag
    r = client.post(f"{API}/auth/oidc/link", json={"code": frag["link"], "password": OWNER_PASSWORD})
    assert r.status_code == 200, r.text
    assert r.json()["user"]["id"] == str(u.user.id) and r.json()["user"]["email_verified"] is True
    assert "iowatt_oidc_flow" in r.headers.get("set-cookie", "")  # the flow cookie is cleared
    session.refresh(u.user)
    assert (u.user.oidc_subject, u.user.email_verified_at is not None) == ("owner", True)
    # the link code worked once
    again = client.post(f"{API}/auth/oidc/link", json={"code": frag["link"], "password": OWNER_PASSWORD})
    assert again.status_code == 401


def test_wrong_link_passwords_count_towards_the_login_throttle(
    client: TestClient, session: Session, oidc: OidcProvider, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("IOWATT_LOGIN_MAX_FAILURES_PER_ACCOUNT", "2")
    get_settings.cache_clear()
    u = create_user(session, email=f"thr-{uuid.uuid4().hex[:6]}@example.test", email_verified=False)
    oidc.set_users({"thr": {"email": u.user.email}})
    code = sign_in(client, oidc, "thr")["link"]
    codes = [
        client.post(f"{API}/auth/oidc/link", json={"code": code, "password": f"guess {i}"}).status_code
        for i in range(3)
    ]
    assert codes == [401, 401, 429]


def test_a_sign_in_code_works_only_in_the_browser_that_started_the_flow(
    client: TestClient, session: Session, oidc: OidcProvider
) -> None:
    """Login CSRF: the attacker signs in at the provider as themself and plants the code in the
    victim's browser (/login/oidc#code=...). The victim's browser has no flow cookie, or its own."""
    create_user(session, email="attacker@example.test")
    frag = sign_in(client, oidc, "attacker")
    attackers_cookie = client.cookies.get("iowatt_oidc_flow")
    assert attackers_cookie  # kept after the callback, until the code is traded
    client.cookies.clear()  # the victim's browser: no flow cookie
    r = _session(client, frag["code"])
    assert r.status_code == 401 and r.json()["error"] == "bad_oidc_code", r.text
    _start(client)  # the victim's browser with a sign-in of its own under way: another flow cookie
    assert client.cookies.get("iowatt_oidc_flow") not in (None, attackers_cookie)
    assert _session(client, frag["code"]).status_code == 401
    # the browser that started it trades it (the refusals did not use the code up)
    client.cookies.set("iowatt_oidc_flow", attackers_cookie, path="/api/v1/auth/oidc")
    ok = _session(client, frag["code"])
    assert ok.status_code == 200, ok.text
    assert _session(client, frag["code"]).status_code == 401  # once


def test_a_link_code_is_bound_to_its_browser_too(
    client: TestClient, session: Session, oidc: OidcProvider
) -> None:
    u = create_user(session, email=f"bind-{uuid.uuid4().hex[:6]}@example.test", email_verified=False)
    oidc.set_users({"bind": {"email": u.user.email}})
    frag = sign_in(client, oidc, "bind")
    client.cookies.clear()
    r = client.post(f"{API}/auth/oidc/link", json={"code": frag["link"], "password": "correct horse"})
    assert r.status_code == 401 and r.json()["error"] == "bad_oidc_code"


def test_an_sso_made_account_owns_its_address(
    client: TestClient, session: Session, oidc: OidcProvider, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("IOWATT_OIDC_AUTO_CREATE", "true")
    get_settings.cache_clear()
    oidc.set_users({"fresh": {"email": "fresh@example.test"}})
    back = _at_provider(oidc, _start(client), "fresh")
    frag = _callback(client, back)
    r = _session(client, frag["code"])
    assert r.status_code == 200 and r.json()["user"]["email_verified"] is True
