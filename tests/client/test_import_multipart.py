"""POST /api/v1/imports as multipart/form-data (issue 26, ADR 0031): one or several files with the
labels as form fields, the octet-stream path's limits, errors and idempotence, who may, and
hostile bodies (an oversized part, too many parts, a wrong content type). GET /imports/formats:
the registry's formats."""

import hashlib
import uuid
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from backend.imports import catalog
from backend.imports.formats import registry
from backend.imports.router import MAX_FILES
from backend.models import ImportFile, Role, Run
from tests.conftest import reset_settings_caches
from tests.factories import create_user

SAMPLES = Path(__file__).parents[1] / "imports" / "samples"
TERSE = (SAMPLES / "fio" / "fio-3.33-v3.terse").read_bytes()
CDM = (SAMPLES / "crystaldiskmark" / "cdm8_default.txt").read_bytes()


def count(session: Session, model: Any, team_id: uuid.UUID) -> int:
    return session.scalar(select(func.count()).select_from(model).where(model.team_id == team_id)) or 0


def post(client: TestClient, headers: dict[str, str], files: list[tuple[str, bytes]], **fields: Any) -> Any:
    dry = fields.pop("dry_run", None)
    parts: list[tuple[str, tuple[str | None, bytes | str, str | None]]] = [
        (k, (None, str(v), None)) for k, v in fields.items()
    ]  # text fields as parts: multipart even with no file
    parts += [("file", (name, data, "application/octet-stream")) for name, data in files]
    return client.post(
        "/api/v1/imports",
        params={"dry_run": dry} if dry else None,
        files=parts,
        headers=headers,
    )


def test_one_file_as_multipart_is_the_octet_stream_import(client: TestClient, session: Session) -> None:
    u = create_user(session, role=Role.member)
    r = post(client, u.headers, [("lab/run.terse", TERSE)], team_id=u.team.id, host="lab-9", device="Disk X")
    assert r.status_code == 201, r.text
    out = r.json()
    assert (out["format"], out["file_name"], out["duplicate"]) == ("fio-terse", "run.terse", False)
    assert out["sha256"] == hashlib.sha256(TERSE).hexdigest() and out["size_bytes"] == len(TERSE)
    run_id = out["runs"][0]["run_id"]
    run = client.get(f"/api/v1/runs/{run_id}", headers=u.headers).json()
    assert run["agent_name"] == "lab-9" and run["origin"]["label"] == "imported from fio 3.33"
    assert client.get(f"/api/v1/runs/{run_id}/source", headers=u.headers).content == TERSE
    # the same bytes again, by the other path: nothing added
    again = client.post(
        "/api/v1/imports",
        params={"team_id": str(u.team.id)},
        content=TERSE,
        headers={**u.headers, "Content-Type": "application/octet-stream"},
    )
    assert again.status_code == 200 and again.json()["duplicate"] is True
    assert [x["run_id"] for x in again.json()["runs"]] == [run_id]
    assert count(session, ImportFile, u.team.id) == 1


