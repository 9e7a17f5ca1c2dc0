"""fio's normal (human-readable) output, the default `--output-format=normal`, fio 2.x and 3.x.

Per job a block opening `name: (groupid=G, jobs=N): err= E: pid=P: <date>`, then per direction:
- 3.x: `read: IOPS=12.3k, BW=48.0MiB/s (50.3MB/s)(4096KiB/83msec)`;
- 2.x: `read : io=4096.0KB, bw=49349KB/s, iops=12337, runt=   83msec` (KB = 1024 B);
then `slat|clat|lat (nsec|usec|msec): min=, max=, avg=, stdev=`, `clat percentiles (unit):` rows of
`99.00th=[ 1234]`, `bw (KiB/s): ...`, and per job `cpu`, `IO depths`, and `issued rwts: total=r,w,t,x`
(2.x `issued    : total=r=R/w=W/d=T`). The job lines before the run (`name: (g=0): rw=..., bs=(R)
4096B-4096B, ..., ioengine=..., iodepth=N`) give the settings; `Disk stats` the disks.

Normal output rounds its figures to three or four significant digits (IOPS=12.3k, BW=48.0MiB/s):
the exact I/O count (issued) and runtime (ms) are read where fio prints them, and IOPS = I/Os /
runtime, bytes = I/Os x block size when the block size is fixed, as fio computes them."""

from __future__ import annotations

import re
from typing import Any

from backend.imports.formats import fio_common
from backend.imports.formats.base import Direction, ImportFormatError, Job, Latency, ParsedFile, Run

FORMAT = "fio-normal"
MAX_VALUE = 1e18  # any figure fio prints, in its unit; ns values stay within a bigint
ABSENT = [
    "the host and the device's model (normal output names the kernel's disks only)",
    "exact bandwidth when the block size varies: normal output rounds it to 3-4 significant digits",
    "the job's options beyond rw, bs, ioengine and iodepth (the job line before the run)",
]
_SUFFIX = {
    "": 1,
    "k": 1e3,
    "K": 1e3,
    "m": 1e6,
    "M": 1e6,
    "g": 1e9,
    "G": 1e9,
    "t": 1e12,
    "T": 1e12,
    "p": 1e15,
    "P": 1e15,
}
_UNIT_NS = {"nsec": 1.0, "usec": 1e3, "msec": 1e6, "sec": 1e9}
_BYTES = {
    "B": 1, "KiB": 2**10, "MiB": 2**20, "GiB": 2**30, "TiB": 2**40, "PiB": 2**50,
    "kB": 10**3, "MB": 10**6, "GB": 10**9, "TB": 10**12, "PB": 10**15,
}  # fmt: skip
_BYTES_2X = {"B": 1, "KB": 2**10, "MB": 2**20, "GB": 2**30, "TB": 2**40, "PB": 2**50}

