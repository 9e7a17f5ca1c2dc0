"""A hostile server (issue 9, ADR 0009): a fake server speaking the real HTTP protocol (stdlib
http.server in a thread) hands the real agent loop, through the real client, malicious leases;
the real engine runs whatever gets through. Each lease is refused with its rule, named in the
failure report's reason, and a sha256 of a canary tree (plus /etc/passwd) before and after shows
that nothing outside the allowed targets changed. Also the issue's two reproductions at the
agent level: a `command:` meter never runs, and a read job on a 7-byte file leaves it identical.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from iowatt_agent.client import ApiClient
from iowatt_agent.credentials import AgentConfig
from iowatt_agent.loop import AgentLoop, LoopSettings
from iowatt_agent.policy import save_policy
from iowatt_policy import Limits, Policy, Target

from tests.agent.fakes import AGENT_TOKEN, FakeApi, set_meters
from tests.waiting import wait_until

REAL_ENGINE = Path(__file__).resolve().parents[2] / "agent" / "engine" / "build" / "iowatt-engine"
DEV_RO = "/dev/disk/by-id/ata-HOSTILE_TEST_READ_ONLY"
DEV_RW = "/dev/disk/by-id/ata-HOSTILE_TEST_DESTRUCTIVE"
SECRET = "hunter2-plug-password"

pytestmark = pytest.mark.skipif(
    not os.access(REAL_ENGINE, os.X_OK), reason=f"the real engine is not built ({REAL_ENGINE})"
)


def _asked_about_itself(argv: list[str]) -> bool:
    """The agent's own questions to its engine, not a server's job: its options (--limits), a file
    workload's check (--parse-only), its version and the ioengines probe (engine_features.py)."""
    return bool({"--parse-only", "--limits", "--version", "--name=probe"} & set(argv))


def run_victim(
    api: FakeApi,
    state: Any,
    outcomes: int,
    *,
    engine: Path = REAL_ENGINE,
    beside: Callable[[], None] | None = None,
) -> list[int]:
    """A real agent loop (the victim host) against the hostile fake server, until `outcomes` runs
    have ended (a failure or a result reported); then drained. `beside` runs in a thread of its
    own meanwhile (an attacker acting on the host). The loop's exit codes."""
    server, url = api.serve()
    config = AgentConfig(
        server_url=url,
        agent_id=api.agent_id,
        agent_token=AGENT_TOKEN,
        name="victim",
        heartbeat_interval_s=0.5,
    )
    loop = AgentLoop(
        config,
        state_dir=state,
        engine=engine,
        client_factory=lambda: ApiClient(url, AGENT_TOKEN),
        settings=LoopSettings(lease_wait_s=1, progress_interval_s=0.2, idle_s=0),
    )
    if beside is not None:
        threading.Thread(target=beside, daemon=True).start()
    code: list[int] = []
    runner = threading.Thread(target=lambda: code.append(loop.run()))
    runner.start()
    try:
        wait_until(lambda: len(api.failures) + len(api.results) >= outcomes, timeout=120)
    finally:
        loop.request_drain("test over")
        runner.join(30)
        server.shutdown()
    return code


def tree_hash(*roots: Path) -> dict[str, str]:
    """sha256 of every file (and the target of every link) under the roots, by path."""
    digests: dict[str, str] = {}
    for root in roots:
        paths = [root] if root.is_file() else sorted(root.rglob("*"))
        for p in paths:
            if p.is_symlink():
                digests[str(p)] = "link:" + os.readlink(p)
            elif p.is_file():
                digests[str(p)] = hashlib.sha256(p.read_bytes()).hexdigest()
            elif p.is_dir():
                digests[str(p)] = "dir"
    return digests


def job(**options: Any) -> dict[str, Any]:
    """One job; the server's shape (options in the job, an empty global)."""
    base: dict[str, Any] = {"name": "j", "rw": "randread", "bs": "4096", "size": "4194304", "stonewall": "1"}
    base.update(options)
    return {"global": {}, "jobs": [base]}


