"""Issue 15's leases on the host: heap vs B-tree (the real engine) and TPC-H at SF 0.01 on a
private PostgreSQL (the real tpch code, as a child of the agent), run by the real agent loop
against the fake API (httpx MockTransport); a hostile server's TPC-H leases refused with the
policy's reason and nothing run or written; cancel and a killed agent's leftovers (the child,
the private DBMS, its directory) removed."""

from __future__ import annotations

import importlib
import importlib.util
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from iowatt_agent.leftovers import remove_leftovers
from iowatt_agent.loop import AgentLoop, LoopSettings
from iowatt_agent.policy import save_policy
from iowatt_agent.tpch.lease import processes_under
from iowatt_policy import Limits, Policy, Target

from tests.agent.fakes import FakeApi
from tests.agent.test_file_workloads import tree_hash

# real DBMS servers (PostgreSQL, MariaDB, DuckDB): make test runs them, make test-fast does not
pytestmark = pytest.mark.slow

REAL_ENGINE = Path(__file__).resolve().parents[2] / "agent" / "engine" / "build" / "iowatt-engine"
DEV = "/dev/disk/by-id/ata-DB_LEASE_TEST"
HEAP_BTREE = {
    "mode": "heap-btree",
    "records": "3000",
    "queries": "300",
    "cache_fractions": "0.5,1",
    "randseed": "5",
    "structure": "both",
}
TPCH = {"mode": "tpch", "dbms": "postgresql", "scale_factor": "0.01", "streams": "2"}

needs_engine = pytest.mark.skipif(not os.access(REAL_ENGINE, os.X_OK), reason="the engine is not built")


def have_postgres() -> bool:
    from iowatt_agent.tpch.dbms import Unsupported, pg_bindir

    try:
        pg_bindir()
    except Unsupported:
        return False
    return importlib.util.find_spec("duckdb_extension_tpch") is not None


needs_postgres = pytest.mark.skipif(not have_postgres(), reason="PostgreSQL or the [tpch] extra is missing")


@pytest.fixture
def host(tmp_path: Path) -> Iterator[dict[str, Path]]:
    """A directory target the DBMS's own user can reach (tmp_path is 0700), a host file beside
    it, a canary next to it, and a policy allowing PostgreSQL only."""
    root = Path(os.path.realpath(tempfile.mkdtemp(prefix="iowatt-a-")))
    root.chmod(0o755)
    target = root / "target"
    target.mkdir(mode=0o755)
    (target / "theirs.txt").write_text("the host's own file\n")
    canary = root / "canary"
    canary.mkdir()
    (canary / "secret.txt").write_text("do not touch\n")
    state = tmp_path / "state"
    save_policy(
        state,
        Policy(
            targets=(Target.directory(str(target)), Target.device(DEV)),
            limits=Limits(max_bytes_written=64 << 30, max_runtime_s=3600),
            allowed_dbms=("postgresql",),
        ),
    )
    try:
        yield {"root": root, "target": target, "canary": canary, "state": state}
    finally:
        shutil.rmtree(root, ignore_errors=True)


def unlimited_bytes(host: dict[str, Path]) -> None:
    """The host's policy without a bytes-written limit: a TPC-H run is then judged without
    libs/workload's bound (a build without it refuses runs the host limits: the hostile test)."""
    save_policy(
        host["state"],
        Policy(
            targets=(Target.directory(str(host["target"])),),
            limits=Limits(max_bytes_written=None, max_runtime_s=3600),
            allowed_dbms=("postgresql",),
        ),
    )


def make_loop(api: FakeApi, agent_config: Any, make_client: Any, state: Path) -> AgentLoop:
    return AgentLoop(
        agent_config,
        state_dir=state,
        engine=REAL_ENGINE,
        client_factory=make_client,
        settings=LoopSettings(lease_wait_s=0.1, progress_interval_s=0.2, kill_grace_s=5.0, idle_s=0),
        send_inventory=False,
    )


def run_lease(loop: AgentLoop, api: FakeApi, job: dict[str, Any], target: Path | str, **fields: Any) -> str:
    api.add_lease(job, str(target), timeout_s=fields.pop("timeout_s", 600), **fields)
    got = loop.lease_once()
    assert got is not None
    return loop.execute(got)


