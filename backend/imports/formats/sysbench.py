"""sysbench fileio's console output (prepare and run), versions 0.4, 0.5, 1.0 and 1.1 (master).

A file may hold several invocations one after the other (prepare, then runs, then cleanup): one
run of jobs, one job per `Doing ... test` and one `prepare` job per creation line that says how many
bytes it wrote.

- 1.0: `sysbench 1.0.20 (using bundled LuaJIT 2.1.0-beta2)`, the options (`Number of threads`,
  `Extra file open flags`, `128 files, 16MiB each`, `2GiB total file size`, `Block size 16KiB`,
  `Read/Write ratio ...`, `Periodic FSYNC ...`, `Using synchronous I/O mode`, `Doing random r/w
  test`), optional `[ 1s ] reads: ... MiB/s writes: ... MiB/s fsyncs: .../s latency (ms,95%): ...`
  interval lines, then `File operations:` (reads/s, writes/s, fsyncs/s), `Throughput:` (`read,
  MiB/s`, `written, MiB/s`), `General statistics:` (total time, events), `Latency (ms):` (min, avg,
  max, Nth percentile, sum) and `Threads fairness:`.
- 1.1 (master after 1.0.20): `Throughput:` lines `read:  IOPS=N N MiB/s (N MB/s)`, `write: ...`,
  `fsync: IOPS=N`.
- 0.4 and 0.5: `sysbench 0.4.12:  multi-threaded system evaluation benchmark`, sizes as `16Mb`
  (binary: 2**20), `Operations performed:  6000 Read, 4000 Write, 12800 Other = 22800 Total`,
  `Read 93.75Mb  Written 62.5Mb  Total transferred 156.25Mb  (5.2083Mb/sec)`, `N Requests/sec
  executed`, `total time`, and per-request (0.4) or response time (0.5) min/avg/max/approx. 95
  percentile in ms.

sysbench times one event per file request (a read, a write or an fsync): the latency lands on the
direction of a read-only or write-only test and in the job's metrics (`lat_*_ns`) for r/w tests.
"""

from __future__ import annotations

import re
from decimal import Decimal
from typing import Any

from .base import Direction, ImportFormatError, Interval, Job, Latency, ParsedFile, Run
from .text_common import dec, decode, guarded, integer, nonempty, scaled, size_bytes

FMT = "sysbench-fileio"
HEAD = re.compile(r"^sysbench\s+(\d+)\.(\d+)(?:\.(\d+))?(\S*)(?::|\s+\(|\s*$)")
SIZE = r"(\d+(?:\.\d+)?)\s*([KMGTP]i?)?[Bb]"
MODES = {
    "sequential write (creation)": "write",
    "sequential rewrite": "write",
    "sequential read": "read",
    "random read": "randread",
    "random write": "randwrite",
    "random r/w": "randrw",
    "combined random read/write": "randrw",
}
ENGINES = {"synchronous": "psync", "asynchronous": "libaio", "slow mmaped": "mmap", "fast mmaped": "mmap"}
INTERVAL = re.compile(
    r"^\[\s*(\d+(?:\.\d+)?)s\s*\]\s*reads:\s*([\d.]+)\s*MiB/s\s*writes:\s*([\d.]+)\s*MiB/s\s*fsyncs:\s*([\d.]+)/s"
    r"(?:\s*latency\s*\(ms,\s*(\d+)%\):\s*([\d.]+))?"
)


def _size(num: str, unit: str | None, n: int) -> int:
    return size_bytes(FMT, num, (unit or "") + "B", n)


class _Inv:
    """One sysbench invocation's figures."""

    def __init__(self, line: int, version: str):
        self.line, self.version = line, version
        self.settings: dict[str, Any] = {}
        self.mode: str | None = None
        self.mode_line = 0
        self.f: dict[str, Decimal] = {}
        self.lat: dict[str, float] = {}
        self.pct: dict[float, float] = {}
        self.intervals: list[Interval] = []
        self.prepare: tuple[int, Decimal, Decimal] | None = None  # bytes, seconds, MiB/s
        self.notes: list[str] = []


