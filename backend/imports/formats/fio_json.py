"""fio's JSON and json+ output (`--output-format=json` / `json+`), fio 2.x to 3.x.

What differs across versions, read by the keys present (not by the version string, which a
distribution may patch):
- 3.x (from 3.0): latencies `slat_ns`, `clat_ns`, `lat_ns` in ns; `io_bytes` in bytes, `bw_bytes`
  in bytes/s (`bw`, `io_kbytes` in KiB beside them).
- 2.x: latencies `slat`, `clat`, `lat` in µs (percentiles under `clat`, in µs); `io_bytes` is in
  KiB despite its name and `bw` in KiB/s; no `bw_bytes`.
- json+ adds `bins` (ns or µs bucket -> count) under `clat_ns`: kept in ns beside the percentiles
  (the stored result's `clat_ns.bins`, as a measured run's), unless the file holds more than
  MAX_BINS of them: then none is kept (a bound on the import's memory and the stored result).
Several jobs and groups per file (`groupid`), `disk_util`, fio's client/server `client_stats`.

The file is read as a stream: the top-level object key by key, each job decoded alone by the
standard library's C decoder, so a 200 MB json+ file needs one job in memory at a time, not the
whole tree (docs/adr/0031-imports.md)."""

from __future__ import annotations

import codecs
import io
import json
import re
from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any, BinaryIO

from backend.imports.formats import fio_common
from backend.imports.formats.base import (
    Direction,
    ImportFormatError,
    Job,
    Latency,
    ParsedFile,
    Run,
)

FORMAT = "fio-json"
CHUNK = 1 << 22  # bytes read at a time
MAX_NS = 2.0**63  # a latency the result's bigint columns hold
MAX_JOBS = 4096  # as the result schema (backend/result/schemas.py MAX_JOBS)
MAX_BINS = 500_000  # json+ histogram bins kept per file (kernel-help's 110 jobs have ~408,000)
MAX_BINS_PER_LATENCY = 4096  # fio has 1,856 buckets: more is not fio's histogram
_WS = re.compile(r"[ \t\r\n]*")
_DECODER = json.JSONDecoder()
ABSENT = [
    "the host's name, OS, CPU and memory (fio's JSON carries them only in client/server mode)",
    "the device's model and size (disk_util names the kernel's device and its counters only)",
]


class _Stream:
    """The file's text from a position on, read in chunks; JSON values decoded one at a time."""

    def __init__(self, fp: BinaryIO):
        self.fp = fp
        self.dec = codecs.getincrementaldecoder("utf-8")("strict")
        self.buf = ""
        self.pos = 0
        self.eof = False
        self.line0 = 1  # line number of buf[0]

    def line(self, pos: int | None = None) -> int:
        return self.line0 + self.buf.count("\n", 0, self.pos if pos is None else pos)

    def fail(self, message: str, expected: str | None = None, pos: int | None = None) -> ImportFormatError:
        return ImportFormatError(FORMAT, message, line=self.line(pos), expected=expected)

    def more(self) -> bool:
        if self.eof:
            return False
        if self.pos:
            self.line0 += self.buf.count("\n", 0, self.pos)
            self.buf = self.buf[self.pos :]
            self.pos = 0
        raw = self.fp.read(max(CHUNK, len(self.buf)))
        try:
            text = self.dec.decode(raw, final=not raw)
        except UnicodeDecodeError as e:
            raise self.fail("not UTF-8 text", "fio's JSON (UTF-8)", pos=len(self.buf)) from e
        if not raw:
            self.eof = True
        self.buf += text
        return bool(raw) or bool(text)

    def ws(self) -> None:
        while True:
            m = _WS.match(self.buf, self.pos)
            self.pos = m.end() if m else self.pos
            if self.pos < len(self.buf) or not self.more():
                return

    def peek(self) -> str:
        self.ws()
        return self.buf[self.pos] if self.pos < len(self.buf) else ""

    def expect(self, ch: str, what: str) -> None:
        if self.peek() != ch:
            got = self.buf[self.pos : self.pos + 20] or "the end of the file"
            raise self.fail(f"found {got!r}", what)
        self.pos += 1

    def value(self, what: str) -> Any:
        self.ws()
        while True:
            try:
                obj, end = _DECODER.raw_decode(self.buf, self.pos)
            except json.JSONDecodeError as e:
                near_end = e.pos >= len(self.buf) - 64 or e.msg.startswith("Unterminated")
                if not self.eof and near_end and self.more():
                    continue
                if self.eof and near_end:
                    raise self.fail("the file ends inside a value (truncated)", what, pos=e.pos) from e
                raise self.fail(e.msg, what, pos=e.pos) from e
            except RecursionError as e:
                raise self.fail("nested too deeply", what) from e
            except ValueError as e:  # an integer of more than 4300 digits
                raise self.fail(str(e)[:100], what) from e
            if end >= len(self.buf) and not self.eof and self.more():
                continue  # a number may go on in the next chunk
            self.pos = end
            return obj

    def skip_preamble(self) -> None:
        """fio prints notes ("note: both iodepth >= 1 and synchronous I/O engine ...") before the JSON
        on the same stream: skip whole lines until one starts with "{"."""
        while True:
            self.ws()
            if self.pos < len(self.buf) and self.buf[self.pos] == "{":
                return
            nl = self.buf.find("\n", self.pos)
            while nl < 0 and self.more():
                nl = self.buf.find("\n", self.pos)
            if nl < 0 or self.line() > 200:
                raise self.fail("no JSON object", "fio's JSON output: a line starting with '{'")
            self.pos = nl + 1


