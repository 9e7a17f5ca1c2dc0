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

from backend.auth.throttle import get_redis
from backend.config import get_settings
from backend.models import AuditEvent, Campaign, Role, Run, RunStatus, ShareLink
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


def test_imported_and_published_runs_carry_their_origin_on_the_link(
    client: TestClient, session: Session
) -> None:
    """issue 26: a link labels an imported run "imported from <tool>" and a published one as not
    measured here, as the app does; the imported file's name and hash stay with the team."""
    _, member, _, runs = _team(session)
    runs[0].origin = {
        "kind": "imported",
        "tool": "CrystalDiskMark",
        "version": "8.0.4",
        "format": "crystaldiskmark",
        "file_name": "lab-7-secret-notes.txt",
        "sha256": "ab" * 32,
    }
    runs[1].origin = {
        "kind": "published",
        "tool": "Samsung",
        "format": "published",
        "reference": "datasheet p. 3",
    }
    session.flush()
    v = client.get(f"/api/v1/shared/{_token(_share(client, member, runs))}")
    assert v.status_code == 200, v.text
    imported, published = (r["origin"] for r in v.json()["comparison"]["runs"])
    assert (imported["kind"], imported["label"], imported["version"]) == (
        "imported",
        "imported from CrystalDiskMark 8.0.4",
        "8.0.4",
    )
    assert imported["file_name"] is None and imported["sha256"] is None
    assert imported["source_url"] is None and imported["files"] == []  # the team's file stays its own
    assert "lab-7-secret-notes" not in v.text
    assert (published["label"], published["reference"]) == (
        "published by Samsung: not measured here",
        "datasheet p. 3",
    )
    # a measured run has none
    measured = _measured(session, create_agent(session, team=member.team).agent, "/srv/x", 1.0)
    r = client.post(
        "/api/v1/share-links", json={"kind": "run", "target": str(measured.id)}, headers=member.headers
    )
    assert client.get(f"/api/v1/shared/{_token(r.json())}").json()["comparison"]["runs"][0]["origin"] is None


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


# --- issue 22: the public payload is an allowlist, cached per content version, throttled ---------

SECRET = "S3CR3T-tok"
BMC = f"https://bmc.example/redfish?token={SECRET}"
# a key that must not appear anywhere in a shared JSON (ADR 0018); `source` only in energy objects
FORBIDDEN_KEYS = {"meter_name", "reason", "parameters", "target_path", "agent_id", "environment_id",
                  "team_id", "token_hash", "error", "decided_by", "created_by"}  # fmt: skip
VDBENCH = (
    f"* the BMC at {BMC} and the share {SECRET}\n"
    "fsd=fsd1,anchor=/srv/x,depth=1,width=1,files=2,size=4k\n"
    "fwd=fwd1,fsd=fsd1,operation=read,xfersize=4k,fileio=random,fileselect=random,threads=1\n"
    "rd=rd1,fwd=fwd1,fwdrate=max,format=yes,elapsed=5,interval=1\n"
)


def _walk(value: Any, path: str = "$") -> list[str]:
    """Every forbidden key or planted text in a JSON value, by path."""
    found = []
    if isinstance(value, dict):
        if "total_j" in value and "tier" in value and "source" in value:
            found.append(f"{path}.source (an energy's meter)")
        for k, v in value.items():
            if k in FORBIDDEN_KEYS:
                found.append(f"{path}.{k}")
            found += _walk(v, f"{path}.{k}")
    elif isinstance(value, list):
        for i, v in enumerate(value):
            found += _walk(v, f"{path}[{i}]")
    elif isinstance(value, str) and (SECRET in value or "bmc.example" in value):
        found.append(f"{path} = {value[:80]!r}")
    return found


