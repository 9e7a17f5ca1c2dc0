"""POST /api/v1/imports and /imports/published, GET /runs/{id}/source (issue 26; docs/imports.md):
a dry run stores nothing, a stored file makes runs of source "import" labelled "imported from fio"
with the `imported` flag (run page and compare), its bytes come back byte for byte, the same bytes
again add nothing, bad input is a 422 naming the format and line with nothing half-stored, the
size limit, roles, published figures."""

import gzip
import hashlib
import json
import uuid
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from backend.models import ImportFile, ResultJob, Role, Run
from tests.conftest import reset_settings_caches
from tests.factories import create_user

SAMPLES = Path(__file__).parents[1] / "imports" / "samples" / "fio"
FIO2 = (SAMPLES / "fio-2.2.10.json").read_bytes()
TERSE = (SAMPLES / "fio-3.33-v3.terse").read_bytes()


def count(session: Session, model: Any, team_id: uuid.UUID) -> int:
    return session.scalar(select(func.count()).select_from(model).where(model.team_id == team_id)) or 0


def post_file(client: TestClient, headers: dict[str, str], data: bytes, **query: Any) -> Any:
    return client.post(
        "/api/v1/imports",
        params=query,
        content=data,
        headers={**headers, "Content-Type": "application/octet-stream"},
    )


def test_dry_run_answers_the_jobs_in_base_units_and_stores_nothing(
    client: TestClient, session: Session
) -> None:
    u = create_user(session, role=Role.member)
    r = post_file(client, u.headers, FIO2, team_id=u.team.id, file_name="old.json", dry_run="true")
    assert r.status_code == 200, r.text
    out = r.json()
    assert (out["format"], out["tool"], out["version"], out["dry_run"]) == ("fio-json", "fio", "2.2.10", True)
    assert out["sha256"] == hashlib.sha256(FIO2).hexdigest() and out["size_bytes"] == len(FIO2)
    run = out["runs"][0]
    assert run["run_id"] is None and run["device"] == "sdb" and run["host"] == "imported"
    job = run["jobs"][0]
    assert job["settings"]["bs"] == 4096 and job["read"]["bw_bytes"] == 6553 * 1024
    assert job["read"]["clat"]["percentiles_ns"]["99"] == 30848 * 1000
    assert out["units"]["bw_bytes"] == "bytes/s"
    assert count(session, Run, u.team.id) == 0 and count(session, ImportFile, u.team.id) == 0


def test_a_stored_file_is_runs_imported_from_fio_with_its_source_kept(
    client: TestClient, session: Session
) -> None:
    u = create_user(session, role=Role.member)
    r = post_file(
        client,
        u.headers,
        FIO2,
        team_id=u.team.id,
        file_name="lab/old run.json",
        host="lab-7",
        device="WD Red 4TB",
    )
    assert r.status_code == 201, r.text
    out = r.json()
    assert out["duplicate"] is False and len(out["runs"]) == 1
    run_id = out["runs"][0]["run_id"]
    run = client.get(f"/api/v1/runs/{run_id}", headers=u.headers).json()
    assert run["source"] == "import" and run["status"] == "succeeded" and run["agent_name"] == "lab-7"
    # the label names the tool's version as the file states it
    assert run["device_name"] and run["origin"]["version"]
    assert run["origin"]["label"] == f"imported from fio {run['origin']['version']}"
    assert run["origin"]["source_url"] == f"/api/v1/runs/{run_id}/source" and run["origin"]["files"] == []
    assert run["origin"]["format"] == "fio-json" and run["origin"]["file_name"] == "old run.json"
    rows = session.scalars(
        select(ResultJob).where(ResultJob.run_id == uuid.UUID(run_id)).order_by(ResultJob.job_index)
    ).all()
    assert [j.name for j in rows] == ["randread-4k", "seqwrite-1m"]
    assert rows[0].read_bw_bytes == 6553 * 1024 and rows[0].read_clat_p99_ns == 30848 * 1000
    assert rows[0].bs_bytes == 4096 and rows[1].write_io_bytes == 2**30
    flags = client.get(f"/api/v1/runs/{run_id}/system", headers=u.headers).json()["validity"]
    assert "imported" in [f["flag"] for f in flags]
    cmp = client.get("/api/v1/compare", params={"runs": run_id}, headers=u.headers)
    assert cmp.status_code == 200, cmp.text
    assert "imported" in [f["flag"] for f in cmp.json()["validity"][run_id]]
    src = client.get(f"/api/v1/runs/{run_id}/source", headers=u.headers)
    assert src.status_code == 200 and src.content == FIO2
    assert src.headers["content-type"].startswith("application/json")
    assert 'filename="old run.json"' in src.headers["content-disposition"]
    stored = session.scalar(select(ImportFile).where(ImportFile.team_id == u.team.id))
    assert stored is not None and gzip.decompress(stored.data) == FIO2 and stored.sha256 == out["sha256"]