def events(fp: BinaryIO) -> Iterator[tuple[str, Any]]:
    """(key, value) for each top-level key except the job arrays, and ("job", job) for each of
    their elements, in file order."""
    s = _Stream(fp)
    s.skip_preamble()
    s.expect("{", "fio's JSON object")
    if s.peek() == "}":
        s.pos += 1
        return
    while True:
        key = s.value("a key string")
        if not isinstance(key, str):
            raise s.fail(f"a key of type {type(key).__name__}", "a key string")
        s.expect(":", "':' after a key")
        if key in ("jobs", "client_stats"):
            s.expect("[", f"the list of {key}")
            if s.peek() == "]":
                s.pos += 1
            else:
                while True:
                    job = s.value("a job object")
                    if not isinstance(job, dict):
                        raise s.fail(f"a {type(job).__name__} in {key}", "a job object")
                    yield "job", job
                    c = s.peek()
                    s.pos += 1
                    if c == "]":
                        break
                    if c != ",":
                        raise s.fail(f"found {c or 'the end of the file'!r}", f"',' or ']' in {key}")
        else:
            yield key, s.value(f"the value of {key!r}")
        c = s.peek()
        s.pos += 1
        if c == "}":
            return
        if c != ",":
            raise s.fail(f"found {c or 'the end of the file'!r}", "',' or '}' after a top-level value")


def _num(v: Any) -> float | None:
    if isinstance(v, bool) or not isinstance(v, int | float):
        return None
    try:
        f = float(v)
    except OverflowError:
        return None
    return f if f == f and abs(f) != float("inf") else None


def _int(v: Any) -> int | None:
    f = _num(v)
    return int(f) if f is not None and f >= 0 else None


def _latency(obj: Any, scale: float, bins: bool = True) -> Latency | None:
    """fio's latency object (min, max, mean, stddev or stdev, percentile) at `scale` ns per unit."""
    if not isinstance(obj, dict):
        return None
    n = _int(obj.get("N"))
    if n == 0 or (n is None and not obj.get("max") and not obj.get("mean")):
        return None  # fio writes zeros for a latency it did not measure (disable_lat, sync jobs' slat)

    def sc(key: str) -> float | None:
        v = _num(obj.get(key))
        return v * scale if v is not None and 0 <= v * scale < MAX_NS else None

    pct: dict[float, float] = {}
    raw = obj.get("percentile")
    if isinstance(raw, dict):
        for k, v in list(raw.items())[:200]:
            p, x = fio_common.percent_key(k), _num(v)
            if (
                p is not None and p > 0 and x is not None and 0 <= x * scale < MAX_NS
            ):  # fio 2.x pads the list with "0.00": 0
                pct[p] = x * scale
    return Latency(
        mean_ns=sc("mean"),
        min_ns=sc("min"),
        max_ns=sc("max"),
        stddev_ns=sc("stddev") if "stddev" in obj else sc("stdev"),
        percentiles_ns=pct,
        bins=_bins(obj.get("bins"), scale) if bins else None,
    )


