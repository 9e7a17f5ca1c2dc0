"""SNIA PTS runs on the agent (the kind `pts`; docs/pts.md): the purge chosen from the device
(no NVMe or ATA device here: their commands are checked, never run), a device in use refused,
the host's consent judged before anything runs (a hostile server's leases, on a loop device in
/dev/shm with the real engine), the hard timeout; and the fixtures of the trials end to end: the
loop device, the same behind a cgroup-v1 blkio write throttle, and the agent's child as PtsRunner
starts it in that cgroup. tests/backend/test_pts.py runs the IOPS test (through the agent's loop),
Write Saturation and Host Idle Recovery with them, each queued, leased, run, uploaded and reported
by the server in process. The loop-device tests need root, losetup and blkdiscard (the throttled
ones also the blkio controller)."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from iowatt_agent import pts
from iowatt_agent.kinds.pts import PtsRunner
from iowatt_agent.loop import AgentLoop, LoopSettings
from iowatt_agent.policy import save_policy
from iowatt_policy import Policy, Target

from tests.agent.test_loop import REAL_ENGINE

HDPARM_I = """
/dev/sdb:

ATA device, with non-removable media
	Model Number:       EXAMPLE SSD 480GB
Security: 
	Master password revision code = 65534
		supported
	not	enabled
	not	locked
	not	frozen
	not	expired: security count
		supported: enhanced erase
	2min for SECURITY ERASE UNIT. 2min for ENHANCED SECURITY ERASE UNIT.