@pytest.fixture
def host(tmp_path: Path) -> dict[str, Path]:
    allowed = tmp_path / "allowed"
    allowed.mkdir()
    swapdir = tmp_path / "swapdir"  # allowed now, replaced by a symlink before its lease comes
    swapdir.mkdir()
    canary = tmp_path / "canary"
    (canary / "sub").mkdir(parents=True)
    seven = canary / "seven.txt"
    seven.write_bytes(b"iowatt\n")  # the 7-byte text file
    (canary / "secret.txt").write_text("do not touch\n")
    (canary / "sub" / "data.bin").write_bytes(os.urandom(64 << 10))
    state = tmp_path / "state"
    save_policy(
        state,
        Policy(
            targets=(
                Target.directory(str(allowed)),
                Target.directory(str(swapdir)),
                Target.file(str(seven)),  # read-only
                Target.device(DEV_RO),
                Target.device(DEV_RW, destructive=True),
            ),
            limits=Limits(
                max_threads=4,
                max_iodepth=8,
                max_bs_bytes=1 << 20,
                max_bytes_written=64 << 20,
                max_runtime_s=10,
            ),
        ),
    )
    set_meters(state, {"wall": f"shelly://127.0.0.1:9?password={SECRET}"})  # never opened: no default
    return {"allowed": allowed, "swapdir": swapdir, "canary": canary, "seven": seven, "state": state}


def test_a_hostile_server_cannot_make_the_agent_touch_anything_outside_the_policy(
    api: FakeApi, host: dict[str, Path], tmp_path: Path
) -> None:
    allowed, canary, seven = host["allowed"], host["canary"], host["seven"]
    ran = tmp_path / "meter-ran"
    evil = tmp_path / "evil-meter"
    evil.write_text(f"#!/bin/sh\ntouch {ran}\nid\n")
    evil.chmod(0o755)
    # the directory target swapped for a link to the canary after the host allowed it
    host["swapdir"].rmdir()
    host["swapdir"].symlink_to(canary)

    cases: list[tuple[str, dict[str, Any], str]] = []

    def lease(expect: str, engine_job: dict[str, Any], target: Path | str = allowed, **fields: Any) -> None:
        lease = api.add_lease(engine_job, str(target), timeout_s=60, **fields)
        cases.append((lease["run_id"], lease, expect))

    # issue 9, reproduction 1: a command meter from the server
    lease("meter.spec_from_server", job(runtime="1", time_based="1"), meter=f"command:{evil}", idle_s=0)
    lease("meter.unknown", job(), meter="lab")
    # targets
    lease("target.not_allowed", job(), "/etc/passwd")
    lease("target.not_allowed", job(rw="write"), f"{allowed}/../canary/secret.txt")
    lease("target.not_allowed", job(), f"{allowed}/../canary")
    lease("target.symlink", job(rw="write"), host["swapdir"])
    lease("file.read_only", job(rw="randwrite", size="7"), seven)
    # raw devices: two keys
    lease("target.not_allowed", job(rw="write"), "/dev/vda")
    lease("device.not_destructive", job(rw="write"), DEV_RO)
    lease("device.not_destructive", job(), DEV_RO, destructive=True)
    lease("run.destructive_not_confirmed", job(rw="randwrite"), DEV_RW)
    # limits
    lease("limit.threads", job(numjobs="5"))
    lease("limit.threads", {"global": {"numjobs": "3"}, "jobs": [{"name": "a"}, {"name": "b"}]})
    lease("limit.iodepth", job(iodepth="16", ioengine="libaio"))
    lease("limit.block_size", job(bs="2m"))
    lease("limit.bytes_written", job(rw="randwrite", size="128m"))
    lease("limit.bytes_written", job(rw="write", runtime="5", time_based="1"))  # unbounded
    lease("limit.runtime", job(runtime="60", time_based="1"))
    # options only the agent sets, or none at all
    lease("option.not_allowed", job(filename=str(canary / "secret.txt")))
    lease("option.not_allowed", {"global": {"directory": str(canary)}, "jobs": [{"name": "a", "size": "1m"}]})
    lease("option.not_allowed", job(exec_prerun=f"touch {ran}"))
    lease("option.not_allowed", job(destructive="1"), DEV_RW, destructive=True)
    lease("option.not_allowed", job(beneath="/", unlink="1"))
    lease("option.not_allowed", {**job(), "exec": "id"})
    # issue 9, reproduction 2: a read job on a 7-byte file the host allows to be read
    lease("keep_existing", job(rw="randread", size="1048576", runtime="1"), seven)
    # allowed: a read run, and a write run with a symlink to the canary swapped in while it runs
    lease("result", job(runtime="1", time_based="1"))
    swap = job(rw="randwrite", numjobs="2", runtime="3", time_based="1", rate_iops="500")
    lease("swap", swap)

    swapped: list[Path] = []
    swap_run = cases[-1][0]

    def swap_in_a_link() -> None:
        data = allowed / f"iowatt-{swap_run}.dat"
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not (data.exists() and data.stat().st_size >= 4 << 20):
            time.sleep(0.01)
        # the run is writing now: the agent has reported write progress for it
        wait_until(
            lambda: any(
                (body or {}).get("write_iops", 0) > 0
                for _, _, body in api.calls_to(rf"POST /api/v1/runs/{swap_run}/progress")
            ),
            timeout=60,
        )
        link = allowed / ".swap"
        link.symlink_to(canary / "secret.txt")
        os.replace(link, data)
        swapped.append(data)

    before = tree_hash(canary, Path("/etc/passwd"))
    code = run_victim(api, host["state"], len(cases), beside=swap_in_a_link)
    assert code == [0]

    failures = {f["run_id"]: f for f in api.failures.values()}
    results = {r["lease_id"] for r in api.results.values()}
    for run_id, lease_doc, expect in cases:
        if expect == "result":
            assert lease_doc["lease_id"] in results, failures.get(run_id)
            continue
        if expect == "swap":  # the engine never follows the link: it fails the run (and the canary
            # below is unchanged)
            assert "replaced by a symbolic link" in failures[run_id]["reason"], failures.get(run_id)
            continue
        reason = failures[run_id]["reason"]
        if expect == "keep_existing":
            assert "keep_existing" in reason and failures[run_id]["exit_code"] == 2, reason
            continue
        assert reason.startswith(f"host policy refused this run [{expect}]: "), (expect, reason)
        assert "(" in reason and reason.endswith(")")  # the fix, said how
    # refused leases never started: only the three that got through did
    allowed_runs = {c[0] for c in cases if c[2] in ("result", "swap", "keep_existing")}
    assert set(api.started) == allowed_runs
    assert swapped, "the swap thread never saw the data file"

    # nothing changed outside the allowed directory; the swapped-in link was removed, not followed
    assert tree_hash(canary, Path("/etc/passwd")) == before
    assert seven.read_bytes() == b"iowatt\n"
    assert list(allowed.iterdir()) == []
    assert not ran.exists()  # neither the command meter nor exec_prerun ran anything

    # the server got the host's policy, meters by name and never a secret
    assert api.inventories
    reported = api.inventories[-1]["policy"]
    assert {t["path"] for t in reported["targets"]} >= {str(allowed), str(seven), DEV_RO, DEV_RW}
    # with the idle baseline a run takes with it: the agent's own setting (the meter has none)
    assert reported["meters"] == [{"name": "wall", "driver": "shelly", "tier": "plug", "idle_s": 0.0}]
    assert SECRET not in json.dumps(api.inventories) and SECRET not in json.dumps(api.calls, default=str)