def _bins(raw: Any, scale: float) -> dict[int, int] | None:
    """json+'s histogram in ns (fio 2.x's keys are µs), I/Os per bucket; None when absent or not
    fio's (a key or count that is not a number, more buckets than fio has)."""
    if not isinstance(raw, dict) or not raw or len(raw) > MAX_BINS_PER_LATENCY:
        return None
    out: dict[int, int] = {}
    for k, v in raw.items():
        try:
            at = float(k) * scale
        except (TypeError, ValueError, OverflowError):
            return None
        n = _int(v)
        if n is None or not 0 <= at < MAX_NS or n >= 2**63:
            return None
        if n:
            out[int(at)] = out.get(int(at), 0) + n
    return out or None


def _count_bins(job: Job) -> int:
    return sum(
        len(lat.bins)
        for d in (job.read, job.write, job.trim)
        if d is not None
        for lat in (d.lat, d.clat, d.slat)
        if lat is not None and lat.bins
    )


def _without_bins(job: Job) -> Job:
    def strip(d: Direction | None) -> Direction | None:
        if d is None:
            return None
        return replace(
            d,
            lat=replace(d.lat, bins=None) if d.lat else None,
            clat=replace(d.clat, bins=None) if d.clat else None,
            slat=replace(d.slat, bins=None) if d.slat else None,
        )

    return replace(job, read=strip(job.read), write=strip(job.write), trim=strip(job.trim))


def direction(d: Any, bins: bool = True) -> Direction | None:
    """One direction's object; None when it did no I/O."""
    if not isinstance(d, dict):
        return None
    total = _int(d.get("total_ios"))
    if "bw_bytes" in d:  # 3.x
        io_bytes, bw = _int(d.get("io_bytes")), _num(d.get("bw_bytes"))
    else:  # 2.x: io_bytes in KiB, bw in KiB/s
        kib, bw_kib = _int(d.get("io_bytes")), _num(d.get("bw"))
        io_bytes = kib * 1024 if kib is not None else None
        bw = bw_kib * 1024 if bw_kib is not None else None
    if not total and not io_bytes:
        return None
    ns = "clat_ns" in d or "lat_ns" in d
    scale, suffix = (1.0, "_ns") if ns else (1000.0, "")
    return Direction(
        bw_bytes=bw,
        iops=_num(d.get("iops")),
        io_bytes=io_bytes,
        total_ios=total,
        runtime_ms=_num(d.get("runtime")),
        lat=_latency(d.get("lat" + suffix), scale, bins),
        clat=_latency(d.get("clat" + suffix), scale, bins),
        slat=_latency(d.get("slat" + suffix), scale, bins),
    )


def job_of(job: dict[str, Any], global_options: dict[str, Any], index: int, bins: bool = True) -> Job:
    own = job.get("job options")
    options = {**global_options, **(own if isinstance(own, dict) else {})}
    metrics: dict[str, float] = {}
    for key, name in (("usr_cpu", "usr_cpu_pct"), ("sys_cpu", "sys_cpu_pct"), ("ctx", "context_switches")):
        v = _num(job.get(key))
        if v is not None:
            metrics[name] = v
    runtime = _num(job.get("job_runtime"))
    if runtime is not None:
        metrics["job_runtime_ms"] = runtime
    err = _num(job.get("error"))
    if err:
        metrics["error"] = err
    jobname = job.get("jobname")
    host = job.get("hostname")
    group = job.get("groupid")
    return Job(
        name=(str(jobname) if jobname is not None else f"job{index}")[:200],
        settings=fio_common.settings(options),
        read=direction(job.get("read"), bins),
        write=direction(job.get("write"), bins),
        trim=direction(job.get("trim"), bins),
        metrics=metrics,
        group=(f"{host}:" if isinstance(host, str) else "") + str(group) if group is not None else None,
    )