_JOB = re.compile(r"^(?P<name>\S.*?): \(groupid=(?P<g>\d+), jobs=(?P<n>\d+)\): err=\s*(?P<err>-?\d+)")
_SETUP = re.compile(r"^(?P<name>\S.*?): \(g=(?P<g>\d+)\): (?P<rest>rw=.*)$")
_DIR3 = re.compile(
    r"^\s+(?P<d>read|write|trim)\s*: IOPS=(?P<iops>[\d.]+)(?P<is>[kMGTP]?), "
    r"BW=(?P<bw>[\d.]+)(?P<bwu>[KMGTP]?i?B)/s"
    r".*?\((?P<io>[\d.]+)(?P<iou>[KMGTP]?i?B)/(?P<rt>\d+)msec\)"
)
_DIR2 = re.compile(
    r"^\s+(?P<d>read|write|trim)\s*: io=(?P<io>[\d.]+)(?P<iou>[KMGTP]?B), "
    r"bw=(?P<bw>[\d.]+)(?P<bwu>[KMGTP]?B)/s,"
    r"\s*iops=(?P<iops>[\d.]+)(?P<is>[kKM]?), runt=\s*(?P<rt>\d+)msec"
)
_LAT = re.compile(
    r"^\s+(?P<k>slat|clat|lat)\s*\((?P<u>nsec|usec|msec|sec)\):\s*min=\s*(?P<min>[\d.]+)(?P<mins>[kKMGTP]?),"
    r"\s*max=\s*(?P<max>[\d.]+)(?P<maxs>[kKMGTP]?),\s*avg=\s*(?P<avg>[\d.]+),\s*stdev=\s*(?P<dev>[\d.]+)"
)
_PCT_HEAD = re.compile(r"^\s+(?P<k>clat|lat|slat) percentiles \((?P<u>nsec|usec|msec|sec)\):")
_PCT = re.compile(r"(\d+(?:\.\d+)?)th=\[\s*(\d+)\]")
_ISSUED3 = re.compile(r"^\s+issued rwts: total=(\d+),(\d+),(\d+)")
_ISSUED2 = re.compile(r"^\s+issued\s*: total=r=(\d+)/w=(\d+)/d=(\d+)")
_CPU = re.compile(r"^\s+cpu\s*: usr=([\d.]+)%, sys=([\d.]+)%, ctx=(\d+)")
_DISK = re.compile(r"^\s+(?P<name>[\w./-]+): ios=(?P<r>\d+)/(?P<w>\d+),.*util=(?P<util>[\d.]+)%")
_VERSION = re.compile(r"^fio-(\d[\w.\-+~]*)\s*$")


def _num(text: str, suffix: str = "") -> float:
    v = float(text) * _SUFFIX[suffix]
    if not v <= MAX_VALUE:
        raise ValueError(f"{text}{suffix} is out of range")
    return v


class _Dir:
    def __init__(self) -> None:
        self.iops = self.bw = self.io = 0.0
        self.runtime = 0.0
        self.lat: dict[str, dict[str, Any]] = {}
        self.pct: dict[str, dict[float, float]] = {}


class _JobBlock:
    def __init__(self, name: str, group: str, err: int, line: int) -> None:
        self.name, self.group, self.err, self.line = name, group, err, line
        self.dirs: dict[str, _Dir] = {}
        self.issued: list[int] | None = None
        self.cpu: tuple[float, float, float] | None = None
        self.description: str | None = None


def _setup(rest: str) -> dict[str, Any]:
    """`rw=randread, bs=(R) 4096B-4096B, (W) 4096B-4096B, (T) 4096B-4096B, ioengine=psync, iodepth=1`
    (3.x) or `rw=read, bs=4K-4K/4K-4K/4K-4K, ioengine=sync, iodepth=1` (2.x)."""
    out: dict[str, Any] = {}
    m = re.search(r"\brw=(\w+)", rest)
    if m:
        out["rw"] = fio_common.RW_ALIASES.get(m.group(1), m.group(1))
    size = r"([\d.]+(?:[KMGTP]i)?B)"
    m = re.search(rf"\bbs=\(R\) {size}-{size}, \(W\) {size}-{size}", rest)
    if m:
        r_lo, r_hi, w_lo, w_hi = (_bytes_of(x) for x in m.groups())
        sizes = {r_lo, r_hi, w_lo, w_hi}
        rw = out.get("rw", "")
        used = {r_lo, r_hi} if "read" in rw or rw in ("", "rw", "randrw") else set()
        if "write" in rw or rw in ("rw", "randrw"):
            used |= {w_lo, w_hi}
        if len(used or sizes) == 1 and None not in (used or sizes):
            out["bs"] = (used or sizes).pop()
    else:
        m = re.search(r"\bbs=([\w.]+)-([\w.]+)/", rest)
        if m and m.group(1) == m.group(2):
            n = fio_common.size(m.group(1))
            if n:
                out["bs"] = n
    for key in ("ioengine", "iodepth"):
        m = re.search(rf"\b{key}=([\w.\-]+)", rest)
        if m:
            out[key] = int(m.group(1)) if m.group(1).isdigit() else m.group(1)
    return out


