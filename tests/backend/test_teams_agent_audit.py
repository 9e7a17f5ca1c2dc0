"""The team's audit log records the agent side of the team: enrolment tokens created and revoked,
agents enrolled, revoked and deleted (each in the change's own transaction)."""

from fastapi.testclient import TestClient
from sqlalchemy.orm import Session

from tests.factories import create_user

API = "/api/v1"


def test_enrolment_and_agent_changes_are_audited(client: TestClient, session: Session) -> None:
    admin = create_user(session)
    h = admin.headers
    tok = client.post(f"{API}/agents/enrollment-tokens", json={"team_id": str(admin.team.id)}, headers=h)
    assert tok.status_code == 201, tok.text
    enrolled = client.post(
        f"{API}/agents/enroll",
        json={"enrollment_token": tok.json()["token"], "name": "build-01", "hostname": "host-1"},
    )
    assert enrolled.status_code in (200, 201), enrolled.text
    agent_id = enrolled.json()["agent_id"]
    assert client.post(f"{API}/agents/{agent_id}/revoke", headers=h).status_code == 200
    assert client.delete(f"{API}/agents/{agent_id}", headers=h).status_code == 204
    assert client.delete(f"{API}/agents/enrollment-tokens/{tok.json()['id']}", headers=h).status_code == 204
    # a refused change records nothing: revoking again is a no-op
    assert client.delete(f"{API}/agents/enrollment-tokens/{tok.json()['id']}", headers=h).status_code == 204

    items = client.get(f"{API}/teams/{admin.team.id}/audit", headers=h).json()["items"]
    seen = sorted((e["action"], e["actor"], e["target_id"]) for e in items)
    assert seen == sorted(
        [
            ("enrollment_token.created", admin.user.email, tok.json()["id"]),
            ("agent.enrolled", "agent build-01", agent_id),
            ("agent.revoked", admin.user.email, agent_id),
            ("agent.deleted", admin.user.email, agent_id),
            ("enrollment_token.revoked", admin.user.email, tok.json()["id"]),
        ]
    )
    enrolled_event = next(e for e in items if e["action"] == "agent.enrolled")
    assert (
        enrolled_event["details"]["hostname"] == "host-1" and enrolled_event["details"]["replaced"] is False
    )
