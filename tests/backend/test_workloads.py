from fastapi.testclient import TestClient
from sqlalchemy.orm import Session

from backend.workload.schemas import JobSpec
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


def test_io_size_below_one_block_is_422_naming_it(client: TestClient, session: Session) -> None:
    u = create_user(session)
    job = {**JOB, "io_size_bytes": 512, "end_fsync": True}
    body = {"team_id": str(u.team.id), "name": "small", "spec": {"jobs": [job]}}
    r = client.post("/api/v1/workloads", json=body, headers=u.headers)
    assert r.status_code == 422 and r.json()["detail"][0]["field"] == "spec.jobs.0.io_size_bytes"
    assert "at least bs_bytes (4096)" in r.json()["detail"][0]["message"]
    ok = {**body, "spec": {"jobs": [{**job, "io_size_bytes": 4096}]}}
    r = client.post("/api/v1/workloads", json=ok, headers=u.headers)
    assert r.status_code == 201, r.text
    stored = r.json()["spec"]["jobs"][0]
    assert (stored["io_size_bytes"], stored["end_fsync"]) == (4096, True)


def test_end_fsync_io_size_and_readahead_as_engine_options() -> None:
    def opts(**over: object) -> dict[str, str]:
        return JobSpec.model_validate({**JOB, **over}).engine_options()

    plain = opts()
    assert "end_fsync" not in plain and "io_size" not in plain  # unset: the engine's (fio's) defaults
    # default: fio's per-pattern hint; on: no hint (the kernel's readahead); off: RANDOM
    assert [opts(readahead=r)["fadvise_hint"] for r in ("default", "on", "off")] == ["1", "0", "random"]
    w = opts(rw="randwrite", end_fsync=True, io_size_bytes=64 * 1024)
    assert (w["end_fsync"], w["io_size"], w["size"]) == ("1", str(64 * 1024), str(1 << 20))
    bounded = JobSpec.model_validate(
        {**JOB, "runtime_s": None, "time_based": False, "io_size_bytes": 256 * 1024}
    )
    assert bounded.expected_duration_s() == 1.0  # the I/O it does (256 KiB at 256 KiB/s), not the region


def test_environment_names_are_unique_per_team(client: TestClient, session: Session) -> None:
    u = create_user(session)
    body = {"team_id": str(u.team.id), "name": "lab", "kind": "local"}
    assert client.post("/api/v1/environments", json=body, headers=u.headers).status_code == 201
    dup = client.post("/api/v1/environments", json=body, headers=u.headers)
    assert dup.status_code == 409 and dup.json()["error"] == "environment_name_taken"


def test_nul_anywhere_in_a_workload_is_422_naming_the_field(client: TestClient, session: Session) -> None:
    u = create_user(session)
    body = {"team_id": str(u.team.id), "name": "w", "spec": {"jobs": [JOB]}}
    for bad, field in (
        ({**body, "name": "w\u0000"}, "name"),
        ({**body, "description": "about\u0000"}, "description"),
        ({**body, "spec": {"jobs": [{**JOB, "name": "r\u0000r"}]}}, "spec.jobs.0.name"),
    ):
        r = client.post("/api/v1/workloads", json=bad, headers=u.headers)
        assert r.status_code == 422, r.text
        assert r.json()["detail"][0]["field"] == field  # (a job name's pattern refuses NUL first)
    assert client.post("/api/v1/workloads", json=body, headers=u.headers).status_code == 201
