"""Deletion (issue 13 § Working together; ADR 0021): each delete, who may, the 409s, the audit
event, and that what is deleted is gone from every query: the lists, the compare API and its CSV,
the views API, the team export and a share link."""

import io
import uuid
import zipfile
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from backend.models import (
    AuditEvent,
    Campaign,
    Comment,
    Device,
    Environment,
    GridIntensityHour,
    Membership,
    PowerSample,
    ResultJob,
    ResultSeriesPoint,
    Role,
    Run,
    RunEnergy,
    RunPower,
    RunResult,
    RunStatus,
    RunTag,
    Team,
    User,
    Workload,
)
from backend.power import service as power_service
from tests.backend.test_energy import power_doc, upload
from tests.factories import UserCtx, create_agent, create_run, create_user


def _done(
    client: TestClient, session: Session, u: UserCtx, a: Any, target: str = "/srv/bench", **kw: Any
) -> Run:
    """A succeeded run with a result, series, power samples and computed energy."""
    run_id, r = upload(client, session, u, a, power_doc(), target=target, **kw)
    assert r.status_code == 201, r.text
    assert power_service.compute(session, run_id=run_id) is not None
    session.flush()
    run = session.get(Run, run_id)
    assert run is not None
    return run


def _count(session: Session, model: Any, run_id: uuid.UUID) -> int:
    return session.scalar(select(func.count()).select_from(model).where(model.run_id == run_id)) or 0


def _actions(session: Session, team_id: uuid.UUID) -> list[str]:
    return list(session.scalars(select(AuditEvent.action).where(AuditEvent.team_id == team_id)))


def _export(client: TestClient, u: UserCtx) -> dict[str, str]:
    r = client.post(f"/api/v1/teams/{u.team.id}/export", headers=u.headers)
    assert r.status_code == 200, r.text
    z = zipfile.ZipFile(io.BytesIO(r.content))
    return {n: z.read(n).decode() for n in z.namelist()}


def test_a_deleted_run_is_gone_from_every_query_with_everything_it_had(
    client: TestClient, session: Session
) -> None:
    u = create_user(session)
    a = create_agent(session, team=u.team)
    gone, kept = _done(client, session, u, a), _done(client, session, u, a, target="/srv/a")
    session.add(RunTag(run_id=gone.id, tag="old-firmware"))
    comments = {
        "run": str(gone.id),
        "comparison": f"{gone.id},{kept.id}",
    }
    for kind, key in comments.items():
        r = client.post(
            "/api/v1/comments", json={"target_kind": kind, "target_key": key, "body": "x"}, headers=u.headers
        )
        assert r.status_code == 201, r.text
    kept_comment = client.post(
        "/api/v1/comments",
        json={"target_kind": "run", "target_key": str(kept.id), "body": "y"},
        headers=u.headers,
    ).json()["id"]
    for model in (RunResult, ResultJob, ResultSeriesPoint, PowerSample, RunPower, RunEnergy, RunTag):
        assert _count(session, model, gone.id) > 0, model.__name__  # there was something to delete
    both = f"{gone.id},{kept.id}"
    assert client.get("/api/v1/compare", params={"runs": both}, headers=u.headers).status_code == 200

    r = client.delete(f"/api/v1/runs/{gone.id}", headers=u.headers)
    assert r.status_code == 204, r.text

    for model in (RunResult, ResultJob, ResultSeriesPoint, PowerSample, RunPower, RunEnergy, RunTag):
        assert _count(session, model, gone.id) == 0, model.__name__
        assert _count(session, model, kept.id) > 0 or model is RunTag, model.__name__
    assert session.scalars(select(Comment.id).where(Comment.team_id == u.team.id)).all() == [
        uuid.UUID(kept_comment)
    ]
    gid = str(gone.id)
    for path in ("", "/result", "/series", "/power", "/system"):
        assert client.get(f"/api/v1/runs/{gid}{path}", headers=u.headers).status_code == 404, path
    listed = client.get("/api/v1/runs", params={"limit": 500}, headers=u.headers).json()
    assert [i["id"] for i in listed["items"]] == [str(kept.id)] and listed["total"] == 1
    # the compare and views APIs refuse it like a run that never existed; the rest compares without it
    assert client.get("/api/v1/compare", params={"runs": both}, headers=u.headers).status_code == 422
    csv = client.get("/api/v1/compare", params={"runs": str(kept.id), "format": "csv"}, headers=u.headers)
    assert csv.status_code == 200 and gid not in csv.text
    assert client.get("/api/v1/views", params={"runs": gid}, headers=u.headers).status_code == 422
    catalog = client.get("/api/v1/views", params={"runs": str(kept.id)}, headers=u.headers)
    assert catalog.status_code == 200 and gid not in catalog.text
    by_device = client.get(
        "/api/v1/runs", params={"device_id": str(gone.device_id)}, headers=u.headers
    ).json()
    assert gid not in {i["id"] for i in by_device["items"]}
    files = _export(client, u)
    assert f"runs/{kept.id}/engine.json" in files and not any(gid in n for n in files)
    # only the audit log still names it (who deleted it, when)
    assert [n for n, text in files.items() if gid in text] == ["audit.json"]
    events = session.scalars(
        select(AuditEvent).where(AuditEvent.team_id == u.team.id, AuditEvent.action == "run.deleted")
    ).all()
    assert [e.target_id for e in events] == [gid] and events[0].actor == u.user.email


