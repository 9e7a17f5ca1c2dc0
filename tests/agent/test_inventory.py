from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from iowatt_agent import cli, inventory
from iowatt_agent.schemas import Inventory
from typer.testing import CliRunner


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def fake_root(tmp_path: Path) -> Path:
    root = tmp_path / "root"
    devices = root / "sys" / "devices"
    block = root / "sys" / "block"
    block.mkdir(parents=True)

    def device(name: str, real: str, files: dict[str, str]) -> None:
        target = devices / real / name
        for rel, text in files.items():
            write(target / rel, text + "\n")
        (block / name).symlink_to(target)

    device(
        "nvme0n1",
        "pci0000:00/0000:00:1d.0/nvme/nvme0",
        {
            "size": "1953525168",
            "queue/rotational": "0",
            "queue/scheduler": "[none] mq-deadline",
            "queue/logical_block_size": "512",
            "queue/physical_block_size": "4096",
            "device/model": "Samsung SSD 980 PRO 1TB   ",
            "device/firmware_rev": "5B2QGXA7",
            "device/serial": "  S5GXNX0R123456  ",
        },
    )
    device(
        "sda",
        "pci0000:00/0000:00:17.0/ata1/host0/target0:0:0/0:0:0:0/block",
        {
            "size": "7814037168",
            "queue/rotational": "1",
            "queue/scheduler": "mq-deadline kyber [bfq] none",
            "queue/logical_block_size": "512",
            "queue/physical_block_size": "4096",
            "device/model": "ST4000NM0035-1V4",
            "device/rev": "TN02",
        },
    )
    device(
        "sdb",
        "pci0000:00/0000:00:14.0/usb2/2-1/2-1:1.0/host6/target6:0:0/6:0:0:0/block",
        {
            "size": "60437492",
            "queue/rotational": "0",
            "queue/scheduler": "none",
        },
    )
    device("loop0", "virtual/block", {"size": "0"})
    device("zram0", "virtual/block", {"size": "8388608", "queue/rotational": "0"})
    write(
        root / "proc" / "self" / "mounts",
        "/dev/sda1 /mnt/my\\040disk ext4 rw,noatime,errors=remount-ro 0 0\n"
        "proc /proc proc rw,nosuid 0 0\n"
        "tmpfs /dev/shm tmpfs rw,nosuid,nodev 0 0\n"
        "cgroup2 /sys/fs/cgroup cgroup2 rw 0 0\n",
    )
    write(
        root / "proc" / "cpuinfo",
        "processor\t: 0\nmodel name\t: AMD EPYC 7B13\nflags\t\t: fpu vme sse hypervisor avx\n",
    )
    write(root / "proc" / "meminfo", "MemTotal:       16384 kB\nMemFree: 1 kB\n")
    write(root / "etc" / "os-release", 'NAME="Debian"\nPRETTY_NAME="Debian GNU/Linux 12 (bookworm)"\n')
    return root


def test_block_devices_from_sysfs(tmp_path):
    devs = {d.name: d for d in inventory.read_block_devices(fake_root(tmp_path))}
    assert set(devs) == {"nvme0n1", "sda", "sdb", "zram0"}  # empty loop0 skipped
    nvme = devs["nvme0n1"]
    assert nvme.interface == "nvme" and nvme.model == "Samsung SSD 980 PRO 1TB"
    assert nvme.firmware == "5B2QGXA7" and nvme.rotational is False and nvme.scheduler == "none"
    assert nvme.size_bytes == 1953525168 * 512
    assert nvme.serial_sha256 == hashlib.sha256(b"S5GXNX0R123456").hexdigest()
    assert nvme.logical_block_bytes == 512 and nvme.physical_block_bytes == 4096
    sda = devs["sda"]
    assert sda.interface == "sata" and sda.rotational is True and sda.scheduler == "bfq"
    assert sda.firmware == "TN02" and sda.serial_sha256 is None
    assert devs["sdb"].interface == "usb"
    assert devs["zram0"].interface == "zram"


def test_mounts_skip_pseudo_filesystems_and_unescape(tmp_path):
    mounts = inventory.read_mounts(fake_root(tmp_path))
    assert [(m.mountpoint, m.fstype) for m in mounts] == [("/mnt/my disk", "ext4"), ("/dev/shm", "tmpfs")]
    assert mounts[0].options == "rw,noatime,errors=remount-ro" and mounts[0].source == "/dev/sda1"


