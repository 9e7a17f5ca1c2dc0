"""Sign-in with OpenID Connect against a real provider (panva's oidc-provider, started by the
fixture): the whole authorization-code flow with PKCE, from our /auth/oidc/login through the
provider's login form to our callback and the SPA's code exchange."""

import re
from collections.abc import Iterator
from urllib.parse import parse_qs, urljoin, urlsplit

import httpx
import pytest
from fastapi.testclient import TestClient
from sqlalchemy.orm import Session

from backend.auth import oidc_client
from backend.config import get_settings
from backend.models import User
from tests.backend.conftest import OIDC_CALLBACK as CALLBACK
from tests.backend.conftest import OIDC_PUBLIC_URL as PUBLIC_URL
from tests.factories import create_user
from tests.oidc.provider import OidcProvider

# tests/backend/conftest.py's `oidc_idp` (the provider) is shared with test_oidc_proof.py: both
# run in one xdist group, so one test process starts one provider for their 27 tests.
OIDC_GROUP = "oidc"
pytestmark = pytest.mark.xdist_group(OIDC_GROUP)


@pytest.fixture
def provider(oidc_idp: OidcProvider) -> OidcProvider:
    return oidc_idp


@pytest.fixture
def oidc(provider: OidcProvider, monkeypatch: pytest.MonkeyPatch, db_url: str) -> Iterator[OidcProvider]:
    """The server configured for the test provider (settings from the environment, as deployed)."""
    monkeypatch.setenv("IOWATT_PUBLIC_URL", PUBLIC_URL)
    monkeypatch.setenv("IOWATT_OIDC_ISSUER", provider.issuer)
    monkeypatch.setenv("IOWATT_OIDC_CLIENT_ID", provider.client_id)
    monkeypatch.setenv("IOWATT_OIDC_CLIENT_SECRET", provider.client_secret)
    monkeypatch.setenv("IOWATT_OIDC_DISPLAY_NAME", "Test SSO")
    get_settings.cache_clear()
    oidc_client.forget_providers()
    provider.set_users({})
    yield provider
    monkeypatch.undo()
    get_settings.cache_clear()
    oidc_client.forget_providers()


def _fragment(location: str) -> dict[str, str]:
    parts = urlsplit(location)
    assert parts.path == "/login/oidc", location
    return {k: v[0] for k, v in parse_qs(parts.fragment).items()}


def _at_provider(provider: OidcProvider, authorize_url: str, login: str) -> str:
    """A browser at the provider: the login form filled in; returns where the provider sends the
    browser back to (our callback with code and state)."""
    with httpx.Client(follow_redirects=False, timeout=30) as browser:
        r = browser.get(authorize_url)
        for _ in range(10):
            if r.status_code in (302, 303):
                location = urljoin(str(r.url), r.headers["location"])
                if location.startswith(CALLBACK):
                    return location
                r = browser.get(location)
            elif r.status_code == 200 and 'name="login"' in r.text:
                action = re.search(r'<form[^>]*action="([^"]+)"', r.text)
                assert action is not None, r.text[:500]
                r = browser.post(
                    urljoin(str(r.url), action.group(1)),
                    data={"prompt": "login", "login": login, "password": "any"},
                )
            else:
                raise AssertionError(f"unexpected answer from the provider: {r.status_code} {r.text[:500]}")
    raise AssertionError("the provider never sent the browser back")


def _start(client: TestClient) -> str:
    r = client.get("/api/v1/auth/oidc/login", follow_redirects=False)
    assert r.status_code == 303, r.text
    assert "iowatt_oidc_flow" in r.headers["set-cookie"] and "HttpOnly" in r.headers["set-cookie"]
    return r.headers["location"]


def _callback(client: TestClient, url: str) -> dict[str, str]:
    parts = urlsplit(url)
    r = client.get(f"{parts.path}?{parts.query}", follow_redirects=False)
    assert r.status_code == 303, r.text
    return _fragment(r.headers["location"])