def test_an_active_run_must_be_cancelled_first(client: TestClient, session: Session) -> None:
    u = create_user(session)
    agent = create_agent(session, team=u.team).agent
    for status in (RunStatus.assigned, RunStatus.running):
        run = create_run(
            session,
            agent=agent,
            status=status,
            target_path="/srv/bench" if status == RunStatus.assigned else "/dev/shm/x",
        )
        r = client.delete(f"/api/v1/runs/{run.id}", headers=u.headers)
        assert r.status_code == 409 and "cancel it first" in r.json()["message"], r.text
        assert session.get(Run, run.id) is not None
    queued = create_run(session, agent=agent)
    assert client.delete(f"/api/v1/runs/{queued.id}", headers=u.headers).status_code == 204
    assert client.delete(f"/api/v1/runs/{queued.id}", headers=u.headers).status_code == 404


def test_admins_delete_any_run_members_their_own_viewers_none(client: TestClient, session: Session) -> None:
    admin = create_user(session)
    member = create_user(session, role=Role.member, team=admin.team)
    other = create_user(session, role=Role.member, team=admin.team)
    viewer = create_user(session, role=Role.viewer, team=admin.team)
    stranger = create_user(session)
    agent = create_agent(session, team=admin.team).agent
    mine = create_run(session, agent=agent, status=RunStatus.succeeded, created_by=member.user.id)
    theirs = create_run(session, agent=agent, status=RunStatus.failed, created_by=other.user.id)

    # the UI hides Delete from members on others' runs: RunRead says who queued it
    assert client.get(f"/api/v1/runs/{mine.id}", headers=viewer.headers).json()["created_by"] == str(
        member.user.id
    )
    r = client.delete(f"/api/v1/runs/{mine.id}", headers=viewer.headers)
    assert r.status_code == 403 and "member role" in r.json()["message"]
    r = client.delete(f"/api/v1/runs/{theirs.id}", headers=member.headers)
    assert r.status_code == 403 and "admin role" in r.json()["message"]
    assert client.delete(f"/api/v1/runs/{mine.id}", headers=stranger.headers).status_code == 404
    assert client.delete(f"/api/v1/runs/{mine.id}", headers=member.headers).status_code == 204
    assert client.delete(f"/api/v1/runs/{theirs.id}", headers=admin.headers).status_code == 204


def test_device_in_use_is_409_naming_its_runs_and_force_detaches_them(
    client: TestClient, session: Session
) -> None:
    u = create_user(session)
    member = create_user(session, role=Role.member, team=u.team)
    a = create_agent(session, team=u.team)
    run = _done(client, session, u, a)
    device_id = run.device_id
    assert device_id is not None

    assert client.delete(f"/api/v1/devices/{device_id}", headers=member.headers).status_code == 403
    r = client.delete(f"/api/v1/devices/{device_id}", headers=u.headers)
    assert r.status_code == 409, r.text
    body = r.json()
    assert body["message"].startswith("used by 1 run") and body["detail"]["runs"] == [str(run.id)]
    busy = create_run(session, agent=a.agent, status=RunStatus.running, target_path="/srv/bench")
    r = client.delete(f"/api/v1/devices/{device_id}", params={"force": "true"}, headers=u.headers)
    assert r.status_code == 409 and r.json()["detail"]["runs"] == [str(busy.id)]
    session.delete(busy)
    session.flush()

    assert (
        client.delete(f"/api/v1/devices/{device_id}", params={"force": "true"}, headers=u.headers).status_code
        == 204
    )
    assert session.get(Device, device_id) is None
    session.refresh(run)
    assert run.device_id is None and _count(session, RunResult, run.id) == 1  # the result stays
    devices = client.get("/api/v1/devices", headers=u.headers).json()["items"]
    assert str(device_id) not in {d["id"] for d in devices}
    assert "device.deleted" in _actions(session, u.team.id)


