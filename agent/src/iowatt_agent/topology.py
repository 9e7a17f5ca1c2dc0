"""Storage topology the host can see (ADR 0035): each mount's file system, options and
block device (/proc/self/mountinfo), btrfs profiles and member devices (/sys/fs/btrfs), md arrays
(/proc/mdstat), LVM segments (`lvs --reportformat json`, root only) and each disk's queue facts
(/sys/block/*/queue). The server suggests an environment's topology from it.

Every reader takes a `root` (tests point it at a fake tree) and never raises: what cannot be read
is left out. The parsers take the text as the kernel or the tool wrote it; they are fuzzed
(tests/agent/test_topology.py) and tested on recorded outputs (tests/agent/data/topology/).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

from .schemas import BtrfsFilesystem, HostTopology, LvmVolume, MdArray, QueueFacts, TopologyMount

MAX_ITEMS = 1000  # per list: a host with more mounts or volumes reports the first ones
BTRFS_PROFILES = ("single", "dup", "raid0", "raid1", "raid1c3", "raid1c4", "raid5", "raid6", "raid10")


def _read(path: Path) -> str | None:
    try:
        return path.read_text(errors="replace")
    except (OSError, ValueError):
        return None


def _int(text: str | None, hi: int = 2**31) -> int | None:
    """A count the wire can carry (0 to `hi`, the server's bound); anything else is not known,
    never a reason for the server to refuse the whole inventory."""
    try:
        n = int((text or "").strip())
    except ValueError:
        return None
    return n if 0 <= n <= hi else None


def _unescape(field: str) -> str:
    # mountinfo escapes space, tab, newline and backslash as \ooo octal
    # (a NUL is no character of a path: dropped, as every NUL, since the server refuses them)
    return re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8) & 0xFF), field).replace("\x00", "")


def parse_mountinfo(text: str) -> list[TopologyMount]:
    """/proc/self/mountinfo (proc(5)): `id parent maj:min root mountpoint options [optional...] -
    fstype source super-options`. Options are the mount's then the superblock's (as /proc/mounts)."""
    out: list[TopologyMount] = []
    for line in text.replace("\x00", "").splitlines():
        fields = line.split()
        if len(fields) < 9 or "-" not in fields[6:]:
            continue
        sep = fields.index("-", 6)
        if len(fields) < sep + 3:
            continue
        majmin = fields[2].split(":")
        if len(majmin) != 2 or not all(x.isascii() and x.isdigit() and len(x) < 10 for x in majmin):
            continue
        opts = fields[5].split(",")
        super_opts = fields[sep + 3].split(",") if len(fields) > sep + 3 else []
        opts += [o for o in super_opts if o and o not in opts and o not in ("rw", "ro")]
        out.append(
            TopologyMount(
                mountpoint=_unescape(fields[4])[:4096],
                source=_unescape(fields[sep + 2])[:4096],
                fstype=fields[sep + 1][:200],
                options=",".join(o for o in opts if o)[:4096],
                major=int(majmin[0]),
                minor=int(majmin[1]),
                disk=None,
            )
        )
        if len(out) >= MAX_ITEMS:
            break
    return out


def parse_mdstat(text: str) -> list[MdArray]:
    """/proc/mdstat: `md0 : active raid1 sdb1[1] sda1[0]` then `N blocks ... 512k chunk ...`; spares
    (`sdc1[2](S)`) and failed members (`(F)`) are not members."""
    arrays: list[MdArray] = []
    lines = text.replace("\x00", "").splitlines()
    for i, line in enumerate(lines):
        m = re.match(r"^(md[\w.-]*)\s*:\s*(\S+)\s*(.*)$", line)
        if not m:
            continue
        name, _state, rest = m.groups()
        words = rest.split()
        level = next((w for w in words if re.fullmatch(r"raid\d+|linear|multipath|faulty", w)), None)
        members, spares = [], 0
        for w in words:
            dm = re.fullmatch(r"([\w.-]+)\[\d+\](\([A-Z]\))?", w)
            if dm:
                if dm.group(2) in ("(S)", "(F)", "(R)"):
                    spares += dm.group(2) == "(S)"
                else:
                    members.append(dm.group(1)[:200])
        chunk = None
        nxt = lines[i + 1] if i + 1 < len(lines) else ""
        c = re.search(r"(\d{1,9})k chunks?\b", nxt, re.IGNORECASE)
        if c:
            chunk = int(c.group(1)) * 1024
        disks = re.search(r"\[(\d{1,6})/\d{1,6}\]", nxt)
        arrays.append(
            MdArray(
                name=name[:200],
                level=level,
                raid_disks=int(disks.group(1)) if disks else (len(members) or None),
                members=members[:256],
                spares=spares,
                chunk_bytes=chunk,
            )
        )
        if len(arrays) >= MAX_ITEMS:
            break
    return arrays


def _no_nul(obj: dict[str, object]) -> dict[str, object]:
    """JSON strings may spell a NUL (\\u0000): no name holds one, and the server refuses them."""
    return {k.replace("\x00", ""): v.replace("\x00", "") if isinstance(v, str) else v for k, v in obj.items()}


def parse_lvs_json(text: str) -> list[LvmVolume]:
    """`lvs --reportformat json -o vg_name,lv_name,segtype,stripes,devices,lv_dm_path`: devices read
    `/dev/sdb(0),/dev/sdc(0)` (physical extents in brackets) or sub-volumes (`lv_rimage_0(0)`)."""
    try:
        doc = json.loads(text.replace("\x00", ""), object_hook=_no_nul)
    except (ValueError, RecursionError):
        return []
    out: list[LvmVolume] = []
    reports = doc.get("report") if isinstance(doc, dict) else None
    for report in reports if isinstance(reports, list) else []:
        rows = report.get("lv") if isinstance(report, dict) else None
        for row in rows if isinstance(rows, list) else []:
            if not isinstance(row, dict):
                continue
            vg, lv = row.get("vg_name"), row.get("lv_name")
            if not isinstance(vg, str) or not isinstance(lv, str) or not vg or not lv:
                continue
            devices = str(row.get("devices") or "")
            names = [
                os.path.basename(re.sub(r"\(\d+\)$", "", d.strip()))[:200]
                for d in devices.split(",")
                if d.strip()
            ]
            dm_path = row.get("lv_dm_path")
            out.append(
                LvmVolume(
                    vg=vg[:200],
                    lv=lv[:200],
                    segtype=str(row.get("segtype"))[:64] if row.get("segtype") else None,
                    stripes=_int(str(row.get("stripes", ""))),
                    devices=names[:256],
                    dm_name=os.path.basename(dm_path)[:200] if isinstance(dm_path, str) and dm_path else None,
                )
            )
            if len(out) >= MAX_ITEMS:
                return out
    return out


def read_btrfs(root: Path = Path("/")) -> list[BtrfsFilesystem]:
    """Each btrfs file system the kernel knows (/sys/fs/btrfs/<uuid>): label, the profiles its data
    and metadata are allocated with (allocation/<type>/<profile>/), member devices (devices/)."""
    base = root / "sys" / "fs" / "btrfs"
    out: list[BtrfsFilesystem] = []
    try:
        uuids = sorted(p for p in os.listdir(base) if re.fullmatch(r"[0-9a-f-]{36}", p))
    except OSError:
        return []
    for fsid in uuids[:MAX_ITEMS]:
        fs = base / fsid

        def profile(kind: str, fs: Path = fs) -> str | None:
            try:
                found = [p for p in os.listdir(fs / "allocation" / kind) if p in BTRFS_PROFILES]
            except OSError:
                return None
            # a conversion in progress has two: the one that is not `single` is where it goes
            return next((p for p in sorted(found) if p != "single"), found[0] if found else None)

        try:
            devices = sorted(os.listdir(fs / "devices"))[:256]
        except OSError:
            devices = []
        out.append(
            BtrfsFilesystem(
                uuid=fsid,
                label=(_read(fs / "label") or "").strip()[:200] or None,
                data_profile=profile("data"),
                metadata_profile=profile("metadata"),
                devices=devices,
            )
        )
    return out


def read_queues(root: Path = Path("/")) -> list[QueueFacts]:
    sys_block = root / "sys" / "block"
    try:
        names = sorted(os.listdir(sys_block))
    except OSError:
        return []
    out = []
    for name in names[:MAX_ITEMS]:
        q = sys_block / name / "queue"
        if not q.is_dir():
            continue
        wc = (_read(q / "write_cache") or "").strip()
        out.append(
            QueueFacts(
                name=name,
                write_cache=wc if wc in ("write back", "write through") else None,
                nr_requests=_int(_read(q / "nr_requests")),
                max_sectors_kb=_int(_read(q / "max_sectors_kb")),
                read_ahead_kb=_int(_read(q / "read_ahead_kb")),
                discard_max_bytes=_int(_read(q / "discard_max_bytes"), 2**63 - 1),
            )
        )
    return out


def _disk_of(root: Path, major: int, minor: int) -> str | None:
    """The kernel name of a block device by number (/sys/dev/block/MAJ:MIN), e.g. sda1."""
    link = root / "sys" / "dev" / "block" / f"{major}:{minor}"
    try:
        return os.path.basename(os.path.realpath(link)) if link.exists() else None
    except OSError:
        return None


def read_lvm(*, timeout_s: float = 5.0) -> list[LvmVolume]:
    """LVM's logical volumes when `lvs` is installed and the agent is root (it reads the devices)."""
    lvs = shutil.which("lvs")
    if lvs is None or os.geteuid() != 0:
        return []
    try:
        done = subprocess.run(
            [
                lvs,
                "--reportformat",
                "json",
                "--units",
                "b",
                "-o",
                "vg_name,lv_name,segtype,stripes,devices,lv_dm_path",
            ],
            capture_output=True,
            text=True,
            timeout=timeout_s,
            check=False,
            env={"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "LC_ALL": "C"},
        )
    except (OSError, subprocess.TimeoutExpired):
        return []
    return parse_lvs_json(done.stdout) if done.returncode == 0 else []


def collect(root: Path = Path("/")) -> HostTopology:
    """The host's topology; on a fake tree (`root` not /) no command runs."""
    mounts = parse_mountinfo(_read(root / "proc" / "self" / "mountinfo") or "")
    for m in mounts:
        if m.major:  # 0: no block device (tmpfs, btrfs's anonymous device, network file systems)
            m.disk = _disk_of(root, m.major, m.minor)
    return HostTopology(
        mounts=mounts,
        btrfs=read_btrfs(root),
        md=parse_mdstat(_read(root / "proc" / "mdstat") or ""),
        lvm=read_lvm() if root == Path("/") else [],
        queues=read_queues(root),
    )
