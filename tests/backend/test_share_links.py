"""Share links (issue 13): created by members, listed and revoked by the team, opened without login;
the view is read live for the frozen target, shows nothing else of the team, and previews as
OpenGraph tags and a 1200x630 PNG."""

import csv
import io
import struct
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy.orm import Session

from backend.config import get_settings
from backend.models import AuditEvent, Campaign, Role, Run, ShareLink
from tests.factories import UserCtx, create_agent, create_result, create_run, create_user

MB = 1_000_000


def _measured(session: Session, agent: Any, target: str, mbs: float, **over: Any) -> Run:
    run = create_run(session, agent=agent, target_path=target, **over)
    create_result(
        session,
        run=run,
        jobs=[{"name": "seq-read", "rw": "read", "bs_bytes": 1 << 20, "read_bw_bytes": int(mbs * MB)}],
    )
    return run


def _team(session: Session) -> tuple[UserCtx, UserCtx, UserCtx, list[Run]]:
    admin = create_user(session)
    member = create_user(session, role=Role.member, team=admin.team)
    viewer = create_user(session, role=Role.viewer, team=admin.team)
    a = create_agent(session, team=admin.team, name="lab-host")
    runs = [
        _measured(session, a.agent, "/srv/hdd", 200.0, name="hdd run"),
        _measured(session, a.agent, "/dev/shm/ram", 3000.0, name="ram run"),
    ]
    return admin, member, viewer, runs


def _share(
    client: TestClient,
    who: UserCtx,
    runs: list[Run],
    target_extra: dict[str, Any] | None = None,
    **extra: Any,
) -> dict[str, Any]:
    target = {
        "runs": [str(r.id) for r in runs],
        "group_by": "none",
        "charts": ["bars", "energy"],
        "table": "runs",
        **(target_extra or {}),
    }
    body = {"kind": "comparison", "target": target, "title": "HDD vs RAM", **extra}
    r = client.post("/api/v1/share-links", json=body, headers=who.headers)
    assert r.status_code == 201, r.text
    return dict(r.json())


def _token(created: dict[str, Any]) -> str:
    return str(created["url"]).rsplit("/s/", 1)[1]


def test_a_member_shares_a_comparison_that_opens_without_login(client: TestClient, session: Session) -> None:
    admin, member, _, runs = _team(session)
    created = _share(client, member, runs)
    assert created["url"].startswith("http") and "/s/" in created["url"]
    token = _token(created)
    r = client.get(f"/api/v1/shared/{token}")  # no Authorization header
    assert r.status_code == 200, r.text
    v = r.json()
    assert (v["kind"], v["title"], v["team_name"], v["shared_by"]) == (
        "comparison",
        "HDD vs RAM",
        admin.team.name,
        "Test User",
    )
    assert v["options"]["charts"] == ["bars", "energy"] and v["options"]["table"] == "runs"
    c = v["comparison"]
    assert [x["id"] for x in c["runs"]] == [str(r.id) for r in runs]
    bw = next(m for m in c["jobs"][0]["metrics"] if m["key"] == "read_bw_bytes")
    assert bw["values"] == [pytest.approx(200 * MB), pytest.approx(3000 * MB)]
    assert bw["ratios"][1] == pytest.approx(15.0)
    assert (v["runs_total"], v["runs_deleted"]) == (2, 0)


def test_the_shared_view_shows_nothing_else_of_the_team(client: TestClient, session: Session) -> None:
    admin, member, _, runs = _team(session)
    other = _measured(
        session, create_agent(session, team=admin.team).agent, "/srv/other", 1.0, name="secret run"
    )
    token = _token(_share(client, member, runs))
    body = client.get(f"/api/v1/shared/{token}").text
    run = session.get(Run, runs[0].id)
    assert run is not None
    for hidden in (
        str(admin.team.id),
        str(run.agent_id),
        str(run.device_id),
        "/srv/hdd",
        "/dev/shm/ram",
        str(other.id),
        "secret run",
    ):
        assert hidden not in body, hidden
    # grouped by target, the labels name targets by alias, never by path
    target = {"runs": [str(r.id) for r in runs], "group_by": "target"}
    r = client.post(
        "/api/v1/share-links", json={"kind": "comparison", "target": target}, headers=member.headers
    )
    shared = client.get(f"/api/v1/shared/{_token(r.json())}").json()
    labels = [col["label"] for col in shared["comparison"]["columns"]]
    assert labels == ["target-2 on lab-host", "target-1 on lab-host"], labels
    assert all(col["key"].startswith("col") for col in shared["comparison"]["columns"])