def jobs_left(state: Path) -> list[Path]:
    jobs = state / "jobs"
    return sorted(jobs.iterdir()) if jobs.exists() else []


def only_failure(api: FakeApi, run_id: str) -> dict[str, Any]:
    [failure] = [f for f in api.failures.values() if f["run_id"] == run_id]
    return failure


@needs_engine
def test_a_heap_btree_lease_runs_end_to_end(
    api: FakeApi, agent_config: Any, make_client: Any, host: dict[str, Path]
) -> None:
    target, state = host["target"], host["state"]
    before = tree_hash(target, host["canary"])
    loop = make_loop(api, agent_config, make_client, state)
    assert run_lease(loop, api, HEAP_BTREE, target) == "result", api.failures
    [upload] = api.results.values()
    doc = upload["engine_result"]
    assert doc["iowatt"]["mode"] == "heap-btree" and doc["jobs"][0]["jobname"] == "heap-btree"
    rows = {(e["structure"], e["operation"], e["cache_fraction"]) for e in doc["heap_btree"]}
    assert rows == {
        (s, o, f) for s in ("heap", "btree") for o in ("insert", "point_query") for f in (0.5, 1.0)
    }
    assert all(e["found"] == e["ops"] for e in doc["heap_btree"] if e["operation"] == "point_query")
    run = doc["heap_btree_run"]
    assert (run["records"], run["queries"], run["randseed"]) == (3000, 300, 5)
    assert run["directory"].startswith(str(target / "iowatt-")) and run["beneath"] == str(target)
    # the run directory and the job file are gone; the target is as found
    assert tree_hash(target, host["canary"]) == before
    assert jobs_left(state) == []


@needs_engine
def test_heap_btree_limits_come_from_the_engines_facts(
    api: FakeApi, agent_config: Any, make_client: Any, host: dict[str, Path]
) -> None:
    target, state = host["target"], host["state"]
    save_policy(
        state,
        Policy(targets=(Target.directory(str(target)),), limits=Limits(max_bytes_written=1 << 20)),
    )
    loop = make_loop(api, agent_config, make_client, state)
    lease = api.add_lease({**HEAP_BTREE, "records": "200000"}, str(target), timeout_s=60)
    got = loop.lease_once()
    assert got is not None and loop.execute(got) == "failure"
    reason = only_failure(api, lease["run_id"])["reason"]
    assert "[limit.bytes_written]: the heap-btree workload writes up to " in reason
    assert api.started == [] and jobs_left(state) == []


@needs_postgres
def test_a_tpch_lease_runs_end_to_end_on_a_private_postgresql(
    api: FakeApi, agent_config: Any, make_client: Any, host: dict[str, Path]
) -> None:
    target, state = host["target"], host["state"]
    before = tree_hash(target, host["canary"])
    unlimited_bytes(host)
    loop = make_loop(api, agent_config, make_client, state)
    # one throughput stream: the streams are test_tpch.py's subject, the lease's path is this one's
    assert run_lease(loop, api, {**TPCH, "streams": "1"}, target) == "result", api.failures
    [upload] = api.results.values()
    doc = upload["engine_result"]
    assert upload["engine_exit_code"] == 0
    job = doc["jobs"][0]
    assert (job["jobname"], job["job options"]["rw"], doc["iowatt"]["mode"]) == ("tpch", "tpch", "tpch")
    tpch = doc["tpch"]
    assert tpch["label"] == "TPC-H-derived, not audited" and tpch["dbms"] == "postgresql"
    assert tpch["scale_factor"] == 0.01 and tpch["streams"] == 1
    assert tpch["answers"]["checked"] == tpch["answers"]["ok"] == 22 * 2  # power + 1 stream
    assert tpch["qphh_at_size"] > 0 and tpch["load_s"] > 0
    # jobs[0]'s runtime is the power test's time plus the throughput test's
    power = sum(q["seconds"] for q in tpch["queries"] if q["test"] == "power")
    power += sum(r["seconds"] for r in tpch["refresh"]["timings"] if r["test"] == "power")
    assert job["iowatt"]["runtime_ns"] == pytest.approx((power + tpch["throughput_s"]) * 1e9, rel=1e-3)
    assert job["read"]["total_ios"] == 0 and "not measured" in job["iowatt"]["io_counters"]
    # the instance lived in the run's directory inside the target
    assert tpch["instance_directory"] == str(
        target / f"iowatt-tpch-{api.results_by_run.popitem()[0]}" / "dbms"
    )
    # progress: the phases as percent of the whole run, rising
    phases = [p["job_name"] for p in api.progress if p["job_name"].startswith("tpch ")]
    assert {"tpch load", "tpch power"} <= set(phases), phases
    percents = [p["percent"] for p in api.progress if p["job_name"].startswith("tpch ")]
    assert percents == sorted(percents)
    # nothing left: no DBMS process, no directory, no job file
    assert processes_under(target) == []
    assert tree_hash(target, host["canary"]) == before
    assert jobs_left(state) == []