def test_the_same_bytes_again_add_nothing(client: TestClient, session: Session) -> None:
    u = create_user(session, role=Role.member)
    first = post_file(client, u.headers, TERSE, team_id=u.team.id, file_name="a.terse")
    assert first.status_code == 201, first.text
    again = post_file(client, u.headers, TERSE, team_id=u.team.id, file_name="renamed.terse")
    assert again.status_code == 200 and again.json()["duplicate"] is True
    assert [r["run_id"] for r in again.json()["runs"]] == [r["run_id"] for r in first.json()["runs"]]
    assert count(session, Run, u.team.id) == 1 and count(session, ImportFile, u.team.id) == 1
    other = create_user(session, role=Role.member)  # another team's import of the same bytes is its own
    assert post_file(client, other.headers, TERSE, team_id=other.team.id).status_code == 201


def test_pasted_text_as_json(client: TestClient, session: Session) -> None:
    u = create_user(session, role=Role.member)
    body = {"team_id": str(u.team.id), "text": TERSE.decode(), "file_name": "paste.txt", "format": "terse"}
    r = client.post("/api/v1/imports", json=body, headers=u.headers)
    assert r.status_code == 201, r.text
    assert r.json()["format"] == "fio-terse" and r.json()["runs"][0]["run_id"]
    assert any(
        "I/O count = IOPS x runtime" in e
        for e in _source_block(session, r.json()["runs"][0]["run_id"])["estimated"]
    )


def _source_block(session: Session, run_id: str) -> dict[str, Any]:
    from backend.models import RunResult

    res = session.get(RunResult, uuid.UUID(run_id))
    assert res is not None
    return dict(res.engine_result["source"])