def _parse(name: str, data: bytes) -> ParsedFile:
    lines = decode(FMT, data).split("\n")
    invs: list[_Inv] = []
    inv: _Inv | None = None
    section = ""
    for n, raw in enumerate(lines, 1):
        s = raw.strip()
        if not s:
            continue
        if m := HEAD.match(s):
            major, minor = int(m.group(1)), int(m.group(2))
            version = ".".join(g for g in m.group(1, 2, 3) if g) + (m.group(4) or "")
            if (major, minor) not in ((0, 4), (0, 5), (1, 0), (1, 1)):
                raise ImportFormatError(
                    FMT,
                    f"sysbench {version} is not a version this importer reads",
                    line=n,
                    expected="sysbench 0.4, 0.5, 1.0 or 1.1",
                )
            inv = _Inv(n, version)
            invs.append(inv)
            section = ""
            continue
        if inv is None:
            if s.startswith(("WARNING", "FATAL")):
                continue
            raise ImportFormatError(
                FMT,
                f"text before the sysbench banner: {s[:60]!r}",
                line=n,
                expected="'sysbench 1.0.20 (using ...)' or 'sysbench 0.4.12:  multi-threaded system "
                "evaluation benchmark'",
            )
        st = inv.settings
        if m := re.match(r"^Number of threads:\s*(\d+)$", s):
            st["numjobs"] = int(m.group(1))
        elif m := re.match(r"^Extra file open flags:\s*(.*)$", s):
            flags = m.group(1).strip()
            if not re.fullmatch(r"[1-9]\d*", flags):  # 0.x print the flags as a number: only 0 is known
                st["direct"] = "directio" in flags
            for flag in ("sync", "dsync"):
                if re.search(rf"\b{flag}\b", flags):
                    st["sync" if flag == "sync" else "dsync"] = True
            if flags not in ("(none)", "0", "") and not re.fullmatch(r"[a-z ]+", flags):
                inv.notes.append(f"extra file open flags {flags[:40]}")
        elif m := re.match(rf"^(\d+) files, {SIZE} each$", s):
            st["nrfiles"] = int(m.group(1))
            st["filesize"] = _size(m.group(2), m.group(3), n)
        elif m := re.match(r"^(\d+) files, (\d+)Kb each, (\d+)Mb total$", s):  # prepare's line
            st["nrfiles"] = int(m.group(1))
            st["filesize"] = int(m.group(2)) * 1024
            st["size"] = int(m.group(3)) * 1024**2
        elif m := re.match(rf"^{SIZE} total file size$", s):
            st["size"] = _size(m.group(1), m.group(2), n)
        elif m := re.match(rf"^Block size {SIZE}$", s):
            st["bs"] = _size(m.group(1), m.group(2), n)
        elif m := re.match(r"^Read/Write ratio for combined random IO test:\s*([\d.]+)$", s):
            r = dec(FMT, m.group(1), n, "a read/write ratio")
            st["_ratio"] = r
        elif m := re.match(r"^Periodic FSYNC enabled, calling fsync\(\) each (\d+) requests\.$", s):
            st["fsync"] = int(m.group(1))
        elif s.startswith("Calling fsync() at the end of test"):
            st["end_fsync"] = True
        elif s.startswith("Calling fsync() after each write operation"):
            st["fsync"] = 1
        elif m := re.match(r"^Using (.+) I/O mode$", s):
            if m.group(1) not in ENGINES:
                raise ImportFormatError(
                    FMT,
                    f"unknown I/O mode {m.group(1)[:30]!r}",
                    line=n,
                    expected="synchronous, asynchronous, slow mmaped or fast mmaped",
                )
            st["ioengine"] = ENGINES[m.group(1)]
        elif m := re.match(r"^Doing (.+) test$", s):
            if m.group(1) not in MODES:
                raise ImportFormatError(
                    FMT, f"unknown test mode {m.group(1)[:40]!r}", line=n, expected=", ".join(MODES)
                )
            if inv.mode is not None:
                raise ImportFormatError(
                    FMT,
                    "a second 'Doing ... test' in one invocation",
                    line=n,
                    expected="a new 'sysbench ...' banner first",
                )
            inv.mode, inv.mode_line = MODES[m.group(1)], n
        elif m := re.match(r"^(\d+) bytes written in ([\d.]+) seconds \(([\d.]+) MiB/sec\)\.$", s):
            inv.prepare = (
                int(m.group(1)),
                dec(FMT, m.group(2), n, "seconds"),
                dec(FMT, m.group(3), n, "MiB/sec"),
            )
        elif m := INTERVAL.match(s):
            t = dec(FMT, m.group(1), n, "seconds")
            metrics = {"fsyncs_per_s": float(dec(FMT, m.group(4), n, "fsyncs/s"))}
            if m.group(6):
                metrics[f"lat_p{m.group(5)}_ns"] = scaled(dec(FMT, m.group(6), n, "latency ms"), 10**6)
            inv.intervals.append(
                Interval(
                    index=len(inv.intervals) + 1,
                    end_s=float(t),
                    read=Direction(bw_bytes=scaled(dec(FMT, m.group(2), n, "MiB/s"), 2**20)),
                    write=Direction(bw_bytes=scaled(dec(FMT, m.group(3), n, "MiB/s"), 2**20)),
                    metrics=metrics,
                )
            )
        elif s.endswith(":") and s[:-1] in (
            "File operations",
            "Throughput",
            "General statistics",
            "Latency (ms)",
            "Threads fairness",
            "Test execution summary",
            "per-request statistics",
            "response time",
        ):
            section = s[:-1]
        elif m := re.match(r"^(reads/s|writes/s|fsyncs/s|read, MiB/s|written, MiB/s):\s*([\d.]+)$", s):
            inv.f[m.group(1)] = dec(FMT, m.group(2), n, m.group(1))
        elif m := re.match(r"^(read|write):\s*IOPS=([\d.]+)\s+([\d.]+) MiB/s \(([\d.]+) MB/s\)$", s):
            key = "reads/s" if m.group(1) == "read" else "writes/s"
            inv.f[key] = dec(FMT, m.group(2), n, "IOPS")
            inv.f["read, MiB/s" if m.group(1) == "read" else "written, MiB/s"] = dec(
                FMT, m.group(3), n, "MiB/s"
            )
        elif m := re.match(r"^fsync:\s*IOPS=([\d.]+)$", s):
            inv.f["fsyncs/s"] = dec(FMT, m.group(1), n, "IOPS")
        elif m := re.match(r"^total time:\s*([\d.]+)s$", s):
            inv.f["time"] = dec(FMT, m.group(1), n, "seconds")
        elif m := re.match(r"^total number of events:\s*(\d+)$", s):
            inv.f["events"] = Decimal(integer(FMT, m.group(1), n, "events"))
        elif m := re.match(
            r"^Operations performed:\s*(\d+) reads?, (\d+) writes?, (\d+) other = (\d+) total$", s, re.I
        ):
            inv.f["reads"], inv.f["writes"], inv.f["other"] = (Decimal(int(g)) for g in m.group(1, 2, 3))
        elif m := re.match(rf"^Read {SIZE}\s+Written {SIZE}\s+Total transferred {SIZE}\s+\({SIZE}/sec\)$", s):
            inv.f["read_bytes"] = Decimal(_size(m.group(1), m.group(2), n))
            inv.f["written_bytes"] = Decimal(_size(m.group(3), m.group(4), n))
        elif m := re.match(r"^([\d.]+) Requests/sec executed$", s):
            inv.f["requests/s"] = dec(FMT, m.group(1), n, "requests/s")
        elif m := re.match(r"^(min|avg|max|sum):\s*([\d.]+)(ms)?$", s):
            if section in ("Latency (ms)", "per-request statistics", "response time") or m.group(3):
                inv.lat[m.group(1)] = scaled(dec(FMT, m.group(2), n, "ms"), 10**6)
        elif m := re.match(r"^(?:(\d+)th percentile|approx\.\s+(\d+) percentile):\s*([\d.]+)(?:ms)?$", s):
            inv.pct[float(m.group(1) or m.group(2))] = scaled(dec(FMT, m.group(3), n, "ms"), 10**6)
    return _assemble(invs, lines)


