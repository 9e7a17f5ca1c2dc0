"""fio job files on the server (issue 24, ADR 0029): a workload given as a job file's text is kept
byte for byte and as the engine's parse of it, shown back verbatim; a file the engine refuses is a
422 at the text naming the line and option; the server's parse runs --untrusted in an empty
environment (include and ${VAR} refused, the server's secrets out of reach); a run is judged by the
host's rules as the block job it is, the job file's filename and directory replaced by the target.

The real engine reads the job files, behind a recording wrapper (tests/jobfile_engine.py) that shows
how the server called it."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError
from sqlalchemy.orm import Session

from backend.config import get_settings
from backend.models import Run, RunStatus, Workload
from backend.workload import facts
from backend.workload.schemas import WorkloadSpec, load_spec
from tests.factories import INVENTORY, UserCtx, create_agent, create_user
from tests.jobfile_engine import REAL_ENGINE, calls, write_recording_engine

# what a storage engineer brings: comments, a [global] section, a bare flag, a device path, CRLF
JOBFILE = (
    "; fio's examples style\r\n"
    "[global]\r\n"
    "rw=randread\r\n"
    "bs=4k\r\n"
    "filename=/dev/sdb\r\n"
    "size=1m\r\n"
    "\r\n"
    "[reader]\r\n"
    "runtime=2\r\n"
    "time_based=1\r\n"
    "   \r\n"
    "[writer]\r\n"
    "stonewall\r\n"
    "rw=randwrite\r\n"
    "iodepth=4\r\n"
)


@pytest.fixture
def jobfile_engine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The real engine behind a recording wrapper as the server's IOWATT_ENGINE_PATH (a fresh parse
    cache)."""
    path = write_recording_engine(tmp_path / "engine")
    monkeypatch.setattr(get_settings(), "engine_path", str(path))
    monkeypatch.setattr(facts, "_cache", type(facts._cache)())
    return path


def _workload(client: TestClient, u: UserCtx, text: str, name: str = "jf", **extra: Any) -> Any:
    spec = {"kind": "jobfile", "jobfile": {"text": text, **extra}}
    return client.post(
        "/api/v1/workloads", json={"team_id": str(u.team.id), "name": name, "spec": spec}, headers=u.headers
    )


def _field(r: Any) -> tuple[str, str]:
    assert r.status_code == 422, r.text
    d = r.json()["detail"][0]
    return d["field"], d["message"]


def _agent(session: Session, u: UserCtx, **limits: Any) -> Any:
    inv = json.loads(json.dumps(INVENTORY))
    inv["capabilities"]["workload_kinds"].append("jobfile")
    inv["policy"]["targets"].append({"path": "/srv/data.bin", "kind": "file", "writable": False})
    if limits:
        inv["policy"]["limits"] = limits
    return create_agent(session, team=u.team, inventory=inv)


def test_a_job_file_is_kept_byte_for_byte_and_as_the_engines_jobs(
    client: TestClient, session: Session, jobfile_engine: Path
) -> None:
    u = create_user(session)
    r = _workload(client, u, JOBFILE)
    assert r.status_code == 201, r.text
    spec = r.json()["spec"]
    assert spec["kind"] == "jobfile" and spec["jobs"] == [] and spec["facts"] is None
    assert spec["jobfile"]["text"] == JOBFILE  # CRLF, blank lines and spaces as given
    parsed = spec["jobfile"]["parsed"]
    assert parsed["global_options"] == {"rw": "randread", "bs": "4k", "filename": "/dev/sdb", "size": "1m"}
    assert [(j["name"], j["group"]) for j in parsed["jobs"]] == [("reader", 0), ("writer", 1)]
    # the engine's jobs carry [global]'s options under their own; a bare flag reads as 1
    assert parsed["jobs"][1]["options"] == {
        "rw": "randwrite",
        "bs": "4k",
        "filename": "/dev/sdb",
        "size": "1m",
        "stonewall": "1",
        "iodepth": "4",
    }
    assert parsed["replaced"] == ["global: filename=/dev/sdb"]
    row = session.get(Workload, uuid.UUID(r.json()["id"]))
    assert row is not None and row.spec["jobfile"]["text"] == JOBFILE and row.spec["spec_version"] == 8
    again = client.get(f"/api/v1/workloads/{row.id}", headers=u.headers).json()
    assert again["spec"]["jobfile"]["text"] == JOBFILE
    # the server parsed it untrusted, in an environment of its own
    (call,) = [c for c in calls(jobfile_engine) if "--parse-only" in c["argv"]]
    assert call["argv"][:2] == ["--untrusted", "--parse-only"]
    assert set(call["env"]) <= {"PATH", "LC_ALL", "PWD"}  # PWD: the interpreter's own


