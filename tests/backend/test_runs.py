import uuid
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from backend.models import AuditEvent, ResultJob, Role, Run
from backend.run import service as run_service
from tests.factories import MiB, create_agent, create_run, create_user, engine_document
from tests.sql import captured_sql


def job(**over: Any) -> dict[str, Any]:
    base = {
        "name": "j",
        "rw": "randread",
        "bs_bytes": 4096,
        "size_bytes": 16 * MiB,
        "runtime_s": 2,
        "time_based": True,
    }
    return {**base, **over}


def run_body(agent_id: uuid.UUID, **over: Any) -> dict[str, Any]:
    return {"agent_id": str(agent_id), "target_path": "/srv/bench", "workload": {"jobs": [job()]}, **over}


def count_runs(session: Session) -> int:
    return session.scalar(select(func.count()).select_from(Run)) or 0


def test_create_run_queues_it_on_the_device_of_its_path(client: TestClient, session: Session) -> None:
    u = create_user(session)
    a = create_agent(session, team=u.team)
    r = client.post("/api/v1/runs", json=run_body(a.agent.id), headers=u.headers)
    assert r.status_code == 201, r.text
    body = r.json()
    assert body["status"] == "queued" and body["agent_name"] == a.agent.name
    assert body["device_name"] == "vda"  # /srv/bench lives on / which is /dev/vda in the inventory
    with captured_sql(session.connection()) as statements:
        to_shm = run_body(a.agent.id, target_path="/dev/shm/x")
        shm = client.post("/api/v1/runs", json=to_shm, headers=u.headers)
    assert shm.json()["device_name"] == "tmpfs /dev/shm"
    # what a new run cannot have yet is not read for the answer (docs/benchmarks.md § A thousand
    # agents on two cores): it has no result jobs, energy, tags or result documents, and says so
    new = shm.json()
    assert new["jobs"] == [] and new["tags"] == [] and new["energy"]["status"] == "none"
    assert new["file_workload"] is None and new["tpch"] is None and new["pts"] is None
    read = [s for s in statements if s.startswith("SELECT")]
    for table in ("RESULT_JOBS", "RUN_POWER", "RUN_TAGS", "RUN_RESULTS"):
        assert not any(f"FROM {table}" in s for s in read), [s[:120] for s in read]
    # nor what the request read already: the agent's and device's names are their rows', the audit
    # entry's actor the e-mail authentication read with the token (docs/benchmarks.md § Session 28)
    for again in (
        "SELECT AGENTS.ID, AGENTS.NAME FROM",
        "SELECT DEVICES.ID, DEVICES.NAME FROM",
        "SELECT USERS.",
    ):
        assert not any(s.startswith(again) for s in read), [s[:120] for s in read]
    audit = session.scalars(select(AuditEvent).where(AuditEvent.target_id == new["id"])).one()
    assert audit.action == "run.created" and audit.actor == u.user.email
    # the runs list names each run's agent without reading its inventory (~9 KB of JSON a host)
    with captured_sql(session.connection()) as statements:
        listed = client.get("/api/v1/runs", headers=u.headers).json()["items"]
    assert {x["agent_name"] for x in listed} == {a.agent.name} and len(listed) == 2
    assert statements and not any("AGENTS.INVENTORY" in s for s in statements), statements


@pytest.mark.parametrize(
    ("patch", "field"),
    [
        ({"workload": {"jobs": [job(bs_bytes=0)]}}, "workload.jobs.0.bs_bytes"),
        ({"workload": {"jobs": [job(rw="sideways")]}}, "workload.jobs.0.rw"),
        ({"workload": {"jobs": [job(runtime_s=-1)]}}, "workload.jobs.0.runtime_s"),
        ({"workload": {"jobs": [job(bs_bytes=32 * MiB)]}}, "workload.jobs.0.bs_bytes"),
        ({"workload": {"jobs": [job(direct=True, bs_bytes=1000)]}}, "workload.jobs.0.direct"),
        ({"workload": {"jobs": [job(io_size_bytes=0)]}}, "workload.jobs.0.io_size_bytes"),
        ({"workload": {"jobs": [job(io_size_bytes=2048)]}}, "workload.jobs.0.io_size_bytes"),  # < bs
        ({"workload": {"jobs": [job(end_fsync="sometimes")]}}, "workload.jobs.0.end_fsync"),
        ({"target_path": None}, "target_path"),
        ({"workload": {"jobs": []}}, "workload.jobs"),
    ],
)
def test_bad_input_is_422_naming_the_field_and_writes_nothing(
    client: TestClient, session: Session, patch: dict[str, Any], field: str
) -> None:
    u = create_user(session)
    a = create_agent(session, team=u.team)
    body = run_body(a.agent.id, **patch)
    if body["target_path"] is None:
        del body["target_path"]
    before = count_runs(session)
    r = client.post("/api/v1/runs", json=body, headers=u.headers)
    assert r.status_code == 422, r.text
    err = r.json()
    assert err["error"] == "validation_error"
    assert field in [d["field"] for d in err["detail"]], err
    assert count_runs(session) == before


