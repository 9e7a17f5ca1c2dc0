import uuid
from collections.abc import Iterator
from datetime import timedelta

import pytest
from argon2 import PasswordHasher
from fastapi.testclient import TestClient
from httpx import Response
from sqlalchemy.orm import Session

from backend.auth import service as auth_service
from backend.auth import throttle
from backend.auth.schemas import MAX_TOKEN_TTL_S
from backend.config import get_settings
from backend.kit.security import legacy_scrypt_hash, verify_password
from backend.kit.time import utcnow
from backend.models import ApiToken
from tests.factories import create_agent, create_user
from tests.services import free_port


def test_login_returns_a_token_that_works(client: TestClient, session: Session) -> None:
    u = create_user(session, email="Alice@Example.test", password="s3cret-pass")
    r = client.post("/api/v1/auth/login", json={"email": "alice@example.test", "password": "s3cret-pass"})
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["token_type"] == "bearer" and body["access_token"].startswith("iwu_")
    me = client.get("/api/v1/auth/me", headers={"Authorization": f"Bearer {body['access_token']}"})
    assert me.status_code == 200
    assert me.json()["email"] == "alice@example.test"
    assert [t["id"] for t in me.json()["teams"]] == [str(u.team.id)]


def test_wrong_password_is_401_with_the_error_shape(client: TestClient, session: Session) -> None:
    create_user(session, email="bob@example.test", password="right")
    r = client.post("/api/v1/auth/login", json={"email": "bob@example.test", "password": "wrong"})
    assert r.status_code == 401
    assert r.json()["error"] == "bad_credentials"


def test_missing_unknown_and_revoked_tokens_are_401(client: TestClient, session: Session) -> None:
    u = create_user(session)
    assert client.get("/api/v1/runs").status_code == 401
    assert client.get("/api/v1/runs", headers={"Authorization": "Bearer iwu_nope"}).status_code == 401
    assert client.get("/api/v1/runs", headers=u.headers).status_code == 200
    for tok in session.query(ApiToken).filter(ApiToken.user_id == u.user.id):
        tok.revoked_at = utcnow()
    session.flush()
    r = client.get("/api/v1/runs", headers=u.headers)
    assert r.status_code == 401 and r.json()["error"] == "bad_token"


def test_a_token_carries_its_users_role_in_every_team_and_none_elsewhere(session: Session) -> None:
    """authenticate reads the roles with the token in one query: the same as roles_of, for a user in
    three teams with three roles and for a user in none."""
    from backend.auth import repository
    from backend.auth.principal import UserPrincipal
    from backend.models import Membership, Role, Team

    u = create_user(session, role=Role.viewer)
    for role in (Role.member, Role.admin):
        team = Team(name=f"team-{uuid.uuid4().hex[:8]}")
        session.add(team)
        session.flush()
        session.add(Membership(user_id=u.user.id, team_id=team.id, role=role))
    session.flush()
    p = auth_service.authenticate(session, raw_token=u.token)
    assert isinstance(p, UserPrincipal)
    assert p.roles == repository.roles_of(session, u.user.id)
    assert sorted(r.value for r in p.roles.values()) == ["admin", "member", "viewer"]
    assert all(isinstance(t, uuid.UUID) and isinstance(r, Role) for t, r in p.roles.items())
    session.query(Membership).filter(Membership.user_id == u.user.id).delete()
    session.flush()
    p = auth_service.authenticate(session, raw_token=u.token)
    assert isinstance(p, UserPrincipal) and p.roles == {}


def test_agent_token_cannot_use_user_routes(client: TestClient, session: Session) -> None:
    u = create_user(session)
    a = create_agent(session, team=u.team)
    r = client.get("/api/v1/runs", headers=a.headers)
    assert r.status_code == 403 and r.json()["error"] == "user_only"


def test_personal_token_creation(client: TestClient, session: Session) -> None:
    u = create_user(session)
    r = client.post("/api/v1/auth/tokens", json={"name": "ci"}, headers=u.headers)
    assert r.status_code == 201
    tok = r.json()["token"]
    assert client.get("/api/v1/auth/me", headers={"Authorization": f"Bearer {tok}"}).status_code == 200


def test_logout_revokes_the_session_token(client: TestClient, session: Session) -> None:
    create_user(session, email="carol@example.test", password="pw-carol")
    tok = client.post(
        "/api/v1/auth/login", json={"email": "carol@example.test", "password": "pw-carol"}
    ).json()
    hdr = {"Authorization": f"Bearer {tok['access_token']}"}
    assert client.post("/api/v1/auth/logout", headers=hdr).status_code == 204
    assert client.get("/api/v1/auth/me", headers=hdr).status_code == 401


