"""One's own account (issue 30): change the password (other browser sessions end, this one and the
API tokens stay) and the e-mail (unproven afterwards, links to the old address void), both only
with the current password, counted as the login counts it; and the abuse cases: a wrong or
guessed password, an address another account uses, too many changes, an SSO-only account, a
read-only token."""

import uuid
from datetime import timedelta

from fastapi.testclient import TestClient
from sqlalchemy.orm import Session

from backend.auth import service as auth_service
from backend.auth import throttle
from backend.auth.throttle import get_redis
from backend.config import get_settings
from backend.kit.time import utcnow
from backend.models import AccountToken, ApiToken
from tests.factories import create_user

API = "/api/v1"
PW = "the old password"


def _login(client: TestClient, email: str, password: str) -> tuple[int, str]:
    r = client.post(f"{API}/auth/login", json={"email": email, "password": password})
    return r.status_code, (r.json().get("access_token", "") if r.status_code == 200 else "")


def _h(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def test_a_password_change_ends_the_other_sessions_and_keeps_this_one(
    client: TestClient, session: Session
) -> None:
    u = create_user(session, email=f"pw-{uuid.uuid4().hex[:8]}@example.test", password=PW)
    _, here = _login(client, u.user.email, PW)
    _, elsewhere = _login(client, u.user.email, PW)
    # the current password is required: a wrong one names the field and changes nothing
    r = client.post(
        f"{API}/auth/password", headers=_h(here), json={"current_password": "nope", "new_password": "x" * 12}
    )
    assert r.status_code == 422 and r.json()["detail"][0]["field"] == "current_password"
    r = client.post(
        f"{API}/auth/password", headers=_h(here), json={"current_password": PW, "new_password": "short"}
    )
    assert r.status_code == 422 and r.json()["detail"][0]["field"] == "new_password"
    r = client.post(
        f"{API}/auth/password",
        headers=_h(here),
        json={"current_password": PW, "new_password": "the new password"},
    )
    assert r.status_code == 200 and r.json() == {"sessions_revoked": 1}
    assert client.get(f"{API}/auth/me", headers=_h(here)).status_code == 200  # this browser stays
    assert client.get(f"{API}/auth/me", headers=_h(elsewhere)).status_code == 401
    assert client.get(f"{API}/auth/me", headers=u.headers).status_code == 200  # the API token stays
    assert _login(client, u.user.email, PW)[0] == 401
    assert _login(client, u.user.email, "the new password")[0] == 200


def test_guessing_the_current_password_is_throttled_as_the_login_is(
    client: TestClient, session: Session
) -> None:
    u = create_user(session, email=f"guess-{uuid.uuid4().hex[:8]}@example.test", password=PW)
    limit = get_settings().login_max_failures_per_account
    client_key = throttle._keys(u.user.email, "testclient")[1][0]  # the test client's address
    get_redis().delete(client_key)  # other tests' failed logins from the same address
    statuses = [
        client.post(
            f"{API}/auth/password",
            headers=u.headers,
            json={"current_password": f"guess {i}", "new_password": "y" * 12},
        ).status_code
        for i in range(limit + 1)
    ]
    assert statuses[:limit] == [422] * limit and statuses[limit] == 429
    # the right password is refused too while the account is blocked (no oracle)
    r = client.post(
        f"{API}/auth/password", headers=u.headers, json={"current_password": PW, "new_password": "y" * 12}
    )
    assert r.status_code == 429 and r.json()["error"] == "login_throttled"
    get_redis().delete(client_key)


def test_an_email_change_unproves_the_address_and_voids_links_to_the_old_one(
    client: TestClient, session: Session
) -> None:
    u = create_user(session, email=f"old-{uuid.uuid4().hex[:8]}@example.test", password=PW)
    other = create_user(session, email=f"taken-{uuid.uuid4().hex[:8]}@example.test")
    link = AccountToken(
        user_id=u.user.id,
        purpose="verify_email",
        email=u.user.email,
        token_hash=uuid.uuid4().hex * 2,
        expires_at=utcnow() + timedelta(hours=1),
    )
    session.add(link)
    session.flush()
    r = client.post(
        f"{API}/auth/email",
        headers=u.headers,
        json={"current_password": PW, "email": other.user.email.upper()},
    )
    assert r.status_code == 409 and r.json()["error"] == "email_unavailable"
    r = client.post(
        f"{API}/auth/email", headers=u.headers, json={"current_password": PW, "email": "not an address"}
    )
    assert r.status_code == 422 and r.json()["detail"][0]["field"] == "email"
    new = f"New-{uuid.uuid4().hex[:8]}@Example.test"
    r = client.post(f"{API}/auth/email", headers=u.headers, json={"current_password": PW, "email": new})
    assert r.status_code == 200, r.text
    assert r.json()["email"] == new.lower() and r.json()["email_verified"] is False
    session.refresh(link)
    assert link.used_at is not None
    assert _login(client, new, PW)[0] == 200


def test_email_changes_are_limited_per_account(client: TestClient, session: Session) -> None:
    u = create_user(session, email=f"many-{uuid.uuid4().hex[:8]}@example.test", password=PW)
    get_redis().delete(*get_redis().keys("iowatt:rate:email-change:*") or ["-"])
    codes = [
        client.post(
            f"{API}/auth/email",
            headers=u.headers,
            json={"current_password": PW, "email": f"n{i}-{uuid.uuid4().hex[:6]}@example.test"},
        ).status_code
        for i in range(6)
    ]
    assert codes == [200] * 5 + [429]


def test_sso_accounts_read_tokens_and_agents_cannot_change_them(client: TestClient, session: Session) -> None:
    u = create_user(session, password=PW)
    u.user.password_hash = None  # signs in only with single sign-on
    session.flush()
    body = {"current_password": PW, "new_password": "z" * 12}
    r = client.post(f"{API}/auth/password", headers=u.headers, json=body)
    assert r.status_code == 409 and r.json()["error"] == "no_password"
    v = create_user(session, password=PW)
    raw, _ = auth_service.issue_token(
        session, user_id=v.user.id, name="ro", kind="personal", ttl_s=None, scope="read"
    )
    r = client.post(f"{API}/auth/password", headers=_h(raw), json=body)
    assert r.status_code == 403 and r.json()["error"] == "scope_read"
    assert (
        session.query(ApiToken).filter(ApiToken.user_id == v.user.id, ApiToken.revoked_at.isnot(None)).count()
        == 0
    )
