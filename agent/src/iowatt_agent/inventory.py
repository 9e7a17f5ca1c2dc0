"""Host and storage inventory from /proc and /sys (contract §2 "Inventory").

Every reader takes a `root` so tests can point it at a fake tree. Serial numbers never leave the
host in clear: only their sha256 is reported (enough to recognise the same device again).
"""

from __future__ import annotations

import os
import platform
import re
import shutil
import socket
import subprocess
from pathlib import Path

from iowatt_policy import ReportedPolicy

from . import topology
from .engine_features import engine_features
from .hostfacts import _clean, _read, hash_serial, read_mem_bytes
from .protocol import wire_protocol
from .schemas import BlockDevice, Capabilities, CpuInfo, Inventory, Mount, OsInfo, PolicyReport

PSEUDO_FS = {
    "proc",
    "sysfs",
    "cgroup",
    "cgroup2",
    "devpts",
    "mqueue",
    "debugfs",
    "tracefs",
    "securityfs",
    "pstore",
    "bpf",
    "configfs",
    "fusectl",
    "hugetlbfs",
    "autofs",
    "binfmt_misc",
    "rpc_pipefs",
    "nsfs",
    "efivarfs",
    "selinuxfs",
    "devtmpfs",
    "ramfs",
    "fuse.gvfsd-fuse",
    "fuse.portal",
}

HYPERVISOR_DMI = [
    ("qemu", "qemu"),
    ("kvm", "kvm"),
    ("vmware", "vmware"),
    ("virtualbox", "oracle"),
    ("innotek", "oracle"),
    ("xen", "xen"),
    ("microsoft corporation", "microsoft"),
    ("amazon ec2", "amazon"),
    ("google compute engine", "google"),
    ("bochs", "bochs"),
    ("parallels", "parallels"),
    ("openstack", "kvm"),
    ("bhyve", "bhyve"),
]


def _read_int(path: Path) -> int | None:
    value = _read(path)
    try:
        return int(value) if value is not None else None
    except ValueError:
        return None


def parse_scheduler(text: str | None) -> str | None:
    """'mq-deadline kyber [bfq] none' -> 'bfq'; 'none' -> 'none'."""
    if not text:
        return None
    match = re.search(r"\[([^\]]+)\]", text)
    if match:
        return match.group(1)
    parts = text.split()
    return parts[0] if len(parts) == 1 else None


def guess_interface(name: str, sys_path: str) -> str:
    """Interface from the device name and its resolved /sys/block path."""
    if name.startswith("nvme"):
        return "nvme"
    if name.startswith("vd") or "/virtio" in sys_path:
        return "virtio"
    if name.startswith("zram"):
        return "zram"
    if name.startswith("loop"):
        return "loop"
    if name.startswith(("ram", "pmem", "brd")):
        return "ram"
    if name.startswith("md"):
        return "md"
    if name.startswith("dm-"):
        return "dm"
    if name.startswith("mmcblk"):
        return "mmc"
    if name.startswith("xvd"):
        return "xen"
    if "/usb" in sys_path:
        return "usb"
    if "/ata" in sys_path:
        return "sata"
    if name.startswith(("sd", "sr")):
        return "scsi"
    return "unknown"


def read_block_devices(root: Path = Path("/")) -> list[BlockDevice]:
    sys_block = root / "sys" / "block"
    devices = []
    try:
        names = sorted(os.listdir(sys_block))
    except OSError:
        return []
    for name in names:
        base = sys_block / name
        sectors = _read_int(base / "size")
        if not sectors:
            continue  # empty loop/ram slots, ejected media
        try:
            sys_path = os.path.realpath(base)
        except OSError:
            sys_path = str(base)
        dev = base / "device"
        model = _clean(_read(dev / "model"))
        md_level = _clean(_read(base / "md" / "level"))
        if model is None and md_level:
            model = f"Linux md {md_level}"  # software RAID: the level is what identifies it
        firmware = _clean(_read(dev / "firmware_rev")) or _clean(_read(dev / "rev"))
        serial = _read(dev / "serial") or _read(base / "serial") or _read(dev / "wwid")
        rotational = _read_int(base / "queue" / "rotational")
        try:
            slaves = sorted(os.listdir(base / "slaves"))
        except OSError:
            slaves = []
        devices.append(
            BlockDevice(
                name=name,
                model=model,
                serial_sha256=hash_serial(serial),
                firmware=firmware,
                size_bytes=sectors * 512,  # /sys/block/*/size is always in 512-byte sectors
                rotational=bool(rotational) if rotational is not None else None,
                interface=guess_interface(name, sys_path),
                scheduler=parse_scheduler(_read(base / "queue" / "scheduler")),
                logical_block_bytes=_read_int(base / "queue" / "logical_block_size"),
                physical_block_bytes=_read_int(base / "queue" / "physical_block_size"),
                dm_name=_clean(_read(base / "dm" / "name")),
                slaves=slaves,
            )
        )
    return devices