# --- issue 9: personal tokens, logout, is_active, Argon2id, login throttle --------------------------

TOKEN_FIELDS = {
    "id",
    "name",
    "kind",
    "scope",
    "created_at",
    "expires_at",
    "last_used_at",
    "revoked_at",
    "current",
}


@pytest.fixture(autouse=True)
def _fresh_login_throttle(client: TestClient) -> Iterator[None]:
    """Every test starts with no failed logins counted (Redis is shared by the test process)."""

    def clear() -> None:
        r = throttle.get_redis()
        for key in r.scan_iter("iowatt:login-fail:*"):
            r.delete(key)
        throttle._memory._counts.clear()

    clear()
    yield
    clear()


def _login(client: TestClient, email: str, password: str) -> Response:
    return client.post("/api/v1/auth/login", json={"email": email, "password": password})


def test_tokens_are_listed_without_secrets_and_revoked(client: TestClient, session: Session) -> None:
    u = create_user(session)
    made = client.post("/api/v1/auth/tokens", json={"name": "ci", "ttl_s": 3600}, headers=u.headers)
    assert made.status_code == 201, made.text
    secret = made.json()["token"]
    listed = client.get("/api/v1/auth/tokens", headers=u.headers)
    assert listed.status_code == 200, listed.text
    items = listed.json()["items"]
    assert listed.json()["total"] == 2 and {t["name"] for t in items} == {"test", "ci"}
    assert all(set(t) == TOKEN_FIELDS for t in items)
    assert secret not in listed.text and u.token not in listed.text
    ci = next(t for t in items if t["name"] == "ci")
    assert ci["kind"] == "personal" and ci["expires_at"] is not None and ci["revoked_at"] is None
    # `current` marks the token the request came with (the browser's session), and only it
    assert {t["name"]: t["current"] for t in items} == {"test": True, "ci": False}
    by_ci = client.get("/api/v1/auth/tokens", headers={"Authorization": f"Bearer {secret}"}).json()
    assert {t["name"]: t["current"] for t in by_ci["items"]} == {"test": False, "ci": True}

    hdr = {"Authorization": f"Bearer {secret}"}
    assert client.get("/api/v1/auth/me", headers=hdr).status_code == 200
    # someone else's token is not found, and stays usable
    other = create_user(session)
    assert client.delete(f"/api/v1/auth/tokens/{ci['id']}", headers=other.headers).status_code == 404
    assert client.get("/api/v1/auth/me", headers=hdr).status_code == 200
    # the owner revokes it: refused at once, twice is fine, listed only with include_inactive
    assert client.delete(f"/api/v1/auth/tokens/{ci['id']}", headers=u.headers).status_code == 204
    assert client.delete(f"/api/v1/auth/tokens/{ci['id']}", headers=u.headers).status_code == 204
    r = client.get("/api/v1/auth/me", headers=hdr)
    assert r.status_code == 401 and r.json()["error"] == "bad_token"
    assert [t["name"] for t in client.get("/api/v1/auth/tokens", headers=u.headers).json()["items"]] == [
        "test"
    ]
    everything = client.get("/api/v1/auth/tokens?include_inactive=true", headers=u.headers).json()
    assert next(t for t in everything["items"] if t["id"] == ci["id"])["revoked_at"] is not None


@pytest.mark.parametrize("ttl_s", [MAX_TOKEN_TTL_S + 1, 10**12, 2**63, 0, -5])
def test_token_lifetime_is_bounded_422_never_a_date_overflow(
    client: TestClient, session: Session, ttl_s: int
) -> None:
    u = create_user(session)
    r = client.post("/api/v1/auth/tokens", json={"name": "x", "ttl_s": ttl_s}, headers=u.headers)
    assert r.status_code == 422, r.text
    assert r.json()["detail"][0]["field"] == "ttl_s"
    ok = client.post("/api/v1/auth/tokens", json={"name": "x", "ttl_s": MAX_TOKEN_TTL_S}, headers=u.headers)
    assert ok.status_code == 201, ok.text


def test_an_expired_token_is_refused(client: TestClient, session: Session) -> None:
    u = create_user(session)
    made = client.post("/api/v1/auth/tokens", json={"name": "short", "ttl_s": 60}, headers=u.headers).json()
    row = session.get(ApiToken, uuid.UUID(made["id"]))
    assert row is not None
    row.expires_at = utcnow() - timedelta(seconds=1)
    session.flush()
    r = client.get("/api/v1/auth/me", headers={"Authorization": f"Bearer {made['token']}"})
    assert r.status_code == 401 and r.json()["error"] == "bad_token"