def sign_in(client: TestClient, provider: OidcProvider, login: str) -> dict[str, str]:
    """The whole flow; the fragment the SPA's /login/oidc page gets (code=..., or error=...)."""
    return _callback(client, _at_provider(provider, _start(client), login))


def _session(client: TestClient, code: str) -> httpx.Response:
    return client.post("/api/v1/auth/oidc/session", json={"code": code})


def test_not_configured_says_so_and_login_is_404(client: TestClient) -> None:
    assert not get_settings().oidc_issuer
    r = client.get("/api/v1/auth/oidc")
    assert r.status_code == 200
    assert r.json() == {"enabled": False, "display_name": None, "login_url": None}
    for path in ("/api/v1/auth/oidc/login", "/api/v1/auth/oidc/callback?code=x&state=y"):
        r = client.get(path, follow_redirects=False)
        assert r.status_code == 404 and r.json()["error"] == "oidc_not_configured", r.text
    r = _session(client, "c" * 20)
    assert r.status_code == 404 and r.json()["error"] == "oidc_not_configured"


def test_configured_shows_the_button(client: TestClient, oidc: OidcProvider) -> None:
    r = client.get("/api/v1/auth/oidc")
    assert r.json() == {"enabled": True, "display_name": "Test SSO", "login_url": "/api/v1/auth/oidc/login"}


def test_the_authorization_request_has_pkce_state_and_nonce(client: TestClient, oidc: OidcProvider) -> None:
    url = _start(client)
    assert url.startswith(oidc.issuer + "/auth?")
    q = {k: v[0] for k, v in parse_qs(urlsplit(url).query).items()}
    assert q["response_type"] == "code" and q["client_id"] == oidc.client_id
    assert q["redirect_uri"] == CALLBACK
    assert q["code_challenge_method"] == "S256" and len(q["code_challenge"]) == 43
    assert len(q["state"]) >= 32 and len(q["nonce"]) >= 32
    assert set(q["scope"].split()) == {"openid", "email", "profile"}


def test_a_verified_existing_user_signs_in_and_the_identity_is_linked(
    client: TestClient, session: Session, oidc: OidcProvider
) -> None:
    u = create_user(session, email="alice@corp.test")
    oidc.set_users({"alice": {"email": "Alice@corp.test", "email_verified": True}})
    frag = sign_in(client, oidc, "alice")
    assert set(frag) == {"code"}, frag
    r = _session(client, frag["code"])
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["user"]["id"] == str(u.user.id)
    assert [t["id"] for t in body["user"]["teams"]] == [str(u.team.id)]
    token = body["access_token"]
    me = client.get("/api/v1/auth/me", headers={"Authorization": f"Bearer {token}"})
    assert me.status_code == 200 and me.json()["email"] == "alice@corp.test"
    session.refresh(u.user)
    assert (u.user.oidc_issuer, u.user.oidc_subject) == (oidc.issuer, "alice")
    # it is a browser session: logout ends it
    assert client.post("/api/v1/auth/logout", headers={"Authorization": f"Bearer {token}"}).status_code == 204
    assert client.get("/api/v1/auth/me", headers={"Authorization": f"Bearer {token}"}).status_code == 401


def test_the_handoff_code_works_once(client: TestClient, session: Session, oidc: OidcProvider) -> None:
    create_user(session, email="once@example.test")
    frag = sign_in(client, oidc, "once")
    assert _session(client, frag["code"]).status_code == 200
    again = _session(client, frag["code"])
    assert again.status_code == 401 and again.json()["error"] == "bad_oidc_code"
    assert _session(client, "not-a-code-at-all").status_code == 401


def test_an_unknown_email_is_refused(client: TestClient, session: Session, oidc: OidcProvider) -> None:
    frag = sign_in(client, oidc, "stranger")
    assert frag["error"] == "unknown_account", frag
    assert "stranger@example.test" in frag["message"] and "invitation" in frag["message"]
    assert session.query(User).filter_by(email="stranger@example.test").count() == 0


