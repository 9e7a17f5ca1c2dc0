"""Share links to procurement reviews (issue 16 on issue 13's links): a member shares a review; the
link opens without login and shows the review read-only — a decided one its frozen snapshot (later
versions and re-measured or deleted runs change nothing), an undecided one its figures now, said
so; no team, environment or user ids and no target paths; CSV/JSON export, OpenGraph tags and a
1200x630 PNG of the ranking; revoked 404, expired 410, audited as every link."""

import csv
import io
import struct
import uuid
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select
from sqlalchemy.orm import Session

from backend.config import get_settings
from backend.models import AuditEvent, Role, ShareLink
from backend.models.review import Review
from tests.factories import UserCtx, create_agent, create_result, create_run, create_user

GB = 10**9


def _review(client: TestClient, u: UserCtx, name: str = "Content server HDDs") -> dict[str, Any]:
    body = {
        "team_id": str(u.team.id),
        "name": name,
        "question": "Which HDD for the content platform?",
        "currency": "USD",
        "horizon_years": "5",
        "tariff_per_kwh": "0.12",
        "grid_g_per_kwh": "400",
    }
    r = client.post("/api/v1/reviews", json=body, headers=u.headers)
    assert r.status_code == 201, r.text
    return dict(r.json())


def _candidate(client: TestClient, u: UserCtx, review_id: str, name: str, price: str, **over: Any) -> str:
    body = {
        "name": name,
        "device": {"model": name, "capacity_bytes": 600 * GB, "unit_price": price},
        "count": 2,
        "protection": "raid1",
        "performance": {"source": "published", "metric": "rps", "value": "580.7", "reference": "seed 001"},
        "power": {"idle_w": "5", "load_w": "8", "per": "drive", "reference": "datasheet"},
        **over,
    }
    r = client.post(f"/api/v1/reviews/{review_id}/candidates", json=body, headers=u.headers)
    assert r.status_code == 201, r.text
    return str(r.json()["id"])


def _team(session: Session) -> tuple[UserCtx, UserCtx, UserCtx]:
    admin = create_user(session)
    member = create_user(session, role=Role.member, team=admin.team)
    viewer = create_user(session, role=Role.viewer, team=admin.team)
    return admin, member, viewer


def _two_candidates(client: TestClient, u: UserCtx) -> tuple[dict[str, Any], str, str]:
    rv = _review(client, u)
    cheap = _candidate(client, u, rv["id"], "ENT 15K R1", "595")
    dear = _candidate(client, u, rv["id"], "ENT 10K R1", "875")
    return rv, cheap, dear


def _share(client: TestClient, u: UserCtx, review_id: str, **extra: Any) -> dict[str, Any]:
    r = client.post(
        "/api/v1/share-links", json={"kind": "review", "target": review_id, **extra}, headers=u.headers
    )
    assert r.status_code == 201, r.text
    return dict(r.json())


def _token(created: dict[str, Any]) -> str:
    return str(created["url"]).rsplit("/s/", 1)[1]


def _decide(client: TestClient, admin: UserCtx, review_id: str, candidate_id: str) -> None:
    r = client.post(
        f"/api/v1/reviews/{review_id}/decision",
        json={"candidate_id": candidate_id, "reason": "cheapest per RPS"},
        headers=admin.headers,
    )
    assert r.status_code == 200, r.text


def _price(view: dict[str, Any], name: str) -> Decimal:
    return Decimal(next(c["price_total"] for c in view["review"]["candidates"] if c["name"] == name))


def test_a_member_shares_an_undecided_review_that_opens_without_login(
    client: TestClient, session: Session
) -> None:
    admin, member, _ = _team(session)
    rv, cheap, _ = _two_candidates(client, member)
    created = _share(client, member, rv["id"], title="HDDs for the content platform")
    r = client.get(f"/api/v1/shared/{_token(created)}")  # no Authorization header
    assert r.status_code == 200, r.text
    v = r.json()
    assert (v["kind"], v["title"], v["team_name"], v["comparison"]) == (
        "review",
        "HDDs for the content platform",
        admin.team.name,
        None,
    )
    s = v["review"]
    assert s["decided"] is False and s["decision"] is None
    assert s["name"] == "Content server HDDs" and s["currency"] == "USD" and s["gb_bytes"] == GB
    # live figures: the same the logged-in review shows
    own = client.get(f"/api/v1/reviews/{rv['id']}", headers=member.headers).json()
    assert [c["tco"] for c in s["candidates"]] == [c["tco"] for c in own["candidates"]]
    assert [x["name"] for x in s["ranking"]] == [x["name"] for x in own["ranking"]]
    assert s["ranking"][0]["candidate_id"] == cheap and _price(v, "ENT 15K R1") == 1190
    assert s["methodology"] and all(f["formula"] for f in s["methodology"])
    # nothing of the team but the review: no team, environment or user ids
    text = r.text
    for secret in (str(admin.team.id), str(member.user.id), str(admin.user.id)):
        assert secret not in text
    assert all(c["device_id"] is None for c in s["candidates"])
    assert not {"team_id", "environment_id", "created_by", "parent_id"} & set(s)
    # audited as every link; counted as a view
    ev = session.scalars(select(AuditEvent).where(AuditEvent.action == "share_link.created")).all()
    assert [e.details["kind"] for e in ev if e.team_id == admin.team.id] == ["review"]
    links = client.get(f"/api/v1/share-links?team_id={member.team.id}", headers=member.headers).json()
    assert links["items"][0]["kind"] == "review" and links["items"][0]["views"] == 1
    assert links["items"][0]["target"] == {"review": rv["id"]}