def test_environment_in_use_says_what_uses_it(client: TestClient, session: Session) -> None:
    u = create_user(session)
    a = create_agent(session, team=u.team)
    env = client.post(
        "/api/v1/environments",
        json={"team_id": str(u.team.id), "name": "lab", "kind": "local"},
        headers=u.headers,
    ).json()
    env_id = uuid.UUID(env["id"])
    r = client.put(
        f"/api/v1/environments/{env_id}/grid-intensity",
        content="hour_utc,g_per_kwh\n2026-01-01T00:00:00Z,300\n",
        headers={**u.headers, "Content-Type": "text/csv"},
    )
    assert r.status_code == 200, r.text
    runs = [
        create_run(session, agent=a.agent, status=RunStatus.succeeded, environment_id=env_id)
        for _ in range(2)
    ]
    camp = Campaign(
        team_id=u.team.id,
        name="c",
        spec={
            "targets": [{"agent_id": str(a.agent.id), "target_path": "/srv/a", "environment_id": str(env_id)}]
        },
        created_by=u.user.id,
    )
    session.add(camp)
    session.flush()

    r = client.delete(f"/api/v1/environments/{env_id}", headers=u.headers)
    assert r.status_code == 409, r.text
    b = r.json()
    assert b["message"].startswith("used by 2 runs and 1 campaign"), b["message"]
    assert sorted(b["detail"]["runs"]) == sorted(str(x.id) for x in runs)
    assert b["detail"]["campaigns"] == [str(camp.id)] and b["detail"]["run_count"] == 2
    assert session.get(Environment, env_id) is not None

    r = client.delete(f"/api/v1/environments/{env_id}", params={"force": True}, headers=u.headers)
    assert r.status_code == 204, r.text
    assert session.get(Environment, env_id) is None
    assert (
        session.scalar(
            select(func.count())
            .select_from(GridIntensityHour)
            .where(GridIntensityHour.environment_id == env_id)
        )
        == 0
    )
    for x in runs:
        session.refresh(x)
        assert x.environment_id is None
    assert env["id"] not in client.get("/api/v1/environments", headers=u.headers).text
    assert "environment.deleted" in _actions(session, u.team.id)
    # an unused one goes at once
    r2 = client.post(
        "/api/v1/environments",
        json={"team_id": str(u.team.id), "name": "spare", "kind": "nas"},
        headers=u.headers,
    ).json()
    assert client.delete(f"/api/v1/environments/{r2['id']}", headers=u.headers).status_code == 204


def _campaign(
    session: Session, u: UserCtx, agent: Any, statuses: list[RunStatus]
) -> tuple[Campaign, list[Run]]:
    camp = Campaign(team_id=u.team.id, name="camp", spec={"repeats": 1}, created_by=u.user.id)
    session.add(camp)
    session.flush()
    runs = [
        create_run(
            session,
            agent=agent,
            status=s,
            campaign_id=camp.id,
            created_by=u.user.id,
            target_path=["/srv/a", "/srv/b", "/srv/bench"][i % 3],
        )
        for i, s in enumerate(statuses)
    ]
    return camp, runs