def test_an_inactive_user_is_refused_everywhere(client: TestClient, session: Session) -> None:
    u = create_user(session, email="dora@example.test", password="pw-dora")
    assert client.get("/api/v1/auth/me", headers=u.headers).status_code == 200
    u.user.is_active = False
    session.flush()
    r = client.get("/api/v1/auth/me", headers=u.headers)
    assert r.status_code == 401 and r.json()["error"] == "user_inactive"
    assert client.get("/api/v1/runs", headers=u.headers).status_code == 401
    # the right password of an inactive user gets the answer of a wrong one
    r = _login(client, "dora@example.test", "pw-dora")
    assert r.status_code == 401 and r.json()["error"] == "bad_credentials"


def test_logout_with_a_personal_token_is_409_and_ends_nothing(client: TestClient, session: Session) -> None:
    u = create_user(session)
    r = client.post("/api/v1/auth/logout", headers=u.headers)
    assert r.status_code == 409 and r.json()["error"] == "not_a_session"
    assert "DELETE /api/v1/auth/tokens/" in r.json()["message"]
    assert client.get("/api/v1/auth/me", headers=u.headers).status_code == 200


def test_logout_ends_only_its_own_session(client: TestClient, session: Session) -> None:
    u = create_user(session, email="erin@example.test", password="pw-erin")
    first = _login(client, "erin@example.test", "pw-erin").json()["access_token"]
    second = _login(client, "erin@example.test", "pw-erin").json()["access_token"]
    kinds = {t["kind"] for t in client.get("/api/v1/auth/tokens", headers=u.headers).json()["items"]}
    assert kinds == {"session", "personal"}
    assert client.post("/api/v1/auth/logout", headers={"Authorization": f"Bearer {first}"}).status_code == 204
    assert client.get("/api/v1/auth/me", headers={"Authorization": f"Bearer {first}"}).status_code == 401
    assert client.get("/api/v1/auth/me", headers={"Authorization": f"Bearer {second}"}).status_code == 200
    assert client.get("/api/v1/auth/me", headers=u.headers).status_code == 200


def test_passwords_are_argon2id_and_old_hashes_are_rehashed_at_login(
    client: TestClient, session: Session
) -> None:
    u = create_user(session, email="finn@example.test", password="pw-finn")
    assert u.user.password_hash.startswith("$argon2id$")
    # a hash from before Argon2id (the standard library's scrypt, as iowatt stored it)
    u.user.password_hash = legacy_scrypt_hash("pw-finn")
    session.flush()
    assert _login(client, "finn@example.test", "wrong").status_code == 401
    session.refresh(u.user)
    assert u.user.password_hash.startswith("scrypt$")  # a failed login changes nothing
    assert _login(client, "finn@example.test", "pw-finn").status_code == 200
    session.refresh(u.user)
    assert u.user.password_hash.startswith("$argon2id$")
    assert verify_password("pw-finn", u.user.password_hash) == (True, False)
    assert _login(client, "finn@example.test", "pw-finn").status_code == 200
    # Argon2id with other (older, weaker) parameters is brought to the current ones too
    weak = PasswordHasher(time_cost=1, memory_cost=512, parallelism=1).hash("pw-finn")
    u.user.password_hash = weak
    session.flush()
    assert _login(client, "finn@example.test", "pw-finn").status_code == 200
    session.refresh(u.user)
    assert u.user.password_hash != weak and verify_password("pw-finn", u.user.password_hash) == (True, False)


def test_unknown_email_does_the_same_work_and_gets_the_same_answer(
    client: TestClient, session: Session, monkeypatch: pytest.MonkeyPatch
) -> None:
    create_user(session, email="gina@example.test", password="pw-gina")
    burned: list[str] = []
    real = auth_service.burn_password_check

    def counting(password: str) -> None:  # the real hash verification, counted
        burned.append(password)
        real(password)

    monkeypatch.setattr(auth_service, "burn_password_check", counting)
    wrong = _login(client, "gina@example.test", "nope")
    unknown = _login(client, "nobody@example.test", "nope")
    assert (wrong.status_code, unknown.status_code) == (401, 401)
    # the same answer apart from each request's own id
    assert wrong.json()["request_id"] != unknown.json()["request_id"]
    assert {**wrong.json(), "request_id": None} == {**unknown.json(), "request_id": None}
    assert burned == ["nope"]  # only the unknown e-mail needed the dummy verification