def test_a_parse_sent_by_the_client_is_replaced(
    client: TestClient, session: Session, jobfile_engine: Path
) -> None:
    u = create_user(session)
    lie = {"global_options": {}, "jobs": [{"name": "x", "group": 0, "options": {}}], "replaced": []}
    r = _workload(client, u, "[a]\nrw=read\nsize=4k\n", parsed=lie)
    assert r.status_code == 201, r.text
    assert [j["name"] for j in r.json()["spec"]["jobfile"]["parsed"]["jobs"]] == ["a"]


@pytest.mark.parametrize(
    ("text", "line", "words"),
    [
        ("[a]\nrw=read\nbogus=1\n", "line 3: bogus: ", "unknown option"),
        ("[a]\ninclude /etc/shadow\n", "line 2: include: ", "refused"),
        ("[a]\nsize=${DATABASE_URL}\n", "line 2: size: ", "${DATABASE_URL}"),
    ],
)
def test_a_file_the_engine_refuses_is_a_422_naming_the_line_and_option(
    client: TestClient, session: Session, jobfile_engine: Path, text: str, line: str, words: str
) -> None:
    u = create_user(session)
    field, message = _field(_workload(client, u, text))
    assert field == "spec.jobfile.text"
    assert message.startswith(line) and words in message, message
    assert str(jobfile_engine.parent) not in message and "/tmp" not in message  # no server path shown
    field, message = _field(client.post("/api/v1/workloads/jobfile", json={"text": text}, headers=u.headers))
    assert field == "text" and message.startswith(line), message


