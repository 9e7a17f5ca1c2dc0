from fastapi.testclient import TestClient
from sqlalchemy.orm import Session

from backend.auth import service as auth_service
from backend.models import ApiToken
from tests.factories import create_user


def _token(session: Session, user_id, scope: str) -> dict[str, str]:  # type: ignore[no-untyped-def]
    raw, row = auth_service.issue_token(session, user_id=user_id, name=scope, kind="personal", ttl_s=None)
    session.get(ApiToken, row.id).scope = scope  # type: ignore[union-attr]
    session.flush()
    return {"Authorization": f"Bearer {raw}"}


def test_a_read_token_reads_but_changes_nothing(client: TestClient, session: Session) -> None:
    u = create_user(session)
    read = _token(session, u.user.id, "read")
    assert client.get("/api/v1/runs", headers=read).status_code == 200
    r = client.post(
        "/api/v1/environments", headers=read, json={"team_id": str(u.team.id), "name": "x", "kind": "local"}
    )
    assert r.status_code == 403 and r.json()["error"] == "scope_read"
    r = client.post(
        "/api/v1/environments",
        headers=u.headers,
        json={"team_id": str(u.team.id), "name": "x", "kind": "local"},
    )
    assert r.status_code == 201, r.text


def test_an_upload_token_reaches_nothing_but_the_upload(client: TestClient, session: Session) -> None:
    u = create_user(session)
    upload = _token(session, u.user.id, "upload")
    for method, path in (("GET", "/api/v1/runs"), ("GET", "/api/v1/auth/me"), ("GET", "/api/v1/devices")):
        r = client.request(method, path, headers=upload)
        assert r.status_code == 403 and r.json()["error"] == "scope_upload", (path, r.text)


def test_tokens_are_created_with_a_scope_and_listed_with_it_and_last_use(
    client: TestClient, session: Session
) -> None:
    u = create_user(session)
    made = {}
    for scope in ("read", "write", "upload"):
        r = client.post("/api/v1/auth/tokens", json={"name": f"t-{scope}", "scope": scope}, headers=u.headers)
        assert r.status_code == 201 and r.json()["scope"] == scope, r.text
        made[scope] = r.json()
    default = client.post("/api/v1/auth/tokens", json={"name": "plain"}, headers=u.headers).json()
    assert default["scope"] == "write"
    # the read token is used once: its last use shows in the list
    read = {"Authorization": f"Bearer {made['read']['token']}"}
    assert client.get("/api/v1/auth/me", headers=read).status_code == 200
    items = {t["name"]: t for t in client.get("/api/v1/auth/tokens", headers=u.headers).json()["items"]}
    assert {n: t["scope"] for n, t in items.items()} == {
        "test": "write",
        "t-read": "read",
        "t-write": "write",
        "t-upload": "upload",
        "plain": "write",
    }
    assert items["t-read"]["last_used_at"] is not None and items["t-write"]["last_used_at"] is None
    # what each scope does: the read token cannot create anything (not even a token)
    r = client.post("/api/v1/auth/tokens", json={"name": "x"}, headers=read)
    assert r.status_code == 403 and r.json()["error"] == "scope_read"
    upload = {"Authorization": f"Bearer {made['upload']['token']}"}
    r = client.get("/api/v1/auth/tokens", headers=upload)
    assert r.status_code == 403 and r.json()["error"] == "scope_upload"


def test_an_unknown_scope_is_422_naming_it(client: TestClient, session: Session) -> None:
    u = create_user(session)
    r = client.post("/api/v1/auth/tokens", json={"name": "x", "scope": "admin"}, headers=u.headers)
    assert r.status_code == 422 and r.json()["detail"][0]["field"] == "scope", r.text
