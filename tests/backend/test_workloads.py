import json
import subprocess
import uuid
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from iowatt_agent.engine import locate_engine
from sqlalchemy.orm import Session

from backend.models import Run
from backend.workload.builtin import BUILTINS
from backend.workload.schemas import JobSpec, WorkloadSpec, load_spec, stored_spec
from tests.factories import create_agent, create_result, create_user

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


def test_the_workloads_list_is_paged_and_bounded(client: TestClient, session: Session) -> None:
    """GET /workloads pages (limit 1-500, default 500; offset) with the total: a team's saved
    workloads grow without bound (issue 30). Built-in first, then by name."""
    u = create_user(session)
    every = client.get("/api/v1/workloads", headers=u.headers).json()
    names = [w["name"] for w in every["items"]]
    assert every["total"] == len(names) >= 4
    page = client.get("/api/v1/workloads", params={"limit": 2, "offset": 1}, headers=u.headers).json()
    assert [w["name"] for w in page["items"]] == names[1:3] and page["total"] == every["total"]
    for bad in ({"limit": 0}, {"limit": 501}, {"offset": -1}):
        r = client.get("/api/v1/workloads", params=bad, headers=u.headers)
        assert r.status_code == 422 and r.json()["detail"][0]["field"] == next(iter(bad)), r.text


def test_io_size_below_one_block_is_422_naming_it(client: TestClient, session: Session) -> None:
    u = create_user(session)
    job = {**JOB, "io_size_bytes": 512, "end_fsync": True}
    body = {"team_id": str(u.team.id), "name": "small", "spec": {"jobs": [job]}}
    r = client.post("/api/v1/workloads", json=body, headers=u.headers)
    assert r.status_code == 422 and r.json()["detail"][0]["field"] == "spec.jobs.0.io_size_bytes"
    assert r.json()["detail"][0]["message"] == "the I/O size must be at least one block (4 KiB)"
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


# --- issue 12: every engine option the platform supports, errors in plain words, shortening ------

# field names and pydantic's own words that must never reach a person under a form field
INTERNAL_WORDS = ("_bytes", "runtime_s", "time_based", "Input should", "Value error", "String should")


def _refused(
    client: TestClient, headers: dict[str, str], team: str, job: dict[str, object]
) -> dict[str, str]:
    body = {"team_id": team, "name": f"w-{len(str(job))}", "spec": {"jobs": [job]}}
    r = client.post("/api/v1/workloads", json=body, headers=headers)
    assert r.status_code == 422, r.text
    detail = r.json()["detail"][0]
    assert not any(w in detail["message"] for w in INTERNAL_WORDS), detail
    return detail


def test_field_errors_name_the_field_in_plain_words(client: TestClient, session: Session) -> None:
    u = create_user(session)
    team = str(u.team.id)
    cases: list[tuple[dict[str, object], str, str]] = [
        ({**JOB, "runtime_s": None}, "time_based", "a time-based job needs a runtime"),
        (
            {**JOB, "bs_bytes": 2 << 20},
            "bs_bytes",
            "block size (2 MiB) must not be larger than the size (1 MiB)",
        ),
        ({**JOB, "bs_bytes": 1000, "direct": True}, "direct", "multiples of 512 bytes (not 1000 bytes)"),
        ({**JOB, "io_size_bytes": 512}, "io_size_bytes", "at least one block (4 KiB)"),
        ({**JOB, "bs_bytes": 1 << 30, "size_bytes": 1 << 31}, "bs_bytes", "must be at most 256 MiB"),
        ({**JOB, "iodepth": 0}, "iodepth", "must be at least 1"),
        ({**JOB, "name": "rand read"}, "name", "only letters, digits"),
        ({**JOB, "rw": "sideways"}, "rw", "must be one of read, write"),
        ({**JOB, "bssplit": "4k/10:64k/50"}, "bssplit", "add up to 60; they must add up to 100"),
        ({**JOB, "bssplit": "4q/100"}, "bssplit", "'4q' is not a block size"),
        ({**JOB, "bssplit": "4k/50:2m/50"}, "bssplit", "larger than the size (1 MiB)"),
        # the engine's limit (--limits: 32), not the 64 the server once wrote by hand
        ({**JOB, "bssplit": ":".join(["4k"] * 33)}, "bssplit", "at most 32 block sizes per direction"),
        ({**JOB, "random_distribution": "zipf:1"}, "random_distribution", "theta above 0 and other than 1"),
        ({**JOB, "random_distribution": "gauss"}, "random_distribution", "must be random, zipf:THETA"),
        ({**JOB, "rate_iops": 0}, "rate_iops", "must be more than 0"),
        ({**JOB, "loops": 0}, "loops", "must be at least 1"),
        ({**JOB, "randseed": 2**60}, "randseed", "must be at most 9007199254740991"),
        ({**JOB, "fsync_every": -1}, "fsync_every", "must be at least 0"),
    ]
    for job, field, words in cases:
        detail = _refused(client, u.headers, team, job)
        assert detail["field"] == f"spec.jobs.0.{field}", (job, detail)
        assert words in detail["message"], (job, detail)