def _unescape_mount(field: str) -> str:
    # /proc/mounts escapes space, tab, newline and backslash as \ooo octal.
    return re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), field)


def parse_mounts(text: str) -> list[Mount]:
    mounts = []
    for line in text.splitlines():
        parts = line.split()
        if len(parts) < 4:
            continue
        source, mountpoint, fstype, options = parts[:4]
        if fstype in PSEUDO_FS:
            continue
        mounts.append(
            Mount(
                mountpoint=_unescape_mount(mountpoint),
                source=_unescape_mount(source),
                fstype=fstype,
                options=options,
            )
        )
    return mounts


def read_mounts(root: Path = Path("/")) -> list[Mount]:
    text = _read(root / "proc" / "self" / "mounts") or _read(root / "proc" / "mounts") or ""
    return parse_mounts(text)


def read_cpu(root: Path = Path("/")) -> CpuInfo:
    model = None
    for line in (_read(root / "proc" / "cpuinfo") or "").splitlines():
        key, _, value = line.partition(":")
        if key.strip() in ("model name", "Model", "cpu model"):
            model = _clean(value)
            break
    return CpuInfo(model=model, cores=os.cpu_count() or 1)


def read_distro(root: Path = Path("/")) -> str | None:
    fields = {}
    for line in (_read(root / "etc" / "os-release") or "").splitlines():
        key, _, value = line.partition("=")
        fields[key.strip()] = value.strip().strip('"')
    return fields.get("PRETTY_NAME") or fields.get("NAME")


def detect_virtualization(root: Path = Path("/"), *, use_systemd: bool = True) -> str | None:
    """'none' on bare metal, a hypervisor/container name, 'vm' for an unnamed hypervisor, or
    None when nothing could tell."""
    if use_systemd and root == Path("/") and shutil.which("systemd-detect-virt"):
        try:
            out = subprocess.run(
                ["systemd-detect-virt"], capture_output=True, text=True, timeout=5, check=False
            ).stdout.strip()
            if out:
                return out
        except (OSError, subprocess.TimeoutExpired):
            pass
    dmi = root / "sys" / "class" / "dmi" / "id"
    dmi_text = " ".join(
        filter(None, (_read(dmi / f) for f in ("sys_vendor", "product_name", "bios_vendor", "board_vendor")))
    ).lower()
    for needle, name in HYPERVISOR_DMI:
        if needle in dmi_text and (needle != "microsoft corporation" or "virtual" in dmi_text):
            return name
    for line in (_read(root / "proc" / "cpuinfo") or "").splitlines():
        if line.startswith("flags") and " hypervisor" in line:
            return "vm"
    if dmi_text:
        return "none"
    return None


def collect(
    root: Path = Path("/"), *, policy: ReportedPolicy | None = None, engine: Path | str | None = None
) -> Inventory:
    """The host's inventory; with `policy`, what the host allows (ADR 0009 §4, no secrets); with
    `engine`, its version and the asynchronous ioengines it runs here (protocol 2)."""
    return Inventory(
        hostname=socket.gethostname(),
        os=OsInfo(kernel=platform.release(), distro=read_distro(root)),
        cpu=read_cpu(root),
        mem_bytes=read_mem_bytes(root),
        virtualization=detect_virtualization(root),
        block_devices=read_block_devices(root),
        mounts=read_mounts(root),
        policy=PolicyReport.model_validate(policy.to_dict()) if policy is not None else None,
        capabilities=capabilities(engine),
        topology=topology.collect(root),
    )


def capabilities(engine: Path | str | None = None) -> Capabilities:
    """The workload kinds this agent runs: every kind whose runner can run here (the
    engine's always; TPC-H when a lease could run: tpch.lease.supported_dbms, the generator, the
    [tpch] extra, a DBMS's server, and for a root agent a TPC-H user and CAP_CHOWN/SETUID/SETGID
    to hand the run to it), and the DBMSs a TPC-H run could use. The server refuses at queue time
    what is not listed."""
    from .kinds import RUNNERS
    from .tpch.lease import supported_dbms

    kinds = [name for name, runner in RUNNERS.items() if runner.runs_engine]  # the engine's kinds first
    kinds += [name for name, runner in RUNNERS.items() if not runner.runs_engine and runner.available()]
    caps = Capabilities(workload_kinds=kinds, tpch_dbms=supported_dbms())
    p = wire_protocol()
    if p >= 2:  # what protocol 1 (the previous release) did not send
        caps.protocol = p
        features = engine_features(engine)
        if features is not None:
            caps.engine_version = features.version
            caps.engine_features = list(features.ioengines)
    return caps
