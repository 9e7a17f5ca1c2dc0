"""File workloads on the host (issue 14): leases of PostMark and vdbench file sets run by the real
agent loop and the real engine in a directory target on tmpfs, against the fake API (httpx
MockTransport); hostile leases refused with the policy's reason and nothing written outside the
target; the run directory removed after the run, after a cancel or a timeout, and at start-up
after a killed agent."""

from __future__ import annotations

import hashlib
import os
import shutil
import signal
import subprocess
import tempfile
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from iowatt_agent.filework import make_run_dir, mode_args, remove_run_dir
from iowatt_agent.kinds import RUNNERS
from iowatt_agent.leftovers import remove_leftovers
from iowatt_agent.loop import AgentLoop, LoopSettings
from iowatt_agent.policy import save_policy
from iowatt_agent.runner import parse_progress_line
from iowatt_policy import Limits, Policy, Target

from tests.agent.fakes import FakeApi
from tests.services import children_on_one_cpu
from tests.waiting import wait_until

REAL_ENGINE = Path(__file__).resolve().parents[2] / "agent" / "engine" / "build" / "iowatt-engine"
DEV = "/dev/disk/by-id/ata-FILE_WORKLOAD_TEST"

pytestmark = pytest.mark.skipif(
    not os.access(REAL_ENGINE, os.X_OK), reason=f"the real engine is not built ({REAL_ENGINE})"
)

POSTMARK = "set number 200\nset transactions 2000\nset size 500 5000\nset subdirectories 3\nrun\nquit\n"


def vdbench(
    *, anchor: str = "/etc", threads: int = 2, xfersize: str = "4k", size: str = "64k", **rd: str
) -> str:
    """A small vdbench file set; `fwdrate=N` paces a run whose speed is not what a test checks
    (fwdrate=max reads the page cache as fast as two threads can: two cores for the run's seconds)."""
    rd_text = ",".join(
        f"{k}={v}" for k, v in {"fwdrate": "max", "elapsed": "2", "interval": "1", **rd}.items()
    )
    return (
        f"fsd=fsd1,anchor={anchor},depth=1,width=2,files=3,size={size}\n"
        f"fwd=fwd1,fsd=fsd1,operation=read,xfersize={xfersize},fileio=random,fileselect=random,threads={threads}\n"
        f"rd=rd1,fwd=fwd1,format=yes,{rd_text}\n"
    )


def tree_hash(*roots: Path) -> dict[str, str]:
    digests: dict[str, str] = {}
    for root in roots:
        paths = [root] if root.is_file() else [root, *sorted(root.rglob("*"))]
        for p in paths:
            if p.is_symlink():
                digests[str(p)] = "link:" + os.readlink(p)
            elif p.is_file():
                digests[str(p)] = hashlib.sha256(p.read_bytes()).hexdigest()
            elif p.is_dir():
                digests[str(p)] = f"dir:{oct(p.stat().st_mode)}"
    return digests


@pytest.fixture
def shm() -> Iterator[Path]:
    """A directory on tmpfs (real files, no disk)."""
    root = Path(tempfile.mkdtemp(prefix="iowatt-g-", dir="/dev/shm" if os.path.isdir("/dev/shm") else None))
    try:
        yield Path(os.path.realpath(root))
    finally:
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture
def host(shm: Path, tmp_path: Path) -> dict[str, Path]:
    target = shm / "target"
    target.mkdir()
    (target / "theirs.txt").write_text("the host's own file\n")  # the directory is as found afterwards
    (target / "sub").mkdir()
    (target / "sub" / "kept.bin").write_bytes(os.urandom(4096))
    canary = shm / "canary"
    canary.mkdir()
    (canary / "secret.txt").write_text("do not touch\n")
    seven = shm / "seven.txt"
    seven.write_bytes(b"iowatt\n")
    state = tmp_path / "state"
    save_policy(
        state,
        Policy(
            targets=(
                Target.directory(str(target)),
                Target.file(str(seven), allow_write=True),
                Target.device(DEV),
            ),
            limits=Limits(
                max_threads=4,
                max_iodepth=8,
                max_bs_bytes=1 << 20,
                max_bytes_written=64 << 20,
                max_runtime_s=30,
            ),
        ),
    )
    return {"target": target, "canary": canary, "seven": seven, "state": state}


