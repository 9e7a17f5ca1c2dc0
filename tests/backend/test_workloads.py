from fastapi.testclient import TestClient
from sqlalchemy.orm import Session

from tests.factories import create_user

JOB = {
    "name": "rr",
    "rw": "randread",
    "bs_bytes": 4096,
    "size_bytes": 1 << 20,
    "runtime_s": 1,
    "time_based": True,
}


def test_team_workloads_are_named_uniquely_and_validated(client: TestClient, session: Session) -> None:
    u = create_user(session)
    body = {"team_id": str(u.team.id), "name": "mine", "spec": {"jobs": [JOB]}}
    r = client.post("/api/v1/workloads", json=body, headers=u.headers)
    assert r.status_code == 201, r.text
    assert client.get(f"/api/v1/workloads/{r.json()['id']}", headers=u.headers).json()["name"] == "mine"
    dup = client.post("/api/v1/workloads", json=body, headers=u.headers)
    assert dup.status_code == 409 and dup.json()["error"] == "workload_name_taken"
    bad = client.post(
        "/api/v1/workloads",
        json={**body, "name": "x", "spec": {"jobs": [{**JOB, "iodepth": 0}]}},
        headers=u.headers,
    )
    assert bad.status_code == 422 and bad.json()["detail"][0]["field"] == "spec.jobs.0.iodepth"
    other = create_user(session)
    assert client.get(f"/api/v1/workloads/{r.json()['id']}", headers=other.headers).status_code == 404


def test_environment_names_are_unique_per_team(client: TestClient, session: Session) -> None:
    u = create_user(session)
    body = {"team_id": str(u.team.id), "name": "lab", "kind": "local"}
    assert client.post("/api/v1/environments", json=body, headers=u.headers).status_code == 201
    dup = client.post("/api/v1/environments", json=body, headers=u.headers)
    assert dup.status_code == 409 and dup.json()["error"] == "environment_name_taken"
