"""`iowatt-agent targets ...`, the policy files' trust checks and the systemd drop-in (ADR 0009 §1)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from iowatt_agent import cli
from iowatt_agent.config import ConfigError
from iowatt_agent.policy import (
    engine_job_for,
    load_meters,
    load_policy,
    local_target,
    save_policy,
    with_agent_options,
)
from iowatt_policy import Policy, Target
from typer.testing import CliRunner

runner = CliRunner()


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    state = tmp_path / "state"
    dropin = tmp_path / "dropin"
    monkeypatch.setenv("IOWATT_AGENT_STATE_DIR", str(state))
    monkeypatch.setenv("IOWATT_AGENT_SYSTEMD_DROPIN_DIR", str(dropin))
    return {"state": state, "dropin": dropin, "root": tmp_path}


def targets(*args: str):
    return runner.invoke(cli.app, ["targets", *args])


def test_add_list_remove_and_the_dropin(env: dict[str, Path]) -> None:
    root = env["root"]
    (root / "bench").mkdir()
    (root / "disk.img").write_bytes(b"x" * 4096)
    (root / "rw.img").write_bytes(b"y" * 4096)
    assert targets("add", str(root / "bench")).exit_code == 0
    added = targets("add", "--file", str(root / "disk.img"))
    assert added.exit_code == 0, added.output
    assert "systemctl daemon-reload && systemctl restart iowatt-agent" in added.stdout
    assert targets("add", "--file", str(root / "rw.img"), "--allow-write").exit_code == 0
    assert targets("add", str(root / "bench")).exit_code == 0  # again: harmless
    policy = load_policy(env["state"])
    assert policy.targets == (
        Target.directory(str(root / "bench")),
        Target.file(str(root / "disk.img")),
        Target.file(str(root / "rw.img"), allow_write=True),
    )
    assert (env["state"] / "policy.json").stat().st_mode & 0o777 == 0o600
    dropin = (env["dropin"] / "10-targets.conf").read_text()
    assert "[Service]" in dropin
    assert (
        f"ReadWritePaths=-{root / 'bench'}\n" in dropin and f"ReadWritePaths=-{root / 'rw.img'}\n" in dropin
    )
    assert "disk.img" not in dropin  # read-only: no write access for the service
    listed = targets("list")
    assert listed.exit_code == 0 and "read-only" in listed.stdout and "own data file" in listed.stdout
    doc = json.loads(targets("list", "--json").stdout)
    assert [t["kind"] for t in doc["targets"]] == ["directory", "file", "file"]
    assert doc["limits"]["max_threads"] == 64 and doc["meters"] == [] and doc["default_meter"] is None
    assert targets("remove", str(root / "bench")).exit_code == 0
    assert str(root / "bench") not in (env["dropin"] / "10-targets.conf").read_text()
    gone = targets("remove", str(root / "bench"))
    assert gone.exit_code == 2 and "not a target" in gone.stderr


def test_add_refuses_what_it_cannot_name_safely(env: dict[str, Path]) -> None:
    root = env["root"]
    (root / "real").mkdir()
    (root / "link").symlink_to(root / "real")
    (root / "f").write_text("x")
    r = targets("add", str(root / "link"))
    assert r.exit_code == 2 and "symbolic link" in r.stderr and str(root / "real") in r.stderr
    r = targets("add", str(root / "f"))
    assert r.exit_code == 2 and "not a directory" in r.stderr and "--file" in r.stderr
    r = targets("add", "--file", str(root / "real"))
    assert r.exit_code == 2 and "not a regular file" in r.stderr
    r = targets("add", str(root / "missing"))
    assert r.exit_code == 2 and "No such file" in r.stderr
    r = targets("add", str(root / "real"), "--allow-write")
    assert r.exit_code == 2 and "--allow-write goes with --file" in r.stderr
    r = targets("add", str(root / "real"), "--file", str(root / "f"))
    assert r.exit_code == 2 and "exactly one" in r.stderr
    assert not (env["state"] / "policy.json").exists()


def test_a_device_needs_its_stable_name(env: dict[str, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    by_id = env["root"] / "by-id"
    by_id.mkdir()
    (by_id / "ata-Example_SSD_S123").symlink_to("/dev/null")
    (by_id / "wwn-0x5000").symlink_to("/dev/null")
    monkeypatch.setenv("IOWATT_AGENT_BY_ID_DIR", str(by_id))
    r = targets("add", "--device", "/dev/null")
    assert r.exit_code == 2 and "not a stable device name" in r.stderr
    assert f"{by_id}/ata-Example_SSD_S123" in r.stderr and f"{by_id}/wwn-0x5000" in r.stderr
    r = targets("add", "--device", "/dev/disk/by-id/ata-does-not-exist")
    assert r.exit_code == 2 and "No such file" in r.stderr
    r = targets("add", "--device", "/dev/zero", "--destructive")
    assert r.exit_code == 2 and "no /dev/disk/by-id/ name points to it" in r.stderr
    r = targets("add", str(env["root"]), "--destructive")
    assert r.exit_code == 2 and "--destructive goes with --device" in r.stderr


def test_limits(env: dict[str, Path]) -> None:
    r = targets(
        "limits", "--max-threads", "8", "--max-bs", "1m", "--max-bytes-written", "10g", "--max-runtime", "2h"
    )
    assert r.exit_code == 0, r.output
    limits = load_policy(env["state"]).limits
    assert (limits.max_threads, limits.max_bs_bytes, limits.max_bytes_written, limits.max_runtime_s) == (
        8,
        1 << 20,
        10 << 30,
        7200.0,
    )
    assert limits.max_iodepth == 256  # untouched
    assert targets("limits", "--max-runtime", "none").exit_code == 0
    assert load_policy(env["state"]).limits.max_runtime_s is None
    shown = targets("limits")
    assert "threads 8" in shown.stdout and "runtime no limit" in shown.stdout
    for bad in (
        ["--max-threads", "0"],
        ["--max-threads", "many"],
        ["--max-bs", "4x"],
        ["--max-runtime", "-1"],
    ):
        r = targets("limits", *bad)
        assert r.exit_code == 2, bad
    assert targets("limits", "--reset").exit_code == 0
    assert load_policy(env["state"]).limits.max_threads == 64


def test_policy_files_must_be_the_agents_own_and_private(env: dict[str, Path], tmp_path: Path) -> None:
    state = env["state"]
    save_policy(state, Policy(targets=(Target.directory(str(tmp_path)),)))
    path = state / "policy.json"
    path.chmod(0o620)
    with pytest.raises(ConfigError, match="group- or world-writable"):
        load_policy(state)
    r = targets("list")
    assert r.exit_code == 2 and "chmod 600" in r.stderr
    path.chmod(0o600)
    os.chown(path, 65534, -1)  # nobody
    with pytest.raises(ConfigError, match="owned by uid 65534"):
        load_policy(state)
    os.chown(path, os.geteuid(), -1)
    path.rename(state / "real.json")
    path.symlink_to(state / "real.json")
    with pytest.raises(ConfigError, match="symbolic link"):
        load_policy(state)
    path.unlink()
    path.write_text("{not json")
    path.chmod(0o600)
    with pytest.raises(ConfigError, match="not valid JSON"):
        load_policy(state)
    path.write_text(json.dumps({"targets": [{"path": "relative", "kind": "directory"}]}))
    with pytest.raises(ConfigError, match="targets.0.path"):
        load_policy(state)
    path.write_text(json.dumps(Policy().to_dict()))
    state.chmod(0o777)  # anyone could rename another policy.json into place
    with pytest.raises(ConfigError, match="not the agent's own private directory"):
        load_policy(state)
    state.chmod(0o700)
    assert load_policy(state) == Policy()
    path.unlink()
    assert load_policy(state) == Policy()  # no file: nothing is allowed
    (state / "meters.json").write_text(json.dumps({"meters": {"wall": {"spec": "rapl:"}}, "default": "x"}))
    (state / "meters.json").chmod(0o600)
    with pytest.raises(ConfigError, match="default meter 'x'"):
        load_meters(state)


def test_engine_options_per_target_kind(tmp_path: Path) -> None:
    server_job = {"global": {}, "jobs": [{"name": "a", "rw": "read"}]}
    job, data = engine_job_for(
        server_job,
        target=Target.directory(str(tmp_path)),
        resolved=str(tmp_path),
        run_key="R",
        destructive=False,
    )
    assert job["global"] == {
        "filename": f"{tmp_path}/iowatt-R.dat",
        "beneath": str(tmp_path),
        "create_new": "1",
        "unlink": "1",
    }
    assert data == tmp_path / "iowatt-R.dat" and job["jobs"] == server_job["jobs"]
    f = str(tmp_path / "f")
    job, data = engine_job_for(server_job, target=Target.file(f), resolved=f, run_key="R", destructive=False)
    assert job["global"] == {"filename": f, "beneath": str(tmp_path), "keep_existing": "1", "readonly": "1"}
    assert data is None
    job, _ = engine_job_for(
        server_job, target=Target.file(f, allow_write=True), resolved=f, run_key="R", destructive=False
    )
    assert "readonly" not in job["global"]
    dev = "/dev/disk/by-id/x"
    for host_key, run_key, expected in (
        (False, False, {"readonly": "1"}),
        (False, True, {"readonly": "1"}),
        (True, False, {"readonly": "1"}),
        (True, True, {"destructive": "1"}),
    ):
        job, _ = engine_job_for(
            server_job,
            target=Target.device(dev, destructive=host_key),
            resolved="/dev/loop7",
            run_key="R",
            destructive=run_key,
        )
        assert job["global"] == {"filename": "/dev/loop7", **expected}
    # nothing is ever stripped silently: a job with an agent-only option is refused
    with pytest.raises(ValueError, match="filename"):
        with_agent_options({"global": {}, "jobs": [{"name": "a", "filename": "/etc/passwd"}]}, {})
    with pytest.raises(ValueError, match="no jobs"):
        with_agent_options({"global": {}, "jobs": []}, {})


def test_local_target_kinds(tmp_path: Path) -> None:
    assert local_target(str(tmp_path)) == ("directory", str(tmp_path))
    (tmp_path / "f").write_text("x")
    (tmp_path / "l").symlink_to(tmp_path / "f")
    assert local_target(str(tmp_path / "l")) == ("file", str(tmp_path / "f"))
    with pytest.raises(ValueError, match="not a directory, regular file or block device"):
        local_target("/dev/null")
    with pytest.raises(ValueError, match="No such file"):
        local_target(str(tmp_path / "missing"))


def test_allow_and_deny_dbms(env: dict[str, Path]) -> None:
    """Issue 15: a TPC-H run starts a DBMS on the host, so the host consents per DBMS; the consent
    survives other policy changes and is in the reported policy (`targets list --json`)."""
    assert "DBMSs TPC-H runs may start: none" in targets("list").stdout
    r = targets("allow-dbms", "postgresql")
    assert r.exit_code == 0, r.output
    assert targets("allow-dbms", "postgresql").exit_code == 0  # twice is harmless
    assert load_policy(env["state"]).allowed_dbms == ("postgresql",)
    assert targets("limits", "--max-threads", "8").exit_code == 0  # other commands keep it
    assert targets("add", str(env["root"])).exit_code == 0
    assert load_policy(env["state"]).allowed_dbms == ("postgresql",)
    reported = json.loads(targets("list", "--json").stdout)
    assert reported["allowed_dbms"] == ["postgresql"]
    assert "DBMSs TPC-H runs may start: postgresql" in targets("list").stdout
    for bad in ("oracle", "postgresql;reboot", ""):
        r = targets("allow-dbms", bad)
        assert r.exit_code == 2 and "not a DBMS this agent starts" in r.output, r.output
    assert load_policy(env["state"]).allowed_dbms == ("postgresql",)
    assert targets("deny-dbms", "postgresql").exit_code == 0
    assert load_policy(env["state"]).allowed_dbms == ()


def test_memory_and_files_limits(env: dict[str, Path]) -> None:
    """Issue 22: --max-memory and --max-files take a size/count, none, or auto (the defaults
    derived from this host: half its RAM, half a target's free inodes, at most 10 million)."""
    from iowatt_agent.inventory import read_mem_bytes

    data = env["root"] / "data"
    data.mkdir()
    assert targets("add", str(data)).exit_code == 0
    limits = load_policy(env["state"]).limits
    assert limits.max_memory_bytes == limits.max_files == "auto"
    shown = " ".join(targets("limits").stdout.split())  # the console wraps at 170 columns
    ram = read_mem_bytes()
    assert f"memory auto (now {ram // 2} B: the default: 50% of the host's {ram} bytes of RAM)" in shown
    assert (
        "files auto (50% of a target's free inodes, at most 10000000; now: " in shown and str(data) in shown
    )
    listed = json.loads(targets("list", "--json").stdout)
    assert listed["mem_total_bytes"] == ram and listed["limits"]["max_files"] == "auto"
    free = listed["targets"][0]["free_inodes"]
    assert free is None or (free > 0 and int(str(free)[2:] or "0") == 0)  # two significant digits

    assert targets("limits", "--max-memory", "8g", "--max-files", "2000000").exit_code == 0
    limits = load_policy(env["state"]).limits
    assert (limits.max_memory_bytes, limits.max_files) == (8 << 30, 2_000_000)
    assert "memory 8589934592 B" in targets("limits").stdout
    assert targets("limits", "--max-memory", "none", "--max-files", "AUTO").exit_code == 0
    limits = load_policy(env["state"]).limits
    assert (limits.max_memory_bytes, limits.max_files) == (None, "auto")
    for bad in (
        ["--max-memory", "0"],
        ["--max-memory", "lots"],
        ["--max-files", "1.5"],
        ["--max-threads", "auto"],
    ):
        r = targets("limits", *bad)
        assert r.exit_code == 2, bad
    assert targets("limits", "--max-memory", "1g", "--reset").exit_code == 0
    assert load_policy(env["state"]).limits.max_memory_bytes == 1 << 30  # --reset, then the change