def make_loop(api: FakeApi, agent_config: Any, make_client: Any, state: Path) -> AgentLoop:
    return AgentLoop(
        agent_config,
        state_dir=state,
        engine=REAL_ENGINE,
        client_factory=make_client,
        settings=LoopSettings(lease_wait_s=0.1, progress_interval_s=0.2, kill_grace_s=5.0, idle_s=0),
        send_inventory=False,
    )


def run_lease(
    loop: AgentLoop, api: FakeApi, engine_job: dict[str, Any], target: Path | str, **fields: Any
) -> str:
    api.add_lease(engine_job, str(target), timeout_s=fields.pop("timeout_s", 120), **fields)
    got = loop.lease_once()
    assert got is not None
    return loop.execute(got)


def only_failure(api: FakeApi, run_id: str) -> dict[str, Any]:
    [failure] = [f for f in api.failures.values() if f["run_id"] == run_id]
    return failure


def test_a_lease_of_each_mode_runs_end_to_end_and_leaves_the_directory_as_found(
    api: FakeApi, agent_config: Any, make_client: Any, host: dict[str, Path]
) -> None:
    target, state = host["target"], host["state"]
    before = tree_hash(target, host["canary"], Path("/etc/passwd"))
    loop = make_loop(api, agent_config, make_client, state)

    assert run_lease(loop, api, {"mode": "postmark", "commands": POSTMARK}, target) == "result"
    assert (
        run_lease(loop, api, {"mode": "vdbench", "parameters": vdbench(fwdrate="500"), "scale": "1"}, target)
        == "result"
    )
    assert len(api.results) == 2 and api.failures == {}
    pm, vd = (r["engine_result"] for r in api.results.values())
    assert pm["postmark"]["files_created"] >= 200 and pm["postmark"]["transactions"] == 2000
    assert pm["postmark"]["files_deleted"] == pm["postmark"]["files_created"]
    assert pm["postmark"]["beneath"] == str(target)
    assert pm["postmark"]["directory"].startswith(str(target / "iowatt-"))
    assert vd["fileset"]["fsd"][0]["total_files"] == 6 and vd["fileset"]["scale"] == 1
    # anchor=/etc replaced by the run directory
    assert vd["fileset"]["fsd"][0]["anchor_given"] == "/etc" and vd["fileset"]["fsd"][0]["anchor"] == "."
    assert vd["fileset"]["directory"].startswith(str(target / "iowatt-"))
    assert vd["fileset"]["total"]["ops"]["read"]["ops"] > 0
    # progress of the vdbench run: its phases, as percent of the run
    names = [p["job_name"] for p in api.progress]
    assert "vdbench run" in names, names
    assert 50.0 <= max(p["percent"] for p in api.progress if p["job_name"] == "vdbench run") <= 100.0
    # nothing left: the run directories, the text files in the state directory
    assert tree_hash(target, host["canary"], Path("/etc/passwd")) == before
    assert list((state / "jobs").iterdir()) == []


def test_cancel_and_timeout_kill_the_engine_and_remove_the_run_directory(
    api: FakeApi, agent_config: Any, make_client: Any, host: dict[str, Path]
) -> None:
    target, state = host["target"], host["state"]
    before = tree_hash(target)
    loop = make_loop(api, agent_config, make_client, state)

    lease = api.add_lease(
        {"mode": "vdbench", "parameters": vdbench(elapsed="20", fwdrate="200"), "scale": "1"},
        str(target),
        timeout_s=120,
    )
    api.cancel_runs.add(lease["run_id"])
    t0 = time.monotonic()
    got = loop.lease_once()
    assert got is not None and loop.execute(got) == "failure"
    assert time.monotonic() - t0 < 15
    failure = only_failure(api, lease["run_id"])
    assert failure["cancelled"] is True and failure["reason"] == "cancelled by the server"

    lease = api.add_lease(
        {"mode": "vdbench", "parameters": vdbench(elapsed="20", fwdrate="200"), "scale": "1"},
        str(target),
        timeout_s=2,
    )
    got = loop.lease_once()
    assert got is not None and loop.execute(got) == "failure"
    assert only_failure(api, lease["run_id"])["reason"].startswith("timeout: engine still running after 2 s")
    assert api.results == {}
    assert tree_hash(target) == before
    assert list((state / "jobs").iterdir()) == []


