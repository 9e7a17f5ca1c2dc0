"""Raw device targets end to end (ADR 0009): a loop device named by a stable /dev/disk/by-id/
link, the real agent loop and the real engine. Read-only unless both keys are given; with both,
the engine writes only the job's region. Needs root and losetup (skipped otherwise)."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import uuid
from pathlib import Path

import pytest
from iowatt_agent.loop import AgentLoop, LoopSettings
from iowatt_agent.policy import load_report, save_policy
from iowatt_policy import Policy, Target

from tests.agent.test_loop import REAL_ENGINE

SIZE = 16 << 20
REGION = 1 << 20

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0 or not shutil.which("losetup") or not os.access(REAL_ENGINE, os.X_OK),
    reason="needs root, losetup and the real engine",
)


@pytest.fixture
def by_id_device(tmp_path: Path):
    backing = tmp_path / "backing.img"
    original = os.urandom(SIZE)
    backing.write_bytes(original)
    try:
        dev = subprocess.run(
            ["losetup", "-f", "--show", str(backing)], check=True, capture_output=True, text=True
        ).stdout.strip()
    except subprocess.CalledProcessError as exc:
        pytest.skip(f"no loop device here: {exc.stderr.strip()}")
    # without udev (this VM) the directory is made here and left: tests in other processes use it
    # at the same time, and removing it under them broke their links
    by_id = Path("/dev/disk/by-id")
    by_id.mkdir(parents=True, exist_ok=True)
    link = by_id / f"iowatt-test-{uuid.uuid4().hex[:12]}"
    link.symlink_to(dev)
    try:
        yield link, Path(dev), original
    finally:
        link.unlink()
        subprocess.run(["losetup", "-d", dev], check=False)


def digest(dev: Path, start: int, length: int) -> str:
    with open(dev, "rb") as f:
        f.seek(start)
        return hashlib.sha256(f.read(length)).hexdigest()


def make_loop(api, agent_config, make_client, tmp_path: Path) -> AgentLoop:
    return AgentLoop(
        agent_config,
        state_dir=tmp_path / "state",
        engine=REAL_ENGINE,
        client_factory=make_client,
        settings=LoopSettings(progress_interval_s=0.2, kill_grace_s=0.3),
        send_inventory=False,
    )


def job(rw: str) -> dict:
    return {
        "global": {},
        "jobs": [{"name": "d", "rw": rw, "bs": "4096", "size": str(REGION), "direct": "1", "stonewall": "1"}],
    }


def test_a_device_is_read_only_unless_both_keys(api, agent_config, make_client, tmp_path, by_id_device):
    link, dev, original = by_id_device
    state = tmp_path / "state"
    save_policy(state, Policy(targets=(Target.device(str(link)),)))
    reported = load_report(state).targets[0]
    assert reported.size_bytes == SIZE and reported.path == str(link)  # facts of the device it names
    whole = digest(dev, 0, SIZE)
    assert whole == hashlib.sha256(original).hexdigest()
    loop = make_loop(api, agent_config, make_client, tmp_path)

    read = api.add_lease(job("randread"), str(link))
    assert loop.execute(loop.lease_once()) == "result", api.failures
    write = api.add_lease(job("randwrite"), str(link), destructive=True)  # the host's key is missing
    assert loop.execute(loop.lease_once()) == "failure"
    assert digest(dev, 0, SIZE) == whole

    save_policy(state, Policy(targets=(Target.device(str(link), destructive=True),)))
    unconfirmed = api.add_lease(job("randwrite"), str(link))  # the run's key is missing
    assert loop.execute(loop.lease_once()) == "failure"
    assert digest(dev, 0, SIZE) == whole
    both = api.add_lease(job("randwrite"), str(link), destructive=True)
    assert loop.execute(loop.lease_once()) == "result", api.failures

    reasons = {f["run_id"]: f["reason"] for f in api.failures.values()}
    assert reasons[write["run_id"]].startswith("host policy refused this run [device.not_destructive]")
    assert reasons[unconfirmed["run_id"]].startswith(
        "host policy refused this run [run.destructive_not_confirmed]"
    )
    assert set(api.started) == {read["run_id"], both["run_id"]}
    [read_result] = [r for r in api.results.values() if r["lease_id"] == read["lease_id"]]
    assert read_result["engine_result"]["jobs"][0]["read"]["io_bytes"] == REGION
    # with both keys the engine wrote its region and nothing else
    assert digest(dev, 0, REGION) != hashlib.sha256(original[:REGION]).hexdigest()
    assert digest(dev, REGION, SIZE - REGION) == hashlib.sha256(original[REGION:]).hexdigest()


def test_targets_add_device_by_its_stable_name(tmp_path, monkeypatch, by_id_device):
    from iowatt_agent import cli
    from iowatt_agent.policy import load_policy
    from typer.testing import CliRunner

    link, dev, _ = by_id_device
    monkeypatch.setenv("IOWATT_AGENT_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setenv("IOWATT_AGENT_SYSTEMD_DROPIN_DIR", str(tmp_path / "dropin"))
    runner = CliRunner()
    unstable = runner.invoke(cli.app, ["targets", "add", "--device", str(dev)])
    assert unstable.exit_code == 2 and "its stable names: " in unstable.stderr, unstable.stderr
    # another test process may have its own link to the same loop number at this moment: all are listed
    named = unstable.stderr.split("its stable names: ", 1)[1].split()
    assert str(link) in [name.rstrip(",") for name in named], unstable.stderr
    added = runner.invoke(cli.app, ["targets", "add", "--device", str(link), "--destructive"])
    assert added.exit_code == 0, added.output
    assert load_policy(tmp_path / "state").targets == (Target.device(str(link), destructive=True),)
    assert f"DeviceAllow={link} rw\n" in (tmp_path / "dropin" / "10-targets.conf").read_text()
    listed = runner.invoke(cli.app, ["targets", "list"])
    assert str(link) in listed.stdout and str(dev) in listed.stdout and "destructive" in listed.stdout
    doc = json.loads(runner.invoke(cli.app, ["targets", "list", "--json"]).stdout)
    assert doc["targets"][0]["size_bytes"] == SIZE
    readonly = runner.invoke(cli.app, ["targets", "add", "--device", str(link)])  # take the key back
    assert readonly.exit_code == 0
    assert f"DeviceAllow={link} r\n" in (tmp_path / "dropin" / "10-targets.conf").read_text()
