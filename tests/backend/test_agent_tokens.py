"""Agent token expiry and rotation on the server (docs/adr/0011): enrolment and heartbeat say when
the token expires, rotation hands out a new one while the old one keeps working until the new one
is used (then only a short overlap), a lost rotation answer never locks the agent out, an expired
token is 401 token_expired, a revoked agent cannot rotate, the TTL setting is bounded."""

from datetime import datetime, timedelta
from typing import Any

import pytest
from fastapi.testclient import TestClient
from pydantic import ValidationError
from sqlalchemy.orm import Session

from backend.config import Settings, get_settings
from backend.kit.time import utcnow
from backend.models import Agent
from tests.factories import create_user

TOKENS = "/api/v1/agents/enrollment-tokens"


def _enrolled(client: TestClient, session: Session, name: str = "lab-1") -> tuple[Any, dict[str, Any]]:
    u = create_user(session)
    r = client.post(TOKENS, json={"team_id": str(u.team.id)}, headers=u.headers)
    assert r.status_code == 201, r.text
    body = {"enrollment_token": r.json()["token"], "name": name, "hostname": "h"}
    r = client.post("/api/v1/agents/enroll", json=body)
    assert r.status_code == 201, r.text
    return u, r.json()


def _hb(client: TestClient, agent_id: str, token: str) -> Any:
    return client.post(
        f"/api/v1/agents/{agent_id}/heartbeat",
        json={"state": "idle"},
        headers={"Authorization": f"Bearer {token}"},
    )


def _rotate(client: TestClient, agent_id: str, token: str) -> Any:
    return client.post(f"/api/v1/agents/{agent_id}/token", headers={"Authorization": f"Bearer {token}"})


def _at(value: str) -> datetime:
    return datetime.fromisoformat(value)


def test_enrolment_heartbeat_and_agent_read_say_when_the_token_expires(
    client: TestClient, session: Session
) -> None:
    before = utcnow()
    u, enrolled = _enrolled(client, session)
    ttl = get_settings().agent_token_ttl_s
    assert ttl == 30 * 24 * 3600
    expires = _at(enrolled["token_expires_at"])
    assert before + timedelta(seconds=ttl) <= expires <= utcnow() + timedelta(seconds=ttl)
    hb = _hb(client, enrolled["agent_id"], enrolled["agent_token"])
    assert hb.status_code == 200, hb.text
    assert _at(hb.json()["token_expires_at"]) == expires and hb.json()["token_ttl_s"] == ttl
    read = client.get(f"/api/v1/agents/{enrolled['agent_id']}", headers=u.headers).json()
    assert _at(read["token_expires_at"]) == expires