def test_agent_of_another_team_is_422_and_viewer_is_403(client: TestClient, session: Session) -> None:
    u = create_user(session)
    other = create_user(session)
    foreign = create_agent(session, team=other.team)
    r = client.post("/api/v1/runs", json=run_body(foreign.agent.id), headers=u.headers)
    assert r.status_code == 422 and r.json()["detail"][0]["field"] == "agent_id"
    viewer = create_user(session, role=Role.viewer, team=u.team)
    mine = create_agent(session, team=u.team)
    assert (
        client.post("/api/v1/runs", json=run_body(mine.agent.id), headers=viewer.headers).status_code == 403
    )


def test_runs_are_scoped_to_the_callers_teams(client: TestClient, session: Session) -> None:
    u = create_user(session)
    other = create_user(session)
    theirs = create_run(session, agent=create_agent(session, team=other.team).agent)
    assert client.get(f"/api/v1/runs/{theirs.id}", headers=u.headers).status_code == 404
    ids = [r["id"] for r in client.get("/api/v1/runs", headers=u.headers).json()["items"]]
    assert str(theirs.id) not in ids


def _lease(client: TestClient, a: Any) -> dict[str, Any]:
    r = client.post(f"/api/v1/agents/{a.agent.id}/lease?wait_s=0", headers=a.headers)
    assert r.status_code == 200, r.text
    return r.json()["lease"]


def test_full_agent_protocol_and_idempotent_upload(client: TestClient, session: Session) -> None:
    u = create_user(session)
    a = create_agent(session, team=u.team)
    run = create_run(session, agent=a.agent)
    assert _lease(client, a) is None  # queued but not yet dispatched
    assert run_service.dispatch(session, run_id=run.id) == a.agent.id
    lease = _lease(client, a)
    assert lease["run_id"] == str(run.id)
    assert [j["name"] for j in lease["engine_job"]["jobs"]] == ["randread-4k", "seqread-1m", "seqwrite-1m"]
    assert (
        lease["engine_job"]["jobs"][0]["bs"] == "4096" and lease["engine_job"]["jobs"][0]["stonewall"] == "1"
    )
    lid = lease["lease_id"]
    assert (
        client.post(f"/api/v1/runs/{run.id}/start", json={"lease_id": lid}, headers=a.headers).status_code
        == 200
    )
    prog = {
        "lease_id": lid,
        "job_index": 0,
        "job_name": "randread-4k",
        "percent": 40.0,
        "elapsed_ns": 10**9,
        "read_iops": 1000.0,
        "read_bw_bytes": 4096000,
    }
    r = client.post(f"/api/v1/runs/{run.id}/progress", json=prog, headers=a.headers)
    assert r.status_code == 200 and r.json()["cancel_requested"] is False
    assert client.get(f"/api/v1/runs/{run.id}", headers=u.headers).json()["progress"]["percent"] == 40.0
    upload = {
        "lease_id": lid,
        "upload_id": str(uuid.uuid4()),
        "engine_result": engine_document(jobs=2),
        "engine_exit_code": 0,
        "started_at": "2026-11-21T10:00:00Z",
        "finished_at": "2026-11-21T10:00:06Z",
    }
    first = client.put(f"/api/v1/runs/{run.id}/result", json=upload, headers=a.headers)
    assert first.status_code == 201, first.text
    again = client.put(f"/api/v1/runs/{run.id}/result", json=upload, headers=a.headers)
    assert again.status_code == 200 and again.json()["duplicate"] is True
    other = {**upload, "upload_id": str(uuid.uuid4())}
    assert client.put(f"/api/v1/runs/{run.id}/result", json=other, headers=a.headers).status_code == 409
    assert session.scalar(select(func.count()).select_from(ResultJob).where(ResultJob.run_id == run.id)) == 2
    read = client.get(f"/api/v1/runs/{run.id}", headers=u.headers).json()
    assert read["status"] == "succeeded"
    j0 = read["jobs"][0]
    assert j0["read"]["total_ios"] == 1000 and j0["read"]["io_bytes"] == 1000 * 4096
    assert j0["read"]["clat_p99_ns"] == 40960 and j0["write"] is None and j0["bs_bytes"] == 4096
    series = client.get(f"/api/v1/runs/{run.id}/series", headers=u.headers).json()
    assert [len(j["points"]) for j in series["jobs"]] == [3, 3]
    assert series["jobs"][0]["points"][-1]["t_s"] == 3.0
    res = client.get(f"/api/v1/runs/{run.id}/result", headers=u.headers).json()
    assert res["engine_result"]["fio version"] == "iowatt-engine-test"