def test_bad_input_is_a_422_naming_format_and_line_and_nothing_is_stored(
    client: TestClient, session: Session
) -> None:
    u = create_user(session, role=Role.member)
    cut = FIO2[: len(FIO2) // 2]
    r = post_file(client, u.headers, cut, team_id=u.team.id, file_name="cut.json")
    assert r.status_code == 422, r.text
    d = r.json()["detail"][0]
    assert r.json()["error"] == "import_invalid" and d["format"] == "fio-json" and d["line"] > 10
    assert "truncated" in d["message"]
    r = post_file(client, u.headers, b"nothing a benchmark wrote\n", team_id=u.team.id)
    assert r.status_code == 422 and "fio-terse" in r.json()["detail"][0]["expected"]
    r = post_file(client, u.headers, TERSE, team_id=u.team.id, format="fio-json")  # a wrong hint
    assert r.status_code == 422 and r.json()["detail"][0]["format"] == "fio-json"
    assert count(session, Run, u.team.id) == 0 and count(session, ImportFile, u.team.id) == 0


def test_a_storage_failure_leaves_nothing_half_stored(client: TestClient, session: Session) -> None:
    u = create_user(session, role=Role.member)
    # two runs' worth of jobs under an enrolled agent's name: the host check fails the first run
    from tests.factories import create_agent

    create_agent(session, team=u.team, name="real-agent")
    r = post_file(client, u.headers, FIO2, team_id=u.team.id, host="real-agent")
    assert r.status_code == 422, r.text
    assert count(session, Run, u.team.id) == 0 and count(session, ImportFile, u.team.id) == 0


def test_roles_multipart_and_the_size_limit(
    client: TestClient, session: Session, monkeypatch: pytest.MonkeyPatch
) -> None:
    viewer = create_user(session, role=Role.viewer)
    assert post_file(client, viewer.headers, TERSE, team_id=viewer.team.id).status_code == 403
    u = create_user(session, role=Role.member)
    # multipart is read (tests/client/test_import_multipart.py); a urlencoded form is not
    r = client.post("/api/v1/imports", data={"team_id": str(u.team.id)}, headers=u.headers)
    assert r.status_code == 415 and "octet-stream" in r.json()["message"]
    assert post_file(client, u.headers, TERSE).status_code == 422  # no team_id
    monkeypatch.setenv("IOWATT_IMPORT_MAX_BYTES", "1000")
    reset_settings_caches()
    try:
        assert post_file(client, u.headers, TERSE, team_id=u.team.id).status_code == 413
    finally:
        monkeypatch.delenv("IOWATT_IMPORT_MAX_BYTES")
        reset_settings_caches()


def test_a_measured_run_has_no_source(client: TestClient, session: Session) -> None:
    from tests.factories import create_agent, create_run

    u = create_user(session, role=Role.member)
    a = create_agent(session, team=u.team)
    run = create_run(session, agent=a.agent)
    r = client.get(f"/api/v1/runs/{run.id}/source", headers=u.headers)
    assert r.status_code == 404 and r.json()["error"] == "no_source"


def test_published_figures_are_a_run_marked_not_measured_here(client: TestClient, session: Session) -> None:
    u = create_user(session, role=Role.member)
    body = {
        "team_id": str(u.team.id),
        "vendor": "Samsung",
        "model": "990 PRO 2TB",
        "reference": "https://example.test/990pro-datasheet.pdf p. 2",
        "figures": [
            {"test": "Sequential read", "value": 7450, "unit": "MB/s", "bs_bytes": 131072, "iodepth": 32},
            {"test": "Random read 4K", "value": 1400, "unit": "kIOPS", "bs_bytes": 4096, "iodepth": 32},
            {"test": "Sequential write", "value": 6900, "unit": "MB/s"},
        ],
    }
    r = client.post("/api/v1/imports/published", json=body, headers=u.headers)
    assert r.status_code == 201, r.text
    run_id = r.json()["runs"][0]["run_id"]
    run = client.get(f"/api/v1/runs/{run_id}", headers=u.headers).json()
    assert run["origin"]["kind"] == "published" and "not measured here" in run["origin"]["label"]
    jobs = {
        j.name: j for j in session.scalars(select(ResultJob).where(ResultJob.run_id == uuid.UUID(run_id)))
    }
    assert jobs["Sequential read"].read_bw_bytes == 7450 * 10**6  # MB/s is 10^6 B/s, exactly
    assert jobs["Random read 4K"].read_iops == 1_400_000
    assert jobs["Sequential write"].write_bw_bytes == 6900 * 10**6
    flags = client.get(f"/api/v1/runs/{run_id}/system", headers=u.headers).json()["validity"]
    assert [f["flag"] for f in flags][0] == "published"
    src = client.get(f"/api/v1/runs/{run_id}/source", headers=u.headers)
    assert src.status_code == 200 and json.loads(src.content)["figures"][1]["unit"] == "kIOPS"
    again = client.post("/api/v1/imports/published", json=body, headers=u.headers)
    assert again.status_code == 200 and again.json()["duplicate"] is True


def test_json_plus_bins_are_kept_and_draw_the_latency_curves(client: TestClient, session: Session) -> None:
    """An imported fio json+ file keeps its histograms as a measured run's result holds them, so
    compare's latency-percentile curves read an imported run as they read a measured one."""
    u = create_user(session, role=Role.member)
    data = (SAMPLES / "fio-3.33.jsonplus").read_bytes()
    r = client.post(
        "/api/v1/imports",
        params={"team_id": str(u.team.id), "file_name": "plus.json"},
        content=data,
        headers={**u.headers, "Content-Type": "application/octet-stream"},
    )
    assert r.status_code == 201, r.text
    assert not any("histograms" in a for a in r.json()["runs"][0]["absent"])
    run_id = r.json()["runs"][0]["run_id"]
    doc = {j["jobname"]: j for j in json.loads(data)["jobs"]}
    c = client.get("/api/v1/compare/latency", params={"runs": run_id, "job": "randrw-8k"}, headers=u.headers)
    assert c.status_code == 200, c.text
    curves = {x["direction"]: x for x in c.json()["curves"]}
    for d in ("read", "write"):  # every I/O of the file's histogram, in ns
        clat = doc["randrw-8k"][d]["clat_ns"]
        assert curves[d]["samples"] == clat["N"] == sum(clat["bins"].values())
        top = max(p["latency_ns"] for p in curves[d]["points"])
        assert top == max(int(k) for k in clat["bins"])
