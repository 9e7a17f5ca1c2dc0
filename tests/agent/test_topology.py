"""The agent's storage topology (issue 27 part 3, agent/src/iowatt_agent/topology.py): parsers of
mountinfo, mdstat and `lvs` JSON on recorded outputs and fuzzed, sysfs readers on a fake tree, and
once for real: btrfs RAID 1 on two and RAID 10 on four loop devices, read by the agent and
suggested by the server."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from iowatt_agent import inventory, topology
from iowatt_agent.schemas import HostTopology

from backend.agent.schemas import Inventory as ServerInventory
from backend.environment import topology as server_topology

DATA = Path(__file__).parent / "data" / "topology"
FUZZ = settings(
    max_examples=100, derandomize=True, deadline=None, database=None, suppress_health_check=list(HealthCheck)
)


def test_mountinfo_recorded() -> None:
    mounts = {m.mountpoint: m for m in topology.parse_mountinfo((DATA / "mountinfo.txt").read_text())}
    assert mounts["/"].fstype == "ext4" and (mounts["/"].major, mounts["/"].minor) == (8, 1)
    assert mounts["/"].options == "rw,relatime,errors=remount-ro"  # the mount's, then the superblock's
    pool = mounts["/srv/pool"]
    assert pool.fstype == "btrfs" and pool.source == "/dev/loop0" and "space_cache=v2" in pool.options
    assert mounts["/mnt/nfs"].fstype == "nfs4" and "vers=4.2" in mounts["/mnt/nfs"].options
    assert "/mnt/with space" in mounts  # octal escapes undone
    # a NUL (escaped, raw or in JSON) is no character of a name: dropped, so the server takes the rest
    (m,) = topology.parse_mountinfo("50 28 0:47 / /mnt/a\\000b rw - tmpfs tmp\x00fs rw\n")
    assert (m.mountpoint, m.source) == ("/mnt/ab", "tmpfs")
    (lv,) = topology.parse_lvs_json('{"report": [{"lv": [{"vg_name": "v\\u0000", "lv_name": "l"}]}]}')
    assert lv.vg == "v"


def test_mdstat_recorded() -> None:
    arrays = {a.name: a for a in topology.parse_mdstat((DATA / "mdstat.txt").read_text())}
    assert arrays["md1"].level == "raid10" and arrays["md1"].members == ["sdd1", "sdc1", "sdb1", "sda1"]
    assert arrays["md1"].chunk_bytes == 512 * 1024 and arrays["md1"].raid_disks == 4
    assert arrays["md0"].level == "raid1" and arrays["md0"].members == ["sdf1", "sde1"]
    assert arrays["md0"].spares == 1 and arrays["md0"].chunk_bytes is None
    # a failed member is not a member; the array still has 4 slots
    assert arrays["md2"].members == ["sdh", "sdi", "sdk"] and arrays["md2"].raid_disks == 4
    assert arrays["md2"].chunk_bytes == 512 * 1024


def test_lvs_recorded() -> None:
    lvs = {v.lv: v for v in topology.parse_lvs_json((DATA / "lvs.json").read_text())}
    assert lvs["scratch"].segtype == "striped" and lvs["scratch"].stripes == 2
    assert lvs["scratch"].devices == ["sdb", "sdc"] and lvs["scratch"].dm_name == "vg0-scratch"
    assert lvs["data"].segtype == "raid1" and lvs["data"].devices == ["data_rimage_0", "data_rimage_1"]
    # a count past the wire's bound is not known, never a reason to refuse the whole inventory
    (odd,) = topology.parse_lvs_json(
        '{"report": [{"lv": [{"vg_name": "v", "lv_name": "l", "stripes": "9999999999"}]}]}'
    )
    assert odd.stripes is None


TOKENS = ["", " ", "-", ":", "\n", "[0]", "(S)", "(F)", "\\040", "\\777", "0:0", "99999999999:1", "raid1",
          "k chunk", "[2/2]", "{", "}", '"', "null", "[", "]", "\x00", "\\000", "\\u0000", "é",
          "9" * 30]  # fmt: skip
SEEDS = [(DATA / n).read_text() for n in ("mountinfo.txt", "mdstat.txt", "lvs.json")]


def _mutate(seed: str, cuts: list[tuple[int, int, str]]) -> str:
    out = seed
    for pos, length, token in cuts:
        i = pos % (len(out) + 1)
        out = out[:i] + token + out[i + length % 40 :]
    return out


def _parse_all(text: str) -> None:
    """Every parser answers models that the agent's and the server's inventory both accept."""
    t = HostTopology(
        mounts=topology.parse_mountinfo(text),
        md=topology.parse_mdstat(text),
        lvm=topology.parse_lvs_json(text),
    )
    wire = t.model_dump(mode="json")
    assert ServerInventory.model_validate({"topology": wire}).topology is not None


@FUZZ
@given(
    st.sampled_from(range(len(SEEDS))),
    st.lists(st.tuples(st.integers(0, 10**6), st.integers(0, 80), st.sampled_from(TOKENS)), max_size=8),
)
def test_mutated_outputs_parse_or_are_left_out(seed: int, cuts: list[tuple[int, int, str]]) -> None:
    _parse_all(_mutate(SEEDS[seed], cuts))


@FUZZ
@given(st.text(max_size=400))
def test_arbitrary_text_never_raises(text: str) -> None:
    _parse_all(text)


def _fake_tree(tmp_path: Path) -> Path:
    fs = tmp_path / "sys" / "fs" / "btrfs" / "0b9c1a9e-5f7e-4e43-a0a6-3a0d5a1c2b10"
    for d in ("devices/loop0", "devices/loop1", "allocation/data/raid1", "allocation/metadata/raid1",
              "allocation/system/raid1"):  # fmt: skip
        (fs / d).mkdir(parents=True)
    (fs / "label").write_text("pool\n")
    for name, wc in (("loop0", "write back"), ("loop1", "write back"), ("sda", "write through")):
        q = tmp_path / "sys" / "block" / name / "queue"
        q.mkdir(parents=True)
        (q / "write_cache").write_text(wc + "\n")
        (q / "nr_requests").write_text("128\n")
        (q / "discard_max_bytes").write_text("18446744073709551615\n")  # some devices say 2**64 - 1
    (tmp_path / "proc" / "self").mkdir(parents=True)
    (tmp_path / "proc" / "self" / "mountinfo").write_text((DATA / "mountinfo.txt").read_text())
    (tmp_path / "proc" / "mdstat").write_text((DATA / "mdstat.txt").read_text())
    return tmp_path


def test_sysfs_readers_on_a_fake_tree_and_the_suggestion(tmp_path: Path) -> None:
    root = _fake_tree(tmp_path)
    t = topology.collect(root)
    (fs,) = t.btrfs
    assert (fs.label, fs.data_profile, fs.metadata_profile, fs.devices) == (
        "pool",
        "raid1",
        "raid1",
        ["loop0", "loop1"],
    )
    assert {q.name: q.write_cache for q in t.queues} == {
        "loop0": "write back",
        "loop1": "write back",
        "sda": "write through",
    }
    assert t.lvm == []  # no command runs on a fake tree
    assert {q.discard_max_bytes for q in t.queues} == {None}
    assert ServerInventory.model_validate({"topology": t.model_dump(mode="json")}).topology is not None
    disks = [{"name": "loop0", "size_bytes": 1 << 27}, {"name": "loop1", "size_bytes": 1 << 27}]
    inv = {"block_devices": disks,
           "topology": t.model_dump(mode="json")}  # fmt: skip
    got, evidence = server_topology.suggest(inv, "/srv/pool/bench")
    assert got.raid is not None and got.raid.level == "raid1" and got.raid.implementation == "btrfs"
    assert server_topology.member_count(got.raid) == 2
    assert got.filesystem is not None and got.filesystem.fstype == "btrfs"
    assert got.controller is not None and got.controller.cache_policy == "write_back"
    assert any("btrfs" in e for e in evidence)
    md, _ = server_topology.suggest({"topology": t.model_dump(mode="json")}, "/srv/md/x")
    assert md.raid is not None and md.raid.level == "raid1" and md.raid.stripe_bytes is None
    nfs, _ = server_topology.suggest({"topology": t.model_dump(mode="json")}, "/mnt/nfs/a")
    assert nfs.nas is not None and (nfs.nas.protocol, nfs.nas.version) == ("nfs", "4.2")
    lv_inv = {"topology": {**t.model_dump(mode="json"), "lvm": [v.model_dump(mode="json") for v in
              topology.parse_lvs_json((DATA / "lvs.json").read_text())]}}  # fmt: skip
    lv, _ = server_topology.suggest(lv_inv, "/srv/lv")
    assert lv.raid is not None and (lv.raid.level, lv.raid.implementation) == ("raid0", "lvm")


def test_inventory_carries_the_topology() -> None:
    inv = inventory.collect()
    assert inv.topology is not None and any(m.mountpoint == "/" for m in inv.topology.mounts)
    assert ServerInventory.model_validate(inv.model_dump(mode="json")).topology is not None


def _run(*cmd: str) -> None:
    subprocess.run(cmd, check=True, capture_output=True, timeout=60)


@pytest.fixture(params=[("raid1", 2), ("raid10", 4)], ids=["raid1-2", "raid10-4"])
def btrfs_pool(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[Path, str, int]]:
    """btrfs RAID 1 on two, RAID 10 on four 128 MiB loop devices (data and metadata), backed by
    sparse files in /dev/shm, mounted under tmp_path; all of it removed afterwards. Yields the
    mount point, the profile and the member count."""
    level, count = request.param
    if shutil.which("mkfs.btrfs") is None:
        pytest.skip("mkfs.btrfs is missing: apt-get install btrfs-progs (make deps-system installs it)")
    if os.geteuid() != 0:
        pytest.skip("loop devices and mount need root")
    files, loops = [], []
    mnt = tmp_path / "pool"
    mnt.mkdir()
    mounted = False
    try:
        for i in range(count):
            f = Path(f"/dev/shm/iowatt-topology-{os.getpid()}-{level}-{i}.img")
            with f.open("wb") as fh:
                fh.truncate(128 << 20)
            files.append(f)
            out = subprocess.run(
                ["losetup", "--find", "--show", str(f)], check=True, capture_output=True, text=True
            )
            loops.append(out.stdout.strip())
        _run("mkfs.btrfs", "-q", "-f", "-d", level, "-m", level, *loops)
        devices = ",".join(f"device={loop}" for loop in loops[1:])
        _run("mount", "-t", "btrfs", "-o", devices, loops[0], str(mnt))
        mounted = True
        yield mnt, level, count
    finally:
        if mounted:
            subprocess.run(["umount", str(mnt)], check=False, timeout=60)
        for loop in loops:
            subprocess.run(["losetup", "-d", loop], check=False, timeout=60)
        for f in files:
            f.unlink(missing_ok=True)


def test_btrfs_raid_on_loop_devices(btrfs_pool: tuple[Path, str, int]) -> None:
    """The agent reads the pool's profile and members; the server suggests the environment's RAID
    level (seed 001's RAID 1 vs RAID 10), member count and each member's capacity from them."""
    mnt, level, count = btrfs_pool
    inv = inventory.collect()
    assert inv.topology is not None
    mount = next(m for m in inv.topology.mounts if m.mountpoint == str(mnt))
    assert mount.fstype == "btrfs"
    source = os.path.basename(mount.source)
    fs = next(b for b in inv.topology.btrfs if source in b.devices)
    assert (fs.data_profile, fs.metadata_profile, len(fs.devices)) == (level, level, count)
    got, evidence = server_topology.suggest(inv.model_dump(mode="json"), str(mnt / "bench"))
    assert got.raid is not None and (got.raid.level, got.raid.implementation) == (level, "btrfs")
    assert server_topology.member_count(got.raid) == count
    assert got.raid.members[0].capacity_bytes == 128 << 20
    assert got.filesystem is not None and got.filesystem.fstype == "btrfs"
    assert evidence
