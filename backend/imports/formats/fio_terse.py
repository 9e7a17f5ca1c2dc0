"""fio's terse (minimal) output, `--minimal` / `--output-format=terse`: one semicolon line per job.

Versions (fio's HOWTO, "Terse output"; `--terse-version`):
- 2: `2;jobname;groupid;error;` then read, write and trim (no fio version); the job's
  description, when set, on the next line.
- 3 (fio's default): `3;fio-X;jobname;groupid;error;` then read and write (no trim), then CPU,
  I/O depths, latency buckets and, per disk, 9 disk-utilisation fields.
- 4: as 3 with trim after write.
- 5: as 4, each direction with the bandwidth's sample count and the IOPS statistics (min, max,
  mean, stdev, samples) after it.
Each direction: total I/O (KiB), bandwidth (KiB/s), IOPS, runtime (ms); slat, clat (min, max,
mean, stdev, µs); 20 clat percentiles (`99.00%=1234`, µs); lat (µs); bandwidth min, max,
aggregate %, mean, stdev (KiB/s). Several jobs, groups and runs in one file: one line each.
In client/server mode disk utilisation comes on its own line (`3;fio-X;disk;...`-less lines of
9 fields beginning with the disk name): read into the run's notes."""

from __future__ import annotations

import re
from typing import Any

from backend.imports.formats import fio_common
from backend.imports.formats.base import Direction, ImportFormatError, Job, Latency, ParsedFile, Run

FORMAT = "fio-terse"
DIR_FIELDS = {2: 41, 3: 41, 4: 41, 5: 47}
HEAD_FIELDS = {2: 4, 3: 5, 4: 5, 5: 5}
TAIL_FIELDS = 5 + 7 + 10 + 12  # cpu, iodepth, lat µs, lat ms
DISK_FIELDS = 9
MAX_LINES = 100_000
ABSENT = [
    "the job's options (block size, queue depth, size, direct...): terse lines carry results only",
    "the host and the device's model (terse v3+ names the kernel's disk and its counters only)",
    "the total latency's percentiles (terse gives completion latency percentiles only)",
    "ns precision: latencies are in µs",
]
_LINE = re.compile(r"^[2-5];")


def _f(fields: list[str], i: int, line: int, what: str) -> float:
    text = fields[i].strip().rstrip("%")
    try:
        v = float(text)
    except ValueError:
        raise ImportFormatError(
            FORMAT, f"field {i + 1} is {fields[i][:30]!r}", line=line, expected=f"a number ({what})"
        ) from None
    if v != v or not -1e15 <= v <= 1e15:
        raise ImportFormatError(FORMAT, f"field {i + 1} is out of range", line=line, expected=what)
    return v


def _lat(
    fields: list[str], i: int, line: int, what: str, pct: dict[float, float] | None = None
) -> Latency | None:
    lo, hi, mean, dev = (_f(fields, i + k, line, what) for k in range(4))
    if not (lo or hi or mean):
        return None
    return Latency(
        min_ns=lo * 1000,
        max_ns=hi * 1000,
        mean_ns=mean * 1000,
        stddev_ns=dev * 1000,
        percentiles_ns=pct or {},
    )


def _pcts(fields: list[str], i: int, line: int) -> dict[float, float]:
    out: dict[float, float] = {}
    for k in range(20):
        text = fields[i + k].strip()
        m = re.fullmatch(r"(\d+(?:\.\d+)?)%=(\d+(?:\.\d+)?)", text)
        if m is None:
            raise ImportFormatError(
                FORMAT,
                f"field {i + k + 1} is {text[:30]!r}",
                line=line,
                expected="a percentile like 99.00%=1234",
            )
        p, v = float(m.group(1)), float(m.group(2))
        if 0 < p <= 100 and v <= 1e15:
            out[p] = v * 1000
    return out


def _direction(fields: list[str], i: int, line: int, name: str) -> Direction | None:
    kib = _f(fields, i, line, f"{name} total I/O in KiB")
    bw_kib = _f(fields, i + 1, line, f"{name} bandwidth in KiB/s")
    iops = _f(fields, i + 2, line, f"{name} IOPS")
    runtime = _f(fields, i + 3, line, f"{name} runtime in ms")
    slat = _lat(fields, i + 4, line, f"{name} submission latency in µs")
    pct = _pcts(fields, i + 12, line)
    clat = _lat(fields, i + 8, line, f"{name} completion latency in µs", pct)
    lat = _lat(fields, i + 32, line, f"{name} total latency in µs")
    for k in range(36, 41):
        _f(fields, i + k, line, f"{name} bandwidth statistics")
    if not kib and not iops:
        return None
    return Direction(
        bw_bytes=bw_kib * 1024,
        iops=iops,
        io_bytes=int(kib) * 1024,
        total_ios=None,
        runtime_ms=runtime,
        lat=lat,
        clat=clat,
        slat=slat,
    )


