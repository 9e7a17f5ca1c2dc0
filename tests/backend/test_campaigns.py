"""Campaigns are one team's (issue 22): a member of two teams cannot mix their agents in one
campaign (its runs, share links and export would hold two teams' data)."""

import uuid
from typing import Any

from fastapi.testclient import TestClient
from sqlalchemy.orm import Session

from backend.models import Membership, Role, Team
from tests.factories import create_agent, create_user


def test_a_campaign_refuses_agents_of_two_teams(client: TestClient, session: Session) -> None:
    u = create_user(session)
    other = Team(name=f"other-{uuid.uuid4().hex[:8]}")
    session.add(other)
    session.flush()
    session.add(Membership(user_id=u.user.id, team_id=other.id, role=Role.admin))
    session.flush()
    mine, theirs = create_agent(session, team=u.team), create_agent(session, team=other)
    body: dict[str, Any] = {
        "name": "mixed",
        "workload": {"jobs": [{"name": "r", "rw": "read", "size_bytes": 1 << 20, "bs_bytes": 4096}]},
        "targets": [
            {"agent_id": str(mine.agent.id), "target_path": "/srv/a"},
            {"agent_id": str(theirs.agent.id), "target_path": "/srv/b"},
        ],
    }
    before = client.get("/api/v1/runs", headers=u.headers).json()["total"]
    r = client.post("/api/v1/campaigns", json=body, headers=u.headers)
    assert r.status_code == 422, r.text
    assert r.json()["detail"][0]["field"] == "targets.1.agent_id"
    assert "one team" in r.json()["message"]
    assert client.get("/api/v1/runs", headers=u.headers).json()["total"] == before  # nothing half-made
    # each team's agents on their own: fine
    body["targets"] = body["targets"][1:]
    assert client.post("/api/v1/campaigns", json=body, headers=u.headers).status_code == 201