def test_every_engine_option_is_stored_and_passed_to_the_engine(client: TestClient, session: Session) -> None:
    u = create_user(session)
    job = {
        **JOB,
        "rw": "randrw",
        "rwmixread": 70,
        "ioengine": "libaio",
        "direct": True,
        "bssplit": "4k/70:64k/30",
        "rate_iops": 500,
        "random_distribution": "zipf:1.2",
        "fsync_every": 16,
        "sync": True,
        "randseed": 42,
        "loops": 3,
    }
    body = {"team_id": str(u.team.id), "name": "every-option", "spec": {"jobs": [job]}}
    r = client.post("/api/v1/workloads", json=body, headers=u.headers)
    assert r.status_code == 201, r.text
    stored = r.json()["spec"]["jobs"][0]
    assert {k: stored[k] for k in job} == job
    opts = JobSpec.model_validate(job).engine_options()
    assert {k: opts[k] for k in ("rwmixread", "ioengine", "direct", "bssplit", "rate_iops")} == {
        "rwmixread": "70",
        "ioengine": "libaio",
        "direct": "1",
        "bssplit": "4k/70:64k/30",
        "rate_iops": "500",
    }
    assert (opts["random_distribution"], opts["fsync"], opts["sync"], opts["randseed"], opts["loops"]) == (
        "zipf:1.2",
        "16",
        "dsync",
        "42",
        "3",
    )
    # unset options are left to the engine's (fio's) defaults: the job file of an old spec is unchanged
    plain = JobSpec.model_validate(JOB).engine_options()
    assert not {"bssplit", "rate_iops", "random_distribution", "fsync", "sync", "randseed", "loops"} & set(
        plain
    )


def test_the_engine_accepts_every_option_the_schema_renders(tmp_path: Path) -> None:
    """The real engine parses the job file the server renders (exit 0 on the null ioengine)."""
    engine = locate_engine()
    spec = WorkloadSpec.model_validate(
        {
            "jobs": [
                {
                    **JOB,
                    "rw": "randrw",
                    "runtime_s": 0.2,
                    "ioengine": "psync",
                    "bssplit": "4k/70:8k/30",
                    "rate_iops": 2000,
                    "random_distribution": "normal:20",
                    "fsync_every": 8,
                    "sync": True,
                    "randseed": 7,
                    "loops": 2,
                }
            ]
        }
    )
    job = spec.engine_job()
    job["global"] = {"filename": str(tmp_path / "data")}
    path = tmp_path / "job.json"
    path.write_text(json.dumps(job))
    out = subprocess.run([str(engine), str(path)], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    echoed = json.loads(out.stdout)["jobs"][0]["iowatt"]["options"]
    assert (echoed["randseed"], echoed["loops"], echoed["rate_iops"], echoed["fsync"]) == (7, 2, 2000, 8)


def test_shortened_is_one_implementation_recorded_with_the_spec() -> None:
    spec = BUILTINS["crystaldiskmark"][1]
    short = spec.shortened(0.1)
    assert short.shortened_by == 0.1 and spec.shortened_by is None
    for full, cut in zip(spec.jobs, short.jobs, strict=True):
        if full.runtime_s is not None:
            assert cut.runtime_s == max(1.0, round(full.runtime_s * 0.1, 1))
        else:  # size-bound: a tenth of the I/O, whole blocks
            io = full.io_size_bytes or full.size_bytes
            assert cut.io_size_bytes is not None and cut.io_size_bytes <= io * 0.1
            assert cut.io_size_bytes % full.bs_bytes == 0 and cut.io_size_bytes >= full.bs_bytes
    assert short.shortened(0.5).shortened_by == 0.05  # shortened twice: the factors multiply
    assert load_spec(stored_spec(short)).shortened_by == 0.1
    with pytest.raises(ValueError):
        spec.shortened(1.5)


def test_a_run_shortened_on_create_records_it_and_compare_flags_it(
    client: TestClient, session: Session
) -> None:
    u = create_user(session)
    a = create_agent(session, team=u.team)
    quick = client.get("/api/v1/workloads", headers=u.headers).json()["items"]
    wl = next(w for w in quick if w["name"] == "quick")
    body = {"agent_id": str(a.agent.id), "target_path": "/srv/bench", "workload_id": wl["id"], "shorten": 0.5}
    r = client.post("/api/v1/runs", json=body, headers=u.headers)
    assert r.status_code == 201, r.text
    run = r.json()
    assert run["workload_id"] == wl["id"] and run["workload"]["shortened_by"] == 0.5
    full = [j["runtime_s"] for j in wl["spec"]["jobs"]]
    assert [j["runtime_s"] for j in run["workload"]["jobs"]] == [max(1.0, round(t * 0.5, 1)) for t in full]
    bad = client.post("/api/v1/runs", json={**body, "shorten": 2}, headers=u.headers)
    assert bad.status_code == 422 and bad.json()["detail"][0]["field"] == "shorten"
    assert bad.json()["detail"][0]["message"] == "must be less than 1"
    row = session.get(Run, uuid.UUID(run["id"]))
    assert row is not None
    create_result(
        session, run=row, jobs=[{"name": "randread-4k", "rw": "randread", "bs_bytes": 4096, "read_iops": 1.0}]
    )
    c = client.get(f"/api/v1/compare?runs={run['id']}", headers=u.headers).json()
    flags = {f["flag"]: f["message"] for f in c["validity"][run["id"]]}
    assert flags["shortened"].startswith("shortened ×0.5")