def test_sharing_a_review_needs_a_member_of_its_team(client: TestClient, session: Session) -> None:
    admin, member, viewer = _team(session)
    rv, _, _ = _two_candidates(client, member)
    r = client.post(
        "/api/v1/share-links", json={"kind": "review", "target": rv["id"]}, headers=viewer.headers
    )
    assert r.status_code == 403
    other = create_user(session)
    r = client.post("/api/v1/share-links", json={"kind": "review", "target": rv["id"]}, headers=other.headers)
    assert r.status_code == 422 and r.json()["detail"][0]["field"] == "target"
    r = client.post(
        "/api/v1/share-links", json={"kind": "review", "target": str(uuid.uuid4())}, headers=admin.headers
    )
    assert r.status_code == 422 and r.json()["detail"][0]["field"] == "target"


def test_a_decided_review_shows_its_snapshot_after_later_versions(
    client: TestClient, session: Session
) -> None:
    admin, member, _ = _team(session)
    rv, cheap, dear = _two_candidates(client, member)
    token = _token(_share(client, member, rv["id"]))
    assert client.get(f"/api/v1/shared/{token}").json()["review"]["decided"] is False
    _decide(client, admin, rv["id"], cheap)
    v1 = client.get(f"/api/v1/shared/{token}").json()
    assert v1["review"]["decided"] is True
    d = v1["review"]["decision"]
    assert (d["candidate_id"], d["candidate_name"], d["reason"]) == (cheap, "ENT 15K R1", "cheapest per RPS")
    assert d["decided_by_name"] == admin.user.display_name and "decided_by" not in d
    # a new version, changed and decided otherwise: the first link still answers the first decision
    v2 = client.post(f"/api/v1/reviews/{rv['id']}/versions", headers=member.headers).json()
    v2_dear = next(c["id"] for c in v2["candidates"] if c["name"] == "ENT 10K R1")
    r = client.patch(
        f"/api/v1/reviews/{v2['id']}/candidates/{v2_dear}",
        json={"device": {"model": "ENT 10K R1", "capacity_bytes": 1800 * GB, "unit_price": "99"}},
        headers=member.headers,
    )
    assert r.status_code == 200, r.text
    v2_read = client.get(f"/api/v1/reviews/{v2['id']}", headers=member.headers).json()
    _decide(client, admin, v2["id"], v2_read["ranking"][0]["candidate_id"])
    again = client.get(f"/api/v1/shared/{token}").json()
    assert again["review"] == v1["review"] and again["review"]["version"] == 1
    assert _price(again, "ENT 10K R1") == 1750
    later = client.get(f"/api/v1/shared/{_token(_share(client, member, v2['id']))}").json()
    assert later["review"]["version"] == 2 and _price(later, "ENT 10K R1") == 198
    assert dear != v2_dear


def test_a_decided_review_keeps_a_deleted_runs_figures_and_hides_target_paths(
    client: TestClient, session: Session
) -> None:
    admin, member, _ = _team(session)
    a = create_agent(session, team=admin.team, name="lab-host")
    run = create_run(
        session, agent=a.agent, target_path="/srv/secret-array", name="rand on lab-host:/srv/secret-array"
    )
    create_result(
        session, run=run, jobs=[{"name": "rand", "rw": "randread", "bs_bytes": 4096, "read_iops": 900.0}]
    )
    rv = _review(client, member)
    measured = _candidate(
        client, member, rv["id"], "measured", "500", performance={"source": "run", "run_id": str(run.id)}
    )
    _candidate(client, member, rv["id"], "published", "700")
    token = _token(_share(client, member, rv["id"]))
    live = client.get(f"/api/v1/shared/{token}")
    assert "/srv/secret-array" not in live.text, live.text
    c = next(x for x in live.json()["review"]["candidates"] if x["id"] == measured)
    assert c["performance_value"] == "900" or float(c["performance_value"]) == 900.0
    assert "target-1" in c["performance_reference"] and c["run_id"] == str(run.id)
    _decide(client, admin, rv["id"], measured)
    frozen = client.get(f"/api/v1/shared/{token}").json()
    session.delete(run)
    session.flush()
    after = client.get(f"/api/v1/shared/{token}").json()
    assert after["review"] == frozen["review"]
    assert (
        float(next(x for x in after["review"]["candidates"] if x["id"] == measured)["performance_value"])
        == 900
    )