def test_rotation_keeps_the_old_token_until_the_new_one_is_used_then_a_short_overlap(
    client: TestClient, session: Session, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, enrolled = _enrolled(client, session)
    agent_id, old = enrolled["agent_id"], enrolled["agent_token"]
    old_expiry = _at(enrolled["token_expires_at"])
    r = _rotate(client, agent_id, old)
    assert r.status_code == 200, r.text
    new = r.json()["agent_token"]
    assert new != old and _at(r.json()["token_expires_at"]) > old_expiry
    # the answer may be lost: the old token still works, and says its own expiry (not the new one's)
    hb = _hb(client, agent_id, old)
    assert hb.status_code == 200 and _at(hb.json()["token_expires_at"]) == old_expiry
    # the new token is used: the old one keeps only the overlap (0 s here), then it is refused
    monkeypatch.setattr(get_settings(), "agent_token_overlap_s", 0)
    hb = _hb(client, agent_id, new)
    assert hb.status_code == 200 and _at(hb.json()["token_expires_at"]) == _at(r.json()["token_expires_at"])
    agent = session.get(Agent, agent_id, populate_existing=True)
    assert agent is not None and agent.previous_token_expires_at is not None
    assert agent.previous_token_expires_at <= utcnow()
    refused = _hb(client, agent_id, old)
    assert refused.status_code == 401 and refused.json()["error"] == "token_expired"
    assert _hb(client, agent_id, new).status_code == 200


def test_the_old_token_works_during_the_overlap_after_the_new_one_is_used(
    client: TestClient, session: Session
) -> None:
    _, enrolled = _enrolled(client, session)
    agent_id, old = enrolled["agent_id"], enrolled["agent_token"]
    new = _rotate(client, agent_id, old).json()["agent_token"]
    assert _hb(client, agent_id, new).status_code == 200
    agent = session.get(Agent, agent_id, populate_existing=True)
    assert agent is not None and agent.previous_token_expires_at is not None
    overlap = timedelta(seconds=get_settings().agent_token_overlap_s)
    assert agent.previous_token_expires_at <= utcnow() + overlap
    # a long-poll or upload started with the old token still gets through
    assert _hb(client, agent_id, old).status_code == 200


def test_a_lost_rotation_answer_does_not_lock_the_agent_out(client: TestClient, session: Session) -> None:
    _, enrolled = _enrolled(client, session)
    agent_id, t0 = enrolled["agent_id"], enrolled["agent_token"]
    lost = _rotate(client, agent_id, t0)
    assert lost.status_code == 200
    # the agent never got `lost`: it rotates again with its old token at the next heartbeat
    again = _rotate(client, agent_id, t0)
    assert again.status_code == 200, again.text
    t1, t2 = lost.json()["agent_token"], again.json()["agent_token"]
    assert _hb(client, agent_id, t1).status_code == 401  # the unused token is gone
    assert _hb(client, agent_id, t0).status_code == 200
    assert _hb(client, agent_id, t2).status_code == 200
    # and the next rotation goes on from t2
    assert _rotate(client, agent_id, t2).status_code == 200


def test_an_expired_token_is_401_token_expired_and_says_to_re_enrol(
    client: TestClient, session: Session
) -> None:
    _, enrolled = _enrolled(client, session)
    agent = session.get(Agent, enrolled["agent_id"])
    assert agent is not None
    agent.token_expires_at = utcnow() - timedelta(seconds=1)
    session.flush()
    for r in (
        _hb(client, enrolled["agent_id"], enrolled["agent_token"]),
        _rotate(client, enrolled["agent_id"], enrolled["agent_token"]),
    ):
        assert r.status_code == 401, r.text
        assert r.json()["error"] == "token_expired"
        assert "iowatt-agent enroll --replace" in r.json()["message"]


def test_a_revoked_agent_cannot_rotate_and_its_previous_token_ends_too(
    client: TestClient, session: Session
) -> None:
    u, enrolled = _enrolled(client, session)
    agent_id, old = enrolled["agent_id"], enrolled["agent_token"]
    new = _rotate(client, agent_id, old).json()["agent_token"]
    assert client.post(f"/api/v1/agents/{agent_id}/revoke", headers=u.headers).status_code == 200
    for token in (old, new):
        r = _rotate(client, agent_id, token)
        assert r.status_code == 401 and r.json()["error"] == "bad_token"
        assert _hb(client, agent_id, token).status_code == 401


def test_another_agent_cannot_rotate_this_one(client: TestClient, session: Session) -> None:
    _, a = _enrolled(client, session, "lab-a")
    _, b = _enrolled(client, session, "lab-b")
    r = _rotate(client, a["agent_id"], b["agent_token"])
    assert r.status_code == 403 and r.json()["error"] == "wrong_agent"
    assert _hb(client, a["agent_id"], a["agent_token"]).status_code == 200


def test_re_enrolling_with_replace_ends_both_old_tokens(client: TestClient, session: Session) -> None:
    u, enrolled = _enrolled(client, session)
    agent_id, old = enrolled["agent_id"], enrolled["agent_token"]
    new = _rotate(client, agent_id, old).json()["agent_token"]
    r = client.post(TOKENS, json={"team_id": str(u.team.id)}, headers=u.headers)
    body = {"enrollment_token": r.json()["token"], "name": "lab-1", "hostname": "h", "replace": True}
    again = client.post("/api/v1/agents/enroll", json=body)
    assert again.status_code == 201, again.text
    assert _hb(client, agent_id, old).status_code == 401
    assert _hb(client, agent_id, new).status_code == 401
    assert _hb(client, agent_id, again.json()["agent_token"]).status_code == 200


def test_the_ttl_setting_decides_the_expiry_and_is_bounded(
    client: TestClient, session: Session, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(get_settings(), "agent_token_ttl_s", 3600)
    _, enrolled = _enrolled(client, session)
    expires = _at(enrolled["token_expires_at"])
    assert abs((expires - utcnow()).total_seconds() - 3600) < 60
    rotated = _rotate(client, enrolled["agent_id"], enrolled["agent_token"]).json()
    assert abs((_at(rotated["token_expires_at"]) - utcnow()).total_seconds() - 3600) < 60
    for bad in (0, 9, 367 * 24 * 3600, 10**12):
        with pytest.raises(ValidationError, match="agent_token_ttl_s"):
            Settings(agent_token_ttl_s=bad)
    with pytest.raises(ValidationError, match="agent_token_overlap_s"):
        Settings(agent_token_overlap_s=-1)
    assert Settings(agent_token_ttl_s=10).agent_token_ttl_s == 10