def test_the_servers_secrets_never_reach_the_engine(
    client: TestClient, session: Session, jobfile_engine: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Even an engine that expanded ${VAR} (one without --untrusted) finds nothing of the server's."""
    monkeypatch.setenv("IOWATT_TEST_SECRET", "hunter2")
    u = create_user(session)
    r = client.post("/api/v1/workloads/jobfile", json={"text": "[a]\nrw=read\n"}, headers=u.headers)
    assert r.status_code == 200, r.text
    for call in calls(jobfile_engine):
        assert "hunter2" not in json.dumps(call["env"])


def test_the_parse_route_shows_the_jobs_and_stores_nothing(
    client: TestClient, session: Session, jobfile_engine: Path
) -> None:
    u = create_user(session)
    before = session.query(Workload).count()
    r = client.post("/api/v1/workloads/jobfile", json={"text": JOBFILE}, headers=u.headers)
    assert r.status_code == 200, r.text
    assert [j["name"] for j in r.json()["jobs"]] == ["reader", "writer"]
    assert r.json()["replaced"] == ["global: filename=/dev/sdb"]
    assert session.query(Workload).count() == before
    assert client.post("/api/v1/workloads/jobfile", json={"text": JOBFILE}).status_code == 401
    for bad in ({"text": ""}, {"text": "   \n"}, {"text": "x" * (64 * 1024 + 1)}, {"text": "a\x00b"}, {}):
        assert client.post("/api/v1/workloads/jobfile", json=bad, headers=u.headers).status_code == 422


def test_a_huge_job_file_is_refused_before_the_engine_sees_it(
    client: TestClient, session: Session, jobfile_engine: Path
) -> None:
    u = create_user(session)
    huge = "[a]\n" + "; padding\n" * 7000  # 70 KB
    field, message = _field(_workload(client, u, huge))
    assert field == "spec.jobfile.text" and "65536" in message
    multibyte = "[a]\n;" + "é" * 33_000  # under 64 Ki characters, over 64 KiB
    assert _field(_workload(client, u, multibyte))[0] == "spec.jobfile.text"
    assert calls(jobfile_engine) == []


def test_a_run_of_a_job_file_is_judged_as_the_block_job_it_is(
    client: TestClient, session: Session, jobfile_engine: Path
) -> None:
    u = create_user(session)
    a = _agent(session, u, max_threads=8, max_files=5000)
    body = {"agent_id": str(a.agent.id), "target_path": "/srv/bench"}
    ok = client.post(
        "/api/v1/runs",
        json={**body, "workload": {"kind": "jobfile", "jobfile": {"text": JOBFILE}}},
        headers=u.headers,
    )
    assert ok.status_code == 201, ok.text
    run = session.get(Run, uuid.UUID(ok.json()["id"]))
    assert run is not None and run.name.startswith("reader+writer on ")
    spec = load_spec(run.workload_spec)
    assert spec.engine_job() == {"mode": "jobfile", "text": JOBFILE}  # the text, never the parse
    assert run.workload_spec["jobfile"]["parsed"]["jobs"][0]["name"] == "reader"
    # a numjobs bomb the engine takes (it caps numjobs at 4096 itself): the host's max_threads
    bomb = "[a]\nrw=read\nsize=4k\nnumjobs=1000\n"
    r = client.post(
        "/api/v1/runs",
        json={**body, "workload": {"kind": "jobfile", "jobfile": {"text": bomb}}},
        headers=u.headers,
    )
    assert r.status_code == 422 and r.json()["error"] == "host_policy_refused", r.text
    d = r.json()["detail"][0]
    assert d["field"] == "workload.jobfile.text" and d["rule"] == "limit.threads" and "[a]" in d["message"]
    # options the host does not allow a server to send (the engine's facts, ADR 0030): agent-only
    # ones and paths; and an option the engine lets a server send, judged by the host's limits
    for line, rule in (
        ("destructive=1", "option.not_allowed"),
        ("write_bw_log=/etc/x", "option.not_allowed"),
        ("verify_dump=1", "option.not_allowed"),
        ("filename_format=/etc/$jobname", "option.not_allowed"),
        ("numjobs=2\nnrfiles=3000", "limit.files"),  # under the engine's own cap of 4096 files
    ):
        text = f"[a]\nrw=read\nsize=4k\n{line}\n"
        r = client.post(
            "/api/v1/runs",
            json={**body, "workload": {"kind": "jobfile", "jobfile": {"text": text}}},
            headers=u.headers,
        )
        assert r.status_code == 422, (line, r.text)
        detail = r.json()["detail"][0]
        assert detail["field"] == "workload.jobfile.text" and detail["rule"] == rule, (line, detail)
        assert line.split("=")[0].split("\n")[-1] in detail["message"] or "nrfiles" in detail["message"]
    # a job file writing to a file target the host lets runs only read
    writes = {"kind": "jobfile", "jobfile": {"text": "[w]\nrw=write\nsize=4k\nfilename=/etc/passwd\n"}}
    r = client.post(
        "/api/v1/runs", json={**body, "target_path": "/srv/data.bin", "workload": writes}, headers=u.headers
    )
    assert r.status_code == 422 and r.json()["detail"][0]["rule"] == "file.read_only", r.text


def test_a_job_file_runs_as_written(client: TestClient, session: Session, jobfile_engine: Path) -> None:
    u = create_user(session)
    a = _agent(session, u)
    body = {
        "agent_id": str(a.agent.id),
        "target_path": "/srv/bench",
        "workload": {"kind": "jobfile", "jobfile": {"text": JOBFILE}},
    }
    assert (
        _field(client.post("/api/v1/runs", json={**body, "shorten": 0.5}, headers=u.headers))[0] == "shorten"
    )
    assert _field(client.post("/api/v1/runs", json={**body, "scale": 2}, headers=u.headers))[0] == "scale"


def test_an_agent_that_does_not_run_job_files_is_asked_to_upgrade(
    client: TestClient, session: Session, jobfile_engine: Path
) -> None:
    u = create_user(session)
    a = create_agent(session, team=u.team)  # reports block, postmark, vdbench, tpch, heap_btree
    body = {
        "agent_id": str(a.agent.id),
        "target_path": "/srv/bench",
        "workload": {"kind": "jobfile", "jobfile": {"text": JOBFILE}},
    }
    field, message = _field(client.post("/api/v1/runs", json=body, headers=u.headers))
    assert field == "workload.kind" and "upgrade the agent" in message


def test_timeouts_and_identity_come_from_the_parse() -> None:
    def spec(text: str, jobs: list[dict[str, Any]], glob: dict[str, str] | None = None) -> WorkloadSpec:
        parsed = {"global_options": glob or {}, "jobs": jobs, "replaced": []}
        return WorkloadSpec.model_validate({"kind": "jobfile", "jobfile": {"text": text, "parsed": parsed}})

    two = [
        {"name": "a", "group": 0, "options": {"runtime": "10"}},
        {"name": "b", "group": 0, "options": {"runtime": "20", "ramp_time": "5"}},
    ]
    # one group: its longest job (25 s), x1.5, plus 10 s a job and 300 s
    assert spec("x", two).timeout_s() == int(25 * 1.5 + 20 + 300)
    apart = [two[0], {**two[1], "group": 1}]
    assert spec("x", apart).timeout_s() == int(35 * 1.5 + 20 + 300)
    size_bound = [{"name": "a", "group": 0, "options": {"size": "1g"}}]
    assert spec("x", size_bound).timeout_s() == int(3600 * 1.5 + 10 + 300)
    # comments and spacing do not make another workload; the target's replacements do not either
    assert spec("x", two).identity_jobs() == spec("; other\nx", two, {"filename": "/dev/sdz"}).identity_jobs()
    assert spec("x", two).identity_jobs() != spec("x", apart).identity_jobs()


def test_the_real_engine_parses_and_refuses_like_the_contract(
    client: TestClient, session: Session, jobfile_engine: Path
) -> None:
    assert REAL_ENGINE.exists()
    u = create_user(session)
    r = _workload(client, u, JOBFILE)
    assert r.status_code == 201, r.text
    parsed = r.json()["spec"]["jobfile"]["parsed"]
    assert [(j["name"], j["group"], j["line"]) for j in parsed["jobs"]] == [
        ("reader", 0, 8),
        ("writer", 1, 12),
    ]
    assert parsed["replaced"] == ["global: filename=/dev/sdb"]  # once: the jobs have [global]'s
    assert "/tmp" not in json.dumps(parsed)  # the server's copy of the text is named nowhere
    assert r.json()["spec"]["jobfile"]["text"] == JOBFILE
    field, message = _field(_workload(client, u, "[a]\nrw=read\nbogus=1\n", name="bad"))
    assert field == "spec.jobfile.text" and message.startswith("line 3: bogus: "), message
    field, message = _field(_workload(client, u, "[a]\nsize=${HOME}\n", name="env"))
    assert message.startswith("line 2: "), message


@given(
    st.text(alphabet=st.characters(blacklist_characters="\x00", blacklist_categories=("Cs",)), max_size=300)
)
@settings(max_examples=200, deadline=None)
def test_any_text_is_kept_byte_for_byte_or_refused_in_words(text: str) -> None:
    """Whitespace, CRLF, tabs, any Unicode: what is accepted is stored and read back unchanged;
    what is refused (empty or blank) is refused at the text."""
    from backend.workload.schemas import stored_spec

    try:
        spec = WorkloadSpec.model_validate({"kind": "jobfile", "jobfile": {"text": text}})
    except ValidationError as exc:
        assert not text.strip()
        assert exc.errors()[0]["loc"][:2] == ("jobfile", "text")
        return
    assert text.strip()
    assert spec.jobfile is not None and spec.jobfile.text == text
    again = load_spec(json.loads(json.dumps(stored_spec(spec))))
    assert again.jobfile is not None and again.jobfile.text.encode() == text.encode()
    assert spec.engine_job() == {"mode": "jobfile", "text": text}


FIO_EXAMPLES = Path(__file__).resolve().parents[1] / "engine" / "fio-examples"


def test_a_job_file_from_fios_examples_with_new_options_is_parsed_queued_and_judged(
    client: TestClient, session: Session, jobfile_engine: Path
) -> None:
    """fio's flow.fio (flow, flow_sleep, norandommap, thread, time_based, iodepth 256) and
    basic-verify.fio (verify=crc32c) as a storage engineer brings them: the parse route shows their
    jobs, a run of each is queued on a host whose limits they fit (the engine's facts let a server
    send every option they use), and a host bounding bytes written refuses flow.fio's unpaced
    time-based writer at the text, naming its section."""
    u = create_user(session)
    roomy = _agent(session, u, max_threads=8, max_iodepth=256)
    for name in ("flow", "basic-verify"):
        text = (FIO_EXAMPLES / f"{name}.fio").read_text()
        parsed = client.post(
            "/api/v1/workloads/jobfile", json={"text": text}, headers=u.headers
        )  # nothing stored
        assert parsed.status_code == 200, parsed.text
        jobs = parsed.json()["jobs"]
        assert jobs and all(j["options"] for j in jobs)
        body = {"agent_id": str(roomy.agent.id), "target_path": "/srv/bench"}
        r = client.post(
            "/api/v1/runs",
            json={**body, "workload": {"kind": "jobfile", "jobfile": {"text": text}}},
            headers=u.headers,
        )
        assert r.status_code == 201, (name, r.text)
        run = session.get(Run, uuid.UUID(r.json()["id"]))
        assert (
            run is not None
            and run.status == RunStatus.queued
            and run.workload_spec["jobfile"]["text"] == text
        )
    bounded = _agent(session, u, max_threads=8, max_iodepth=256, max_bytes_written=1 << 30)
    text = (FIO_EXAMPLES / "flow.fio").read_text()
    r = client.post(
        "/api/v1/runs",
        json={"agent_id": str(bounded.agent.id), "target_path": "/srv/bench",
              "workload": {"kind": "jobfile", "jobfile": {"text": text}}},
        headers=u.headers,
    )  # fmt: skip
    assert r.status_code == 422 and r.json()["error"] == "host_policy_refused", r.text
    detail = r.json()["detail"][0]
    assert (detail["field"], detail["rule"]) == ("workload.jobfile.text", "limit.bytes_written")
    assert "[job2] job 0 writes without a bound" in detail["message"]