def _store(client: TestClient, session: Session, a: Any, run: Run, doc: dict[str, Any]) -> None:
    run_service.dispatch(session, run_id=run.id)
    lid = _lease(client, a)["lease_id"]
    client.post(f"/api/v1/runs/{run.id}/start", json={"lease_id": lid}, headers=a.headers)
    up = {
        "lease_id": lid,
        "upload_id": str(uuid.uuid4()),
        "engine_result": doc,
        "engine_exit_code": 0,
        "started_at": "2026-11-21T10:00:00Z",
        "finished_at": "2026-11-21T10:00:06Z",
    }
    r = client.put(f"/api/v1/runs/{run.id}/result", json=up, headers=a.headers)
    assert r.status_code == 201, r.text


def test_io_uring_kernel_worker_cpu_is_stored_and_read_next_to_usr_sys(
    client: TestClient, session: Session
) -> None:
    """The engine's `iowatt.io_uring` lands in columns; jobs without it (psync, or a plain fio
    document with no `iowatt` at all) read null, never 0."""
    u = create_user(session)
    a = create_agent(session, team=u.team)
    doc = engine_document(jobs=3, ioengine="io_uring", kernel_worker_cpu=87.527341, target_nowait=False)
    doc["jobs"][1] = engine_document(ioengine="psync")["jobs"][0] | {"jobname": "job1"}
    del doc["jobs"][2]["iowatt"]  # as fio itself writes it
    run = create_run(session, agent=a.agent)
    _store(client, session, a, run, doc)
    rows = session.scalars(select(ResultJob).where(ResultJob.run_id == run.id).order_by(ResultJob.job_index))
    assert [(r.kernel_worker_cpu_pct, r.target_nowait) for r in rows] == [
        (pytest.approx(87.527341), False),
        (None, None),
        (None, None),
    ]
    jobs = client.get(f"/api/v1/runs/{run.id}", headers=u.headers).json()["jobs"]
    assert jobs[0]["kernel_worker_cpu_pct"] == pytest.approx(87.527341)
    assert jobs[0]["target_nowait"] is False
    assert (jobs[0]["usr_cpu_pct"], jobs[0]["sys_cpu_pct"]) == (5.0, 20.0)  # io-wq stays outside usr/sys
    assert [(j["kernel_worker_cpu_pct"], j["target_nowait"]) for j in jobs[1:]] == [(None, None)] * 2

    nowait = create_run(session, agent=a.agent, target_path="/dev/shm/t")
    _store(
        client,
        session,
        a,
        nowait,
        engine_document(ioengine="io_uring", kernel_worker_cpu=0.0, target_nowait=True),
    )
    j0 = client.get(f"/api/v1/runs/{nowait.id}", headers=u.headers).json()["jobs"][0]
    assert (j0["kernel_worker_cpu_pct"], j0["target_nowait"]) == (0.0, True)


def test_negative_kernel_worker_cpu_is_422(client: TestClient, session: Session) -> None:
    u = create_user(session)
    a = create_agent(session, team=u.team)
    run = create_run(session, agent=a.agent)
    run_service.dispatch(session, run_id=run.id)
    lid = _lease(client, a)["lease_id"]
    client.post(f"/api/v1/runs/{run.id}/start", json={"lease_id": lid}, headers=a.headers)
    doc = engine_document(ioengine="io_uring", kernel_worker_cpu=-1.0)
    up = {
        "lease_id": lid,
        "upload_id": str(uuid.uuid4()),
        "engine_result": doc,
        "engine_exit_code": 0,
        "started_at": "2026-11-21T10:00:00Z",
        "finished_at": "2026-11-21T10:00:06Z",
    }
    r = client.put(f"/api/v1/runs/{run.id}/result", json=up, headers=a.headers)
    assert r.status_code == 422
    assert r.json()["detail"][0]["field"].startswith("engine_result.jobs.0.iowatt.io_uring.kernel_worker_cpu")


def test_malformed_engine_result_is_422_and_stores_nothing(client: TestClient, session: Session) -> None:
    u = create_user(session)
    a = create_agent(session, team=u.team)
    run = create_run(session, agent=a.agent)
    run_service.dispatch(session, run_id=run.id)
    lid = _lease(client, a)["lease_id"]
    client.post(f"/api/v1/runs/{run.id}/start", json={"lease_id": lid}, headers=a.headers)
    bad = {
        "lease_id": lid,
        "upload_id": str(uuid.uuid4()),
        "engine_result": {"jobs": [{"jobname": "x"}]},
        "engine_exit_code": 0,
        "started_at": "2026-11-21T10:00:00Z",
        "finished_at": "2026-11-21T10:00:06Z",
    }
    r = client.put(f"/api/v1/runs/{run.id}/result", json=bad, headers=a.headers)
    assert r.status_code == 422 and r.json()["detail"][0]["field"].startswith("engine_result.jobs.0")
    assert client.get(f"/api/v1/runs/{run.id}", headers=u.headers).json()["status"] == "running"