def _bytes_of(text: str) -> int | None:
    """fio 3.x's size in the job line: "4096B", "64.0KiB", "1024KiB", "1.00MiB"."""
    m = re.fullmatch(r"([\d.]+)((?:[KMGTP]i)?B)", text)
    if not m:
        return None
    return round(float(m.group(1)) * _BYTES[m.group(2)])


def _lat_of(d: _Dir, key: str) -> Latency | None:
    v = d.lat.get(key)
    pct = d.pct.get(key, {})
    if v is None:
        return None
    return Latency(min_ns=v["min"], max_ns=v["max"], mean_ns=v["avg"], stddev_ns=v["dev"], percentiles_ns=pct)


def _direction(
    b: _JobBlock, name: str, idx: int, settings: dict[str, Any], rounded: list[str]
) -> Direction | None:
    d = b.dirs.get(name)
    if d is None:
        return None
    total = b.issued[idx] if b.issued is not None and idx < len(b.issued) else None
    bs = settings.get("bs") if isinstance(settings.get("bs"), int) else None
    if total is not None and d.runtime:
        iops = total * 1000.0 / d.runtime
    else:
        iops = d.iops
        rounded.append(f"{b.name} {name} IOPS")
    if total is not None and bs:
        io_bytes = total * bs
        bw = io_bytes * 1000.0 / d.runtime if d.runtime else d.bw
    else:
        io_bytes, bw = int(d.io), d.bw
        rounded.append(f"{b.name} {name} bytes")
    return Direction(
        bw_bytes=bw,
        iops=iops,
        io_bytes=int(io_bytes),
        total_ios=total,
        runtime_ms=d.runtime,
        lat=_lat_of(d, "lat"),
        clat=_lat_of(d, "clat"),
        slat=_lat_of(d, "slat"),
    )