def test_login_is_throttled_per_account_with_retry_after(
    client: TestClient, session: Session, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(get_settings(), "login_max_failures_per_account", 3)
    create_user(session, email="hal@example.test", password="pw-hal")
    for _ in range(3):
        assert _login(client, "hal@example.test", "bad").status_code == 401
    r = _login(client, "hal@example.test", "pw-hal")  # even the right password waits
    assert r.status_code == 429 and r.json()["error"] == "login_throttled"
    assert 0 < int(r.headers["Retry-After"]) <= get_settings().login_window_s
    assert r.json()["detail"]["retry_after_s"] == int(r.headers["Retry-After"])
    # an unknown e-mail is throttled the same way (no telling accounts apart)
    for _ in range(3):
        assert _login(client, "nobody@example.test", "bad").status_code == 401
    assert _login(client, "nobody@example.test", "bad").status_code == 429
    # another account from the same client is not locked by hal's failures
    create_user(session, email="ivy@example.test", password="pw-ivy")
    assert _login(client, "ivy@example.test", "pw-ivy").status_code == 200


def test_a_success_clears_the_accounts_failures(
    client: TestClient, session: Session, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(get_settings(), "login_max_failures_per_account", 3)
    create_user(session, email="jo@example.test", password="pw-jo")
    for _ in range(2):
        assert _login(client, "jo@example.test", "bad").status_code == 401
    assert _login(client, "jo@example.test", "pw-jo").status_code == 200
    for _ in range(2):
        assert _login(client, "jo@example.test", "bad").status_code == 401
    assert _login(client, "jo@example.test", "pw-jo").status_code == 200


def test_login_is_throttled_per_client_address(
    client: TestClient, session: Session, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(get_settings(), "login_max_failures_per_client", 4)
    create_user(session, email="kim@example.test", password="pw-kim")
    for i in range(4):  # one address trying many accounts
        assert _login(client, f"spray-{i}@example.test", "guess").status_code == 401
    r = _login(client, "kim@example.test", "pw-kim")
    assert r.status_code == 429 and "client" in r.json()["message"]


def test_forwarded_for_counts_only_from_a_trusted_proxy(
    client: TestClient, session: Session, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(get_settings(), "login_max_failures_per_client", 2)
    spoof = {"X-Forwarded-For": "203.0.113.7"}
    for i in range(2):  # not a trusted proxy: the header is ignored, the peer is counted
        r = client.post(
            "/api/v1/auth/login", json={"email": f"a{i}@example.test", "password": "x"}, headers=spoof
        )
        assert r.status_code == 401
    r = client.post(
        "/api/v1/auth/login",
        json={"email": "b@example.test", "password": "x"},
        headers={"X-Forwarded-For": "198.51.100.1"},
    )
    assert r.status_code == 429
    # behind a trusted proxy, each forwarded address has its own count
    monkeypatch.setattr(get_settings(), "trusted_proxies", ["testclient"])
    r = client.post(
        "/api/v1/auth/login",
        json={"email": "b@example.test", "password": "x"},
        headers={"X-Forwarded-For": "198.51.100.1"},
    )
    assert r.status_code == 401


def test_a_redis_outage_never_makes_login_500(
    client: TestClient, session: Session, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(get_settings(), "redis_url", f"redis://127.0.0.1:{free_port()}/0")
    monkeypatch.setattr(get_settings(), "login_max_failures_per_account", 2)
    create_user(session, email="lee@example.test", password="pw-lee")
    assert _login(client, "lee@example.test", "pw-lee").status_code == 200
    for _ in range(2):
        assert _login(client, "lee@example.test", "bad").status_code == 401
    # still throttled, by this process's own counts
    r = _login(client, "lee@example.test", "bad")
    assert r.status_code == 429 and int(r.headers["Retry-After"]) > 0


def test_nul_in_the_login_is_422_naming_the_field(client: TestClient) -> None:
    r = client.post("/api/v1/auth/login", json={"email": "a\u0000@example.test", "password": "x"})
    assert r.status_code == 422 and r.json()["detail"][0]["field"] == "email"
    r = client.post("/api/v1/auth/login", json={"email": "a@example.test", "password": "x\u0000"})
    assert r.status_code == 422 and r.json()["detail"][0]["field"] == "password"


def test_nul_in_a_token_name_is_422(client: TestClient, session: Session) -> None:
    u = create_user(session)
    r = client.post("/api/v1/auth/tokens", json={"name": "ci\u0000"}, headers=u.headers)
    assert r.status_code == 422 and r.json()["detail"][0]["field"] == "name"
