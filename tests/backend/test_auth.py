from fastapi.testclient import TestClient
from sqlalchemy.orm import Session

from backend.kit.time import utcnow
from backend.models import ApiToken
from tests.factories import create_agent, create_user


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