def parse(name: str, data: bytes) -> ParsedFile:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        at = data[: e.start].count(b"\n") + 1
        raise ImportFormatError(FORMAT, "not UTF-8 text", line=at, expected="fio's normal output") from None
    setups: dict[str, dict[str, Any]] = {}
    blocks: list[_JobBlock] = []
    version: str | None = None
    disks: list[str] = []
    notes: list[str] = []
    cur: _JobBlock | None = None
    d: _Dir | None = None
    pct_key: tuple[str, float] | None = None
    in_disks = False
    n = 0
    try:
        for n, line in enumerate(text.splitlines(), 1):
            if len(blocks) > 4096:
                raise ImportFormatError(FORMAT, "more than 4096 jobs", line=n, expected="at most 4096 jobs")
            m = _VERSION.match(line)
            if m and version is None:
                version = m.group(1)[:100]
                continue
            m = _SETUP.match(line)
            if m:
                setups.setdefault(m.group("name"), _setup(m.group("rest")))
                continue
            m = _JOB.match(line)
            if m:
                cur = _JobBlock(m.group("name")[:200], m.group("g"), int(_num(m.group("err"))), n)
                blocks.append(cur)
                d, pct_key, in_disks = None, None, False
                continue
            if line.startswith("Disk stats"):
                in_disks, cur, d = True, None, None
                continue
            if line.startswith("Run status group"):
                cur, d, pct_key = None, None, None
                continue
            if in_disks:
                m = _DISK.match(line)
                if m:
                    disks.append(m.group("name")[:64])
                    notes.append(
                        f"disk_util {m.group('name')[:64]}: read_ios={m.group('r')}, "
                        f"write_ios={m.group('w')}, util={m.group('util')}"
                    )
                continue
            if cur is None:
                continue
            m = _DIR3.match(line) or _DIR2.match(line)
            if m:
                d = cur.dirs.setdefault(m.group("d"), _Dir())
                two = m.re is _DIR2
                units = _BYTES_2X if two else _BYTES
                try:
                    d.iops = _num(m.group("iops"), m.group("is"))
                    d.bw = float(m.group("bw")) * units[m.group("bwu")]
                    d.io = float(m.group("io")) * units[m.group("iou")]
                except KeyError as e:
                    raise ImportFormatError(
                        FORMAT,
                        f"unknown unit {e.args[0]!r}",
                        line=n,
                        expected="B, KiB, MiB, GiB (3.x) or KB, MB (2.x)",
                    ) from None
                d.runtime = _num(m.group("rt"))
                pct_key = None
                continue
            if re.match(r"^\s+(read|write|trim)\s*:", line):
                raise ImportFormatError(
                    FORMAT,
                    f"unreadable direction line {line.strip()[:60]!r}",
                    line=n,
                    expected="read: IOPS=..., BW=...(io/runtime) (3.x) "
                    "or read : io=..., bw=..., iops=..., runt=... (2.x)",
                )
            m = _LAT.match(line)
            if m and d is not None:
                scale = _UNIT_NS[m.group("u")]
                d.lat[m.group("k")] = {
                    "min": _num(m.group("min"), m.group("mins")) * scale,
                    "max": _num(m.group("max"), m.group("maxs")) * scale,
                    "avg": float(m.group("avg")) * scale,
                    "dev": float(m.group("dev")) * scale,
                }
                pct_key = None
                continue
            m = _PCT_HEAD.match(line)
            if m and d is not None:
                pct_key = (m.group("k"), _UNIT_NS[m.group("u")])
                d.pct.setdefault(pct_key[0], {})
                continue
            if pct_key is not None and d is not None and line.lstrip().startswith("|"):
                for p, v in _PCT.findall(line):
                    d.pct[pct_key[0]][float(p)] = _num(v) * pct_key[1]
                continue
            pct_key = None
            m = _ISSUED3.match(line) or _ISSUED2.match(line)
            if m:
                cur.issued = [int(_num(x)) for x in m.groups()]
                continue
            m = _CPU.match(line)
            if m:
                cur.cpu = (float(m.group(1)), float(m.group(2)), float(m.group(3)))
                continue
    except ValueError as e:  # a number beyond any figure fio prints
        raise ImportFormatError(FORMAT, str(e)[:100], line=n, expected="a figure fio prints") from None
    if not blocks:
        raise ImportFormatError(
            FORMAT, "no job results", line=1, expected="a line 'name: (groupid=0, jobs=1): err= 0: ...'"
        )
    jobs: list[Job] = []
    rounded: list[str] = []
    for b in blocks:
        if not b.dirs and b.err == 0:
            raise ImportFormatError(
                FORMAT,
                f"job {b.name!r} has no read/write line",
                line=b.line,
                expected="a read:, write: or trim: line",
            )
        settings = dict(setups.get(b.name, {}))
        metrics: dict[str, float] = {}
        if b.cpu is not None:
            metrics.update(usr_cpu_pct=b.cpu[0], sys_cpu_pct=b.cpu[1], context_switches=b.cpu[2])
        if b.err:
            metrics["error"] = float(b.err)
        jobs.append(
            Job(
                name=b.name,
                settings=settings,
                read=_direction(b, "read", 0, settings, rounded),
                write=_direction(b, "write", 1, settings, rounded),
                trim=_direction(b, "trim", 2, settings, rounded),
                metrics=metrics,
                group=b.group,
            )
        )
    absent = list(ABSENT)
    if rounded:
        notes.insert(
            0,
            "rounded as fio printed them: " + ", ".join(rounded[:20]) + ("..." if len(rounded) > 20 else ""),
        )
    device = {"name": disks[0]} if disks else {}
    if len(disks) > 1:
        device["disks"] = ",".join(disks[:20])
    run = Run(
        name=name.rsplit("/", 1)[-1][:200] or "fio",
        jobs=jobs,
        device=device,
        absent=absent,
        notes=notes[:100],
    )
    return ParsedFile(format=FORMAT, tool="fio", version=version, runs=[run])


_SNIFF = re.compile(rb"^\S.*?: \(groupid=\d+, jobs=\d+\): err=", re.M)


class FioNormal:
    format = FORMAT
    tool = "fio"
    aliases = ("normal", "fio-text")

    def sniff(self, name: str, head: bytes) -> bool:
        return bool(_SNIFF.search(head))

    def parse(self, name: str, data: bytes) -> ParsedFile:
        return parse(name, data)


IMPORTERS = [FioNormal()]
