"""File workload results on the server (issue 14 §4): ingest, the run read's file_workload, the
per-interval series, the cache_resident flag, compare and the two seed views.

Every engine document here is real: the built engine runs the workload (the presets scaled down, on
tmpfs) and its JSON is uploaded through the agent API as an agent would; figures are checked against
that document, never against numbers written here.
"""

from __future__ import annotations

import atexit
import contextlib
import csv
import fcntl
import hashlib
import io
import json
import os
import re
import shutil
import subprocess
import tempfile
import uuid
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select
from sqlalchemy.orm import Session

from backend.models import ResultJob, Workload
from backend.power import service as power_service
from backend.result.summary import MAX_FILE_POINTS
from backend.run import service as run_service
from backend.workload.builtin import BUILTINS
from backend.workload.schemas import VdbenchSpec, WorkloadSpec, stored_spec
from tests.backend.test_energy import power_doc
from tests.factories import INVENTORY, AgentCtx, UserCtx, create_agent, create_run, create_user
from tests.services import in_the_background
from tests.stack import ENGINE

PM_SCALE = 0.002  # postmark-low: 20 files of 327 KiB, 100 transactions
VD_SCALE = {"vdbench-big": 0.0001, "vdbench-small": 0.0002}  # 65 files of 512 KiB; 320 of 1 KiB


