"""Stored workload specs carry the version of the schema that wrote them; reading upgrades them and
never fails on a row an older schema wrote, even when today's input rules would refuse it."""

import json
import uuid
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import text
from sqlalchemy.orm import Session

from backend.models import Run, Workload
from backend.run import service as run_service
from backend.workload import schemas
from backend.workload.schemas import MAX_BS, SPEC_VERSION, load_spec
from tests.factories import MiB, create_agent, create_result, create_run, create_user

# As an older schema wrote it: no spec_version, a block size above today's MAX_BS, a field that
# no longer exists. Today's RunCreate refuses this spec.
OLD_BS = 2 * MAX_BS
OLD_SPEC: dict[str, Any] = {
    "jobs": [
        {
            "name": "big-seq",
            "rw": "read",
            "bs_bytes": OLD_BS,
            "size_bytes": 4 * OLD_BS,
            "runtime_s": 3,
            "time_based": True,
            "retired_field": "x",
        }
    ]
}


def _write_raw(session: Session, table: str, column: str, row_id: uuid.UUID, doc: dict[str, Any]) -> None:
    session.execute(
        text(f"UPDATE {table} SET {column} = CAST(:doc AS jsonb) WHERE id = :id"),
        {"doc": json.dumps(doc), "id": row_id},
    )
    session.expire_all()


def _old_run(session: Session, agent: Any, **over: Any) -> Run:
    run = create_run(session, agent=agent, **over)
    _write_raw(session, "runs", "workload_spec", run.id, OLD_SPEC)
    return run


def test_todays_schema_refuses_the_old_spec(client: TestClient, session: Session) -> None:
    u = create_user(session)
    a = create_agent(session, team=u.team)
    body = {"agent_id": str(a.agent.id), "target_path": "/srv/bench", "workload": OLD_SPEC}
    r = client.post("/api/v1/runs", json=body, headers=u.headers)
    assert r.status_code == 422, r.text


def test_old_run_is_listed_read_leased_and_compared_with_its_stored_values(
    client: TestClient, session: Session
) -> None:
    u = create_user(session)
    a = create_agent(session, team=u.team)
    old = _old_run(session, a.agent)

    page = client.get("/api/v1/runs", headers=u.headers)
    assert page.status_code == 200, page.text
    listed = next(r for r in page.json()["items"] if r["id"] == str(old.id))
    assert listed["workload"]["jobs"][0]["bs_bytes"] == OLD_BS
    assert "retired_field" not in listed["workload"]["jobs"][0]

    one = client.get(f"/api/v1/runs/{old.id}", headers=u.headers)
    assert one.status_code == 200, one.text
    job = one.json()["workload"]["jobs"][0]
    assert (job["bs_bytes"], job["size_bytes"], job["ioengine"]) == (OLD_BS, 4 * OLD_BS, "psync")

    assert run_service.dispatch(session, run_id=old.id) == a.agent.id
    lease = client.post(f"/api/v1/agents/{a.agent.id}/lease?wait_s=0", headers=a.headers)
    assert lease.status_code == 200, lease.text
    engine_job = lease.json()["lease"]["engine_job"]["jobs"][0]
    assert engine_job["bs"] == str(OLD_BS) and engine_job["name"] == "big-seq"

    # compare: an old run next to one written today
    rows = [{"name": "big-seq", "rw": "read", "bs_bytes": OLD_BS, "read_bw_bytes": 100 * MiB}]
    done = _old_run(session, a.agent, target_path="/srv/old")
    create_result(session, run=done, jobs=rows)
    new = create_run(session, agent=a.agent, target_path="/srv/new")
    create_result(session, run=new, jobs=[{**rows[0], "read_bw_bytes": 200 * MiB}])
    c = client.get(f"/api/v1/compare?runs={done.id},{new.id}", headers=u.headers)
    assert c.status_code == 200, c.text
    runs = {r["id"]: r for r in c.json()["runs"]}
    assert runs[str(done.id)]["workload"]["jobs"][0]["bs_bytes"] == OLD_BS


def test_old_saved_workload_reads_but_a_new_run_from_it_is_refused_naming_the_field(
    client: TestClient, session: Session
) -> None:
    u = create_user(session)
    a = create_agent(session, team=u.team)
    wl = Workload(team_id=u.team.id, name="old one", description="", spec={"jobs": []}, builtin=False)
    session.add(wl)
    session.flush()
    _write_raw(session, "workloads", "spec", wl.id, OLD_SPEC)
    r = client.get(f"/api/v1/workloads/{wl.id}", headers=u.headers)
    assert r.status_code == 200, r.text
    assert r.json()["spec"]["jobs"][0]["bs_bytes"] == OLD_BS
    listed = client.get("/api/v1/workloads", headers=u.headers)
    assert listed.status_code == 200, listed.text
    body = {"agent_id": str(a.agent.id), "target_path": "/srv/bench", "workload_id": str(wl.id)}
    made = client.post("/api/v1/runs", json=body, headers=u.headers)
    assert made.status_code == 422, made.text
    assert made.json()["detail"][0]["field"] == "workload_id"


def test_new_rows_store_todays_spec_version(client: TestClient, session: Session) -> None:
    u = create_user(session)
    a = create_agent(session, team=u.team)
    job = {"name": "j", "rw": "randread", "bs_bytes": 4096, "size_bytes": 16 * MiB}
    body = {"agent_id": str(a.agent.id), "target_path": "/srv/bench", "workload": {"jobs": [job]}}
    r = client.post("/api/v1/runs", json=body, headers=u.headers)
    assert r.status_code == 201, r.text
    stored = session.get(Run, uuid.UUID(r.json()["id"]))
    assert stored is not None and stored.workload_spec["spec_version"] == SPEC_VERSION
    assert "spec_version" not in r.json()["workload"]


def test_a_renamed_field_is_moved_by_its_upgrade(monkeypatch: pytest.MonkeyPatch) -> None:
    """How the next schema change is made: bump SPEC_VERSION, add the step from the last version."""

    def rename(doc: dict[str, Any]) -> dict[str, Any]:
        jobs = [{("bs_bytes" if k == "block_bytes" else k): v for k, v in j.items()} for j in doc["jobs"]]
        return {**doc, "jobs": jobs}

    monkeypatch.setattr(schemas, "SPEC_VERSION", SPEC_VERSION + 1)
    monkeypatch.setitem(schemas._UPGRADES, SPEC_VERSION, rename)
    job = {"name": "j", "rw": "read", "block_bytes": 8192, "size_bytes": MiB}
    spec = load_spec({"jobs": [job], "spec_version": SPEC_VERSION})
    assert spec.jobs[0].bs_bytes == 8192
    # a row without a version (written before versions existed) goes through every step
    assert load_spec({"jobs": [job]}).jobs[0].bs_bytes == 8192
    # a row already at the new version is not upgraded again
    current_job = {k: v for k, v in job.items() if k != "block_bytes"}
    current = {"jobs": [{**current_job, "bs_bytes": 4096}], "spec_version": SPEC_VERSION + 1}
    assert load_spec(current).jobs[0].bs_bytes == 4096