def _job(fields: list[str], line: int, description: str | None) -> tuple[Job, str | None, list[str]]:
    ver = int(fields[0])
    head = HEAD_FIELDS[ver]
    version = fio_common.fio_version(fields[1]) if ver >= 3 else None
    name, group = fields[head - 3], fields[head - 2]
    per = DIR_FIELDS[ver]
    dirs = 3 if ver != 3 else 2
    need = head + per * dirs + TAIL_FIELDS
    if len(fields) < need:
        raise ImportFormatError(
            FORMAT,
            f"{len(fields)} fields for terse version {ver}",
            line=line,
            expected=f"at least {need} semicolon-separated fields",
        )
    read = _direction(fields, head, line, "read")
    write = _direction(fields, head + per, line, "write")
    trim = _direction(fields, head + 2 * per, line, "trim") if dirs == 3 else None
    cpu = head + per * dirs
    metrics = {
        "usr_cpu_pct": _f(fields, cpu, line, "CPU user %"),
        "sys_cpu_pct": _f(fields, cpu + 1, line, "CPU system %"),
        "context_switches": _f(fields, cpu + 2, line, "context switches"),
    }
    err = _f(fields, head - 1, line, "the job's error")
    if err:
        metrics["error"] = err
    rest = fields[need:]
    notes = []
    disks = []
    while len(rest) >= DISK_FIELDS and ver >= 3 and not _is_number(rest[0]):
        disks.append(rest[0][:64])
        notes.append("disk_util " + rest[0][:64] + ": " + ";".join(rest[1:DISK_FIELDS])[:200])
        rest = rest[DISK_FIELDS:]
    desc = description
    if rest and ver != 2:
        tail = [r for r in rest if r.strip()]
        if tail and not all(_is_number(t.rstrip("%")) for t in tail):
            desc = ";".join(tail)[-500:]
    settings: dict[str, Any] = {}
    if desc:
        settings["description"] = desc[:200]
    job = Job(
        name=name[:200] or "job",
        settings=settings,
        read=read,
        write=write,
        trim=trim,
        metrics=metrics,
        group=group,
    )
    if disks:
        notes.insert(0, "disks: " + ",".join(disks))
    return job, version, notes


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def parse(name: str, data: bytes) -> ParsedFile:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data[: e.start].count(b"\n") + 1
        raise ImportFormatError(FORMAT, "not UTF-8 text", line=line, expected="fio's terse lines") from None
    lines = text.splitlines()
    if len(lines) > MAX_LINES:
        raise ImportFormatError(FORMAT, f"{len(lines)} lines", expected=f"at most {MAX_LINES}")
    jobs: list[Job] = []
    versions: set[str] = set()
    terse: set[int] = set()
    notes: list[str] = []
    i = 0
    while i < len(lines):
        raw = lines[i]
        n = i + 1
        i += 1
        if not raw.strip():
            continue
        if not _LINE.match(raw):
            if jobs or terse:
                notes.append(f"line {n} is not a terse line, kept out: {raw[:80]}")
                continue
            raise ImportFormatError(
                FORMAT,
                f"line starts with {raw[:20]!r}",
                line=n,
                expected="a terse line: 2;, 3;, 4; or 5; then fields",
            )
        fields = raw.split(";")
        ver = int(fields[0])
        description = None
        if ver == 2 and i < len(lines) and lines[i].strip() and not _LINE.match(lines[i]):
            description = lines[i].strip()
            i += 1
        if len(jobs) >= 4096:
            raise ImportFormatError(FORMAT, "more than 4096 jobs", line=n, expected="at most 4096 jobs")
        job, version, more = _job(fields, n, description)
        jobs.append(job)
        terse.add(ver)
        if version:
            versions.add(version)
        notes += more
    if not jobs:
        raise ImportFormatError(FORMAT, "no terse lines", line=1, expected="fio's terse output")
    run = Run(name=name.rsplit("/", 1)[-1][:200] or "fio", jobs=jobs, absent=list(ABSENT), notes=notes[:100])
    warnings = [f"terse versions {sorted(terse)} mixed in one file"] if len(terse) > 1 else []
    if len(versions) > 1:
        warnings.append(f"fio versions {sorted(versions)} mixed in one file")
    version_of = sorted(versions)[0] if versions else None
    return ParsedFile(
        format=FORMAT,
        tool="fio",
        version=version_of,
        runs=[run],
        warnings=warnings,
    )


class FioTerse:
    format = FORMAT
    tool = "fio"
    aliases = ("terse", "minimal", "fio-minimal")

    def sniff(self, name: str, head: bytes) -> bool:
        first = next((ln for ln in head.splitlines() if ln.strip()), b"")
        return bool(re.match(rb"^[2-5];", first)) and first.count(b";") >= 100

    def parse(self, name: str, data: bytes) -> ParsedFile:
        return parse(name, data)


IMPORTERS = [FioTerse()]