def _engine(args: list[str], *, timed: bool = False) -> dict[str, Any]:
    """The engine's document for `args`; a `timed` run (vdbench: flat out for its elapsed seconds)
    on one CPU at the lowest priority (tests/services.py `in_the_background`)."""
    with tempfile.TemporaryDirectory(prefix="iowatt-file-results-", dir="/dev/shm") as tmp:
        cmd = [str(ENGINE), *args, f"--directory={tmp}", "--output-format=json"]
        r = subprocess.run(
            in_the_background(cmd) if timed else cmd,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert r.returncode == 0, r.stderr
        assert not list(Path(tmp).iterdir())  # the engine removed what it made
    doc: dict[str, Any] = json.loads(r.stdout)
    return doc


def postmark_spec(preset: str = "postmark-low", scale: float = PM_SCALE) -> WorkloadSpec:
    return BUILTINS[preset][1].scaled(scale)


def _once_per_session(key: str, make: Callable[[], str]) -> str:
    """`make()`, run once per test session: the test processes (xdist spreads a preset's tests,
    and test_views' that reuse these documents, over all of them) take what the first one ran from
    a file under a lock (~4.5 CPU-s per vdbench document). Each process removes the directory when
    it exits (a process still testing then runs the engine itself)."""
    uid = os.environ.get("PYTEST_XDIST_TESTRUNUID")
    if not uid:
        return make()
    d = Path(tempfile.gettempdir()) / f"iowatt-engine-docs-{uid}"
    if not _CLEANUP:
        _CLEANUP.append(d)
        atexit.register(shutil.rmtree, d, True)
    d.mkdir(exist_ok=True)
    path = d / (hashlib.sha256(key.encode()).hexdigest()[:24] + ".json")
    with open(path.with_suffix(".lock"), "a") as lock:  # noqa: PTH123
        fcntl.flock(lock, fcntl.LOCK_EX)  # the others wait for the one running it
        with contextlib.suppress(FileNotFoundError):
            return path.read_text()
        doc = make()
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(doc)
        tmp.replace(path)
        return doc


_CLEANUP: list[Path] = []


@cache
def postmark_json(preset: str = "postmark-low", seed: int = 42) -> str:
    spec = postmark_spec(preset)
    assert spec.postmark is not None
    pm = spec.postmark.model_copy(update={"seed": seed}) if seed != 42 else spec.postmark

    def run() -> str:
        with tempfile.NamedTemporaryFile("w", suffix=".pm", dir="/dev/shm") as f:
            f.write(pm.commands())
            f.flush()
            return json.dumps(_engine([f"--postmark={f.name}"]))

    return _once_per_session(f"postmark {ENGINE} {pm.commands()}", run)


def vdbench_spec(preset: str, *, parameters: str | None = None) -> WorkloadSpec:
    spec = BUILTINS[preset][1]
    assert spec.vdbench is not None
    vd = spec.vdbench.model_copy(update={"scale": VD_SCALE.get(preset, 0.001), "elapsed_s": 3})
    if parameters is not None:
        vd = VdbenchSpec(parameters=parameters, scale=1.0, elapsed_s=3)
    return spec.model_copy(update={"vdbench": vd})


@cache
def vdbench_json(preset: str, parameters: str | None = None) -> str:
    vd = vdbench_spec(preset, parameters=parameters).vdbench
    assert vd is not None
    args = [f"--scale={vd.scale}", f"--elapsed={vd.elapsed_s}", "--interval=1"]

    def run() -> str:
        with tempfile.NamedTemporaryFile("w", suffix=".vdb", dir="/dev/shm") as f:
            f.write(vd.parameters)
            f.flush()
            return json.dumps(_engine([f"--vdbench={f.name}", *args], timed=True))

    return _once_per_session(f"vdbench {ENGINE} {args} {vd.parameters}", run)


def upload_run(
    client: TestClient,
    session: Session,
    a: AgentCtx,
    spec: WorkloadSpec,
    doc: dict[str, Any],
    *,
    preset: str | None = None,
    target: str = "/dev/shm/x",
    power: dict[str, Any] | None = None,
) -> uuid.UUID:
    """A run of `spec` leased, started and its real engine document uploaded through the agent API."""
    wl = (
        session.scalar(select(Workload).where(Workload.name == preset, Workload.builtin.is_(True)))
        if preset
        else None
    )
    run = create_run(session, agent=a.agent, target_path=target, workload_id=wl.id if wl else None)
    run.workload_spec = stored_spec(spec)
    session.flush()
    run_service.dispatch(session, run_id=run.id)
    lease = client.post(f"/api/v1/agents/{a.agent.id}/lease?wait_s=0", headers=a.headers).json()["lease"]
    lid = lease["lease_id"]
    r = client.post(f"/api/v1/runs/{run.id}/start", json={"lease_id": lid}, headers=a.headers)
    assert r.status_code == 200, r.text
    body = {
        "lease_id": lid,
        "upload_id": str(uuid.uuid4()),
        "engine_result": doc,
        "engine_exit_code": 0,
        "started_at": "2026-11-23T10:00:00Z",
        "finished_at": "2026-11-23T10:00:25Z",
        "power": power,
    }
    r = client.put(f"/api/v1/runs/{run.id}/result", json=body, headers=a.headers)
    assert r.status_code == 201, r.text
    return run.id


def get_run(client: TestClient, u: UserCtx, rid: uuid.UUID) -> dict[str, Any]:
    r = client.get(f"/api/v1/runs/{rid}", headers=u.headers)
    assert r.status_code == 200, r.text
    data: dict[str, Any] = r.json()
    return data


# --- ingest and the run read ----------------------------------------------------------------------


def test_a_postmark_result_is_stored_with_its_job_row_and_read_in_brief(
    client: TestClient, session: Session
) -> None:
    u = create_user(session)
    a = create_agent(session, team=u.team)
    doc = json.loads(postmark_json())
    rid = upload_run(client, session, a, postmark_spec(), doc, preset="postmark-low")
    pm, job = doc["postmark"], doc["jobs"][0]

    row = session.scalar(select(ResultJob).where(ResultJob.run_id == rid))
    assert row is not None
    # jobs[0] counts system calls; its latencies have N = 0: unknown, never 0 ns
    assert row.rw == "postmark" and row.name == "postmark" and row.bs_bytes == 4096
    assert row.read_total_ios == pm["syscalls"]["read"] == job["read"]["total_ios"] > 0
    assert row.write_total_ios == pm["syscalls"]["write"] > 0
    assert row.read_io_bytes == pm["bytes_read"] and row.write_io_bytes == pm["bytes_written"]
    assert job["read"]["clat_ns"]["N"] == 0
    assert row.read_lat_mean_ns is None and row.read_clat_p99_ns is None and row.read_clat_max_ns is None
    assert row.runtime_ns == job["iowatt"]["runtime_ns"] == pm["elapsed_ns"]

    run = get_run(client, u, rid)
    assert run["jobs"][0]["rw"] == "postmark" and run["jobs"][0]["read"]["clat_p99_ns"] is None
    fw = run["file_workload"]
    assert fw["mode"] == "postmark" and fw["scale"] == PM_SCALE
    assert [o["name"] for o in fw["ops"]] == ["create", "read", "append", "delete"]
    for o in fw["ops"]:
        src = pm["ops"][o["name"]]
        assert o["ops"] == src["ops"] and o["bytes"] is None
        if src["lat_ns"]["N"] == 0:  # fixed-size files: PostMark appends nothing at the high bound
            assert o["name"] == "append" and o["ops"] == 0 and o["resp_mean_ns"] is None
            continue
        assert o["resp_p99_ns"] == src["lat_ns"]["percentile"]["99.000000"]
        assert o["resp_mean_ns"] == pytest.approx(src["lat_ns"]["mean"])
        assert o["resp_max_ns"] == src["lat_ns"]["max"]
    rates = {o["name"]: o["rate_per_s"] for o in fw["ops"]}
    assert rates["read"] == pytest.approx(pm["rates"]["read_per_s"])
    assert rates["create"] == pytest.approx(pm["rates"]["created_per_s"])
    assert fw["elapsed_ns"] == pm["elapsed_ns"]
    assert fw["read_bw_bytes"] == pytest.approx(pm["bytes_read"] / (pm["elapsed_ns"] / 1e9))
    report = fw["postmark"]
    assert report["transactions"] == pm["transactions"] == 100 and report["number"] == 20
    assert report["files_created"] == pm["files_created"] == pm["files_deleted"]
    assert report["creation_ns"] + report["transactions_ns"] + report["deletion_ns"] == pm["elapsed_ns"]
    assert fw["dataset_bytes"] == 20 * 327 * 1024 and fw["files"] == 20 and fw["o_direct"] is False
    n_ops = sum(o["ops"] for o in fw["ops"])
    cpu_ns = (job["usr_cpu"] + job["sys_cpu"]) / 100 * pm["elapsed_ns"]
    assert fw["cpu_ns_per_op"] == pytest.approx(cpu_ns / n_ops)
    assert fw["vdbench"] is None and fw["host_mem_bytes"] == doc["iowatt"]["host"]["mem_bytes"]
    # no intervals for postmark: its phases are in the brief
    series = client.get(f"/api/v1/runs/{rid}/series", headers=u.headers).json()
    assert series["file_intervals"] is None
    # the runs list carries the same brief
    page = client.get("/api/v1/runs", headers=u.headers).json()
    assert next(x for x in page["items"] if x["id"] == str(rid))["file_workload"] == fw


def test_a_vdbench_result_is_stored_with_its_job_row_read_in_brief_and_per_interval(
    client: TestClient, session: Session
) -> None:
    u = create_user(session)
    a = create_agent(session, team=u.team)
    doc = json.loads(vdbench_json("vdbench-small"))
    rid = upload_run(client, session, a, vdbench_spec("vdbench-small"), doc, preset="vdbench-small")
    fs, job = doc["fileset"], doc["jobs"][0]
    total = fs["total"]

    row = session.scalar(select(ResultJob).where(ResultJob.run_id == rid))
    assert row is not None
    assert row.rw == "vdbench" and row.name == "rd1" and row.bs_bytes == 1024
    assert row.read_total_ios == total["ops"]["read"]["ops"] > 0
    assert row.write_total_ios == total["ops"]["write"]["ops"] > 0
    assert row.read_clat_p99_ns == total["ops"]["read"]["resp_ns"]["percentile"]["99.000000"]
    assert row.read_lat_mean_ns == pytest.approx(total["ops"]["read"]["resp_ns"]["mean"])
    assert row.runtime_ns == job["iowatt"]["runtime_ns"] == fs["measured_ns"]

    fw = get_run(client, u, rid)["file_workload"]
    assert fw["mode"] == "vdbench" and fw["scale"] == fs["scale"] == VD_SCALE["vdbench-small"]
    assert [o["name"] for o in fw["ops"]][:4] == ["read", "write", "open", "close"]
    for o in fw["ops"]:
        src = total["ops"][o["name"]]
        assert (o["ops"], o["bytes"]) == (src["ops"], src["bytes"])
        assert o["rate_per_s"] == pytest.approx(src["rate"])
        assert o["resp_p50_ns"] == src["resp_ns"]["percentile"]["50.000000"]
    assert fw["read_bw_bytes"] == pytest.approx(total["read_bw_bytes"])
    assert fw["host_cpu_total_pct"] == pytest.approx(total["cpu"]["total_pct"])
    assert fw["cpu_ns_per_op"] == pytest.approx(total["cpu"]["process_ns_per_op"])
    assert fw["dataset_bytes"] == sum(f["total_bytes"] for f in fs["fsd"]) > 0
    assert fw["files"] == 64 * 5 and fw["directories"] == 64
    vd = fw["vdbench"]
    assert vd["intervals"] == len(fs["intervals"]) == 3 and vd["fwd"][0]["threads"] == 64
    assert vd["fsd"][0]["total_files"] == fw["files"] and vd["ops_total"] == total["ops_total"]

    fi = client.get(f"/api/v1/runs/{rid}/series", headers=u.headers).json()["file_intervals"]
    assert fi["mode"] == "vdbench" and fi["merged"] == 1 and fi["intervals"] == 3
    assert [p["t_s"] for p in fi["points"]] == [i["end_ns"] / 1e9 for i in fs["intervals"]]
    for p, src in zip(fi["points"], fs["intervals"], strict=True):
        ops = {o["name"]: o for o in p["ops"]}
        assert ops["read"]["rate_per_s"] == pytest.approx(src["ops"]["read"]["rate"])
        assert ops["read"]["resp_p99_ns"] == src["ops"]["read"]["resp_ns"]["percentile"]["99.000000"]
        assert p["read_bw_bytes"] == pytest.approx(src["read_bw_bytes"])


def test_a_long_runs_intervals_are_merged_to_at_most_2000_points(
    client: TestClient, session: Session
) -> None:
    """A real run's intervals repeated to 4,500 (a 37 h run at 30 s): 2,000 points at most, each
    merging 3 intervals (rates averaged, response means weighted by operations, p99 the worst)."""
    u = create_user(session)
    a = create_agent(session, team=u.team)
    doc = json.loads(vdbench_json("vdbench-small"))
    real = doc["fileset"]["intervals"]
    step = real[0]["duration_ns"]
    doc["fileset"]["intervals"] = [
        {**real[k % len(real)], "index": k + 1, "end_ns": (k + 1) * step} for k in range(4500)
    ]
    rid = upload_run(client, session, a, vdbench_spec("vdbench-small"), doc)
    fi = client.get(f"/api/v1/runs/{rid}/series", headers=u.headers).json()["file_intervals"]
    assert fi["intervals"] == 4500 and fi["merged"] == 3 and len(fi["points"]) == 1500 <= MAX_FILE_POINTS
    first = {o["name"]: o for o in fi["points"][0]["ops"]}["read"]
    src = [real[k]["ops"]["read"] for k in range(3)]
    assert first["rate_per_s"] == pytest.approx(sum(s["rate"] for s in src) / 3)
    assert first["resp_p99_ns"] == max(s["resp_ns"]["percentile"]["99.000000"] for s in src)
    weighted = sum(s["ops"] * s["resp_ns"]["mean"] for s in src) / sum(s["ops"] for s in src)
    assert first["resp_mean_ns"] == pytest.approx(weighted)
    assert fi["points"][-1]["t_s"] == pytest.approx(4500 * step / 1e9)
    assert get_run(client, u, rid)["file_workload"]["vdbench"]["intervals"] == 4500


def test_a_file_document_with_a_bad_figure_is_a_422_naming_it(client: TestClient, session: Session) -> None:
    u = create_user(session)
    a = create_agent(session, team=u.team)
    doc = json.loads(postmark_json())
    doc["postmark"]["files_read"] = -1
    run = create_run(session, agent=a.agent, target_path="/dev/shm/x")
    run.workload_spec = stored_spec(postmark_spec())
    session.flush()
    run_service.dispatch(session, run_id=run.id)
    lid = client.post(f"/api/v1/agents/{a.agent.id}/lease?wait_s=0", headers=a.headers).json()["lease"][
        "lease_id"
    ]
    client.post(f"/api/v1/runs/{run.id}/start", json={"lease_id": lid}, headers=a.headers)
    body = {
        "lease_id": lid,
        "upload_id": str(uuid.uuid4()),
        "engine_result": doc,
        "engine_exit_code": 0,
        "started_at": "2026-11-23T10:00:00Z",
        "finished_at": "2026-11-23T10:00:25Z",
    }
    r = client.put(f"/api/v1/runs/{run.id}/result", json=body, headers=a.headers)
    assert r.status_code == 422, r.text
    assert "postmark.files_read" in json.dumps(r.json())


# --- validity: cache_resident ---------------------------------------------------------------------


def _flags(client: TestClient, u: UserCtx, rid: uuid.UUID) -> dict[str, str]:
    c = client.get(f"/api/v1/compare?runs={rid}", headers=u.headers)
    assert c.status_code == 200, c.text
    return {f["flag"]: f["message"] for f in c.json()["validity"][str(rid)]}


def test_a_file_set_that_fits_in_ram_is_cache_resident(client: TestClient, session: Session) -> None:
    u = create_user(session)
    a = create_agent(session, team=u.team)  # the inventory names no RAM: the engine's reading counts
    doc = json.loads(vdbench_json("vdbench-big"))
    rid = upload_run(client, session, a, vdbench_spec("vdbench-big"), doc)
    flags = _flags(client, u, rid)
    assert "cache_resident" in flags and "page cache" in flags["cache_resident"]
    assert "O_DIRECT" in flags["cache_resident"]
    assert doc["fileset"]["fsd"][0]["total_bytes"] < doc["iowatt"]["host"]["mem_bytes"]
    # sizes in the page's units (MiB, GiB), as the figures they sit beside: never "0.0067 GB"
    assert re.search(r"\(\d[\d.]* (KiB|MiB)\) fits", flags["cache_resident"]), flags["cache_resident"]
    assert re.search(r"host RAM \d[\d.]* GiB", flags["cache_resident"]), flags["cache_resident"]
    # before a result, from the engine's facts the server stored with the run
    # (the host's RAM from the agent's inventory: no engine reading yet)
    known = create_agent(session, team=u.team, inventory={**INVENTORY, "mem_bytes": 8 * 1024**3})
    queued = create_run(session, agent=known.agent, target_path="/dev/shm/x")
    spec = vdbench_spec("vdbench-big")
    facts = {
        "mode": "vdbench",
        "threads": 64,
        "max_block_bytes": 131072,
        "bytes_written_max": None,
        "runtime_s_max": 3.0,
        "dataset_bytes": doc["fileset"]["fsd"][0]["total_bytes"],
        "files": 65,
        "directories": 5,
        "o_direct": False,
    }
    queued.workload_spec = {**stored_spec(spec), "facts": facts}
    session.flush()
    assert "cache_resident" in _flags(client, u, queued.id)


def test_a_file_set_larger_than_ram_or_opened_o_direct_is_not_cache_resident(
    client: TestClient, session: Session
) -> None:
    u = create_user(session)
    doc = json.loads(vdbench_json("vdbench-big"))
    dataset = doc["fileset"]["fsd"][0]["total_bytes"]
    small_ram = create_agent(session, team=u.team, inventory={"hostname": "h", "mem_bytes": dataset // 2})
    rid = upload_run(client, session, small_ram, vdbench_spec("vdbench-big"), doc, target="/srv/bench")
    assert "cache_resident" not in _flags(client, u, rid)

    direct = (
        "fsd=fsd1,anchor=H:,depth=1,width=2,files=4,size=64k,openflags=o_direct\n"
        "fwd=fwd1,fsd=fsd1,rdpct=90,xfersize=4k,fileselect=random,fileio=random,threads=2\n"
        "rd=rd1,fwd=fwd1,fwdrate=max,format=yes,elapsed=3,interval=1\n"
    )
    a = create_agent(session, team=u.team)
    ddoc = json.loads(vdbench_json("vdbench-small", direct))
    assert ddoc["fileset"]["fsd"][0]["o_direct"] is True
    rid = upload_run(client, session, a, vdbench_spec("vdbench-small", parameters=direct), ddoc)
    assert get_run(client, u, rid)["file_workload"]["o_direct"] is True
    assert "cache_resident" not in _flags(client, u, rid)


# --- compare --------------------------------------------------------------------------------------


def _metrics(c: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {f"{j['name']}/{m['key']}": m for j in c["jobs"] for m in j["metrics"]}


def test_two_postmark_runs_compare_by_operation_and_totals(client: TestClient, session: Session) -> None:
    u = create_user(session)
    a, b = create_agent(session, team=u.team), create_agent(session, team=u.team)
    ra = upload_run(client, session, a, postmark_spec(), json.loads(postmark_json()), preset="postmark-low")
    rb = upload_run(
        client, session, b, postmark_spec(), json.loads(postmark_json(seed=42)), preset="postmark-low"
    )
    c = client.get(f"/api/v1/compare?runs={ra},{rb}", headers=u.headers).json()
    assert c["comparability"]["verdict"] == "comparable"
    assert [j["name"] for j in c["jobs"]] == ["create", "read", "append", "delete", "all operations"]
    m = _metrics(c)
    fa, fb = (get_run(client, u, r)["file_workload"] for r in (ra, rb))
    rate = m["read/rate_per_s"]
    assert (rate["unit"], rate["kind"], rate["better"]) == ("op/s", "iops", "higher")
    assert rate["values"] == pytest.approx(
        [o["rate_per_s"] for f in (fa, fb) for o in f["ops"] if o["name"] == "read"]
    )
    assert rate["changes"][0] is None and rate["changes"][1]["verdict"] in ("better", "worse", "same")
    p99 = m["create/resp_p99_ns"]
    assert (p99["unit"], p99["kind"], p99["better"], p99["percentile"]) == ("ns", "latency", "lower", 99.0)
    el = m["all operations/elapsed_s"]
    assert (el["unit"], el["kind"], el["better"]) == ("s", "time", "lower")
    assert el["values"] == pytest.approx([fa["elapsed_ns"] / 1e9, fb["elapsed_ns"] / 1e9])
    ratio = el["values"][1] / el["values"][0]
    assert el["ratios"][1] == pytest.approx(ratio)
    assert el["changes"][1]["verdict"] == (
        "same" if abs(ratio - 1) < 0.005 else ("better" if ratio < 1 else "worse")
    )
    assert m["all operations/cpu_ns_per_op"]["unit"] == "ns/op"
    assert m["all operations/transactions_per_s"]["values"][0] == pytest.approx(
        fa["postmark"]["transactions_per_s"]
    )
    assert m["all operations/read_bw_bytes"]["direction"] == "read"
    assert "all operations/host_cpu_total_pct" not in m  # postmark has no host CPU figure
    # the CSV carries the same rows
    r = client.get(f"/api/v1/compare?runs={ra},{rb}&format=csv", headers=u.headers)
    rows = list(csv.reader(io.StringIO(r.text)))
    assert rows[[x[0] for x in rows].index("all operations")][:4] == [
        "all operations",
        "Elapsed (PostMark's time)",
        "s",
        "lower",
    ]


def test_two_vdbench_runs_compare_and_repeats_give_intervals(client: TestClient, session: Session) -> None:
    u = create_user(session)
    a = create_agent(session, team=u.team)
    doc = json.loads(vdbench_json("vdbench-small"))
    runs = [
        upload_run(client, session, a, vdbench_spec("vdbench-small"), doc, target=t)
        for t in ("/dev/shm/x", "/dev/shm/b", "/dev/shm/x")
    ]
    c = client.get(
        f"/api/v1/compare?runs={','.join(map(str, runs))}&group_by=target", headers=u.headers
    ).json()
    assert c["comparability"]["verdict"] == "comparable"
    names = [j["name"] for j in c["jobs"]]
    assert names[:4] == ["read", "write", "open", "close"] and names[-1] == "all operations"
    m = _metrics(c)
    read = m["read/rate_per_s"]
    assert read["direction"] == "read" and read["values"] == pytest.approx(
        [doc["fileset"]["total"]["ops"]["read"]["rate"]] * 2
    )
    stats = read["stats"][0]
    assert stats["n"] == 2 and stats["ci95_low"] == pytest.approx(stats["mean"])  # two identical repeats
    assert m["read/resp_mean_ns"]["better"] == "lower"
    assert m["all operations/host_cpu_total_pct"]["values"][0] == pytest.approx(
        doc["fileset"]["total"]["cpu"]["total_pct"]
    )
    assert "all operations/elapsed_s" not in m  # vdbench runs for its elapsed time: not a figure


def test_block_and_file_runs_do_not_compare(client: TestClient, session: Session) -> None:
    from tests.factories import engine_document

    u = create_user(session)
    a = create_agent(session, team=u.team)
    pm = upload_run(client, session, a, postmark_spec(), json.loads(postmark_json()))
    vd = upload_run(
        client, session, a, vdbench_spec("vdbench-small"), json.loads(vdbench_json("vdbench-small"))
    )
    block = upload_run(client, session, a, BUILTINS["quick"][1], engine_document(), target="/srv/bench")
    for runs in ((block, pm), (pm, vd)):
        for force in ("false", "true"):
            r = client.get(f"/api/v1/compare?runs={runs[0]},{runs[1]}&force={force}", headers=u.headers)
            assert r.status_code == 422, r.text
            body = json.dumps(r.json())
            assert "runs" in body and str(runs[0]) in body and str(runs[1]) in body
            assert "do not compare" in body


# --- views ----------------------------------------------------------------------------------------


def view(client: TestClient, u: UserCtx, name: str, runs: list[uuid.UUID], **params: Any) -> dict[str, Any]:
    r = client.get(
        "/api/v1/views/table",
        params={"view": name, "runs": ",".join(map(str, runs)), **params},
        headers=u.headers,
    )
    assert r.status_code == 200, r.text
    data: dict[str, Any] = r.json()
    return data


def rows_of(t: dict[str, Any]) -> list[dict[str, Any]]:
    keys = [c["key"] for c in t["columns"]]
    return [dict(zip(keys, row["cells"], strict=True)) for row in t["rows"]]


def view_csv(client: TestClient, u: UserCtx, name: str, runs: list[uuid.UUID]) -> list[list[str]]:
    r = client.get(
        "/api/v1/views/table",
        params={"view": name, "runs": ",".join(map(str, runs)), "format": "csv"},
        headers=u.headers,
    )
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/csv"), r.text
    return list(csv.reader(io.StringIO(r.text)))


def test_vdbench_filesets_view_is_seed_001_tables_3_and_5(client: TestClient, session: Session) -> None:
    u = create_user(session)
    agents = [create_agent(session, team=u.team, name=f"host-{i}") for i in range(4)]
    runs = []
    for preset in ("vdbench-small", "vdbench-big"):  # asked small first: the view puts Table 3 first
        for ag in agents:
            runs.append(
                upload_run(
                    client, session, ag, vdbench_spec(preset), json.loads(vdbench_json(preset)), preset=preset
                )
            )
    cat = client.get(f"/api/v1/views?runs={','.join(map(str, runs))}", headers=u.headers).json()
    assert "vdbench-filesets" in cat["applicable"] and "postmark-levels" not in cat["applicable"]
    assert {r["preset"] for r in cat["runs"]} == {"vdbench-big", "vdbench-small"}

    t = view(client, u, "vdbench-filesets", runs)
    assert len(runs) == 8 and t["view"]["seed"].startswith("Schulz's StorageIO report")
    keys = [c["key"] for c in t["columns"]]
    assert keys == [
        "set", "run", "scale", "read_rate", "read_resp", "write_rate", "write_resp",
        "cpu_total", "cpu_sys", "read_mbps", "write_mbps",
    ]  # fmt: skip
    units = {c["key"]: c["unit"] for c in t["columns"]}
    assert units["read_rate"] == "op/s" and units["read_resp"] == "ns" and units["read_mbps"] == "B/s"
    assert units["cpu_total"] == "%" and units["scale"] == "×"
    assert t["display_units"]["ns"] == "ms" and t["display_units"]["B/s"] == "MB/s"
    assert "(ms)" in next(c["label"] for c in t["columns"] if c["key"] == "read_resp")
    rows = rows_of(t)
    assert [r["set"]["value"] for r in rows] == ["Big files"] * 4 + ["Small files"] * 4
    assert [row["group"] for row in t["rows"]] == ["Big files"] * 4 + ["Small files"] * 4
    by_run = {r["id"]: r["label"] for r in t["runs"]}
    big = [by_run[str(x)] for x in runs[4:]]
    assert [r["run"]["value"] for r in rows[:4]] == big
    for row, rid in zip(rows, runs[4:] + runs[:4], strict=True):
        fw = get_run(client, u, rid)["file_workload"]
        ops = {o["name"]: o for o in fw["ops"]}
        assert row["read_rate"]["value"] == pytest.approx(ops["read"]["rate_per_s"])
        assert (
            row["read_resp"]["value"] == pytest.approx(ops["read"]["resp_mean_ns"])
            and row["read_resp"]["unit"] == "ns"
        )
        assert row["write_resp"]["value"] == pytest.approx(ops["write"]["resp_mean_ns"])
        assert row["cpu_sys"]["value"] == pytest.approx(fw["host_cpu_system_pct"])
        assert row["write_mbps"]["value"] == pytest.approx(fw["write_bw_bytes"])
        assert row["scale"]["value"] == fw["scale"] < 1
        assert "cache-resident" in (row["run"]["note"] or "")  # tmpfs, small sets: flagged beside the figures
    assert any("scale" in n.lower() for n in t["notes"]) and any("cache-resident" in n for n in t["notes"])
    # the CSV in the seed's units: ms, MB/s
    table = view_csv(client, u, "vdbench-filesets", runs)
    head = table[0]
    first = dict(zip(head, table[1], strict=True))
    assert float(first["Avg. read resp. time (ms)"]) == pytest.approx(
        rows[0]["read_resp"]["value"] / 1e6, abs=0.006
    )
    assert float(first["Avg. MB/s read"]) == pytest.approx(rows[0]["read_mbps"]["value"] / 1e6, abs=0.006)
    assert len(table) == 9
    # a run of another workload is refused by name
    pm = upload_run(
        client, session, agents[0], postmark_spec(), json.loads(postmark_json()), preset="postmark-low"
    )
    r = client.get(f"/api/v1/views/table?view=vdbench-filesets&runs={runs[0]},{pm}", headers=u.headers)
    assert r.status_code == 422 and "postmark-low" in r.text


def test_postmark_levels_view_is_seed_000_table_3_with_power_and_energy(
    client: TestClient, session: Session
) -> None:
    u = create_user(session)
    hdd = create_agent(session, team=u.team, name="hdd-host")
    ram = create_agent(session, team=u.team, name="ram-host")
    runs: dict[tuple[str, str], list[uuid.UUID]] = {}
    watts = {"hdd-host": (263.8, 264.18), "ram-host": (475.7, 476.55)}
    for ag in (hdd, ram):
        for preset in ("postmark-low", "postmark-medium", "postmark-high"):
            idle, load = watts[ag.agent.name]
            rid = upload_run(
                client, session, ag, postmark_spec(preset), json.loads(postmark_json(preset)), preset=preset,
                power=power_doc(idle_w=idle, load_w=load),
            )  # fmt: skip
            power_service.compute(session, run_id=rid)
            runs.setdefault((ag.agent.name, preset), []).append(rid)
    # two more repeats of Low on the HDD host: 8 runs, the Low cell is their mean
    for _ in range(2):
        rid = upload_run(
            client, session, hdd, postmark_spec(), json.loads(postmark_json()), preset="postmark-low",
            power=power_doc(idle_w=263.8, load_w=264.18),
        )  # fmt: skip
        power_service.compute(session, run_id=rid)
        runs[("hdd-host", "postmark-low")].append(rid)
    ids = [r for rs in runs.values() for r in rs]
    assert len(ids) == 8
    cat = client.get(f"/api/v1/views?runs={','.join(map(str, ids))}", headers=u.headers).json()
    assert "postmark-levels" in cat["applicable"]

    t = view(client, u, "postmark-levels", ids)
    assert t["view"]["seed"].startswith("Song & Lee's HDD vs DRAM-SSD study")
    assert t["display_units"]["ns"] == "s"
    keys = [c["key"] for c in t["columns"]]
    assert keys == ["measure", "level", "device_0", "device_1", "rate"]
    labels = [c["label"] for c in t["columns"]]
    assert labels[2].endswith("on hdd-host") and labels[3].endswith("on ram-host")
    rate_col = t["columns"][-1]
    assert rate_col["unit"] == "×" and "hdd-host" in rate_col["label"].split("÷")[0]
    rows = rows_of(t)
    table = [(r["measure"]["value"], r["level"]["value"]) for r in rows]
    assert table == [
        ("Run time (s)", "Low"), ("Run time (s)", "Medium"), ("Run time (s)", "High"),
        ("Transactions per second", "Low"), ("Transactions per second", "Medium"),
        ("Transactions per second", "High"),
        ("Power (W)", "Non-load"), ("Power (W)", "Low"), ("Power (W)", "Medium"), ("Power (W)", "High"),
        ("Energy: run time × power (J)", "Low"), ("Energy: run time × power (J)", "Medium"),
        ("Energy: run time × power (J)", "High"),
    ]  # fmt: skip
    assert [row["group"] for row in t["rows"]] == ["time"] * 3 + ["tps"] * 3 + ["power"] * 4 + ["energy"] * 3

    def fw(rid: uuid.UUID) -> dict[str, Any]:
        return dict(get_run(client, u, rid)["file_workload"])

    low_hdd = [fw(r) for r in runs[("hdd-host", "postmark-low")]]
    time_low = rows[0]
    assert time_low["device_0"]["unit"] == "ns" and time_low["device_0"]["note"] == "mean of 3 runs"
    assert time_low["device_0"]["value"] == pytest.approx(sum(f["elapsed_ns"] for f in low_hdd) / 3)
    high_ram = fw(runs[("ram-host", "postmark-high")][0])
    assert rows[2]["device_1"]["value"] == pytest.approx(high_ram["elapsed_ns"])
    assert rows[2]["rate"]["value"] == pytest.approx(
        rows[2]["device_0"]["value"] / rows[2]["device_1"]["value"]
    )
    assert rows[5]["device_1"]["value"] == pytest.approx(high_ram["postmark"]["transactions_per_s"])
    assert rows[5]["device_1"]["unit"] == "op/s"
    # Table 4: the meter's idle and load watts; Table 5: PostMark's run time x load watts, in J
    assert rows[6]["device_0"]["value"] == pytest.approx(263.8) and rows[6]["device_1"][
        "value"
    ] == pytest.approx(475.7)
    assert rows[6]["rate"]["value"] == pytest.approx(263.8 / 475.7) and rows[6]["device_0"]["unit"] == "W"
    assert rows[9]["device_1"]["value"] == pytest.approx(476.55)
    energy_high = rows[12]["device_1"]
    assert energy_high["unit"] == "J" and energy_high["value"] == pytest.approx(
        476.55 * high_ram["elapsed_ns"] / 1e9
    )
    assert not any("estimated" in (c["note"] or "") for r in rows for c in r.values())  # all measured
    # the CSV prints seconds (ns / 1e9), watts and joules
    csv_rows = view_csv(client, u, "postmark-levels", ids)
    assert csv_rows[0][:2] == ["Measure", "PostMark level"]
    # a run time below 1 s keeps three significant digits (0.0635, not 0.06), as the page
    secs = high_ram["elapsed_ns"] / 1e9
    assert float(csv_rows[3][3]) == pytest.approx(float(f"{secs:.3g}") if secs < 1 else round(secs, 2))
    assert float(csv_rows[7][2]) == pytest.approx(263.8)
    # baseline= picks the Rate's denominator
    base = view(client, u, "postmark-levels", ids, baseline=str(runs[("hdd-host", "postmark-low")][0]))
    assert "ram-host" in base["columns"][-1]["label"].split("÷")[0]


def test_postmark_levels_without_meter_data_and_with_estimated_energy(
    client: TestClient, session: Session
) -> None:
    u = create_user(session)
    a = create_agent(session, team=u.team)
    rid = upload_run(client, session, a, postmark_spec(), json.loads(postmark_json()), preset="postmark-low")
    t = view(client, u, "postmark-levels", [rid])
    assert [c["key"] for c in t["columns"]] == ["measure", "level", "device_0"]  # one device: no Rate
    assert [r["measure"]["value"] for r in rows_of(t)] == ["Run time (s)", "Transactions per second"]
    assert any("No run has meter data" in n for n in t["notes"])

    # a second host whose energy is estimated from datasheet watts: labelled in its cells and rows
    estimate = {"name": "datasheet", "driver": "estimate", "tier": "estimate", "quantity": "power"}
    b = create_agent(session, team=u.team, name="estimated-host")
    est = upload_run(
        client, session, b, postmark_spec(), json.loads(postmark_json()), preset="postmark-low",
        power=power_doc(idle_w=5.0, load_w=8.0, meter=estimate),
    )  # fmt: skip
    power_service.compute(session, run_id=est)
    est_energy = get_run(client, u, est)["energy"]
    assert est_energy["estimated"] is True
    t = view(client, u, "postmark-levels", [rid, est])
    rows = rows_of(t)
    power = next(
        r for r in rows if r["measure"]["value"].startswith("Power") and r["level"]["value"] == "Low"
    )
    assert power["device_1"]["value"] == pytest.approx(est_energy["load_w_mean"])
    assert "estimated" in power["device_1"]["note"]
    assert power["device_0"]["value"] is None  # no meter on the first host
    assert power["measure"]["value"] == "Power (W), estimated for " + t["columns"][3]["label"]
    energy = next(r for r in rows if r["measure"]["value"].startswith("Energy"))
    assert "estimated" in energy["device_1"]["note"] and "estimated-host" in energy["measure"]["value"]
    time_row = next(r for r in rows if r["measure"]["value"] == "Run time (s)")
    assert time_row["device_1"]["note"] is None  # the run time is measured, whatever the meter
    assert any("estimated" in n for n in t["notes"])
    lines = view_csv(client, u, "postmark-levels", [rid, est])
    assert any(line[0].startswith("Energy: run time × power (J), estimated for") for line in lines)


def test_a_file_runs_energy_efficiency_is_labelled_as_operations_not_iops(
    client: TestClient, session: Session
) -> None:
    u = create_user(session)
    ag = create_agent(session, team=u.team)
    ids = []
    for _ in range(2):
        rid = upload_run(
            client, session, ag, postmark_spec(), json.loads(postmark_json()), preset="postmark-low",
            power=power_doc(idle_w=100.0, load_w=120.0),
        )  # fmt: skip
        power_service.compute(session, run_id=rid)
        ids.append(rid)
    r = client.get(f"/api/v1/compare?runs={','.join(map(str, ids))}", headers=u.headers)
    assert r.status_code == 200, r.text
    energy = {m["key"]: m for m in r.json()["energy"]}
    # PostMark's counts are read and write calls: "IOPS per watt" would read as block I/O
    assert energy["iops_per_w"]["label"] == "Read/write operations per watt"
    assert energy["iops_per_w"]["unit"] == "op/J"
    assert energy["j_per_mio"]["label"] == "Energy per million read/write operations"
    assert energy["total_j"]["label"] == "Energy (run time x power)"  # the others as for block runs