def test_a_hostile_server_cannot_make_a_file_workload_touch_anything_outside_the_target(
    api: FakeApi, agent_config: Any, make_client: Any, host: dict[str, Path], shm: Path
) -> None:
    target, canary, seven, state = host["target"], host["canary"], host["seven"], host["state"]
    before = tree_hash(target, canary, seven, Path("/etc/passwd"))
    loop = make_loop(api, agent_config, make_client, state)
    pm = {"mode": "postmark", "commands": POSTMARK}
    vd = {"mode": "vdbench", "parameters": vdbench(), "scale": "1"}
    engine_refuses = "option.not_allowed]: the engine refuses the"
    cases: list[tuple[str, dict[str, Any], Path | str, str]] = [
        # targets: a directory target only
        ("device", pm, DEV, "[target.kind]"),
        ("file", vd, seven, "[target.kind]"),
        ("unlisted", pm, canary, "[target.not_allowed]"),
        ("traversal", vd, f"{target}/../canary", "[target.not_allowed]"),
        # the text: tricks the engine refuses (its --parse-only, exit 2)
        ("shell", {**pm, "commands": f"set number 10\n!touch {canary}/pwned\nrun\n"}, target, engine_refuses),
        ("load", {**pm, "commands": f"load {canary}/secret.txt\nrun\n"}, target, engine_refuses),
        ("location", {**pm, "commands": f"set location +{canary}\nrun\n"}, target, engine_refuses),
        ("run file", {**pm, "commands": f"run {canary}/out\n"}, target, engine_refuses),
        ("sd", {**vd, "parameters": "sd=sd1,lun=/dev/sda\n" + vdbench()}, target, engine_refuses),
        # limits, from the engine's own facts
        ("threads", {**vd, "parameters": vdbench(threads=6, size="4k")}, target, "[limit.threads]"),
        ("bs", {**vd, "parameters": vdbench(xfersize="2m", size="4m")}, target, "[limit.block_size]"),
        ("bytes", {**vd, "parameters": vdbench(size="16m")}, target, "[limit.bytes_written]"),
        ("scale", {**vd, "scale": "900"}, target, "[limit.runtime]"),  # 1800 s of a 2 s run
        ("huge scale", {**vd, "scale": "100000"}, target, "[option.not_allowed]"),
        ("elapsed", {**vd, "elapsed": "3600"}, target, "[limit.runtime]"),
        # the job's shape: unknown modes and extra keys refused, never ignored
        ("extra key", {**pm, "directory": str(canary)}, target, "[option.not_allowed]"),
        ("beneath", {**vd, "beneath": "/"}, target, "[option.not_allowed]"),
        ("mode", {"mode": "fio", "commands": "run"}, target, "[option.not_allowed]"),
        ("postmark scale", {**pm, "scale": "2"}, target, "[option.not_allowed]"),
    ]
    leases = []
    for _name, job, where, _ in cases:
        leases.append(api.add_lease(job, str(where), timeout_s=60))
    # allowed, and confined: the anchor names /etc and a '..' path, the engine uses the run directory
    ok_etc = api.add_lease(vd, str(target))
    ok_dots = api.add_lease({**vd, "parameters": vdbench(anchor=f"{target}/../canary")}, str(target))
    # on one CPU: the two allowed runs read the page cache at fwdrate=max for their 2 s (two
    # threads took both cores, ~4 CPU-s); the test reads where they ran, never how fast
    with children_on_one_cpu():
        for _ in range(len(cases) + 2):
            got = loop.lease_once()
            assert got is not None
            loop.execute(got)

    for (name, _, _, expect), lease in zip(cases, leases, strict=True):
        reason = only_failure(api, lease["run_id"])["reason"]
        assert reason.startswith("host policy refused this run "), (name, reason)
        assert expect in reason, (name, reason)
    assert "shell escapes" in only_failure(api, leases[4]["run_id"])["reason"]
    assert set(api.started) == {ok_etc["run_id"], ok_dots["run_id"]}
    assert {r["lease_id"] for r in api.results.values()} == {ok_etc["lease_id"], ok_dots["lease_id"]}
    assert tree_hash(target, canary, seven, Path("/etc/passwd")) == before
    assert not (canary / "pwned").exists()
    assert sorted(p.name for p in shm.iterdir()) == ["canary", "seven.txt", "target"]
    assert list((state / "jobs").iterdir()) == []