def test_auto_create_makes_an_account_without_a_password(
    client: TestClient, session: Session, oidc: OidcProvider, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("IOWATT_OIDC_AUTO_CREATE", "true")
    get_settings.cache_clear()
    oidc.set_users({"newbie": {"email": "newbie@example.test", "name": "New Bie"}})
    frag = sign_in(client, oidc, "newbie")
    r = _session(client, frag["code"])
    assert r.status_code == 200, r.text
    assert r.json()["user"]["display_name"] == "New Bie" and r.json()["user"]["teams"] == []
    user = session.query(User).filter_by(email="newbie@example.test").one()
    assert user.password_hash is None and user.oidc_subject == "newbie"
    # no password: the password login refuses it like any wrong password
    r = client.post("/api/v1/auth/login", json={"email": "newbie@example.test", "password": "x"})
    assert r.status_code == 401


def test_an_unverified_email_is_refused_even_for_an_existing_account(
    client: TestClient, session: Session, oidc: OidcProvider
) -> None:
    u = create_user(session, email="bob@example.test")
    oidc.set_users({"bob": {"email": "bob@example.test", "email_verified": False}})
    frag = sign_in(client, oidc, "bob")
    assert frag["error"] == "email_unverified", frag
    assert "not verified bob@example.test" in frag["message"]
    session.refresh(u.user)
    assert u.user.oidc_subject is None


def test_a_domain_outside_the_allowed_ones_is_refused(
    client: TestClient, session: Session, oidc: OidcProvider, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("IOWATT_OIDC_ALLOWED_DOMAINS", "corp.test")
    get_settings.cache_clear()
    create_user(session, email="eve@example.test")
    frag = sign_in(client, oidc, "eve")
    assert frag["error"] == "domain_not_allowed" and "example.test" in frag["message"]


def test_a_tampered_state_is_refused(client: TestClient, session: Session, oidc: OidcProvider) -> None:
    u = create_user(session, email="carol@example.test")
    back = _at_provider(oidc, _start(client), "carol")
    tampered = re.sub(r"state=[^&]+", "state=forged-state-value", back)
    frag = _callback(client, tampered)
    assert frag["error"] == "state_mismatch", frag
    session.refresh(u.user)
    assert u.user.oidc_subject is None


def test_a_callback_without_the_browsers_flow_cookie_is_refused(
    client: TestClient, session: Session, oidc: OidcProvider
) -> None:
    create_user(session, email="dave@example.test")
    back = _at_provider(oidc, _start(client), "dave")
    client.cookies.clear()  # another browser (login CSRF): the answer is not for this one
    frag = _callback(client, back)
    assert frag["error"] == "flow_missing", frag


def test_a_provider_error_is_shown(client: TestClient, oidc: OidcProvider) -> None:
    url = _start(client)
    state = parse_qs(urlsplit(url).query)["state"][0]
    frag = _callback(
        client, f"{CALLBACK}?error=access_denied&error_description=End-User+aborted&state={state}"
    )
    assert frag == {"error": "provider_denied", "message": "the provider refused: End-User aborted"}


def test_a_second_sign_in_matches_by_subject_after_the_email_changes(
    client: TestClient, session: Session, oidc: OidcProvider
) -> None:
    u = create_user(session, email="frank@example.test")
    oidc.set_users({"frank": {"email": "frank@example.test"}})
    assert _session(client, sign_in(client, oidc, "frank")["code"]).status_code == 200
    # the provider now says another, unverified address: the linked subject still signs in
    oidc.set_users({"frank": {"email": "frank.new@elsewhere.test", "email_verified": False}})
    client.cookies.clear()
    r = _session(client, sign_in(client, oidc, "frank")["code"])
    assert r.status_code == 200, r.text
    assert r.json()["user"]["id"] == str(u.user.id)


def test_an_account_linked_to_another_subject_is_not_taken_over(
    client: TestClient, session: Session, oidc: OidcProvider
) -> None:
    create_user(session, email="grace@example.test")
    oidc.set_users({"grace": {"email": "grace@example.test"}, "mallory": {"email": "grace@example.test"}})
    assert _session(client, sign_in(client, oidc, "grace")["code"]).status_code == 200
    client.cookies.clear()
    frag = sign_in(client, oidc, "mallory")
    assert frag["error"] == "identity_conflict", frag


def test_a_deactivated_account_is_refused(client: TestClient, session: Session, oidc: OidcProvider) -> None:
    u = create_user(session, email="heidi@example.test")
    u.user.is_active = False
    session.flush()
    frag = sign_in(client, oidc, "heidi")
    assert frag["error"] == "account_inactive", frag


def test_me_says_whether_a_password_is_set(client: TestClient, session: Session, oidc: OidcProvider) -> None:
    u = create_user(session, email="ivan@example.test")
    me = client.get("/api/v1/auth/me", headers=u.headers).json()
    assert me["password_set"] is True
    u.user.password_hash = None
    session.flush()
    assert client.get("/api/v1/auth/me", headers=u.headers).json()["password_set"] is False


def test_an_unreachable_provider_is_a_clear_error_page(
    client: TestClient, oidc: OidcProvider, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.services import free_port

    monkeypatch.setenv("IOWATT_OIDC_ISSUER", f"http://127.0.0.1:{free_port()}")
    monkeypatch.setenv("IOWATT_OIDC_TIMEOUT_S", "2")
    get_settings.cache_clear()
    r = client.get("/api/v1/auth/oidc/login", follow_redirects=False)
    assert r.status_code == 303
    assert _fragment(r.headers["location"])["error"] == "provider_unreachable"


def test_a_provider_that_does_not_say_is_trusted_only_when_configured(
    client: TestClient, session: Session, oidc: OidcProvider, monkeypatch: pytest.MonkeyPatch
) -> None:
    u = create_user(session, email="judy@corp.test")
    oidc.set_users(
        {"judy": {"email": "judy@corp.test", "email_verified": None}, "ken": {"email_verified": False}}
    )
    create_user(session, email="ken@example.test")
    assert sign_in(client, oidc, "judy")["error"] == "email_unverified"
    monkeypatch.setenv("IOWATT_OIDC_TRUST_EMAIL", "true")
    get_settings.cache_clear()
    client.cookies.clear()
    r = _session(client, sign_in(client, oidc, "judy")["code"])
    assert r.status_code == 200 and r.json()["user"]["id"] == str(u.user.id)
    # an explicit "not verified" is refused even so
    client.cookies.clear()
    assert sign_in(client, oidc, "ken")["error"] == "email_unverified"


def test_a_discovery_document_naming_another_issuer_is_refused(
    client: TestClient, oidc: OidcProvider, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the provider answers at ISSUER/ too, but its document names ISSUER: not the configured one
    monkeypatch.setenv("IOWATT_OIDC_ISSUER", oidc.issuer + "/")
    get_settings.cache_clear()
    r = client.get("/api/v1/auth/oidc/login", follow_redirects=False)
    frag = _fragment(r.headers["location"])
    assert frag["error"] == "provider_error" and "names issuer" in frag["message"], frag


def test_without_redis_the_sign_in_says_so_and_nothing_is_500(
    client: TestClient, session: Session, oidc: OidcProvider, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.services import free_port

    create_user(session, email="lena@example.test")
    back = _at_provider(oidc, _start(client), "lena")
    monkeypatch.setenv("IOWATT_REDIS_URL", f"redis://127.0.0.1:{free_port()}/0")
    get_settings.cache_clear()
    frag = _callback(client, back)
    assert frag["error"] == "unavailable" and "Redis" in frag["message"], frag
    r = _session(client, "a-code-from-earlier")
    assert r.status_code == 503 and r.json()["error"] == "oidc_unavailable", r.text