def _planted(client: TestClient, session: Session) -> tuple[UserCtx, list[list[uuid.UUID]], str]:
    """Runs whose meter name, meter source, energy reason and vdbench text carry a secret URL: one
    with energy, one whose meter gave no data (its reason quotes the BMC), two vdbench runs (their
    texts differ); a campaign of each kind and a review whose candidates the first two measure."""
    from backend.power import service as power_service
    from tests.backend.test_energy import power_doc, upload

    u = create_user(session)
    a = create_agent(session, team=u.team, name="lab-host")
    meter = {"spec": f"ipmi:{BMC}", "name": BMC, "driver": "command", "tier": "inband",
             "quantity": "power_avg", "nominal_interval_s": 0.1}  # fmt: skip
    ok, r = upload(client, session, u, a, power_doc(meter=meter))
    assert r.status_code < 300, r.text
    assert power_service.compute(session, run_id=ok) is not None
    broken = power_doc(meter=meter)
    broken |= {"status": "no_meter_data", "reason": f"the BMC at {BMC} refused the login"}
    failed, r = upload(client, session, u, a, broken)
    assert r.status_code < 300, r.text
    vdbench = []
    for n in range(2):
        vdb = create_run(session, agent=a.agent, status=RunStatus.succeeded, name=f"vdbench {n}")
        text = VDBENCH.replace("elapsed=5", f"elapsed={5 + n}")
        vdb.workload_spec = {"kind": "vdbench", "jobs": [], "vdbench": {"parameters": text}}
        vdbench.append(vdb.id)
    groups: list[list[uuid.UUID]] = [[ok, failed], vdbench]
    for group in list(groups):
        camp = Campaign(team_id=u.team.id, name="planted", spec={"repeats": 1})
        session.add(camp)
        session.flush()
        for rid in group:
            run = session.get(Run, rid)
            assert run is not None, rid
            run.campaign_id, run.status = camp.id, RunStatus.succeeded
        groups.append([camp.id])
    session.flush()
    body = {"team_id": str(u.team.id), "name": "planted review", "currency": "EUR", "horizon_years": "5",
            "tariff_per_kwh": "0.12", "grid_g_per_kwh": "400"}  # fmt: skip
    rv = client.post("/api/v1/reviews", json=body, headers=u.headers)
    assert rv.status_code == 201, rv.text
    for n, rid in enumerate([ok, failed]):
        device = {"model": "m", "capacity_bytes": 10**12, "unit_price": "100"}
        cand = {"name": f"c{n}", "device": device, "count": 1, "protection": "jbod",
                "performance": {"source": "run", "run_id": str(rid)}}  # fmt: skip
        r = client.post(f"/api/v1/reviews/{rv.json()['id']}/candidates", json=cand, headers=u.headers)
        assert r.status_code == 201, r.text
    return u, groups, str(rv.json()["id"])


def test_every_kind_of_shared_view_carries_no_private_text(client: TestClient, session: Session) -> None:
    """Issue 22: the meter's name and source, the energy's reason (a BMC's URL) and vdbench's
    parameter text reached share views. Each kind's whole JSON, its CSV and its preview page are
    walked for the planted secret and for forbidden keys."""
    u, groups, review = _planted(client, session)
    block, vdbench, camp_block, camp_vdbench = groups
    # the logged-in pages do show them: the plant is real
    assert BMC in client.get(f"/api/v1/runs/{block[0]}", headers=u.headers).text
    assert SECRET in client.get(f"/api/v1/runs/{vdbench[0]}", headers=u.headers).text
    targets: list[tuple[str, Any]] = [
        *[("run", str(r)) for r in block + vdbench],
        ("comparison", {"runs": [str(r) for r in block]}),
        ("comparison", {"runs": [str(r) for r in vdbench], "force": True}),
        ("comparison", {"runs": [str(r) for r in vdbench], "force": True, "group_by": "target"}),
        ("campaign", str(camp_block[0])),
        ("campaign", str(camp_vdbench[0])),
        ("review", review),
    ]
    for kind, target in targets:
        r = client.post("/api/v1/share-links", json={"kind": kind, "target": target}, headers=u.headers)
        assert r.status_code == 201, r.text
        token = _token(r.json())
        view = client.get(f"/api/v1/shared/{token}")
        assert view.status_code == 200, view.text
        v = view.json()
        assert _walk(v) == [], (kind, _walk(v))
        if kind != "review":
            assert v["comparison"]["runs"], kind
        for extra in ("export.json", "export.csv"):
            got = client.get(f"/api/v1/shared/{token}/{extra}")
            assert got.status_code == 200 and SECRET not in got.text and "bmc.example" not in got.text
        assert client.get(f"/s/{token}/preview.png").status_code == 200
        if kind == "comparison" and target["runs"] == [str(r) for r in vdbench]:
            diffs = v["comparison"]["comparability"]["differences"]
            text = [d for d in diffs if d["field"].endswith("parameters")]
            assert text and all(str(x).endswith("(not shared)") for x in text[0]["values"].values()), diffs
    # what is shared instead: the kind of meter, a public note for the missing energy
    v = client.get(f"/api/v1/shared/{token}").json()  # the review
    notes = [n["message"] for c in v["review"]["candidates"] for n in c["validity"]]
    assert "the run's energy is not available (no meter data)" in notes, notes
    refs = [c["power_reference"] for c in v["review"]["candidates"]]
    assert any(x and x.endswith(": its meter") for x in refs), refs