def test_views_are_counted_and_listed_for_members(client: TestClient, session: Session) -> None:
    admin, member, viewer, runs = _team(session)
    created = _share(client, member, runs)
    token = _token(created)
    for _ in range(3):
        assert client.get(f"/api/v1/shared/{token}").status_code == 200
    # exports and previews are not views
    assert client.get(f"/api/v1/shared/{token}/export.csv").status_code == 200
    page = client.get("/api/v1/share-links", params={"team_id": str(admin.team.id)}, headers=member.headers)
    assert page.status_code == 200, page.text
    item = page.json()["items"][0]
    assert (item["id"], item["views"], item["state"], item["kind"]) == (
        created["id"],
        3,
        "active",
        "comparison",
    )
    assert item["created_by_name"] == "Test User" and item["last_viewed_at"] is not None
    assert item["target"]["runs"] == [str(r.id) for r in runs]
    refused = client.get(
        "/api/v1/share-links", params={"team_id": str(admin.team.id)}, headers=viewer.headers
    )
    assert refused.status_code == 403 and "member" in refused.json()["message"]


def test_revoked_links_404_and_only_the_creator_or_an_admin_revoke(
    client: TestClient, session: Session
) -> None:
    admin, member, viewer, runs = _team(session)
    other_member = create_user(session, role=Role.member, team=admin.team)
    created = _share(client, member, runs)
    token = _token(created)
    for who in (viewer, other_member):
        r = client.delete(f"/api/v1/share-links/{created['id']}", headers=who.headers)
        assert r.status_code == 403 and "admin" in r.json()["message"], r.text
    assert client.get(f"/api/v1/shared/{token}").status_code == 200
    assert client.delete(f"/api/v1/share-links/{created['id']}", headers=admin.headers).status_code == 204
    for path in ("", "/export.csv", "/export.json"):
        gone = client.get(f"/api/v1/shared/{token}{path}")
        assert gone.status_code == 404 and "revoked" in gone.json()["message"], gone.text
    assert client.get(f"/s/{token}/preview.png").status_code == 404
    again = client.delete(f"/api/v1/share-links/{created['id']}", headers=admin.headers)
    assert again.status_code == 409
    stranger = create_user(session)
    assert client.delete(f"/api/v1/share-links/{created['id']}", headers=stranger.headers).status_code == 404
    listed = client.get(
        "/api/v1/share-links", params={"team_id": str(admin.team.id)}, headers=admin.headers
    ).json()
    assert listed["items"][0]["state"] == "revoked" and listed["items"][0]["revoked_at"] is not None
    actions = {
        e.action
        for e in session.query(AuditEvent).filter(
            AuditEvent.team_id == admin.team.id, AuditEvent.target_id == created["id"]
        )
    }
    assert actions == {"share_link.created", "share_link.revoked"}
    assert client.get("/api/v1/shared/no-such-token").status_code == 404


def test_an_expired_link_is_gone(client: TestClient, session: Session) -> None:
    _, member, _, runs = _team(session)
    soon = datetime.now(UTC) + timedelta(hours=1)
    created = _share(client, member, runs, expires_at=soon.isoformat())
    token = _token(created)
    assert client.get(f"/api/v1/shared/{token}").status_code == 200
    link = session.get(ShareLink, uuid.UUID(created["id"]))
    assert link is not None
    link.expires_at = datetime.now(UTC) - timedelta(seconds=1)
    session.flush()
    r = client.get(f"/api/v1/shared/{token}")
    assert r.status_code == 410 and "expired" in r.json()["message"]
    past = client.post(
        "/api/v1/share-links",
        json={"kind": "run", "target": str(runs[0].id), "expires_at": "2020-01-01T00:00:00Z"},
        headers=member.headers,
    )
    assert past.status_code == 422 and past.json()["detail"][0]["field"] == "expires_at"
    naive = client.post(
        "/api/v1/share-links",
        json={"kind": "run", "target": str(runs[0].id), "expires_at": "2099-01-01T00:00:00"},
        headers=member.headers,
    )
    assert naive.status_code == 422 and naive.json()["detail"][0]["field"] == "expires_at"


