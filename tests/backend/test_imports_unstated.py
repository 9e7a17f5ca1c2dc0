"""What an imported file does not state is not stated (issue 26): through POST /imports, one
sample per format, each job's stored spec lists the settings its file left out (`unstated`), the
API answers them as null beside the list, and a measured run's spec carries no such list."""

import uuid
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy.orm import Session

from backend.config import get_settings
from backend.models import Role, Run
from tests.factories import create_agent, create_run, create_user

SAMPLES = Path(__file__).parents[1] / "imports" / "samples"
SETTINGS = {"rw", "bs_bytes", "size_bytes", "iodepth", "numjobs", "ioengine", "direct"}

# (sample, the first job's unstated settings): what each format's file says and does not say
CASES = [
    # CrystalDiskMark states block size, queue depth, threads and test size; never an ioengine or O_DIRECT
    ("crystaldiskmark/cdm8_default.txt", {"ioengine", "direct"}),
    ("crystaldiskmark/kdm3_default.txt", {"ioengine", "direct"}),
    ("diskspd/diskspd22_randrw.xml", {"ioengine"}),
    ("diskspd/diskspd2017_mix.txt", {"ioengine"}),
    ("elbencho/elbencho-3.0.25_randrw.csv", {"ioengine"}),
    ("sysbench/sysbench-1.0.20_rndrw.txt", {"bs_bytes", "direct", "iodepth", "ioengine", "numjobs"}),
    ("postmark/postmark-1.51_session.txt", SETTINGS),  # a file workload: nothing of a block job
    ("vdbench/summary_raw_50407.html", {"direct", "ioengine", "numjobs", "rw", "size_bytes"}),
    ("iozone/iozone-3.492_ops_mode.txt", {"iodepth", "ioengine", "numjobs"}),
    ("bonnie/bonnie-1.98_two_runs.csv", {"direct", "iodepth", "ioengine"}),
    ("fio/fio-3.33-v3.terse", SETTINGS),  # terse lines carry no options at all
    ("fio/fio-3.33.json", {"direct", "iodepth", "numjobs"}),  # what the job file did not set
]


def _import(client: TestClient, headers: dict[str, str], team_id: uuid.UUID, sample: str) -> str:
    r = client.post(
        "/api/v1/imports",
        params={"team_id": str(team_id), "file_name": Path(sample).name},
        content=(SAMPLES / sample).read_bytes(),
        headers={**headers, "Content-Type": "application/octet-stream"},
    )
    assert r.status_code == 201, r.text
    return str(r.json()["runs"][0]["run_id"])


@pytest.mark.parametrize(("sample", "unstated"), CASES, ids=[c[0].split("/")[1] for c in CASES])
def test_the_stored_spec_and_the_api_say_what_the_file_did_not_state(
    client: TestClient, session: Session, sample: str, unstated: set[str]
) -> None:
    u = create_user(session, role=Role.member)
    run_id = _import(client, u.headers, u.team.id, sample)
    stored = session.get(Run, uuid.UUID(run_id))
    assert stored is not None
    jobs: list[dict[str, Any]] = stored.workload_spec["jobs"]
    assert set(jobs[0]["unstated"]) == unstated
    assert all(isinstance(j.get("unstated"), list) for j in jobs)
    # the stored values stay valid placeholders for the spec's readers
    assert all(jobs[0][k] is not None for k in SETTINGS)
    run = client.get(f"/api/v1/runs/{run_id}", headers=u.headers).json()
    job = run["workload"]["jobs"][0]
    assert set(job["unstated"]) == unstated
    assert {k for k in SETTINGS if job[k] is None} == unstated  # null, never the invented value
    listed = client.get("/api/v1/runs", params={"team_id": str(u.team.id)}, headers=u.headers).json()
    items = listed["items"] if isinstance(listed, dict) else listed
    assert set(items[0]["workload"]["jobs"][0]["unstated"]) == unstated


