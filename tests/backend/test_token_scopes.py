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