def test_foreign_runs_and_wrong_targets_are_422_naming_the_field(
    client: TestClient, session: Session
) -> None:
    _, member, viewer, runs = _team(session)
    stranger = create_user(session)
    foreign = _measured(session, create_agent(session, team=stranger.team).agent, "/srv/x", 5.0)
    target = {"runs": [str(runs[0].id), str(foreign.id)]}
    r = client.post(
        "/api/v1/share-links", json={"kind": "comparison", "target": target}, headers=member.headers
    )
    assert r.status_code == 422 and r.json()["detail"][0]["field"] == "target.runs", r.text
    assert str(foreign.id) in r.json()["message"]
    bad_base = {"runs": [str(runs[0].id)], "baseline": str(runs[1].id)}
    r = client.post(
        "/api/v1/share-links", json={"kind": "comparison", "target": bad_base}, headers=member.headers
    )
    assert r.status_code == 422 and r.json()["detail"][0]["field"] == "target.baseline"
    r = client.post("/api/v1/share-links", json={"kind": "run", "target": target}, headers=member.headers)
    assert r.status_code == 422 and r.json()["detail"][0]["field"] == "target"
    r = client.post(
        "/api/v1/share-links", json={"kind": "run", "target": str(foreign.id)}, headers=member.headers
    )
    assert r.status_code == 422 and r.json()["detail"][0]["field"] == "target"
    r = client.post(
        "/api/v1/share-links", json={"kind": "comparison", "target": {"runs": []}}, headers=member.headers
    )
    assert r.status_code == 422 and r.json()["detail"][0]["field"].startswith("target")
    r = client.post(
        "/api/v1/share-links", json={"kind": "run", "target": str(runs[0].id)}, headers=viewer.headers
    )
    assert r.status_code == 403 and "member" in r.json()["message"]


def test_listing_another_teams_links_answers_as_every_list(client: TestClient, session: Session) -> None:
    """GET /share-links?team_id=<a team I am not in> is the 403 not_a_member of GET /runs?team_id=,
    naming the team; a viewer of the team is told the role it needs."""
    _, member, viewer, _ = _team(session)
    outsider = create_user(session)
    for path in ("/api/v1/share-links", "/api/v1/runs"):
        r = client.get(f"{path}?team_id={member.team.id}", headers=outsider.headers)
        assert r.status_code == 403 and r.json()["error"] == "not_a_member", (path, r.text)
        assert str(member.team.id) in r.json()["message"]
    r = client.get(f"/api/v1/share-links?team_id={member.team.id}", headers=viewer.headers)
    assert r.status_code == 403 and "member role" in r.json()["message"]


def test_a_deleted_run_is_absent_from_the_link(client: TestClient, session: Session) -> None:
    _, member, _, runs = _team(session)
    a = create_agent(session, team=member.team)
    third = _measured(session, a.agent, "/srv/ssd", 500.0, name="ssd run")
    token = _token(_share(client, member, [*runs, third], {"baseline": str(runs[0].id)}))
    session.delete(runs[0])  # the baseline run, deleted as V4's run deletion deletes it
    session.flush()
    v = client.get(f"/api/v1/shared/{token}").json()
    assert (v["runs_total"], v["runs_deleted"]) == (3, 1)
    assert [x["name"] for x in v["comparison"]["runs"]] == ["ram run", "ssd run"]
    assert str(runs[0].id) not in client.get(f"/api/v1/shared/{token}/export.json").text
    rows = list(csv.reader(io.StringIO(client.get(f"/api/v1/shared/{token}/export.csv").text)))
    assert "hdd run" not in " ".join(rows[0]) and any(h.startswith("ram run (baseline)") for h in rows[0])
    for r in (runs[1], third):
        session.delete(r)
    session.flush()
    v = client.get(f"/api/v1/shared/{token}").json()
    assert v["comparison"] is None and v["runs_deleted"] == 3