def test_revoked_review_links_404_and_expired_410(client: TestClient, session: Session) -> None:
    admin, member, _ = _team(session)
    rv, _, _ = _two_candidates(client, member)
    created = _share(client, member, rv["id"])
    token = _token(created)
    assert client.get(f"/api/v1/shared/{token}").status_code == 200
    assert client.delete(f"/api/v1/share-links/{created['id']}", headers=member.headers).status_code == 204
    for path in ("", "/export.csv", "/export.json"):
        r = client.get(f"/api/v1/shared/{token}{path}")
        assert r.status_code == 404 and r.json()["error"] == "share_link_not_found"
    assert client.get(f"/s/{token}/preview.png").status_code == 404
    revoked = session.scalars(select(AuditEvent).where(AuditEvent.action == "share_link.revoked")).all()
    assert [e.details["kind"] for e in revoked if e.team_id == admin.team.id] == ["review"]

    soon = datetime.now(UTC) + timedelta(hours=1)
    created = _share(client, member, rv["id"], expires_at=soon.isoformat())
    token = _token(created)
    assert client.get(f"/api/v1/shared/{token}").status_code == 200
    link = session.get(ShareLink, uuid.UUID(created["id"]))
    assert link is not None
    link.expires_at = datetime.now(UTC) - timedelta(seconds=1)
    session.flush()
    r = client.get(f"/api/v1/shared/{token}")
    assert r.status_code == 410 and r.json()["error"] == "share_link_expired"
    assert client.get(f"/api/v1/shared/{token}/export.csv").status_code == 410


def test_csv_and_json_exports_of_a_shared_review(client: TestClient, session: Session) -> None:
    admin, member, _ = _team(session)
    rv, cheap, _ = _two_candidates(client, member)
    _decide(client, admin, rv["id"], cheap)
    token = _token(_share(client, member, rv["id"]))
    r = client.get(f"/api/v1/shared/{token}/export.csv")
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/csv")
    rows = list(csv.DictReader(io.StringIO(r.text)))
    assert [x["candidate"] for x in rows] == ["ENT 15K R1", "ENT 10K R1"]
    assert [Decimal(x["price_total"]) for x in rows] == [1190, 1750]
    assert rows[0]["rank"] == "1" and rows[0]["gb_bytes"] == str(GB) and rows[0]["currency"] == "USD"
    own = client.get(f"/api/v1/reviews/{rv['id']}?format=csv", headers=member.headers)
    assert r.text == own.text  # the same CSV the team exports
    j = client.get(f"/api/v1/shared/{token}/export.json")
    assert j.status_code == 200 and "attachment" in j.headers["content-disposition"]
    assert j.json()["review"]["decision"]["candidate_id"] == cheap
    # exports are not views
    links = client.get(f"/api/v1/share-links?team_id={member.team.id}", headers=member.headers).json()
    assert links["items"][0]["views"] == 0


def test_a_deleted_review_leaves_an_empty_link(client: TestClient, session: Session) -> None:
    _, member, _ = _team(session)
    rv, _, _ = _two_candidates(client, member)
    token = _token(_share(client, member, rv["id"]))
    review = session.get(Review, uuid.UUID(rv["id"]))
    session.delete(review)
    session.flush()
    r = client.get(f"/api/v1/shared/{token}")
    assert r.status_code == 200 and r.json()["review"] is None and r.json()["kind"] == "review"
    csv_text = client.get(f"/api/v1/shared/{token}/export.csv").text
    assert csv_text.startswith("candidate,drives,protection") and csv_text.count("\n") == 1
    png = client.get(f"/s/{token}/preview.png")
    assert png.status_code == 200 and struct.unpack(">II", png.content[16:24]) == (1200, 630)


def test_review_link_previews_opengraph_and_a_ranking_png(
    client: TestClient, session: Session, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "index.html").write_text(
        '<!doctype html><html><head><title>iowatt</title></head><body><div id="root"></div></body></html>'
    )
    monkeypatch.setattr(get_settings(), "frontend_dist", tmp_path)
    admin, member, _ = _team(session)
    rv, cheap, _ = _two_candidates(client, member)
    token = _token(_share(client, member, rv["id"]))
    html = client.get(f"/s/{token}").text
    assert 'property="og:title" content="Review Content server HDDs (version 1)"' in html
    desc = html.split('property="og:description" content="', 1)[1].split('"', 1)[0]
    assert desc.startswith("Not decided yet.") and "1. ENT 15K R1" in desc and "2. ENT 10K R1" in desc, desc
    assert f"/s/{token}/preview.png" in html
    undecided = client.get(f"/s/{token}/preview.png").content
    assert undecided[:8] == b"\x89PNG\r\n\x1a\n" and struct.unpack(">II", undecided[16:24]) == (1200, 630)
    assert len(undecided) > 5000  # bars, not a blank canvas
    _decide(client, admin, rv["id"], cheap)
    html = client.get(f"/s/{token}").text
    desc = html.split('property="og:description" content="', 1)[1].split('"', 1)[0]
    assert desc.startswith("Decided: ENT 15K R1 on "), desc
    decided = client.get(f"/s/{token}/preview.png").content
    assert struct.unpack(">II", decided[16:24]) == (1200, 630) and decided != undecided  # green, titled
    # the previews are not views
    links = client.get(f"/api/v1/share-links?team_id={member.team.id}", headers=member.headers).json()
    assert links["items"][0]["views"] == 0