def test_a_killed_agents_leftovers_are_removed_at_start_up_and_nothing_else(
    host: dict[str, Path], shm: Path
) -> None:
    target, canary, state = host["target"], host["canary"], host["state"]
    jobs = state / "jobs"
    jobs.mkdir(parents=True)
    before = tree_hash(canary)
    # a run whose engine is still going (its agent was SIGKILLed): the engine in its own session
    run_id = uuid.uuid4()
    text = jobs / f"{run_id}.vdbench"
    text.write_text(vdbench(elapsed="60"))
    run_dir = make_run_dir(target, f"iowatt-{run_id}")
    argv = mode_args("vdbench", text, run_dir, beneath=str(target), scale=None, elapsed=None)
    engine = subprocess.Popen(
        [str(REAL_ENGINE), *argv, "--output-format=json+", "--progress=jsonl"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        wait_until(lambda: any((run_dir / "vdb.1_1.dir").glob("*.file")), timeout=60)
        # a dead run of another mode, with a link inside its run directory pointing out
        dead = uuid.uuid4()
        (jobs / f"{dead}.postmark").write_text(POSTMARK)
        dead_dir = make_run_dir(target, f"iowatt-{dead}")
        (dead_dir / "s0").mkdir()
        (dead_dir / "s0" / "1").write_bytes(b"x" * 100)
        (dead_dir / "out").symlink_to(canary)
        (dead_dir / "s0" / "link").symlink_to(canary / "secret.txt")
        # not ours: a directory with our prefix but no job file, a look-alike outside any target
        (target / "iowatt-not-a-run").mkdir()
        stray = uuid.uuid4()
        (jobs / f"{stray}.postmark").write_text(POSTMARK)
        (shm / f"iowatt-{stray}").mkdir()
        removed = remove_leftovers(state)
        assert engine.wait(timeout=30) == -signal.SIGKILL
    finally:
        if engine.poll() is None:
            os.killpg(engine.pid, signal.SIGKILL)
            engine.wait()
    assert set(removed) >= {run_dir, dead_dir, text, jobs / f"{dead}.postmark", jobs / f"{stray}.postmark"}
    assert not run_dir.exists() and not dead_dir.exists()
    assert sorted(p.name for p in target.iterdir()) == ["iowatt-not-a-run", "sub", "theirs.txt"]
    assert (shm / f"iowatt-{stray}").is_dir()  # not in a directory target: never touched
    assert tree_hash(canary) == before
    assert list(jobs.iterdir()) == []


def test_the_run_directory_is_never_removed_through_a_link(shm: Path) -> None:
    outside = shm / "outside"
    outside.mkdir()
    (outside / "keep").write_text("x")
    target = shm / "t"
    target.mkdir()
    (target / "iowatt-abc").symlink_to(outside)
    assert remove_run_dir(target, "iowatt-abc") is True  # the link goes, not what it points at
    assert (outside / "keep").read_text() == "x" and not (target / "iowatt-abc").is_symlink()
    link_target = shm / "link-to-t"
    link_target.symlink_to(target)
    make_run_dir(target, "iowatt-abc")
    assert remove_run_dir(link_target, "iowatt-abc") is False  # a target reached through a link
    assert (target / "iowatt-abc").is_dir()
    with pytest.raises(ValueError):
        remove_run_dir(target, "../outside")


def test_progress_lines_of_both_modes_map_to_the_runs_progress() -> None:
    phases = {"creation": (0.0, 10.0), "transactions": (10.0, 80.0), "deletion": (90.0, 10.0)}
    line = (
        '{"event":"progress","mode":"postmark","phase":"transactions","elapsed_ns":5,"done":1,"total":2,'
        '"percent":50.0}'
    )
    p = parse_progress_line(line, phases)
    assert p is not None and p.job_name == "postmark transactions" and p.percent == 50.0 and p.elapsed_ns == 5
    p = parse_progress_line(line.replace("transactions", "deletion"), phases)
    assert p is not None and p.percent == 95.0
    p = parse_progress_line(
        '{"event":"progress","mode":"vdbench","phase":"format","elapsed_ns":7,"done":true}'
    )
    assert p is not None and p.job_name == "vdbench format" and p.percent == 0.0
    p = parse_progress_line('{"event":"progress","mode":"vdbench","phase":"run","interval":1,"percent":50.0}')
    assert p is not None and p.job_name == "vdbench run" and p.percent == 50.0
    # heap-btree's events name no phase: the caller's runner reads one from the event
    line = (
        '{"event":"progress","mode":"heap-btree","structure":"btree","operation":"point_query",'
        '"cache_fraction":0.25,"percent":40.0}'
    )
    p = parse_progress_line(line, None, RUNNERS["heap_btree"].progress_phase)
    assert p is not None and p.job_name == "heap-btree btree point_query 0.25" and p.percent == 40.0
    p = parse_progress_line(line)
    assert p is not None and p.job_name == "heap-btree"


@pytest.fixture
def small_ext4(tmp_path: Path) -> Iterator[Path]:
    """A 16 MiB ext4 file system on a loop device, mounted (root only; skipped elsewhere)."""
    if os.geteuid() != 0 or shutil.which("losetup") is None or shutil.which("mkfs.ext4") is None:
        pytest.skip("needs root, losetup and mkfs.ext4")
    image = tmp_path / "fs.img"
    image.write_bytes(b"")
    os.truncate(image, 16 << 20)
    subprocess.run(["mkfs.ext4", "-q", "-F", str(image)], check=True, capture_output=True)
    made = subprocess.run(
        ["losetup", "-f", "--show", str(image)], capture_output=True, text=True, check=False
    )
    if made.returncode != 0:
        pytest.skip(f"no loop device: {made.stderr.strip()}")
    device = made.stdout.strip()
    mount = tmp_path / "mnt"
    mount.mkdir()
    try:
        subprocess.run(["mount", device, str(mount)], check=True, capture_output=True)
        try:
            yield mount
        finally:
            subprocess.run(["umount", str(mount)], check=False, capture_output=True)
    finally:
        subprocess.run(["losetup", "-d", device], check=False, capture_output=True)


def test_a_file_set_that_does_not_fit_fails_cleanly_on_a_loop_device(
    api: FakeApi, agent_config: Any, make_client: Any, small_ext4: Path, tmp_path: Path
) -> None:
    target = small_ext4 / "bench"
    target.mkdir()
    (target / "theirs.txt").write_text("kept\n")
    state = tmp_path / "state"
    save_policy(state, Policy(targets=(Target.directory(str(target)),)))
    before = tree_hash(small_ext4)
    loop = make_loop(api, agent_config, make_client, state)
    too_big = vdbench(size="2m").replace("files=3", "files=10").replace("xfersize=4k", "xfersize=64k")
    assert run_lease(loop, api, {"mode": "vdbench", "parameters": too_big, "scale": "1"}, target) == "failure"
    [failure] = api.failures.values()
    assert failure["exit_code"] == 1 and "No space left on device" in failure["reason"], failure
    assert "the file set does not fit" in failure["reason"]
    # the same set scaled down fits and runs on the same file system
    assert (
        run_lease(loop, api, {"mode": "vdbench", "parameters": too_big, "scale": "0.1"}, target) == "result"
    )
    assert tree_hash(small_ext4) == before
    assert list((state / "jobs").iterdir()) == []