# --- issue 22 (M4): memory and files of the host ----------------------------------------------------


def test_a_hostile_server_cannot_exhaust_the_hosts_memory_or_files(api: FakeApi, tmp_path: Path) -> None:
    """Leases a server that skipped its queue-time check could send: a vdbench set of 10^10 files,
    a TPC-H buffer pool of 1 TiB, a block job of 1 TiB of buffers. The host set no memory or files
    limit, so the defaults derived from this host hold (half its RAM; half the target's free
    inodes, at most 10 million): each lease fails naming its rule before anything runs."""
    allowed = tmp_path / "allowed"
    allowed.mkdir()
    state = tmp_path / "state"
    unlimited = Limits(max_threads=None, max_iodepth=None, max_bs_bytes=None, max_runtime_s=None)
    assert unlimited.max_memory_bytes == unlimited.max_files == "auto"
    save_policy(
        state,
        Policy(targets=(Target.directory(str(allowed)),), limits=unlimited, allowed_dbms=("postgresql",)),
    )
    cases: list[tuple[str, str, str]] = []

    def lease(expect: str, also: str, engine_job: dict[str, Any]) -> None:
        doc = api.add_lease(engine_job, str(allowed), timeout_s=60, idle_s=0, meter="")
        cases.append((doc["run_id"], expect, also))

    ten_billion = "fsd=f,anchor=/x,depth=2,width=100,files=1000000,size=4k\n"  # 10^4 leaves x 10^6
    reads = "fwd=w,fsd=f,operation=read,xfersize=4k,threads=4\nrd=r,fwd=w,elapsed=5,fwdrate=max,format=yes\n"
    lease(
        "limit.memory",
        "10000000000 files",
        {"mode": "vdbench", "parameters": ten_billion + reads, "scale": "1"},
    )
    twenty_million = "fsd=f,anchor=/x,depth=1,width=20,files=1000000,size=4k\n"  # memory: 180 MB
    lease(
        "limit.files",
        "20000000 files",
        {"mode": "vdbench", "parameters": twenty_million + reads, "scale": "1"},
    )
    tpch = {"mode": "tpch", "dbms": "postgresql", "scale_factor": "0.01", "buffer_pool_bytes": str(1 << 40)}
    lease("limit.memory", "buffer pool of 1099511627776 bytes", tpch)
    lease("limit.memory", "64 threads x iodepth 256", job(numjobs="64", iodepth="256", bs="64m", runtime="1"))

    code = run_victim(api, state, len(cases))
    assert code == [0]
    failures = {f["run_id"]: f for f in api.failures.values()}
    for run_id, expect, also in cases:
        reason = failures[run_id]["reason"]
        assert reason.startswith(f"host policy refused this run [{expect}]: "), reason
        assert also in reason and "iowatt-agent targets limits --max-" in reason, reason
    assert "[limit.files]" in failures[cases[0][0]]["reason"]  # the 10^10 set: both rules
    assert api.results == {} and api.started == []  # nothing ran
    assert list(allowed.iterdir()) == []  # no run directory, no DBMS, no file set
    # the report the server checks at queue time carries the host's facts and the defaults
    reported = api.inventories[-1]["policy"]
    assert reported["mem_total_bytes"] > 0 and reported["limits"]["max_memory_bytes"] == "auto"
    assert reported["targets"][0]["free_inodes"] is None or reported["targets"][0]["free_inodes"] > 0