@needs_postgres
def test_cancel_stops_the_dbms_and_removes_everything(
    api: FakeApi, agent_config: Any, make_client: Any, host: dict[str, Path]
) -> None:
    target, state = host["target"], host["state"]
    before = tree_hash(target)
    unlimited_bytes(host)
    loop = make_loop(api, agent_config, make_client, state)
    # one throughput stream: the cancel comes in the load, so a second stream's reference answers
    # would be computed for nothing
    lease = api.add_lease({**TPCH, "streams": "1"}, str(target), timeout_s=600)
    seen_dbms: list[int] = []

    def cancel_once_running(method: str, path: str, body: Any) -> None:
        # cancel once the private PostgreSQL runs (the load or a later phase)
        if path.endswith("/progress") and body["job_name"] in ("tpch load", "tpch power", "tpch throughput"):
            seen_dbms.extend(processes_under(target))
            api.cancel_runs.add(lease["run_id"])

    api.on_request = cancel_once_running
    got = loop.lease_once()
    assert got is not None and loop.execute(got) == "failure"
    failure = only_failure(api, lease["run_id"])
    assert failure["cancelled"] is True and failure["reason"] == "cancelled by the server"
    assert seen_dbms, "the DBMS was running when the cancel came"
    assert processes_under(target) == []
    assert tree_hash(target) == before
    assert jobs_left(state) == []
    assert api.results == {}


@needs_postgres
def test_the_hard_timeout_kills_the_run_and_its_dbms(
    api: FakeApi, agent_config: Any, make_client: Any, host: dict[str, Path]
) -> None:
    """The lease's timeout (the agent's cap of a TPC-H run, whose duration is unbounded) stops
    the child's group and then the private DBMS; the run fails naming the timeout."""
    unlimited_bytes(host)
    target, state = host["target"], host["state"]
    before = tree_hash(target)
    loop = make_loop(api, agent_config, make_client, state)
    lease = api.add_lease({**TPCH, "scale_factor": "0.05"}, str(target), timeout_s=6)
    got = loop.lease_once()
    assert got is not None and loop.execute(got) == "failure"
    failure = only_failure(api, lease["run_id"])
    assert failure["reason"].startswith("timeout: engine still running after 6 s"), failure["reason"]
    assert failure["cancelled"] is False
    assert processes_under(target) == []
    assert tree_hash(target) == before and jobs_left(state) == []