def test_agent_token_for_another_agents_run_is_403(client: TestClient, session: Session) -> None:
    u = create_user(session)
    a = create_agent(session, team=u.team)
    b = create_agent(session, team=u.team)
    run = create_run(session, agent=a.agent)
    run_service.dispatch(session, run_id=run.id)
    lid = _lease(client, a)["lease_id"]
    r = client.post(f"/api/v1/agents/{a.agent.id}/lease?wait_s=0", headers=b.headers)
    assert r.status_code == 403 and r.json()["error"] == "wrong_agent"
    r = client.post(f"/api/v1/runs/{run.id}/start", json={"lease_id": lid}, headers=b.headers)
    assert r.status_code == 404  # b cannot even see a's run


def test_cancel_queued_and_running(client: TestClient, session: Session) -> None:
    u = create_user(session)
    a = create_agent(session, team=u.team)
    queued = create_run(session, agent=a.agent)
    r = client.post(f"/api/v1/runs/{queued.id}/cancel", headers=u.headers)
    assert r.json()["status"] == "cancelled"
    assert client.post(f"/api/v1/runs/{queued.id}/cancel", headers=u.headers).status_code == 409
    run = create_run(session, agent=a.agent, target_path="/dev/shm/t")
    run_service.dispatch(session, run_id=run.id)
    lid = _lease(client, a)["lease_id"]
    client.post(f"/api/v1/runs/{run.id}/start", json={"lease_id": lid}, headers=a.headers)
    assert client.post(f"/api/v1/runs/{run.id}/cancel", headers=u.headers).json()["status"] == "running"
    prog = {"lease_id": lid, "job_index": 0, "job_name": "x", "percent": 5.0, "elapsed_ns": 1}
    assert client.post(f"/api/v1/runs/{run.id}/progress", json=prog, headers=a.headers).json()[
        "cancel_requested"
    ]
    fail = {"lease_id": lid, "upload_id": str(uuid.uuid4()), "reason": "cancelled", "cancelled": True}
    assert (
        client.post(f"/api/v1/runs/{run.id}/failure", json=fail, headers=a.headers).json()["status"]
        == "cancelled"
    )


def test_compare_lists_jobs_side_by_side(client: TestClient, session: Session) -> None:
    u = create_user(session)
    a = create_agent(session, team=u.team)
    runs = []
    for path, ios in (("/srv/a", 1000), ("/dev/shm/b", 4000)):
        run = create_run(session, agent=a.agent, target_path=path)
        run_service.dispatch(session, run_id=run.id)
        lid = _lease(client, a)["lease_id"]
        client.post(f"/api/v1/runs/{run.id}/start", json={"lease_id": lid}, headers=a.headers)
        up = {
            "lease_id": lid,
            "upload_id": str(uuid.uuid4()),
            "engine_result": engine_document(ios=ios),
            "engine_exit_code": 0,
            "started_at": "2026-11-21T10:00:00Z",
            "finished_at": "2026-11-21T10:00:06Z",
        }
        assert client.put(f"/api/v1/runs/{run.id}/result", json=up, headers=a.headers).status_code == 201
        runs.append(run)
    r = client.get(f"/api/v1/compare?runs={runs[0].id},{runs[1].id}", headers=u.headers)
    assert r.status_code == 200, r.text
    metrics = {m["key"]: m for m in r.json()["jobs"][0]["metrics"]}
    assert metrics["read_iops"]["unit"] == "IO/s"
    a_iops, b_iops = metrics["read_iops"]["values"]
    assert b_iops == pytest.approx(4 * a_iops)
    assert "write_iops" not in metrics  # no write side in either run
    bad = client.get("/api/v1/compare?runs=not-a-uuid", headers=u.headers)
    assert bad.status_code == 422 and bad.json()["detail"][0]["field"] == "runs"


def test_runs_filter_by_device_and_status(client: TestClient, session: Session) -> None:
    u = create_user(session)
    a = create_agent(session, team=u.team)
    disk = create_run(session, agent=a.agent, target_path="/srv/a")
    create_run(session, agent=a.agent, target_path="/dev/shm/b")
    r = client.get(f"/api/v1/runs?device_id={disk.device_id}", headers=u.headers).json()
    assert [x["id"] for x in r["items"]] == [str(disk.id)] and r["total"] == 1
    assert client.get("/api/v1/runs?status=succeeded", headers=u.headers).json()["total"] == 0