def test_run_and_campaign_links(client: TestClient, session: Session) -> None:
    _, member, _, runs = _team(session)
    r = client.post(
        "/api/v1/share-links", json={"kind": "run", "target": str(runs[1].id)}, headers=member.headers
    )
    assert r.status_code == 201, r.text
    v = client.get(f"/api/v1/shared/{_token(r.json())}").json()
    assert v["kind"] == "run" and [x["name"] for x in v["comparison"]["runs"]] == ["ram run"]
    camp = Campaign(team_id=member.team.id, name="disk sweep", spec={"repeats": 1})
    session.add(camp)
    session.flush()
    for run in runs:
        run.campaign_id = camp.id
    session.flush()
    r = client.post(
        "/api/v1/share-links", json={"kind": "campaign", "target": str(camp.id)}, headers=member.headers
    )
    assert r.status_code == 201, r.text
    v = client.get(f"/api/v1/shared/{_token(r.json())}").json()
    assert v["campaign"]["name"] == "disk sweep" and v["options"]["group_by"] == "device_environment"
    assert sorted(x["name"] for x in v["comparison"]["runs"]) == ["hdd run", "ram run"]


def test_the_preview_page_has_escaped_opengraph_tags(
    client: TestClient, session: Session, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "index.html").write_text(
        '<!doctype html><html><head><title>iowatt</title></head><body><div id="root"></div></body></html>'
    )
    monkeypatch.setattr(get_settings(), "frontend_dist", tmp_path)
    _, member, _, runs = _team(session)
    evil = '"><script>alert(1)</script> & <b>'
    token = _token(_share(client, member, runs, title=evil))
    page = client.get(f"/s/{token}")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    html = page.text
    assert "<script>alert(1)</script>" not in html and evil not in html
    assert (
        'property="og:title" content="&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt; &amp; &lt;b&gt;"'
        in html
    )
    public = get_settings().public_url.rstrip("/")
    assert f'property="og:image" content="{public}/s/{token}/preview.png"' in html
    # the description carries the headline numbers: 200 vs 3,000 MB/s, 15x faster
    desc = html.split('property="og:description" content="', 1)[1].split('"', 1)[0]
    assert "200 MB/s" in desc and "3,000 MB/s" in desc and "15" in desc, desc
    assert html.count("<title>") == 1 and '<div id="root"></div>' in html
    assert (
        client.get(f"/api/v1/share-links?team_id={member.team.id}", headers=member.headers).json()["items"][
            0
        ]["views"]
        == 0
    )
    gone = client.get("/s/not-a-token")
    assert gone.status_code == 404 and "Link not available" in gone.text and '<div id="root">' in gone.text


def test_the_preview_image_is_a_1200x630_png(client: TestClient, session: Session) -> None:
    _, member, _, runs = _team(session)
    token = _token(_share(client, member, runs))
    r = client.get(f"/s/{token}/preview.png")
    assert r.status_code == 200 and r.headers["content-type"] == "image/png"
    png = r.content
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and png[12:16] == b"IHDR"
    assert struct.unpack(">II", png[16:24]) == (1200, 630)
    assert len(png) > 5000  # a chart, not a blank canvas


def test_the_latency_chart_is_shared_when_it_was_on(client: TestClient, session: Session) -> None:
    _, member, _, _ = _team(session)
    a = create_agent(session, team=member.team)
    runs = []
    for target, ns in (("/srv/hdd", 4_000_000), ("/dev/shm/ram", 2_000)):
        run = create_run(session, agent=a.agent, target_path=target)
        job = {"name": "rr", "rw": "randread", "bs_bytes": 4096, "read_iops": 1e6 / ns}
        create_result(session, run=run, jobs=[job], bins={"rr:read": {str(ns): 90, str(ns * 2): 10}})
        runs.append(run)
    on = _token(_share(client, member, runs, {"charts": ["bars", "latency"]}))
    v = client.get(f"/api/v1/shared/{on}").json()
    lat = v["latency"]
    assert lat["job"] == "rr" and [c["key"] for c in lat["columns"]] == ["col1", "col2"]
    p50 = {c["column"]: next(p for p in c["points"] if p["percentile"] == 50.0) for c in lat["curves"]}
    assert p50 == {
        "col1": {"percentile": 50.0, "latency_ns": 4_000_000},
        "col2": {"percentile": 50.0, "latency_ns": 2_000},
    }
    off = _token(_share(client, member, runs))  # charts: bars and energy only
    assert client.get(f"/api/v1/shared/{off}").json()["latency"] is None