def parse_file(name: str, fp: BinaryIO) -> ParsedFile:
    version: str | None = None
    stamp: float | None = None
    global_options: dict[str, Any] = {}
    jobs: list[Job] = []
    disks: list[dict[str, Any]] = []
    hosts: set[str] = set()
    plus = False
    longest_ms = 0.0
    bins = 0
    too_many_bins = False
    for key, value in events(fp):
        if key == "job":
            if value.get("jobname") == "All clients":
                continue  # client/server's sum of the hosts' jobs
            if len(jobs) >= MAX_JOBS:
                raise ImportFormatError(FORMAT, f"more than {MAX_JOBS} jobs", expected="at most 4096 jobs")
            if isinstance(value.get("hostname"), str):
                hosts.add(value["hostname"][:120])
            plus = plus or any(
                isinstance(value.get(d), dict)
                and isinstance(value[d].get("clat_ns") or value[d].get("clat"), dict)
                and "bins" in (value[d].get("clat_ns") or value[d].get("clat"))
                for d in ("read", "write", "trim")
            )
            job = job_of(value, global_options, len(jobs), bins=not too_many_bins)
            if not too_many_bins:
                bins += _count_bins(job)
                too_many_bins = bins > MAX_BINS
                if too_many_bins:  # none is kept: those of the jobs read so far are dropped too
                    jobs = [_without_bins(j) for j in jobs]
                    job = _without_bins(job)
            longest_ms = max(longest_ms, job.metrics.get("job_runtime_ms", 0.0))
            for d in (job.read, job.write, job.trim):
                if d is not None and d.runtime_ms:
                    longest_ms = max(longest_ms, d.runtime_ms)
            jobs.append(job)
        elif key == "fio version" and isinstance(value, str):
            version = fio_common.fio_version(value[:100])
        elif key == "timestamp":
            stamp = _num(value)
        elif key == "global options" and isinstance(value, dict):
            global_options = value
        elif key == "disk_util" and isinstance(value, list):
            disks = [d for d in value[:64] if isinstance(d, dict)]
    if version is None and not jobs:
        raise ImportFormatError(FORMAT, 'no "fio version" and no jobs', expected="fio's JSON output")
    if not jobs:
        raise ImportFormatError(FORMAT, "no jobs in the file", expected='a "jobs" list with at least one job')
    finished = started = None
    if stamp is not None and 0 < stamp < 2**33:
        finished = datetime.fromtimestamp(stamp, UTC)
        started = finished - timedelta(milliseconds=longest_ms)
    device: dict[str, str] = {}
    notes: list[str] = []
    if disks:
        names = [str(disk.get("name", ""))[:64] for disk in disks]
        device["name"] = names[0]
        if len(names) > 1:
            device["disks"] = ",".join(names)
        for disk in disks:
            counters = ", ".join(
                f"{k}={disk[k]}"
                for k in ("read_ios", "write_ios", "read_merges", "write_merges", "in_queue", "util")
                if _num(disk.get(k)) is not None
            )
            notes.append(f"disk_util {str(disk.get('name', ''))[:64]}: {counters}")
    host = {"hostname": sorted(hosts)[0]} if len(hosts) == 1 else {}
    if len(hosts) > 1:
        notes.append(f"client/server run on {len(hosts)} hosts: {', '.join(sorted(hosts)[:20])}")
    absent = [a for a in ABSENT if not (host and a.startswith("the host"))]
    if too_many_bins:
        absent.append(
            f"latency histograms of json+ (bins): more than {MAX_BINS:,} in the file, none is kept; "
            "the percentiles are"
        )
    run = Run(
        name=name.rsplit("/", 1)[-1][:200] or "fio",
        jobs=jobs,
        started_at=started,
        finished_at=finished,
        host=host,
        device=device,
        absent=absent,
        notes=notes,
    )
    return ParsedFile(format="fio-json+" if plus else FORMAT, tool="fio", version=version, runs=[run])


_HEAD = re.compile(rb'^\s*(?:[^\n{]*\n){0,40}?\s*\{\s*"fio version"\s*:', re.S)


class FioJson:
    format = FORMAT
    tool = "fio"
    aliases = ("fio-json+", "fio-jsonplus", "json", "json+")

    def sniff(self, name: str, head: bytes) -> bool:
        return bool(_HEAD.match(head)) or (b'"fio version"' in head[:4096] and b'"jobs"' in head)

    def parse(self, name: str, data: bytes) -> ParsedFile:
        return parse_file(name, io.BytesIO(data))

    def parse_file(self, name: str, fp: BinaryIO) -> ParsedFile:
        return parse_file(name, fp)


IMPORTERS = [FioJson()]