def test_host_facts(tmp_path):
    root = fake_root(tmp_path)
    assert inventory.read_cpu(root).model == "AMD EPYC 7B13"
    assert inventory.read_mem_bytes(root) == 16384 * 1024
    assert inventory.read_distro(root) == "Debian GNU/Linux 12 (bookworm)"
    assert inventory.detect_virtualization(root) == "vm"  # cpuinfo hypervisor flag
    write(root / "sys" / "class" / "dmi" / "id" / "sys_vendor", "QEMU\n")
    assert inventory.detect_virtualization(root) == "qemu"


def test_bare_metal_and_unknown(tmp_path):
    root = tmp_path / "r"
    assert inventory.detect_virtualization(root) is None
    write(root / "sys" / "class" / "dmi" / "id" / "sys_vendor", "Dell Inc.\n")
    assert inventory.detect_virtualization(root) == "none"


def test_scheduler_and_interface_guesses():
    assert inventory.parse_scheduler("none") == "none"
    assert inventory.parse_scheduler("mq-deadline [kyber]") == "kyber"
    assert inventory.parse_scheduler("") is None
    assert inventory.guess_interface("vda", "/sys/devices/pci/virtio1/block/vda") == "virtio"
    assert inventory.guess_interface("sdc", "/sys/devices/platform/host2/scsi") == "scsi"
    assert inventory.guess_interface("md0", "/sys/devices/virtual/block/md0") == "md"
    assert inventory.guess_interface("ram0", "/sys/devices/virtual/block/ram0") == "ram"
    assert inventory.guess_interface("loop3", "/sys/devices/virtual/block/loop3") == "loop"