def test_the_view_is_computed_once_per_content_version(
    client: TestClient, session: Session, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 22: anonymous requests recomputed up to 200 runs each. The second request is served
    from the cache; deleting a run changes the content version (recomputed, the run absent);
    revoking drops the cached entries."""
    from backend.compare import service as compare_service
    from backend.sharing import cache

    calls: list[int] = []
    real = compare_service.compare

    def counted(*a: Any, **k: Any) -> Any:
        calls.append(1)
        return real(*a, **k)

    monkeypatch.setattr(compare_service, "compare", counted)
    admin, member, _, runs = _team(session)
    created = _share(client, member, runs)
    token = _token(created)
    first = client.get(f"/api/v1/shared/{token}").json()
    assert len(calls) == 1
    for path in ("", "/export.csv", "/export.json", "/export.json"):
        assert client.get(f"/api/v1/shared/{token}{path}").status_code == 200
    assert client.get(f"/s/{token}/preview.png").status_code == 200
    assert len(calls) == 1, "served from the cache"
    assert client.get(f"/api/v1/shared/{token}").json() == first
    r = client.delete(f"/api/v1/runs/{runs[0].id}", headers=admin.headers)
    assert r.status_code in (200, 202, 204), r.text
    after = client.get(f"/api/v1/shared/{token}").json()
    assert len(calls) == 2 and after["runs_deleted"] == 1
    redis = get_redis()
    link = uuid.UUID(created["id"])
    assert list(redis.scan_iter(match=f"{cache.PREFIX}:{link}:*"))
    assert client.delete(f"/api/v1/share-links/{link}", headers=member.headers).status_code == 204
    assert list(redis.scan_iter(match=f"{cache.PREFIX}:{link}:*")) == []
    assert client.get(f"/api/v1/shared/{token}").status_code == 404


def test_anonymous_share_routes_are_throttled_per_client(
    client: TestClient, session: Session, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past IOWATT_SHARE_REQUESTS_PER_MIN in the window: 429 with Retry-After, for known and
    unknown tokens alike; another client address is not affected."""
    from backend.sharing import throttle

    monkeypatch.setattr(get_settings(), "share_requests_per_min", 5)
    _, member, _, runs = _team(session)
    token = _token(_share(client, member, runs))
    paths = [f"/api/v1/shared/{token}", "/api/v1/shared/nope", f"/s/{token}/preview.png",
             f"/api/v1/shared/{token}/export.csv", "/s/nope/preview.png"]  # fmt: skip
    codes = [client.get(p).status_code for p in paths]
    assert codes == [200, 404, 200, 200, 404], codes
    for p in paths:
        r = client.get(p)
        assert r.status_code == 429, (p, r.status_code)
        assert r.json()["error"] == "share_throttled" and int(r.headers["Retry-After"]) >= 1
    # the logged-in API is not counted here
    assert (
        client.get(f"/api/v1/share-links?team_id={member.team.id}", headers=member.headers).status_code == 200
    )
    get_redis().delete(throttle.key_for("testclient"))
    assert client.get(f"/api/v1/shared/{token}").status_code == 200


@pytest.mark.parametrize("title", ["$x^2$", "$$", "\\", "$\\frac{", "a $ b", "$\\invalid{x}$", "^_{}%&#"])
def test_a_title_in_any_math_syntax_draws_as_text(client: TestClient, session: Session, title: str) -> None:
    """Issue 22: matplotlib read "$…$" as mathtext and a broken one made the preview a 500."""
    _, member, _, runs = _team(session)
    for run in runs:
        run.name = f"run {title}"
    session.flush()
    token = _token(_share(client, member, runs, title=title))
    r = client.get(f"/s/{token}/preview.png")
    assert r.status_code == 200 and r.content[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.fixture(autouse=True)
def _fresh_throttle() -> None:
    """Each test starts with the test client's share-route count at zero (the counts live in the
    session's Redis, across tests)."""
    from backend.sharing import throttle

    get_redis().delete(throttle.key_for("testclient"))


def test_a_removed_members_links_end_with_their_membership(client: TestClient, session: Session) -> None:
    """Issue 22: the creator held the token and kept reading the team's data through it after
    being removed. A link lives only while its creator is a member (ADR 0018): the token answers
    404, the team's list says creator_left; the other members' links stay; an admin can still
    revoke it for good."""
    admin, member, _, runs = _team(session)
    theirs = _share(client, member, runs)
    ours = _share(client, admin, runs)
    assert client.get(f"/api/v1/shared/{_token(theirs)}").status_code == 200
    r = client.delete(f"/api/v1/teams/{admin.team.id}/members/{member.user.id}", headers=admin.headers)
    assert r.status_code == 204, r.text
    for path in ("", "/export.csv", "/export.json"):
        gone = client.get(f"/api/v1/shared/{_token(theirs)}{path}")
        assert gone.status_code == 404 and gone.json()["error"] == "share_link_not_found"
    assert client.get(f"/s/{_token(theirs)}/preview.png").status_code == 404
    assert client.get(f"/api/v1/shared/{_token(ours)}").status_code == 200
    listed = client.get(f"/api/v1/share-links?team_id={admin.team.id}", headers=admin.headers).json()
    states = {x["id"]: x["state"] for x in listed["items"]}
    assert states == {theirs["id"]: "creator_left", ours["id"]: "active"}
    assert client.delete(f"/api/v1/share-links/{theirs['id']}", headers=admin.headers).status_code == 204
    listed = client.get(f"/api/v1/share-links?team_id={admin.team.id}", headers=admin.headers).json()
    assert {x["id"]: x["state"] for x in listed["items"]}[theirs["id"]] == "revoked"


def test_a_comparison_link_keeps_its_environment_filter(client: TestClient, session: Session) -> None:
    admin, member, _, runs = _team(session)
    raid10 = {"name": "shelf", "kind": "das", "topology": {"raid": {"level": "raid10", "member_count": 4}}}
    for r in runs:
        r.environment_snapshot = raid10
    san = _measured(
        session,
        create_agent(session, team=admin.team).agent,
        "/srv/lun",
        500.0,
        name="san run",
        environment_snapshot={"name": "array", "kind": "san", "topology": {}},
    )
    session.flush()
    created = _share(client, member, [*runs, san], {"env": [" raid_level : raid10 "]})
    v = client.get(f"/api/v1/shared/{_token(created)}").json()
    assert [x["id"] for x in v["comparison"]["runs"]] == [str(r.id) for r in runs]
    assert v["options"]["env"] == ["raid_level:raid10"] and v["runs_total"] == 3
    # without the filter the link shows all three; a filter no run matches shows none, not an error
    assert (
        len(
            client.get(f"/api/v1/shared/{_token(_share(client, member, [*runs, san]))}").json()["comparison"][
                "runs"
            ]
        )
        == 3
    )
    none = client.get(f"/api/v1/shared/{_token(_share(client, member, runs, {'env': ['kind:nas']}))}")
    assert none.status_code == 200 and none.json()["comparison"] is None
    bad = client.post(
        "/api/v1/share-links",
        json={"kind": "comparison", "target": {"runs": [str(runs[0].id)], "env": ["colour:blue"]}},
        headers=member.headers,
    )
    assert bad.status_code == 422 and "target.env.0" in bad.text