Logical Unit WWN Device Identifier: 5000000000000000
"""


def test_ata_security_is_read_from_hdparm_identify() -> None:
    sec = pts.ata_security(HDPARM_I)
    assert sec == {"supported": True, "enabled": False, "locked": False, "frozen": False}
    frozen = HDPARM_I.replace("\tnot\tfrozen", "\t\tfrozen")
    assert pts.ata_security(frozen)["frozen"] is True
    assert pts.ata_security("no security section")["supported"] is False


def test_the_purge_is_the_strongest_the_device_has(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pts.shutil, "which", lambda name: f"/usr/sbin/{name}")
    monkeypatch.setattr(pts, "discard_supported", lambda real: True)
    method, commands, _ = pts.purge_plan("auto", "/dev/nvme0n1")
    assert method == "nvme-format" and commands == [
        ["nvme", "format", "/dev/nvme0n1", "--ses=1", "--force", "--timeout=21600000"]
    ]
    method, commands, _ = pts.purge_plan("auto", "/dev/sdb", run=lambda argv: HDPARM_I)
    assert method == "ata-secure-erase" and [c[3] for c in commands] == [
        "--security-set-pass",
        "--security-erase",
    ]
    frozen = HDPARM_I.replace("\tnot\tfrozen", "\t\tfrozen")
    assert pts.purge_plan("auto", "/dev/sdb", run=lambda argv: frozen)[0] == "blkdiscard"
    assert pts.purge_plan("auto", "/dev/loop7")[1] == [["blkdiscard", "/dev/loop7"]]
    assert "zram" not in pts.purge_plan("auto", "/dev/loop7")[2]
    # a zram device has no erase command: a discard (which frees its pages) is its purge, said so
    zram = pts.purge_plan("auto", "/dev/zram3")
    assert zram == ("blkdiscard", [["blkdiscard", "/dev/zram3"]], pts.ZRAM_NOTE)
    assert pts.purge_plan("none", "/dev/nvme0n1") == ("none", [], "no purge asked")
    monkeypatch.setattr(pts, "discard_supported", lambda real: False)
    assert pts.purge_plan("auto", "/dev/loop7")[0] == "none"  # said in the run's deviations
    with pytest.raises(pts.PtsFailed, match="does not support discard"):
        pts.purge_plan("blkdiscard", "/dev/loop7")


def test_a_mounted_device_is_refused_before_anything_is_written() -> None:
    st = os.stat("/dev/null")
    numbers = f"{os.major(st.st_rdev)}:{os.minor(st.st_rdev)}"
    mountinfo = f"36 35 {numbers} / /mnt/data rw,relatime shared:1 - ext4 /dev/null rw\n"
    assert pts.device_in_use("/dev/null", mountinfo=mountinfo, swaps="") == (
        "a file system on it is mounted at /mnt/data"
    )


needs_loop = pytest.mark.skipif(
    os.geteuid() != 0
    or not shutil.which("losetup")
    or not shutil.which("blkdiscard")
    or not os.access(REAL_ENGINE, os.X_OK),
    reason="needs root, losetup, blkdiscard and the real engine",
)

SIZE = 16 << 20


@pytest.fixture
def loop_device():
    backing = Path("/dev/shm") / f"iowatt-pts-{uuid.uuid4().hex[:12]}.img"
    original = os.urandom(SIZE)
    backing.write_bytes(original)
    try:
        dev = subprocess.run(
            ["losetup", "-f", "--show", str(backing)], check=True, capture_output=True, text=True
        ).stdout.strip()
    except subprocess.CalledProcessError as exc:
        backing.unlink()
        pytest.skip(f"no loop device here: {exc.stderr.strip()}")
    by_id = Path("/dev/disk/by-id")
    by_id.mkdir(parents=True, exist_ok=True)
    link = by_id / f"iowatt-pts-test-{uuid.uuid4().hex[:12]}"
    link.symlink_to(dev)
    try:
        yield link, Path(dev), original
    finally:
        link.unlink()
        subprocess.run(["losetup", "-d", dev], check=False)
        backing.unlink(missing_ok=True)


def _loop(api, agent_config, make_client, tmp_path: Path) -> AgentLoop:
    return AgentLoop(
        agent_config,
        state_dir=tmp_path / "state",
        engine=REAL_ENGINE,
        client_factory=make_client,
        settings=LoopSettings(progress_interval_s=0.2, kill_grace_s=0.3),
        send_inventory=False,
    )


TRIAL = {
    "mode": "pts",
    "test": "iops",
    "purge": "blkdiscard",
    "threads": 1,
    "iodepth": 1,
    "ioengine": "psync",
    "round_s": 1,
    "max_rounds": 5,
    "block_sizes": [4096],
    "mixes": [0],
}


@needs_loop
def test_a_hostile_server_gets_nothing_written_without_both_keys(
    api, agent_config, make_client, tmp_path, loop_device
) -> None:
    link, dev, original = loop_device
    state = tmp_path / "state"
    loop = _loop(api, agent_config, make_client, tmp_path)
    save_policy(state, Policy(targets=(Target.device(str(link)),)))  # the host's key is missing
    api.add_lease(TRIAL, str(link), destructive=True)
    assert loop.execute(loop.lease_once()) == "failure"
    save_policy(state, Policy(targets=(Target.device(str(link), destructive=True),)))
    api.add_lease(TRIAL, str(link))  # the run's key is missing
    assert loop.execute(loop.lease_once()) == "failure"
    api.add_lease({**TRIAL, "purge": "rm -rf /"}, str(link), destructive=True)  # not a method
    assert loop.execute(loop.lease_once()) == "failure"
    reasons = sorted(f["reason"] for f in api.failures.values())
    assert any("device.not_destructive" in r for r in reasons)
    assert any("run.destructive_not_confirmed" in r for r in reasons)
    assert any("purge" in r for r in reasons)
    assert hashlib.sha256(dev.read_bytes()).digest() == hashlib.sha256(original).digest()
    assert not api.started


def test_the_hard_timeout_follows_the_runs_planned_length() -> None:
    """The host's max_runtime_s bounds each engine run of a PTS run (libs/policy judges its
    preconditioning's and its round's jobs): the agent's wall-clock cap of the whole run is the
    purge's limit and every engine run the run may take, not the cap of one engine run, so a
    specification run (25 rounds of 56 one-minute elements: 23 h 20 min of rounds, over the
    default 6 h limit's 9 h 5 min cap) runs until the server's planned timeout."""
    from datetime import UTC, datetime

    from iowatt_agent.kinds.pts import PtsRunner
    from iowatt_agent.plan import RUNTIME_SLACK_S, _meter_and_times
    from iowatt_agent.policy import Meters
    from iowatt_agent.schemas import Lease

    from backend.workload.schemas import WorkloadSpec

    spec = WorkloadSpec.model_validate({"kind": "pts", "pts": {"test": "iops"}})
    server_timeout = spec.kind_def.timeout_s(spec)  # the server's plan of the whole run
    assert server_timeout > 25 * 56 * 60

    def timeout(job: dict[str, object], policy: Policy, runner: PtsRunner | None) -> float:
        lease = Lease(
            run_id=uuid.uuid4(),
            lease_id=uuid.uuid4(),
            lease_expires_at=datetime.now(UTC),
            target_path="/dev/disk/by-id/x",
            engine_job=job,
            timeout_s=server_timeout,
        )
        return _meter_and_times(lease, Meters(), 0.0, policy, runner)[3]

    job = spec.pts.lease_job()  # type: ignore[union-attr]
    one_run = 6 * 3600 * 1.5 + RUNTIME_SLACK_S
    assert timeout(job, Policy(), None) == one_run  # one engine run's cap (a block run)
    assert timeout(job, Policy(), PtsRunner()) == server_timeout  # the run's plan governs
    # a tight host: each engine run at most 10 min, the run at most its 26 engine runs and the purge
    tight = Policy(limits=Policy().limits.updated(max_runtime_s=600.0))
    assert timeout(job, tight, PtsRunner()) == pts.PURGE_TIMEOUT_S + 26 * (600 * 1.5 + RUNTIME_SLACK_S)
    wsat = {**job, "test": "wsat"}  # Write Saturation: up to 1,440 rounds (24 h), no preconditioning
    assert timeout(wsat, tight, PtsRunner()) == min(
        server_timeout, pts.PURGE_TIMEOUT_S + 1440 * (600 * 1.5 + RUNTIME_SLACK_S)
    )
    # Host Idle Recovery: its rounds, 5 x 360 bursts and 5 returns to baseline, each an engine run
    # at most the host's limit, and 10 h 30 min of host idle when no engine runs; its own plan
    hir = WorkloadSpec.model_validate({"kind": "pts", "pts": {"test": "hir"}})
    hir_timeout = hir.kind_def.timeout_s(hir)
    assert hir_timeout > 25 * 60 + 15.5 * 3600  # the rounds, the wait states and baselines
    cap = pts.PURGE_TIMEOUT_S + (25 + 5 * 361) * (600 * 1.5 + RUNTIME_SLACK_S) + 360 * 105
    hir_job = hir.pts.lease_job()  # type: ignore[union-attr]
    assert PtsRunner().runtime_cap_s(hir_job, 600 * 1.5 + RUNTIME_SLACK_S) == cap
    lease_t = Lease(
        run_id=uuid.uuid4(),
        lease_id=uuid.uuid4(),
        lease_expires_at=datetime.now(UTC),
        target_path="/dev/disk/by-id/x",
        engine_job=hir_job,
        timeout_s=hir_timeout,
    )
    assert _meter_and_times(lease_t, Meters(), 0.0, tight, PtsRunner())[3] == min(hir_timeout, cap)


BLKIO = Path("/sys/fs/cgroup/blkio")
HIR_THROTTLE_IOPS = 500
HIR_TRIAL = {
    "mode": "pts",
    "test": "hir",
    "purge": "blkdiscard",
    "threads": 1,
    "iodepth": 4,
    "ioengine": "libaio",
    "round_s": 1,
    "max_rounds": 5,
    "burst_s": 1,
    "bursts": 2,
    "wait_states": [1],
}


@pytest.fixture
def throttled_loop(loop_device):
    """The loop device with its writes capped at HIR_THROTTLE_IOPS by a blkio cgroup of its own."""
    if not (BLKIO / "blkio.throttle.write_iops_device").exists():
        pytest.skip("needs cgroup v1's blkio throttle")
    link, dev, original = loop_device
    cg = BLKIO / f"iowatt-test-hir-{uuid.uuid4().hex[:8]}"
    cg.mkdir()
    try:
        st = os.stat(dev)
        (cg / "blkio.throttle.write_iops_device").write_text(
            f"{os.major(st.st_rdev)}:{os.minor(st.st_rdev)} {HIR_THROTTLE_IOPS}\n"
        )
        yield link, dev, cg
    finally:
        cg.rmdir()


ZRAM_CONTROL = Path("/sys/class/zram-control")


def zram_devices() -> set[str]:
    """The zram devices this kernel has now (zram0, zram1, ...)."""
    return {d.name for d in Path("/sys/block").iterdir() if d.name.startswith("zram")}


@contextlib.contextmanager
def zram_device(size: int = SIZE) -> Iterator[tuple[Path, Path, bytes]]:
    """A zram device of its own (zram-control's hot_add, `size` bytes, the kernel's default
    compressor) holding `size` random bytes, with a /dev/disk/by-id link as the host names
    devices: (link, device, original); removed after (hot_remove), the link with it (the caller
    checks that they are gone)."""
    if os.geteuid() != 0 or not (ZRAM_CONTROL / "hot_add").exists():
        pytest.skip("needs root and a kernel with zram (/sys/class/zram-control)")
    n = int((ZRAM_CONTROL / "hot_add").read_text())
    dev = Path(f"/dev/zram{n}")
    link = Path("/dev/disk/by-id") / f"iowatt-pts-zram-{uuid.uuid4().hex[:12]}"
    try:
        (Path(f"/sys/block/zram{n}") / "disksize").write_text(f"{size}\n")
        original = os.urandom(size)
        with dev.open("r+b", buffering=0) as f:
            f.write(original)
            os.fsync(f.fileno())
        link.parent.mkdir(parents=True, exist_ok=True)
        link.symlink_to(dev)
        yield link, dev, original
    finally:
        link.unlink(missing_ok=True)
        (ZRAM_CONTROL / "hot_remove").write_text(f"{n}\n")


@contextlib.contextmanager
def throttled_zram() -> Iterator[tuple[Path, Path, bytes, Path]]:
    """A zram device of its own (zram_device) behind a blkio write throttle of HIR_THROTTLE_IOPS
    (a RAM disk unthrottled would make the engine's CPU the test's cost): (link, device,
    original, cgroup); the cgroup and the device removed after."""
    if not (BLKIO / "blkio.throttle.write_iops_device").exists():
        pytest.skip("needs cgroup v1's blkio throttle")
    if needs_loop.args[0]:
        pytest.skip("needs root, blkdiscard and the real engine")
    with zram_device() as (link, dev, original):
        cg = BLKIO / f"iowatt-test-zram-{uuid.uuid4().hex[:8]}"
        cg.mkdir()
        try:
            st = os.stat(dev)
            (cg / "blkio.throttle.write_iops_device").write_text(
                f"{os.major(st.st_rdev)}:{os.minor(st.st_rdev)} {HIR_THROTTLE_IOPS}\n"
            )
            yield link, dev, original, cg
        finally:
            cg.rmdir()


def throttled_child(job: dict[str, Any], link: Path, cg: Path, tmp_path: Path) -> dict[str, Any]:
    """The agent's child as PtsRunner starts it, in the throttled cgroup: the document it prints
    (tests/backend/test_pts.py's Write Saturation and Host Idle Recovery trials upload it)."""
    runner = PtsRunner()
    run = runner.prepare(
        REAL_ENGINE, job, text_file=tmp_path / "job.json", target=str(link), run_key=f"{job['test']}-trial"
    )
    run.make_dir()
    argv = [str(runner.program(run, REAL_ENGINE)), *runner.arguments(run)]
    # the child (and the engines it starts) join the throttled cgroup before anything runs
    done = subprocess.run(
        ["sh", "-c", f'echo $$ > {cg}/cgroup.procs && exec "$@"', "sh", *argv],
        capture_output=True,
        text=True,
        timeout=120,
    )
    run.discard()
    assert done.returncode == 0, done.stderr[-2000:]
    out: dict[str, Any] = json.loads(done.stdout)
    return out