def test_a_hostile_servers_tpch_leases_are_refused_and_nothing_runs(
    api: FakeApi, agent_config: Any, make_client: Any, host: dict[str, Path]
) -> None:
    target, canary, state = host["target"], host["canary"], host["state"]
    before = tree_hash(host["root"])
    loop = make_loop(api, agent_config, make_client, state)
    cases: list[tuple[str, dict[str, Any], str, str]] = [
        ("dbms not allowed", {**TPCH, "dbms": "mariadb"}, str(target), "[dbms.not_allowed]"),
        ("device target", TPCH, DEV, "[target.kind]"),
        ("unlisted target", TPCH, str(canary), "[target.not_allowed]"),
        ("absurd SF", {**TPCH, "scale_factor": "1000"}, str(target), "[limit.bytes_written]"),
        ("SF beyond any", {**TPCH, "scale_factor": "1e6"}, str(target), "[option.not_allowed]"),
        ("extra key", {**TPCH, "directory": str(canary)}, str(target), "[option.not_allowed]"),
        ("extra key 2", {**TPCH, "command": "initdb"}, str(target), "[option.not_allowed]"),
        (
            "shell dbms",
            {**TPCH, "dbms": f"postgresql; touch {canary}/pwned"},
            str(target),
            "[option.not_allowed]",
        ),
        ("subst dbms", {**TPCH, "dbms": f"$(touch {canary}/pwned)"}, str(target), "[option.not_allowed]"),
        ("heap-btree key", {**HEAP_BTREE, "keep": "1"}, str(target), "[option.not_allowed]"),
        ("heap-btree flag", {**HEAP_BTREE, "records": "10 --keep"}, str(target), "[option.not_allowed]"),
    ]
    leases = [api.add_lease(job, where, timeout_s=60) for _, job, where, _ in cases]
    for _ in cases:
        got = loop.lease_once()
        assert got is not None
        assert loop.execute(got) == "failure"
    for (name, _, _, rule), lease in zip(cases, leases, strict=True):
        reason = only_failure(api, lease["run_id"])["reason"]
        assert reason.startswith("host policy refused this run "), (name, reason)
        assert rule in reason, (name, reason)
    assert "iowatt-agent targets allow-dbms mariadb" in only_failure(api, leases[0]["run_id"])["reason"]
    assert api.started == [] and api.results == {}
    assert tree_hash(host["root"]) == before and not (canary / "pwned").exists()
    assert jobs_left(state) == []


def test_without_the_hosts_consent_nothing_starts(
    api: FakeApi, agent_config: Any, make_client: Any, host: dict[str, Path]
) -> None:
    target, state = host["target"], host["state"]
    save_policy(state, Policy(targets=(Target.directory(str(target)),)))  # no allowed_dbms
    before = tree_hash(host["root"])
    loop = make_loop(api, agent_config, make_client, state)
    lease = api.add_lease(TPCH, str(target), timeout_s=60)
    got = loop.lease_once()
    assert got is not None and loop.execute(got) == "failure"
    reason = only_failure(api, lease["run_id"])["reason"]
    assert "[dbms.not_allowed]" in reason and "iowatt-agent targets allow-dbms postgresql" in reason
    assert api.started == [] and tree_hash(host["root"]) == before


def test_a_host_without_the_dbms_refuses_with_the_install_command(
    api: FakeApi,
    agent_config: Any,
    make_client: Any,
    host: dict[str, Path],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    empty = tmp_path / "no-postgres"
    empty.mkdir()
    monkeypatch.setenv("IOWATT_TPCH_PG_BINDIR", str(empty))
    target, state = host["target"], host["state"]
    before = tree_hash(host["root"])
    loop = make_loop(api, agent_config, make_client, state)
    lease = api.add_lease(TPCH, str(target), timeout_s=60)
    got = loop.lease_once()
    assert got is not None and loop.execute(got) == "failure"
    reason = only_failure(api, lease["run_id"])["reason"]
    assert reason.startswith("unsupported on this host: "), reason
    assert "apt-get install -y postgresql" in reason
    assert api.started == [] and tree_hash(host["root"]) == before
    assert jobs_left(state) == []


@needs_postgres
def test_a_killed_agents_tpch_run_is_removed_at_start_up(host: dict[str, Path]) -> None:
    """The agent was SIGKILLed during a TPC-H run: its child (own session) and the private
    PostgreSQL (another session) still run, the run directory is on the target. At start-up
    the child and the DBMS are killed and the directory removed; nothing else is touched."""
    target, canary, state = host["target"], host["canary"], host["state"]
    run_id = str(uuid.uuid4())
    jobs = state / "jobs"
    jobs.mkdir(parents=True, exist_ok=True)
    marker = jobs / f"{run_id}.tpch"
    marker.write_text(json.dumps({**TPCH, "streams": "1"}) + "\n")  # killed in the load: one is enough
    run_dir = target / f"iowatt-tpch-{run_id}"
    child = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "iowatt_agent.tpch.lease",
            f"--job={marker}",
            f"--directory={run_dir}",
            f"--target={target}",
            "--output-format=json",
            "--progress=jsonl",
        ],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    try:
        assert child.stderr is not None
        for raw in child.stderr:  # wait for the private server to run (the load)
            if b'"phase": "load"' in raw:
                break
        assert processes_under(run_dir), "the private PostgreSQL runs in the run directory"
        before_canary = tree_hash(canary)
        removed = remove_leftovers(state)
        child.wait(timeout=30)
        assert child.returncode == -signal.SIGKILL
        deadline = time.monotonic() + 10
        while processes_under(target) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert processes_under(target) == []
        assert not run_dir.exists() and run_dir in removed and marker in removed
        assert sorted(p.name for p in target.iterdir()) == ["theirs.txt"]
        assert tree_hash(canary) == before_canary
    finally:
        if child.poll() is None:
            os.killpg(child.pid, signal.SIGKILL)