def test_crystaldiskmark_states_its_settings_and_they_read_back(client: TestClient, session: Session) -> None:
    u = create_user(session, role=Role.member)
    run_id = _import(client, u.headers, u.team.id, "crystaldiskmark/cdm8_default.txt")
    job = client.get(f"/api/v1/runs/{run_id}", headers=u.headers).json()["workload"]["jobs"][0]
    assert (job["rw"], job["bs_bytes"], job["iodepth"], job["numjobs"]) == ("read", 1 << 20, 8, 1)
    assert job["size_bytes"] > 0 and job["ioengine"] is None and job["direct"] is None
    # the run page's header: no cache mode the file did not give
    system = client.get(f"/api/v1/runs/{run_id}/system", headers=u.headers).json()
    assert system["cache"] == "unstated"
    assert all(f["flag"] != "buffered_device" for f in system["validity"])
    # compare answers the same (its runs table shows the run's workload)
    other = _import(client, u.headers, u.team.id, "crystaldiskmark/kdm3_default.txt")
    c = client.get(f"/api/v1/compare?runs={run_id},{other}", headers=u.headers)
    assert c.status_code == 200, c.text
    for r in c.json()["runs"]:
        j = r["workload"]["jobs"][0]
        assert set(j["unstated"]) == {"ioengine", "direct"} and j["ioengine"] is None and j["direct"] is None


def test_a_measured_run_has_no_unstated_settings(client: TestClient, session: Session) -> None:
    u = create_user(session, role=Role.member)
    a = create_agent(session, team=u.team)
    run = create_run(session, agent=a.agent)
    assert all("unstated" not in j for j in run.workload_spec["jobs"])
    job = client.get(f"/api/v1/runs/{run.id}", headers=u.headers).json()["workload"]["jobs"][0]
    assert "unstated" not in job and job["ioengine"] and job["iodepth"] >= 1
    system = client.get(f"/api/v1/runs/{run.id}/system", headers=u.headers).json()
    assert system["cache"] in ("direct", "buffered", "mixed")


def test_a_request_cannot_mark_settings_unstated() -> None:
    from pydantic import ValidationError

    from backend.workload.schemas import WorkloadSpec, load_spec

    job = {"name": "j", "rw": "read", "bs_bytes": 4096, "size_bytes": 1 << 20}
    with pytest.raises(ValidationError, match="only by an import"):
        WorkloadSpec.model_validate({"jobs": [{**job, "unstated": ["ioengine"]}]})
    # a stored imported spec still loads, its list kept and its unstated setting answered null
    spec = load_spec({"jobs": [{**job, "ioengine": "psync", "unstated": ["ioengine"]}], "spec_version": 5})
    out = spec.model_dump(mode="json")["jobs"][0]
    assert out["unstated"] == ["ioengine"] and out["ioengine"] is None and out["bs_bytes"] == 4096


def test_a_shared_comparison_of_imported_runs_reads_their_unstated_settings(
    client: TestClient, session: Session, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A share link freezes the comparison as JSON and reads it back through its schema: the
    imported jobs' nulls and lists must read back as answered, not be refused as a request."""
    u = create_user(session, role=Role.member)
    runs = [
        _import(client, u.headers, u.team.id, "crystaldiskmark/cdm8_default.txt"),
        _import(client, u.headers, u.team.id, "fio/fio-3.33-v3.terse"),
    ]
    body = {"kind": "comparison", "target": {"runs": runs, "group_by": "none"}, "title": "imported"}
    r = client.post("/api/v1/share-links", json=body, headers=u.headers)
    assert r.status_code == 201, r.text
    token = str(r.json()["url"]).rsplit("/s/", 1)[1]
    for _ in range(2):  # built, then read from the cache
        v = client.get(f"/api/v1/shared/{token}")
        assert v.status_code == 200, v.text
        cdm, terse = (x["workload"]["jobs"][0] for x in v.json()["comparison"]["runs"])
        assert set(cdm["unstated"]) == {"ioengine", "direct"} and cdm["ioengine"] is None
        assert cdm["bs_bytes"] == 1 << 20  # what the file stated reads as stated
        assert set(terse["unstated"]) == SETTINGS and all(terse[k] is None for k in SETTINGS)
    assert client.get(f"/api/v1/shared/{token}/export.csv").status_code == 200
    # the page's OpenGraph tags and image read the view through its schema
    (tmp_path / "index.html").write_text("<!doctype html><html><head></head><body></body></html>")
    monkeypatch.setattr(get_settings(), "frontend_dist", tmp_path)
    page = client.get(f"/s/{token}")
    assert page.status_code == 200 and 'property="og:title" content="imported"' in page.text
    png = client.get(f"/s/{token}/preview.png")
    assert png.status_code == 200 and png.content.startswith(b"\x89PNG")