def _assemble(invs: list[_Inv], lines: list[str]) -> ParsedFile:
    if not invs:
        raise ImportFormatError(
            FMT,
            "no sysbench banner",
            line=1,
            expected="'sysbench 1.0.20 (using ...)' or 'sysbench 0.4.12: ...'",
        )
    jobs: list[Job] = []
    absent: set[str] = set()
    notes: list[str] = []
    for inv in invs:
        notes += inv.notes
        st = {k: v for k, v in inv.settings.items() if not k.startswith("_")}
        if inv.prepare:
            b, secs, mibs = inv.prepare
            jobs.append(
                Job(
                    name="prepare",
                    settings={k: st[k] for k in ("nrfiles", "filesize", "size") if k in st} | {"rw": "write"},
                    write=Direction(bw_bytes=scaled(mibs, 2**20), io_bytes=b, runtime_ms=float(secs * 1000)),
                    group="prepare",
                )
            )
        if inv.mode is None:
            continue
        if "time" not in inv.f:
            raise ImportFormatError(
                FMT,
                f"the {inv.mode} test at line {inv.mode_line} has no results (truncated)",
                line=len(lines),
                expected="'total time: N.NNNNs'",
            )
        secs = inv.f["time"]
        st["rw"] = inv.mode
        ratio = inv.settings.get("_ratio")
        if inv.mode == "randrw" and isinstance(ratio, Decimal):
            st["rwmixread"] = float(ratio * 100 / (1 + ratio))
        lat = None
        if inv.lat or inv.pct:
            lat = Latency(
                mean_ns=inv.lat.get("avg"),
                min_ns=inv.lat.get("min"),
                max_ns=inv.lat.get("max"),
                percentiles_ns=dict(inv.pct),
            )
        dirs: dict[str, Direction | None] = {"read": None, "write": None}
        metrics: dict[str, float] = {}
        old = inv.version.startswith("0.")
        for d, ops, mib, cnt, byt in (
            ("read", "reads/s", "read, MiB/s", "reads", "read_bytes"),
            ("write", "writes/s", "written, MiB/s", "writes", "written_bytes"),
        ):
            does = inv.mode in ("randrw",) or d in inv.mode
            if not does:
                continue
            if old:
                if cnt not in inv.f or byt not in inv.f:
                    raise ImportFormatError(
                        FMT,
                        "no 'Operations performed' or 'Read ... Written ...' line",
                        line=inv.mode_line,
                        expected="'Operations performed: N Read, N Write, N Other = N Total'",
                    )
                ios, b = int(inv.f[cnt]), int(inv.f[byt])
                dirs[d] = Direction(
                    bw_bytes=float(inv.f[byt] / secs) if secs else None,
                    iops=float(inv.f[cnt] / secs) if secs else None,
                    io_bytes=b,
                    total_ios=ios,
                    runtime_ms=float(secs * 1000),
                )
            else:
                if ops not in inv.f or mib not in inv.f:
                    raise ImportFormatError(
                        FMT,
                        f"no '{ops}' or '{mib}' figure",
                        line=inv.mode_line,
                        expected="'File operations:' and 'Throughput:' blocks",
                    )
                dirs[d] = Direction(
                    bw_bytes=scaled(inv.f[mib], 2**20), iops=float(inv.f[ops]), runtime_ms=float(secs * 1000)
                )
        fs = inv.f.get("fsyncs/s")
        if fs is not None:
            metrics["fsyncs_per_s"] = float(fs)
        if "other" in inv.f:
            metrics["fsyncs"] = float(inv.f["other"])
            if secs:
                metrics["fsyncs_per_s"] = float(inv.f["other"] / secs)
        if "events" in inv.f:
            metrics["events"] = float(inv.f["events"])
        if lat is not None:
            if inv.mode == "randrw":
                for k, v in (
                    ("lat_mean_ns", lat.mean_ns),
                    ("lat_min_ns", lat.min_ns),
                    ("lat_max_ns", lat.max_ns),
                ):
                    if v is not None:
                        metrics[k] = v
                for p, v in lat.percentiles_ns.items():
                    metrics[f"lat_p{p:g}_ns"] = v
                absent.add("latency per direction (sysbench times reads, writes and fsyncs together)")
            else:
                d = "read" if "read" in inv.mode else "write"
                cur = dirs[d]
                if cur is not None:
                    dirs[d] = Direction(
                        bw_bytes=cur.bw_bytes,
                        iops=cur.iops,
                        io_bytes=cur.io_bytes,
                        total_ios=cur.total_ios,
                        runtime_ms=cur.runtime_ms,
                        lat=lat,
                    )
                if st.get("fsync"):
                    notes.append(f"the {inv.mode} test's latency includes its fsync() calls")
        else:
            absent.add("latency")
        if not old:
            absent.add("bytes moved and I/O counts (sysbench 1.x prints rates only)")
        jobs.append(
            Job(
                name=f"{inv.mode} {st.get('bs', '')}".strip(),
                settings=st,
                read=dirs["read"],
                write=dirs["write"],
                metrics=metrics,
                group=f"sysbench {inv.version}",
                intervals=inv.intervals,
            )
        )
    if not jobs:
        raise ImportFormatError(
            FMT,
            "no test results (only options or a prepare without figures)",
            line=len(lines),
            expected="a 'Doing ... test' with its results, or a prepare's 'N bytes written' line",
        )
    absent |= {
        "host and device facts (sysbench prints none)",
        "latency distribution beyond the one percentile printed",
        "runtime setting (--time): the measured total time is kept",
    }
    versions = sorted({i.version for i in invs})
    run = Run(name=f"sysbench fileio {', '.join(versions)}", jobs=jobs, absent=sorted(absent), notes=notes)
    return ParsedFile(format=FMT, tool="sysbench", version=versions[-1], runs=[run])


class _Importer:
    format = FMT
    tool = "sysbench"
    aliases = ("sysbench", "sysbench-fileio-text")

    def sniff(self, name: str, head: bytes) -> bool:
        try:
            text = decode(FMT, head)
        except ImportFormatError:
            return False
        return any(HEAD.match(s.strip()) for s in text.split("\n")[:20]) and (
            "files, " in text or "Doing " in text or "fileio" in text
        )

    def parse(self, name: str, data: bytes) -> ParsedFile:
        return nonempty(FMT, guarded(FMT, lambda: _parse(name, data)), "sysbench fileio results")


IMPORTERS = [_Importer()]