def test_several_files_answer_207_in_order_in_one_transaction(client: TestClient, session: Session) -> None:
    u = create_user(session, role=Role.member)
    r = post(client, u.headers, [("a.terse", TERSE), ("cdm.txt", CDM)], team_id=u.team.id, dry_run="true")
    assert r.status_code == 207, r.text
    files = r.json()["files"]
    assert [(f["format"], f["dry_run"]) for f in files] == [("fio-terse", True), ("crystaldiskmark", True)]
    assert count(session, Run, u.team.id) == 0
    # a bad file among good ones stores none of them; the 422 names the format and line
    r = post(
        client,
        u.headers,
        [("a.terse", TERSE), ("cdm.txt", CDM[: len(CDM) // 3] + b"\nSEQ1M garbage")],
        team_id=u.team.id,
        format="crystaldiskmark",
    )
    assert r.status_code == 422, r.text
    assert count(session, Run, u.team.id) == 0 and count(session, ImportFile, u.team.id) == 0
    r = post(client, u.headers, [("a.terse", TERSE), ("cdm.txt", CDM)], team_id=u.team.id)
    assert r.status_code == 207 and [f["duplicate"] for f in r.json()["files"]] == [False, False]
    assert count(session, ImportFile, u.team.id) == 2


def test_labels_from_the_query_and_what_is_refused(client: TestClient, session: Session) -> None:
    u = create_user(session, role=Role.member)
    h = u.headers
    ok = client.post(
        "/api/v1/imports",
        params={"team_id": str(u.team.id), "dry_run": "true"},
        files={"file": ("x.terse", TERSE)},
        headers=h,
    )
    assert ok.status_code == 200 and ok.json()["dry_run"] is True
    cases = [
        (post(client, h, [("x.terse", TERSE)]), "team_id"),  # no team
        (post(client, h, [], team_id=u.team.id), "file"),  # no file part
        (post(client, h, [("x.terse", TERSE)], team_id=u.team.id, colour="red"), "colour"),
        (post(client, h, [("x.terse", TERSE)], team_id=u.team.id, host="no spaces"), "host"),
        (post(client, h, [("x.terse", TERSE)], team_id="not-a-uuid"), "team_id"),
        (post(client, h, [("empty.terse", b"")], team_id=u.team.id), "file"),
    ]
    for r, field in cases:
        assert r.status_code == 422, r.text
        assert r.json()["detail"][0]["field"] == field, r.text
    urlenc = client.post("/api/v1/imports", data={"team_id": str(u.team.id)}, headers=h)
    assert urlenc.status_code == 415, urlenc.text
    assert count(session, Run, u.team.id) == 0


def test_who_may_import_by_multipart(client: TestClient, session: Session) -> None:
    member = create_user(session, role=Role.member)
    viewer = create_user(session, role=Role.viewer, team=member.team)
    stranger = create_user(session, role=Role.admin)
    files = [("x.terse", TERSE)]
    assert post(client, {}, files, team_id=member.team.id).status_code == 401
    assert post(client, viewer.headers, files, team_id=member.team.id).status_code == 403
    assert post(client, stranger.headers, files, team_id=member.team.id).status_code == 403
    assert count(session, Run, member.team.id) == 0


def test_hostile_bodies(client: TestClient, session: Session, monkeypatch: pytest.MonkeyPatch) -> None:
    u = create_user(session, role=Role.member)
    h = u.headers
    # too many file parts
    many = [(f"{i}.terse", TERSE) for i in range(MAX_FILES + 1)]
    r = post(client, h, many, team_id=u.team.id, dry_run="true")
    assert r.status_code == 422 and "Too many files" in r.json()["message"], r.text
    # a text field larger than a label can be
    r = post(client, h, [("x.terse", TERSE)], team_id=u.team.id, name="n" * 10_000)
    assert r.status_code == 422, r.text
    # a multipart content type without a boundary, and a body that is not multipart
    for body, ctype in (
        (b"--x\r\n", "multipart/form-data"),
        (b"plain text", "multipart/form-data; boundary=zz"),
    ):
        r = client.post(
            "/api/v1/imports",
            content=body,
            headers={**h, "Content-Type": ctype},
            params={"team_id": str(u.team.id)},
        )
        assert r.status_code == 422, (ctype, r.text)
    # a file that is not what it claims: a text file sent as CrystalDiskMark
    r = post(client, h, [("cdm.txt", b"hello\n" * 50)], team_id=u.team.id, format="crystaldiskmark")
    assert r.status_code == 422 and r.json()["detail"][0]["format"] == "crystaldiskmark", r.text
    # an oversized part: the whole request is held to IOWATT_IMPORT_MAX_BYTES, as the octet-stream path
    monkeypatch.setenv("IOWATT_IMPORT_MAX_BYTES", "1000")
    reset_settings_caches()
    try:
        r = post(client, h, [("big.terse", TERSE + b"\n" * 2000)], team_id=u.team.id)
        assert r.status_code == 413, r.text
    finally:
        monkeypatch.delenv("IOWATT_IMPORT_MAX_BYTES")
        reset_settings_caches()
    assert count(session, Run, u.team.id) == 0 and count(session, ImportFile, u.team.id) == 0


def test_formats_list_is_the_registry(client: TestClient, session: Session) -> None:
    u = create_user(session, role=Role.viewer)
    r = client.get("/api/v1/imports/formats", headers=u.headers)
    assert r.status_code == 200, r.text
    got = {f["format"]: f for f in r.json()}
    assert set(got) == set(registry.names()) == set(catalog.READS)
    assert got["crystaldiskmark"]["tool"] == "CrystalDiskMark" and "9" in got["crystaldiskmark"]["versions"]
    assert "json+" in got["fio-json"]["aliases"]
    assert all(f["versions"] and f["file_kinds"] for f in got.values())
    assert client.get("/api/v1/imports/formats").status_code == 401


VD = SAMPLES / "vdbench"


def test_a_vdbench_output_directory_is_one_run(client: TestClient, session: Session) -> None:
    """Issue 26: summary.html, totals.html and flatfile.html of one run (raw sd/wd) make one run,
    each file kept and downloadable byte for byte; the same set again is a duplicate."""
    u = create_user(session, role=Role.member)
    raw = [
        ("out/summary.html", (VD / "summary_raw_50407.html").read_bytes()),
        ("out/totals.html", (VD / "totals_raw_50407.html").read_bytes()),
        ("out/flatfile.html", (VD / "flatfile_raw_50407.html").read_bytes()),
    ]
    dry = post(client, u.headers, raw, team_id=u.team.id, dry_run="true")
    assert dry.status_code == 200, dry.text
    assert dry.json()["format"] == "vdbench-flatfile" and len(dry.json()["runs"]) == 1
    assert [j["name"] for j in dry.json()["runs"][0]["jobs"]] == [
        "rd1 xfersize=4k threads=8",
        "rd1 xfersize=64k threads=8",
    ]  # the summary's RD names merged into the flatfile's figures
    assert count(session, Run, u.team.id) == 0 and count(session, ImportFile, u.team.id) == 0
    r = post(client, u.headers, raw, team_id=u.team.id, host="lab-1")
    assert r.status_code == 201, r.text
    out = r.json()
    assert out["file_name"] == "flatfile.html" and out["size_bytes"] == sum(len(d) for _, d in raw)
    [run] = out["runs"]
    assert count(session, Run, u.team.id) == 1 and count(session, ImportFile, u.team.id) == 3
    src = f"/api/v1/runs/{run['run_id']}/source"
    got = client.get(src, headers=u.headers)
    assert got.content == raw[2][1]  # the flatfile is the run's source
    assert got.headers["X-Content-SHA256"] == hashlib.sha256(raw[2][1]).hexdigest()
    for name, data in raw:
        one = client.get(src, params={"file": name.split("/")[1]}, headers=u.headers)
        assert one.status_code == 200 and one.content == data, name
    # the run's origin lists its files, each with its download (the same bytes again)
    origin = client.get(f"/api/v1/runs/{run['run_id']}", headers=u.headers).json()["origin"]
    assert origin["source_url"] == src and origin["label"] == f"imported from vdbench {origin['version']}"
    assert sorted(f["file_name"] for f in origin["files"]) == ["flatfile.html", "summary.html", "totals.html"]
    for f in origin["files"]:
        got = client.get(f["url"], headers=u.headers)
        assert got.status_code == 200 and hashlib.sha256(got.content).hexdigest() == f["sha256"], f
    assert client.get(src, params={"file": "other.html"}, headers=u.headers).status_code == 404
    again = post(client, u.headers, list(reversed(raw)), team_id=u.team.id)
    assert again.status_code == 200 and again.json()["duplicate"] is True, again.text
    assert [x["run_id"] for x in again.json()["runs"]] == [run["run_id"]]
    assert count(session, Run, u.team.id) == 1 and count(session, ImportFile, u.team.id) == 3
    # a file-system (fsd/fwd) directory beside another format: the set is one run, the other its own (207)
    fs = [
        ("summary.html", (VD / "summary_fs_50406.html").read_bytes()),
        ("flatfile.html", (VD / "flatfile_fs_50406.html").read_bytes()),
    ]
    r = post(client, u.headers, [("a.terse", TERSE), *fs], team_id=u.team.id)
    assert r.status_code == 207, r.text
    files = r.json()["files"]
    assert [(f["format"], len(f["runs"])) for f in files] == [("fio-terse", 1), ("vdbench-flatfile", 1)]
    assert [j["name"] for j in files[1]["runs"][0]["jobs"]] == ["rd_fs"]
    assert count(session, Run, u.team.id) == 3 and count(session, ImportFile, u.team.id) == 6


def test_files_of_different_vdbench_runs_are_refused(client: TestClient, session: Session) -> None:
    u = create_user(session, role=Role.member)
    mixed = [
        ("summary.html", (VD / "summary_fs_50406.html").read_bytes()),
        ("flatfile.html", (VD / "flatfile_raw_50407.html").read_bytes()),
    ]
    r = post(client, u.headers, mixed, team_id=u.team.id)
    assert r.status_code == 422, r.text
    assert "summary.html and flatfile.html list different runs" in r.text
    assert count(session, Run, u.team.id) == 0 and count(session, ImportFile, u.team.id) == 0
    # summary.html and totals.html without a flatfile: one run, the same pair in another order a duplicate
    pair = [
        ("totals.html", (VD / "totals_raw_50407.html").read_bytes()),
        ("summary.html", (VD / "summary_raw_50407.html").read_bytes()),
    ]
    r = post(client, u.headers, pair, team_id=u.team.id)
    assert r.status_code == 201 and r.json()["format"] == "vdbench-summary", r.text
    assert r.json()["file_name"] == "summary.html"  # the first by name, whatever the order sent
    again = post(client, u.headers, pair[::-1], team_id=u.team.id)
    assert again.status_code == 200 and again.json()["duplicate"] is True, again.text
    assert [x["run_id"] for x in again.json()["runs"]] == [r.json()["runs"][0]["run_id"]]
    assert count(session, Run, u.team.id) == 1 and count(session, ImportFile, u.team.id) == 2