def test_a_campaign_goes_with_its_runs_or_leaves_them(client: TestClient, session: Session) -> None:
    admin = create_user(session)
    member = create_user(session, role=Role.member, team=admin.team)
    agent = create_agent(session, team=admin.team).agent
    camp, runs = _campaign(session, member, agent, [RunStatus.succeeded, RunStatus.running])
    client.post(
        "/api/v1/comments",
        json={"target_kind": "campaign", "target_key": str(camp.id), "body": "x"},
        headers=member.headers,
    )
    got = client.get(f"/api/v1/campaigns/{camp.id}", headers=member.headers).json()
    assert got["created_by"] == str(member.user.id)
    r = client.delete(f"/api/v1/campaigns/{camp.id}", headers=member.headers)
    assert r.status_code == 409 and r.json()["detail"]["runs"] == [str(runs[1].id)], r.text
    session.delete(runs[1])
    session.flush()
    other = create_user(session, role=Role.member, team=admin.team)
    assert client.delete(f"/api/v1/campaigns/{camp.id}", headers=other.headers).status_code == 403
    assert client.delete(f"/api/v1/campaigns/{camp.id}", headers=member.headers).status_code == 204
    assert session.get(Campaign, camp.id) is None and session.get(Run, runs[0].id) is None
    assert (
        session.scalar(select(func.count()).select_from(Comment).where(Comment.team_id == admin.team.id)) == 0
    )
    assert client.get(f"/api/v1/campaigns/{camp.id}", headers=member.headers).status_code == 404
    assert sorted(_actions(session, admin.team.id)).count("run.deleted") == 1

    camp2, runs2 = _campaign(session, member, agent, [RunStatus.succeeded, RunStatus.failed])
    r = client.delete(f"/api/v1/campaigns/{camp2.id}", params={"keep_runs": True}, headers=admin.headers)
    assert r.status_code == 204
    for x in runs2:
        session.refresh(x)
        assert x.campaign_id is None
    assert "campaign.deleted" in _actions(session, admin.team.id)


def test_team_workloads_are_deleted_by_admins_presets_never(client: TestClient, session: Session) -> None:
    u = create_user(session)
    member = create_user(session, role=Role.member, team=u.team)
    wl = Workload(team_id=u.team.id, name="mine", description="", spec={"jobs": []}, builtin=False)
    preset = Workload(
        team_id=None, name=f"preset-{uuid.uuid4().hex[:6]}", description="", spec={}, builtin=True
    )
    session.add_all([wl, preset])
    session.flush()
    run = create_run(session, agent=create_agent(session, team=u.team).agent, workload_id=wl.id)
    r = client.delete(f"/api/v1/workloads/{preset.id}", headers=u.headers)
    assert r.status_code == 409 and "preset" in r.json()["message"]
    assert client.delete(f"/api/v1/workloads/{wl.id}", headers=member.headers).status_code == 403
    assert client.delete(f"/api/v1/workloads/{wl.id}", headers=u.headers).status_code == 204
    session.refresh(run)
    assert run.workload_id is None and run.workload_spec  # the run keeps its copy of the spec
    assert client.get(f"/api/v1/workloads/{wl.id}", headers=u.headers).status_code == 404
    assert "workload.deleted" in _actions(session, u.team.id)


def test_team_deletion_needs_its_name_and_takes_everything_but_the_people(
    client: TestClient, session: Session
) -> None:
    admin = create_user(session)
    member = create_user(session, role=Role.member, team=admin.team)
    a = create_agent(session, team=admin.team)
    run_id = _done(client, session, admin, a).id
    team_id = admin.team.id

    r = client.request(
        "DELETE", f"/api/v1/teams/{team_id}", json={"confirm_name": "nope"}, headers=admin.headers
    )
    assert r.status_code == 422 and r.json()["detail"][0]["field"] == "confirm_name"
    r = client.request("DELETE", f"/api/v1/teams/{team_id}", json={}, headers=admin.headers)
    assert r.status_code == 422 and r.json()["detail"][0]["field"] == "confirm_name"
    r = client.request(
        "DELETE", f"/api/v1/teams/{team_id}", json={"confirm_name": admin.team.name}, headers=member.headers
    )
    assert r.status_code == 403 and "admin" in r.json()["message"]
    busy = create_run(session, agent=a.agent, status=RunStatus.running, target_path="/srv/a")
    r = client.request(
        "DELETE", f"/api/v1/teams/{team_id}", json={"confirm_name": admin.team.name}, headers=admin.headers
    )
    assert r.status_code == 409 and r.json()["detail"]["runs"] == [str(busy.id)]
    session.delete(busy)
    session.flush()

    r = client.request(
        "DELETE", f"/api/v1/teams/{team_id}", json={"confirm_name": admin.team.name}, headers=admin.headers
    )
    assert r.status_code == 204, r.text
    session.expire_all()
    assert session.get(Team, team_id) is None and session.get(Run, run_id) is None
    assert _count(session, PowerSample, run_id) == 0
    assert session.get(User, admin.user.id) is not None and session.get(User, member.user.id) is not None
    assert client.get("/api/v1/runs", headers=admin.headers).json()["total"] == 0
    assert client.get("/api/v1/teams", headers=member.headers).json() == []


