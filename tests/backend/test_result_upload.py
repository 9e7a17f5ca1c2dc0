"""POST /api/v1/results: finished results uploaded from CI with an upload-scoped token (issue 13,
ADR 0020): fio and iowatt-engine documents, idempotent by upload_id, external hosts that are
never dispatched to, scopes, teams and bad input."""

import json
import uuid
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from backend.auth import service as auth_service
from backend.kit.time import utcnow
from backend.models import Agent, ApiToken, AuditEvent, Device, Environment, ResultJob, Role, Run, RunStatus
from backend.power import service as power_service
from backend.run import service as run_service
from tests.factories import UserCtx, create_agent, create_run, create_user

DATA = Path(__file__).parent / "data"
FIO = json.loads((DATA / "upload-fio-randread.json").read_text())
ENGINE = json.loads((DATA / "upload-engine-randread.json").read_text())


def token(session: Session, u: UserCtx, scope: str) -> dict[str, str]:
    raw, row = auth_service.issue_token(session, user_id=u.user.id, name=scope, kind="personal", ttl_s=None)
    tok = session.get(ApiToken, row.id)
    assert tok is not None
    tok.scope = scope
    session.flush()
    return {"Authorization": f"Bearer {raw}"}


def body(u: UserCtx, **over: Any) -> dict[str, Any]:
    return {
        "team_id": str(u.team.id),
        "upload_id": f"ci-{uuid.uuid4().hex[:8]}",
        "host": "ci-runner-1",
        "device": {"model": "Samsung SSD 990 PRO 2TB", "serial": "S7KHNJ0W123", "capacity_bytes": 2 * 10**12},
        "name": "nightly randread",
        "engine_result": FIO,
        "started_at": "2026-11-21T10:00:00Z",
        "finished_at": "2026-11-21T10:00:02Z",
        **over,
    }


def runs_of(session: Session, team_id: uuid.UUID) -> int:
    return session.scalar(select(func.count()).select_from(Run).where(Run.team_id == team_id)) or 0


def test_a_fio_document_becomes_a_succeeded_imported_run(client: TestClient, session: Session) -> None:
    u = create_user(session, role=Role.member)
    up = token(session, u, "upload")
    r = client.post("/api/v1/results", json=body(u, tags=["ci", "nightly"]), headers=up)
    assert r.status_code == 201, r.text
    out = r.json()
    assert out["duplicate"] is False and out["url"].endswith(f"/runs/{out['run_id']}")
    run = client.get(f"/api/v1/runs/{out['run_id']}", headers=u.headers).json()
    assert run["source"] == "import" and run["status"] == "succeeded"
    assert run["agent_name"] == "ci-runner-1" and run["device_name"] == "Samsung SSD 990 PRO 2TB"
    assert run["tags"] == ["ci", "nightly"]
    assert run["target_path"] == "/tmp/v3fio/f"  # fio's filename
    job = run["workload"]["jobs"][0]
    assert (job["rw"], job["bs_bytes"], job["size_bytes"]) == ("randread", 4096, 8 * 1024**2)
    assert run["started_at"].startswith("2026-11-21T10:00:00") and run["finished_at"].startswith(
        "2026-11-21T10:00:02"
    )
    assert run["energy"]["status"] == "none"  # no meter samples: no energy, and it says so
    assert run["jobs"][0]["read"]["total_ios"] == FIO["jobs"][0]["read"]["total_ios"]
    res = client.get(f"/api/v1/runs/{out['run_id']}/result", headers=u.headers).json()
    assert res["engine_result"] == FIO  # stored whole
    ev = session.scalars(select(AuditEvent).where(AuditEvent.action == "run.imported")).one()
    assert ev.target_id == out["run_id"] and ev.details["host"] == "ci-runner-1"
    assert ev.team_id == u.team.id and ev.actor_user_id == u.user.id


