from fastapi.testclient import TestClient
from sqlalchemy.orm import Session

from tests.factories import INVENTORY, create_user


def _enrollment_token(client: TestClient, u) -> str:  # type: ignore[no-untyped-def]
    r = client.post("/api/v1/agents/enrollment-tokens", json={"team_id": str(u.team.id)}, headers=u.headers)
    assert r.status_code == 201, r.text
    return r.json()["token"]


def test_enroll_heartbeat_and_list(client: TestClient, session: Session) -> None:
    u = create_user(session)
    tok = _enrollment_token(client, u)
    body = {"enrollment_token": tok, "name": "lab-1", "hostname": "lab-1.example", "inventory": INVENTORY}
    r = client.post("/api/v1/agents/enroll", json=body)
    assert r.status_code == 201, r.text
    agent_id, agent_token = r.json()["agent_id"], r.json()["agent_token"]
    hdr = {"Authorization": f"Bearer {agent_token}"}
    hb = client.post(f"/api/v1/agents/{agent_id}/heartbeat", json={"state": "idle"}, headers=hdr)
    assert hb.status_code == 200 and hb.json()["heartbeat_interval_s"] > 0
    listed = client.get("/api/v1/agents", headers=u.headers).json()
    assert listed["total"] == 1
    assert listed["items"][0]["online"] is True and listed["items"][0]["inventory"]["hostname"] == "host-a"


def test_enroll_conflict_then_replace_rotates_the_token(client: TestClient, session: Session) -> None:
    u = create_user(session)
    tok = _enrollment_token(client, u)
    body = {"enrollment_token": tok, "name": "lab-1", "hostname": "h"}
    first = client.post("/api/v1/agents/enroll", json=body).json()
    dup = client.post("/api/v1/agents/enroll", json=body)
    assert dup.status_code == 409 and dup.json()["error"] == "agent_name_taken"
    again = client.post("/api/v1/agents/enroll", json={**body, "replace": True})
    assert again.status_code == 201 and again.json()["agent_id"] == first["agent_id"]
    old = {"Authorization": f"Bearer {first['agent_token']}"}
    assert (
        client.post(
            f"/api/v1/agents/{first['agent_id']}/heartbeat", json={"state": "idle"}, headers=old
        ).status_code
        == 401
    )


def test_bad_enrollment_token_is_401(client: TestClient) -> None:
    r = client.post(
        "/api/v1/agents/enroll", json={"enrollment_token": "iwe_nope", "name": "x", "hostname": "h"}
    )
    assert r.status_code == 401 and r.json()["error"] == "bad_enrollment_token"


def test_only_team_admins_create_enrollment_tokens(client: TestClient, session: Session) -> None:
    from backend.models import Role

    admin = create_user(session)
    member = create_user(session, role=Role.member, team=admin.team)
    r = client.post(
        "/api/v1/agents/enrollment-tokens", json={"team_id": str(admin.team.id)}, headers=member.headers
    )
    assert r.status_code == 403


def test_health_reports_dependencies(client: TestClient) -> None:
    r = client.get("/api/v1/health")
    assert r.status_code == 200
    body = r.json()
    assert body["database"]["ok"] is True and body["redis"]["ok"] is True
    assert set(body["worker"]) == {"ok", "last_seen_at", "detail"}


def test_metrics_exposes_runs_and_agents(client: TestClient) -> None:
    r = client.get("/metrics")
    assert r.status_code == 200
    assert "# TYPE iowatt_runs gauge" in r.text and "# TYPE iowatt_agents gauge" in r.text


def test_unknown_api_path_is_a_json_404_not_the_ui(client: TestClient) -> None:
    r = client.get("/api/v1/nothing-here")
    assert r.status_code == 404 and r.json()["error"] in ("not_found", "http_error")