def test_account_deletion(client: TestClient, session: Session) -> None:
    admin = create_user(session, password="admin pass")
    member = create_user(session, role=Role.member, team=admin.team, password="member pass")
    run = create_run(session, agent=create_agent(session, team=admin.team).agent, created_by=member.user.id)
    client.post(
        "/api/v1/comments",
        json={"target_kind": "run", "target_key": str(run.id), "body": "mine"},
        headers=member.headers,
    )

    r = client.request("DELETE", "/api/v1/auth/me", json={"password": "wrong"}, headers=member.headers)
    assert r.status_code == 422 and r.json()["detail"][0]["field"] == "password"
    r = client.request("DELETE", "/api/v1/auth/me", json={}, headers=member.headers)
    assert r.status_code == 422 and r.json()["detail"][0]["field"] == "password"
    # the last admin of a team with other members hands over first
    r = client.request("DELETE", "/api/v1/auth/me", json={"password": "admin pass"}, headers=admin.headers)
    assert r.status_code == 409 and admin.team.name in r.json()["message"] and "admin" in r.json()["message"]
    # the only member of a team deletes the team first
    solo = create_user(session, password="solo pass")
    r = client.request("DELETE", "/api/v1/auth/me", json={"password": "solo pass"}, headers=solo.headers)
    assert r.status_code == 409 and r.json()["error"] == "sole_member"

    r = client.request("DELETE", "/api/v1/auth/me", json={"password": "member pass"}, headers=member.headers)
    assert r.status_code == 204, r.text
    session.expire_all()
    assert session.get(User, member.user.id) is None
    assert client.get("/api/v1/auth/me", headers=member.headers).status_code == 401
    thread = client.get(
        "/api/v1/comments", params={"target_kind": "run", "target_key": str(run.id)}, headers=admin.headers
    ).json()["items"]
    assert [(c["body"], c["author_name"], c["author_id"]) for c in thread] == [("mine", "deleted user", None)]
    assert session.get(Run, run.id) is not None  # what they created stays with the team
    ev = session.scalars(select(AuditEvent).where(AuditEvent.action == "user.deleted")).one()
    assert ev.team_id == admin.team.id and ev.actor == member.user.email
    # now the admin is alone: their account can go once the team is deleted
    assert (
        session.scalar(
            select(func.count()).select_from(Membership).where(Membership.team_id == admin.team.id)
        )
        == 1
    )


def test_an_account_without_a_password_confirms_with_its_email(client: TestClient, session: Session) -> None:
    admin = create_user(session)
    sso = create_user(session, role=Role.member, team=admin.team)
    session.get(User, sso.user.id).password_hash = None  # type: ignore[union-attr]
    session.flush()
    r = client.request(
        "DELETE", "/api/v1/auth/me", json={"confirm_email": "x@example.test"}, headers=sso.headers
    )
    assert r.status_code == 422 and r.json()["detail"][0]["field"] == "confirm_email"
    r = client.request(
        "DELETE", "/api/v1/auth/me", json={"confirm_email": sso.user.email.upper()}, headers=sso.headers
    )
    assert r.status_code == 204, r.text


def test_a_share_link_of_a_deleted_run_shows_nothing_of_it(client: TestClient, session: Session) -> None:
    u = create_user(session)
    a = create_agent(session, team=u.team)
    run = _done(client, session, u, a)
    if "/api/v1/share-links" not in client.app.openapi()["paths"]:  # type: ignore[attr-defined]
        pytest.skip("share links (backend/sharing) are not in this tree yet")
    r = client.post("/api/v1/share-links", json={"kind": "run", "target": str(run.id)}, headers=u.headers)
    assert r.status_code == 201, r.text
    token = r.json()["url"].rstrip("/").rsplit("/", 1)[-1]
    before = client.get(f"/api/v1/shared/{token}")
    assert before.status_code == 200 and str(run.id) in before.text
    assert client.delete(f"/api/v1/runs/{run.id}", headers=u.headers).status_code == 204
    after = client.get(f"/api/v1/shared/{token}")
    assert after.status_code in (404, 410) or str(run.id) not in after.text, after.text