def test_an_engine_document_with_meter_samples_gets_measured_energy(
    client: TestClient, session: Session
) -> None:
    u = create_user(session)
    power = {
        "meter": "lab-pdu",
        "tier": "pdu",
        "samples": [{"t_ns": k * 100_000_000, "watts": 8.0 + (k % 2)} for k in range(21)],
    }
    r = client.post(
        "/api/v1/results",
        json=body(u, engine_result=ENGINE, power=power, target_path="/mnt/nvme/bench"),
        headers=token(session, u, "upload"),
    )
    assert r.status_code == 201, r.text
    run_id = uuid.UUID(r.json()["run_id"])
    power_service.compute(session, run_id=run_id)  # the worker's task body, run here
    run = client.get(f"/api/v1/runs/{run_id}", headers=u.headers).json()
    assert run["target_path"] == "/mnt/nvme/bench"
    assert run["energy"]["status"] == "ok", run["energy"]
    assert run["energy"]["estimated"] is False and run["energy"]["meter_name"] == "lab-pdu"
    assert 15 < run["energy"]["total_j"] < 20  # about 8.5 W for 2 s
    assert run["jobs"][0]["name"] == "rr"
    points = client.get(f"/api/v1/runs/{run_id}/series", headers=u.headers).json()["jobs"][0]["points"]
    assert len(points) == len(ENGINE["jobs"][0]["iowatt"]["series"])


def test_the_same_upload_id_again_adds_nothing(client: TestClient, session: Session) -> None:
    u = create_user(session)
    up = token(session, u, "upload")
    b = body(u)
    first = client.post("/api/v1/results", json=b, headers=up)
    assert first.status_code == 201
    again = client.post("/api/v1/results", json=b, headers=up)
    assert again.status_code == 200, again.text
    assert again.json()["run_id"] == first.json()["run_id"] and again.json()["duplicate"] is True
    assert runs_of(session, u.team.id) == 1
    # another team's upload of the same id is its own
    other = create_user(session)
    r = client.post("/api/v1/results", json=body(other, upload_id=b["upload_id"]), headers=other.headers)
    assert r.status_code == 201 and r.json()["run_id"] != first.json()["run_id"]


def test_the_host_is_external_and_never_dispatched_to(client: TestClient, session: Session) -> None:
    u = create_user(session)
    r = client.post("/api/v1/results", json=body(u), headers=token(session, u, "upload"))
    assert r.status_code == 201
    r2 = client.post("/api/v1/results", json=body(u, name="second"), headers=u.headers)  # a write token
    assert r2.status_code == 201
    hosts = session.scalars(select(Agent).where(Agent.team_id == u.team.id)).all()
    assert len(hosts) == 1  # reused by name
    host = hosts[0]
    assert host.kind == "external" and host.online is False and host.token_expires_at <= utcnow()
    # the same serial on the same host is the same device
    assert session.scalar(select(func.count()).select_from(Device).where(Device.agent_id == host.id)) == 1
    listed = client.get("/api/v1/agents", headers=u.headers).json()["items"]
    assert [(a["name"], a["kind"], a["online"]) for a in listed] == [("ci-runner-1", "external", False)]
    r = client.post(
        "/api/v1/runs",
        json={
            "agent_id": str(host.id),
            "target_path": "/srv/bench",
            "workload_id": None,
            "workload": {"jobs": [{"name": "j", "rw": "read", "bs_bytes": 4096, "size_bytes": 4096}]},
        },
        headers=u.headers,
    )
    assert r.status_code == 422 and r.json()["detail"][0]["field"] == "agent_id", r.text
    # even a queued run on it (written by hand) and a host marked online are never assigned
    host.online = True
    queued = create_run(session, agent=host, status=RunStatus.queued)
    assert run_service.dispatch(session, run_id=queued.id) is None
    assert queued.status == RunStatus.queued
    # an agent cannot enrol under its name
    from backend.agent import service as agent_service
    from backend.agent.schemas import EnrollmentTokenCreate

    raw, _ = agent_service.create_enrollment_token(
        session, principal=None, body=EnrollmentTokenCreate(team_id=u.team.id)
    )
    r = client.post(
        "/api/v1/agents/enroll",
        json={"enrollment_token": raw, "name": "ci-runner-1", "hostname": "h", "replace": True},
    )
    assert r.status_code == 409, r.text


def test_an_enrolled_agents_name_is_not_a_host(client: TestClient, session: Session) -> None:
    u = create_user(session)
    create_agent(session, team=u.team, name="build-01")
    r = client.post("/api/v1/results", json=body(u, host="build-01"), headers=u.headers)
    assert r.status_code == 422 and r.json()["detail"][0]["field"] == "host", r.text
    assert runs_of(session, u.team.id) == 0