# --- issue 24: fio job files from the server (ADR 0029) -------------------------------------------------


def test_a_hostile_job_file_cannot_reach_the_hosts_files_secrets_or_memory(
    api: FakeApi, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Job files a hostile server could send: include of the host's files, ${VAR} naming the
    agent's secrets, paths in filename / directory / log options, numjobs and nrfiles bombs, a huge
    text, the agent-only options. Each is refused before anything runs, naming its rule; filename
    and directory are replaced by the target (never followed): those jobs run in the allowed
    directory and the canary is unchanged. The engine reads the text --untrusted in an empty
    environment (a recording wrapper around the real engine shows it) and no secret reaches a report."""
    from tests.jobfile_engine import calls, write_recording_engine

    engine = write_recording_engine(tmp_path / "engine")
    monkeypatch.setenv("IOWATT_AGENT_SECRET", SECRET)
    allowed = tmp_path / "allowed"
    allowed.mkdir()
    canary = tmp_path / "canary"
    canary.mkdir()
    (canary / "secret.txt").write_text("do not touch\n")
    state = tmp_path / "state"
    save_policy(
        state,
        Policy(
            targets=(Target.directory(str(allowed)),),
            limits=Limits(max_threads=4, max_iodepth=8, max_bytes_written=64 << 20, max_runtime_s=10),
        ),
    )
    cases: list[tuple[str, str, str]] = []
    lease_ids: dict[str, str] = {}

    def lease(expect: str, also: str, text: str, target: str = str(allowed), **fields: Any) -> None:
        doc = api.add_lease(
            {"mode": "jobfile", "text": text}, target, timeout_s=60, idle_s=0, meter="", **fields
        )
        cases.append((doc["run_id"], expect, also))
        lease_ids[doc["run_id"]] = doc["lease_id"]

    head = "[global]\nrw=randread\nbs=4k\nsize=1m\n"
    lease("option.not_allowed", "include", f"[a]\ninclude {canary / 'secret.txt'}\nrw=read\n")
    lease("option.not_allowed", "IOWATT_AGENT_SECRET", head + "[a]\ndescription=${IOWATT_AGENT_SECRET}\n")
    lease("option.not_allowed", "IOWATT_AGENT_SECRET", head + "[a]\nsize=${IOWATT_AGENT_SECRET}\n")
    lease("option.not_allowed", "write_bw_log", head + f"[a]\nwrite_bw_log={canary}/bw\n")
    lease("option.not_allowed", "nrfiles", head + "[a]\nnrfiles=100000000\n")
    lease("option.not_allowed", "destructive", "[a]\nrw=write\nsize=1m\ndestructive=1\n")
    lease("option.not_allowed", "readonly", "[a]\nrw=write\nsize=1m\nreadonly=0\n")
    lease("option.not_allowed", "beneath", head + "[a]\nbeneath=/\n")
    lease("option.not_allowed", "65536 characters", "[a]\n" + "#" * (65 * 1024))
    lease("limit.threads", "1000 threads", head + "[a]\nnumjobs=1000\n")
    lease("limit.threads", "jobs 0-2 run at the same time", head + "[a]\n[b]\nnumjobs=2\n[c]\nnumjobs=2\n")
    lease("limit.bytes_written", "writes without a bound", "[w]\nrw=write\ntime_based=1\nruntime=2\n")
    # replaced, never followed: these run in the allowed directory, the canary untouched
    lease("result", "", f"[w]\nrw=write\nbs=4k\nsize=256k\nfilename={canary / 'secret.txt'}\n")
    lease(
        "result",
        "",
        f"[global]\ndirectory={canary}\n[w]\nrw=randwrite\nbs=4k\nsize=256k\n[r]\nstonewall=1\nrw=read\nsize=256k\n",
    )

    before = tree_hash(canary, Path("/etc/passwd"))
    code = run_victim(api, state, len(cases), engine=engine)
    assert code == [0]
    failures = {f["run_id"]: f for f in api.failures.values()}
    results = {r["lease_id"] for r in api.results.values()}
    for run_id, expect, also in cases:
        if expect == "result":
            assert lease_ids[run_id] in results, failures.get(run_id)
            continue
        reason = failures[run_id]["reason"]
        assert reason.startswith(f"host policy refused this run [{expect}]: "), (expect, reason)
        assert also in reason, (also, reason)
    assert set(api.started) == {c[0] for c in cases if c[1] == "result"}
    assert tree_hash(canary, Path("/etc/passwd")) == before
    assert list(allowed.iterdir()) == []  # the data files removed after the runs
    assert not list((state / "jobs").glob("*.jobfile"))  # no job file text left on the host
    assert SECRET not in json.dumps(api.calls, default=str)
    # the wrapper saw every call: text parses untrusted, in an empty environment
    parses = [c for c in calls(engine) if "--parse-only" in c["argv"]]
    assert parses and all(c["argv"][0] == "--untrusted" for c in parses)
    assert all(SECRET not in json.dumps(c["env"]) for c in parses)
    runs = [c for c in calls(engine) if not _asked_about_itself(c["argv"])]
    assert len(runs) == len(api.started) and all("--untrusted" in c["argv"] for c in runs)


# --- ADR 0030: a server's block job runs --untrusted; the engine is the last line -------------------


def test_a_hostile_block_job_is_read_untrusted_and_refused_by_the_engine_past_a_policy_hole(
    api: FakeApi, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A server's block job runs with --untrusted (kinds/block.py), as a job file's does: a ${VAR}
    naming the agent's secret is text, never expanded, and with libs/policy's check made to let
    everything through (a hole in the rules, simulated), the engine on the host still refuses an
    `include` and a log path outside the target (exit 2, nothing written outside it)."""
    from iowatt_agent import plan as plan_module

    from tests.jobfile_engine import calls, write_recording_engine

    engine = write_recording_engine(tmp_path / "engine")
    monkeypatch.setenv("IOWATT_AGENT_SECRET", SECRET)
    allowed = tmp_path / "allowed"
    allowed.mkdir()
    canary = tmp_path / "canary"
    canary.mkdir()
    (canary / "secret.txt").write_text("do not touch\n")
    state = tmp_path / "state"
    save_policy(state, Policy(targets=(Target.directory(str(allowed)),), limits=Limits(max_runtime_s=10)))
    real_check = plan_module.check_run

    def holed(*args: Any, **kwargs: Any) -> Any:
        jobs = kwargs["engine_job"].get("jobs") or [{}]
        return [] if jobs[0].get("name") == "hole" else real_check(*args, **kwargs)

    monkeypatch.setattr(plan_module, "check_run", holed)
    cases: dict[str, tuple[str, str]] = {}

    def lease(expect: str, also: str, engine_job: dict[str, Any]) -> None:
        doc = api.add_lease(engine_job, str(allowed), timeout_s=60, idle_s=0, meter="")
        cases[doc["run_id"]] = (expect, also)

    # through the rules: description is free text, and stays text
    lease("result", "", job(description="${IOWATT_AGENT_SECRET}", runtime="1", size="256k"))
    # the rules refuse these ...
    lease("refused", "[option.not_allowed]", job(write_bw_log=f"{canary}/bw", size="256k"))
    lease("refused", "[option.not_allowed]", job(include=str(canary / "secret.txt"), size="256k"))
    # ... and past a hole in them, the engine does, before any I/O
    lease("engine", "is not beneath", job(name="hole", write_bw_log=f"{canary}/bw", size="256k"))
    lease("engine", "(--untrusted)", job(name="hole", write_iops_log=f"{canary}/iops", size="256k"))
    lease("engine", "include", job(name="hole", include=str(canary / "secret.txt"), size="256k"))
    lease("engine", "beneath", job(name="hole", write_lat_log="../canary/lat", size="256k"))

    before = tree_hash(canary, Path("/etc/passwd"))
    code = run_victim(api, state, len(cases), engine=engine)
    assert code == [0]
    failures = {f["run_id"]: f for f in api.failures.values()}
    for run_id, (expect, also) in cases.items():
        if expect == "result":
            assert run_id not in failures, failures.get(run_id)
            continue
        reason = failures[run_id]["reason"]
        if expect == "refused":
            assert reason.startswith(f"host policy refused this run {also}: "), reason
            continue
        assert failures[run_id]["exit_code"] == 2 and also in reason, reason
    (result,) = api.results.values()
    assert "${IOWATT_AGENT_SECRET}" in json.dumps(result)  # the text as sent, not expanded
    assert SECRET not in json.dumps(api.calls, default=str)
    runs = [c for c in calls(engine) if not _asked_about_itself(c["argv"])]
    assert len(runs) == 5 and all("--untrusted" in c["argv"] for c in runs)  # the result and the holes
    assert tree_hash(canary, Path("/etc/passwd")) == before
    assert not list(canary.glob("bw*")) and not list(canary.glob("lat*"))
    assert list(allowed.iterdir()) == []


def test_a_multi_file_job_file_runs_in_a_run_directory_of_its_own(api: FakeApi, tmp_path: Path) -> None:
    """A job file whose jobs make files of their own (nrfiles, filesize, a directory of its own:
    issue 24) runs as written, in `<target>/iowatt-<run_id>` made by the agent beneath the allowed
    directory target: its `directory` (the canary) is replaced, never followed; a symlink a local
    attacker planted at the run directory's name is removed as a link (the canary behind it is
    untouched); the engine names the files (fio's $jobname.$jobnum.$filenum) inside the run
    directory only; the directory and every file in it are gone after the run."""
    allowed = tmp_path / "allowed"
    allowed.mkdir()
    canary = tmp_path / "canary"
    canary.mkdir()
    (canary / "secret.txt").write_text("do not touch\n")
    state = tmp_path / "state"
    save_policy(
        state,
        Policy(
            targets=(Target.directory(str(allowed)),),
            limits=Limits(max_threads=4, max_iodepth=8, max_bytes_written=64 << 20, max_runtime_s=10),
        ),
    )
    text = (
        f"[global]\ndirectory={canary}\nnrfiles=3\nfilesize=64k\nbs=4k\n"
        "[w]\nrw=write\n[r]\nstonewall\nrw=randread\n"
    )
    doc = api.add_lease({"mode": "jobfile", "text": text}, str(allowed), timeout_s=60, idle_s=0, meter="")
    run_dir = allowed / f"iowatt-{doc['run_id']}"
    run_dir.symlink_to(canary)  # planted: the agent must not run (or clean up) through it
    before = tree_hash(canary)
    code = run_victim(api, state, 1)
    assert code == [0]
    assert not api.failures, list(api.failures.values())
    [result] = api.results.values()
    engine_doc = json.dumps(result)
    # the engine ran each job on 3 files of its own, all inside the run directory
    for job_name in ("w", "r"):
        for n in range(3):
            assert f"{run_dir}/{job_name}.0.{n}" in engine_doc, (job_name, n)
    assert str(canary) not in engine_doc
    assert tree_hash(canary) == before
    assert list(allowed.iterdir()) == []  # the run directory and its files removed after the run