@pytest.mark.skipif(
    not hasattr(importlib.import_module("iowatt_workload"), "tpch_facts"),
    reason="libs/workload lacks tpch_facts",
)
def test_tpch_bytes_written_are_judged_by_libs_workloads_one_bound(
    api: FakeApi, agent_config: Any, make_client: Any, host: dict[str, Path]
) -> None:
    """The agent computes the bound itself with the server's function (never the server's facts):
    one byte under it is refused naming exactly that bound, the bound itself passes the policy."""
    from iowatt_workload import tpch_facts

    target, state = host["target"], host["state"]
    bound = int(tpch_facts(5.0, 2)["bytes_written_max"])
    job = {**TPCH, "scale_factor": "5"}
    for limit, expect in ((bound - 1, f"--max-bytes-written {bound}"), (bound, None)):
        save_policy(
            state,
            Policy(
                targets=(Target.directory(str(target)),),
                limits=Limits(max_bytes_written=limit),
                allowed_dbms=("postgresql",),
            ),
        )
        loop = make_loop(api, agent_config, make_client, state)
        lease = api.add_lease(job, str(target), timeout_s=60, facts={"bytes_written_max": 1})
        got = loop.lease_once()
        assert got is not None
        if expect is not None:
            assert loop.execute(got) == "failure"
            reason = only_failure(api, lease["run_id"])["reason"]
            assert "[limit.bytes_written]" in reason and expect in reason, reason
        else:
            plan = loop.plan(got)  # allowed: the run would start (not run here: SF 5 takes long)
            run = plan.file_run
            assert run is not None and run.mode == "tpch" and run.scale is None
            # what runs is the kind's runner's: this Python's child module on the job written
            assert plan.runner.program(run, "/nonexistent/engine") == sys.executable
            assert plan.runner.arguments(run) == [
                "-m",
                "iowatt_agent.tpch.lease",
                f"--job={run.text_file}",
                f"--directory={target}/iowatt-tpch-{lease['run_id']}",
                f"--target={target}",
            ]
            assert json.loads(run.text_file.read_text()) == job and plan.runner.phases(run) is None
            assert (plan.runner.kill_grace_s or 0) > LoopSettings().kill_grace_s  # the DBMS stops first
            run.discard()
    assert api.started == [] and jobs_left(state) == []


@needs_engine
def test_a_killed_agents_heap_btree_run_is_removed_at_start_up(host: dict[str, Path]) -> None:
    """A heap-btree engine left running by a SIGKILLed agent (its own session) is killed by its
    run directory, and the directory with the engine's file is removed; nothing else."""
    target, state = host["target"], host["state"]
    run_id = str(uuid.uuid4())
    jobs = state / "jobs"
    jobs.mkdir(parents=True, exist_ok=True)
    marker = jobs / f"{run_id}.heap-btree"
    marker.write_text(json.dumps(HEAP_BTREE) + "\n")
    run_dir = target / f"iowatt-{run_id}"
    run_dir.mkdir(mode=0o700)
    engine = subprocess.Popen(
        [
            str(REAL_ENGINE),
            "--heap-btree",
            f"--directory={run_dir}",
            f"--beneath={target}",
            "--records=3000000",
            "--cache-fraction=0.1",
            "--output-format=json",
            "--progress=jsonl",
        ],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    try:
        assert engine.stderr is not None
        engine.stderr.readline()  # its first progress line: it runs
        removed = remove_leftovers(state)
        engine.wait(timeout=30)
        assert engine.returncode == -signal.SIGKILL
        assert not run_dir.exists() and run_dir in removed and marker in removed
        assert sorted(p.name for p in target.iterdir()) == ["theirs.txt"]
    finally:
        if engine.poll() is None:
            os.killpg(engine.pid, signal.SIGKILL)