def test_scopes_a_read_token_cannot_upload_an_upload_token_cannot_read(
    client: TestClient, session: Session
) -> None:
    u = create_user(session)
    r = client.post("/api/v1/results", json=body(u), headers=token(session, u, "read"))
    assert r.status_code == 403 and r.json()["error"] == "scope_read"
    up = token(session, u, "upload")
    r = client.post("/api/v1/results", json=body(u), headers=up)
    assert r.status_code == 201
    for path in (f"/api/v1/runs/{r.json()['run_id']}", "/api/v1/runs", "/api/v1/tags"):
        got = client.get(path, headers=up)
        assert got.status_code == 403 and got.json()["error"] == "scope_upload", path
    r = client.put(f"/api/v1/runs/{r.json()['run_id']}/tags", json={"tags": ["x"]}, headers=up)
    assert r.status_code == 403


def test_viewers_and_other_teams_cannot_upload(client: TestClient, session: Session) -> None:
    u = create_user(session)
    viewer = create_user(session, role=Role.viewer, team=u.team)
    r = client.post("/api/v1/results", json=body(u), headers=token(session, viewer, "upload"))
    assert r.status_code == 403 and "member" in r.json()["message"]
    stranger = create_user(session)
    r = client.post("/api/v1/results", json=body(u), headers=token(session, stranger, "upload"))
    assert r.status_code == 403
    env_b = Environment(team_id=stranger.team.id, name="b", kind="local")
    session.add(env_b)
    session.flush()
    r = client.post("/api/v1/results", json=body(u, environment_id=str(env_b.id)), headers=u.headers)
    assert r.status_code == 422 and r.json()["detail"][0]["field"] == "environment_id"
    assert runs_of(session, u.team.id) == 0


@pytest.mark.parametrize(
    ("over", "field"),
    [
        ({"engine_result": {"jobs": []}}, "engine_result.jobs"),
        ({"engine_result": {"jobs": [{"jobname": "x"}]}}, "engine_result.jobs.0.read"),
        ({"engine_result": {"nothing": 1}}, "engine_result.jobs"),
        ({"engine_result": "text"}, "engine_result"),
        (
            {"engine_result": {"jobs": [{**FIO["jobs"][0], "read": {**FIO["jobs"][0]["read"], "iops": -1}}]}},
            "engine_result.jobs.0.read.iops",
        ),
        ({"finished_at": "2026-11-21T09:00:00Z"}, "finished_at"),
        ({"started_at": "2026-11-21T10:00:00"}, "started_at"),  # no offset: which time is it?
        ({"host": "two words"}, "host"),
        ({"device": {"serial": "x"}}, "device.model"),
        ({"device": {"model": "m", "media": "tape"}}, "device.media"),
        ({"tags": ["bad;tag"]}, "tags.0"),
        ({"upload_id": ""}, "upload_id"),
        (
            {"power": {"meter": "m", "samples": [{"t_ns": 0, "watts": -1}, {"t_ns": 1, "watts": 1}]}},
            "power.samples.0.watts",
        ),
    ],
)
def test_bad_input_is_a_422_naming_the_field(
    client: TestClient, session: Session, over: dict[str, Any], field: str
) -> None:
    u = create_user(session)
    r = client.post("/api/v1/results", json=body(u, **over), headers=u.headers)
    assert r.status_code == 422, r.text
    assert r.json()["detail"][0]["field"] == field, r.text
    assert runs_of(session, u.team.id) == 0


def test_result_jobs_hold_the_fio_figures(client: TestClient, session: Session) -> None:
    u = create_user(session)
    r = client.post("/api/v1/results", json=body(u), headers=u.headers)
    job = session.scalars(select(ResultJob).where(ResultJob.run_id == uuid.UUID(r.json()["run_id"]))).one()
    read = FIO["jobs"][0]["read"]
    assert job.read_bw_bytes == read["bw_bytes"] and job.read_iops == pytest.approx(read["iops"])
    assert job.bs_bytes == 4096 and job.rw == "randread"


def test_big_documents_need_a_users_token(client: TestClient, session: Session) -> None:
    from backend.config import get_settings

    u = create_user(session)
    big = json.dumps({**body(u), "engine_result": {"padding": "x" * (3 * 1024 * 1024)}})
    hdr = {"content-type": "application/json"}
    r = client.post("/api/v1/results", content=big, headers={**hdr, **token(session, u, "upload")})
    assert r.status_code == 422 and r.json()["detail"][0]["field"] == "engine_result.jobs", r.text
    r = client.post("/api/v1/results", content=big, headers=hdr)
    assert r.status_code == 413 and r.json()["detail"]["limit_bytes"] == get_settings().max_body_bytes