def test_inventory_of_this_host_is_valid_and_cli_json():
    inv = inventory.collect()
    assert inv.hostname and inv.cpu.cores >= 1 and inv.mem_bytes > 0
    result = CliRunner().invoke(cli.app, ["inventory", "--json", "--state-dir", "/nonexistent-iowatt"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    Inventory.model_validate(doc)
    assert set(doc) == {
        "hostname",
        "os",
        "cpu",
        "mem_bytes",
        "virtualization",
        "block_devices",
        "mounts",
        "policy",
        "capabilities",
        "topology",
    }
    assert any(m["mountpoint"] == "/" for m in doc["topology"]["mounts"])  # issue 27: topology.py
    assert doc["policy"] is None  # no state directory: nothing to report (the agent reports at start)
    # issue 15: every engine mode; tpch only with the generator and a DBMS installed (as here)
    kinds = doc["capabilities"]["workload_kinds"]
    assert kinds[:4] == ["block", "postmark", "vdbench", "heap_btree"]
    assert ("tpch" in kinds) == bool(doc["capabilities"]["tpch_dbms"])
    table = CliRunner().invoke(cli.app, ["inventory"])
    assert table.exit_code == 0 and "block devices" in table.stdout


def test_md_raid_is_labelled_with_its_level(tmp_path):
    root = tmp_path / "r"
    md = root / "sys" / "devices" / "virtual" / "block" / "md0"
    write(md / "size", "1000\n")
    write(md / "md" / "level", "raid10\n")
    (root / "sys" / "block").mkdir(parents=True)
    (root / "sys" / "block" / "md0").symlink_to(md)
    [dev] = inventory.read_block_devices(root)
    assert dev.interface == "md" and dev.model == "Linux md raid10" and dev.size_bytes == 512000


def test_device_mapper_reports_its_mapper_name_and_the_disks_beneath(tmp_path: Path) -> None:
    root = tmp_path / "r"
    virtual = root / "sys" / "devices" / "virtual" / "block"
    (root / "sys" / "block").mkdir(parents=True)
    for disk in ("sda", "sdb"):
        write(root / "sys" / "devices" / "pci" / disk / "size", "2000\n")
        (root / "sys" / "block" / disk).symlink_to(root / "sys" / "devices" / "pci" / disk)
    write(virtual / "dm-3" / "size", "4000\n")
    write(virtual / "dm-3" / "dm" / "name", "vg0-data\n")
    (virtual / "dm-3" / "slaves").mkdir()
    for disk in ("sdb", "sda"):  # sysfs links to the slaves' directories
        (virtual / "dm-3" / "slaves" / disk).symlink_to(root / "sys" / "block" / disk)
    (root / "sys" / "block" / "dm-3").symlink_to(virtual / "dm-3")
    devs = {d.name: d for d in inventory.read_block_devices(root)}
    assert devs["dm-3"].dm_name == "vg0-data" and devs["dm-3"].slaves == ["sda", "sdb"]
    assert devs["dm-3"].interface == "dm"
    assert devs["sda"].dm_name is None and devs["sda"].slaves == []


def test_capabilities_follow_what_is_installed(monkeypatch: Any, tmp_path: Path) -> None:
    """tpch is reported only when a DBMS's server binaries are found (issue 15)."""
    empty = tmp_path / "empty"
    empty.mkdir()
    monkeypatch.setenv("IOWATT_TPCH_PG_BINDIR", str(empty))
    monkeypatch.setenv("IOWATT_TPCH_MARIADB_BINDIR", str(empty))
    caps = inventory.capabilities()
    assert caps.tpch_dbms == [] and "tpch" not in caps.workload_kinds
    assert caps.workload_kinds == ["block", "postmark", "vdbench", "heap_btree", "jobfile", "pts"]


CAPABILITIES_PROBE = "from iowatt_agent import inventory; print(inventory.capabilities().model_dump_json())"


def capabilities_in(*wrapper: str) -> dict[str, Any]:
    """capabilities() of an agent started under `wrapper` (setpriv, unshare ...), from its output."""
    import subprocess
    import sys

    res = subprocess.run([*wrapper, sys.executable, "-c", CAPABILITIES_PROBE], capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    doc: dict[str, Any] = json.loads(res.stdout)
    return doc


def tpch_runs_here() -> bool:
    from iowatt_agent.tpch.lease import supported_dbms

    return bool(supported_dbms())


needs_root_and_tpch = pytest.mark.skipif(
    os.geteuid() != 0 or shutil.which("setpriv") is None or not tpch_runs_here(),
    reason="needs root, setpriv and a host that runs TPC-H (the [tpch] extra and a DBMS)",
)


@needs_root_and_tpch
def test_a_root_agent_without_the_capabilities_does_not_offer_tpch() -> None:
    """The unit keeps CAP_CHOWN/SETUID/SETGID for TPC-H (isolation.py): an agent whose bounding set
    lacks them would refuse every TPC-H lease as unsupported, so it does not list the kind and
    the server refuses such a run when it is queued."""
    assert "tpch" in capabilities_in("setpriv", "--bounding-set=-net_raw")["workload_kinds"]  # the probe
    for dropped in ("-chown", "-setuid", "-setgid", "-chown,-setuid,-setgid"):
        caps = capabilities_in("setpriv", f"--bounding-set={dropped}")
        assert caps["tpch_dbms"] == [] and "tpch" not in caps["workload_kinds"], dropped
        assert caps["workload_kinds"] == ["block", "postmark", "vdbench", "heap_btree", "jobfile", "pts"]


@needs_root_and_tpch
@pytest.mark.skipif(shutil.which("unshare") is None, reason="needs unshare")
def test_a_root_agent_without_a_tpch_user_offers_no_dbms_it_cannot_hand_over(tmp_path: Path) -> None:
    """The TPC-H user is iowatt-tpch, else the DBMS package's user (postgres, mysql): in a mount
    namespace whose /etc/passwd lacks some of them, only the DBMSs that still have a user are
    offered, and tpch not at all when none has."""
    import pwd

    have = [name for name in ("iowatt-tpch", "postgres", "mysql") if _has_user(pwd, name)]
    lines = Path("/etc/passwd").read_text().splitlines(keepends=True)

    def caps_without(*users: str) -> dict[str, Any]:
        fake = tmp_path / f"passwd-{'-'.join(users)}"
        fake.write_text("".join(line for line in lines if line.split(":", 1)[0] not in users))
        script = f'mount --bind "{fake}" /etc/passwd && exec "$0" "$@"'
        return capabilities_in("unshare", "--mount", "sh", "-c", script)

    none = caps_without("iowatt-tpch", "postgres", "mysql")
    assert none["tpch_dbms"] == [] and "tpch" not in none["workload_kinds"]
    if "iowatt-tpch" not in have and {"postgres", "mysql"} <= set(have):
        only_pg = caps_without("mysql")
        assert only_pg["tpch_dbms"] == ["postgresql"] and "tpch" in only_pg["workload_kinds"]


def _has_user(pwd: Any, name: str) -> bool:
    try:
        pwd.getpwnam(name)
    except KeyError:
        return False
    return True
