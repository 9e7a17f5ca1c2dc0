"""DiskSpd's reports: the XML one (`-Rxml`) and the text one (the default), DiskSpd 2.x.

One run per timespan, one job per target (a file path or `#N` disk), the threads of a target summed
(each thread's bytes and I/Os kept in the job's metrics as `thread<N>_<read|write>_<bytes|ios>`).

- XML: `<Results>` with `<System>` (computer name, tool version, run time in UTC), `<Profile>` (per
  timespan its duration, warm-up, cool-down and targets with block size, request count, write ratio,
  `<Random>`, cache flags), then one result `<TimeSpan>` per profile timespan: test time, CPU,
  `<Latency>` (`<Bucket>` rows: percentile 0 = min, 1..99, 99.9 .. 99.9999999, 100 = max; read,
  write and total in ms), `<Iops>` buckets and `<Thread>/<Target>` byte and I/O counts with mean
  latency and its standard deviation in ms. The XML has no command line.
- Text: `Command Line:`, `Input parameters:` per timespan and target, `System information:`,
  `Results for timespan N:` with `actual test time`, the CPU table, the `Total IO`, `Read IO` and
  `Write IO` tables (thread | bytes | I/Os | MiB/s | I/O per s [| AvgLat | IopsStdDev | LatStdDev]
  | file (size)) and the `%-ile | Read (ms) | Write (ms) | Total (ms)` table.

Units: bytes and I/O counts are exact; MiB/s is 2**20 B/s; latencies are ms (10**6 ns). DiskSpd's
latency runs from submission to completion: fio's `lat`. The whole run's percentile table lands on
the job when there is one target; with several, the text's per-target tables are used when present.
The XML is read by defusedxml with every DTD refused (DiskSpd writes none): no entity can expand.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any
from xml.etree.ElementTree import ParseError

from defusedxml import DefusedXmlException
from defusedxml.ElementTree import DefusedXMLParser

from .base import Direction, ImportFormatError, Interval, Job, Latency, ParsedFile, Run
from .text_common import dec, decode, guarded, integer, nonempty, scaled, size_bytes

XML = "diskspd-xml"
TEXT = "diskspd-text"
MAX_DEPTH = 64
MAX_NODES = 2_000_000
NINES = {f"{n}-nines": float("99." + "9" * (n - 2)) for n in range(3, 10)}


# --- XML ---------------------------------------------------------------------------------------


@dataclass
class _Node:
    tag: str
    attrib: dict[str, str]
    line: int
    children: list[_Node] = field(default_factory=list)
    text: str = ""

    def find(self, tag: str) -> _Node | None:
        return next((c for c in self.children if c.tag == tag), None)

    def all(self, tag: str) -> list[_Node]:
        return [c for c in self.children if c.tag == tag]

    def value(self, tag: str) -> str | None:
        c = self.find(tag)
        return c.text.strip() if c is not None else None


class _Builder:
    """defusedxml's parser's target: our small tree, with each element's line for the errors."""

    def __init__(self) -> None:
        self.root: list[_Node] = []
        self.stack: list[_Node] = []
        self.count = 0
        self.line: Any = lambda: None

    def start(self, tag: str, attrib: dict[str, str]) -> None:
        self.count += 1
        if len(self.stack) >= MAX_DEPTH or self.count > MAX_NODES:
            raise ImportFormatError(XML, "the XML nests too deep or has too many elements", line=self.line())
        node = _Node(tag, dict(attrib), self.line() or 0)
        (self.stack[-1].children if self.stack else self.root).append(node)
        self.stack.append(node)

    def end(self, tag: str) -> None:
        self.stack.pop()

    def data(self, s: str) -> None:
        if self.stack and len(self.stack[-1].text) < 4096:
            self.stack[-1].text += s

    def close(self) -> list[_Node]:
        return self.root


def _tree(data: bytes) -> _Node:
    """The document through defusedxml with every DTD refused (DiskSpd writes none, so no entity
    can expand and nothing external is fetched)."""
    text = decode(XML, data)
    builder = _Builder()
    parser = DefusedXMLParser(
        target=builder, encoding="utf-8", forbid_dtd=True, forbid_entities=True, forbid_external=True
    )
    builder.line = lambda: parser.parser.CurrentLineNumber
    try:
        parser.feed(text.encode("utf-8"))
        parser.close()
    except DefusedXmlException as e:
        raise ImportFormatError(
            XML,
            f"the XML declares a DTD or an entity ({type(e).__name__})",
            line=builder.line(),
            expected="DiskSpd's XML (no DOCTYPE)",
        ) from None
    except ParseError as e:
        line = e.position[0] if getattr(e, "position", None) else None
        raise ImportFormatError(
            XML, f"not well-formed XML ({str(e)[:80]})", line=line, expected="a complete <Results> document"
        ) from None
    root = builder.root
    if len(root) != 1 or root[0].tag != "Results":
        raise ImportFormatError(
            XML, "the root element is not <Results>", line=1, expected="DiskSpd's -Rxml <Results> document"
        )
    return root[0]


def _need(node: _Node | None, tag: str, where: _Node) -> _Node:
    if node is None:
        raise ImportFormatError(
            XML, f"<{where.tag}> has no <{tag}>", line=where.line, expected=f"<{tag}> in <{where.tag}>"
        )
    return node


def _n(node: _Node, tag: str, what: str | None = None) -> Decimal | None:
    v = node.value(tag)
    if v is None or v == "":
        return None
    c = node.find(tag)
    return dec(XML, v, c.line if c else node.line, what or f"a number in <{tag}>")


def _ms(v: Decimal | None) -> float | None:
    return scaled(v, 10**6) if v is not None else None


def _version_check(fmt: str, version: str | None, line: int | None) -> None:
    if version is None:
        return
    if not re.match(r"^2\.\d+", version):
        raise ImportFormatError(
            fmt, f"DiskSpd {version} is not a version this importer reads", line=line, expected="DiskSpd 2.x"
        )


def _profile_settings(t: _Node, ts: _Node) -> dict[str, Any]:
    s: dict[str, Any] = {}
    bs = _n(t, "BlockSize")
    if bs is not None:
        s["bs"] = int(bs)
    wr = _n(t, "WriteRatio")
    rnd = t.find("Random") is not None
    w = int(wr) if wr is not None else 0
    if not 0 <= w <= 100:
        raise ImportFormatError(
            XML, f"write ratio {w} out of 0..100", line=t.line, expected="<WriteRatio> 0..100"
        )
    s["rw"] = ("rand" if rnd else "") + ("read" if w == 0 else "write" if w == 100 else "rw")
    if 0 < w < 100:
        s["rwmixread"] = 100 - w
    rr = _n(t, "RandomRatio")
    if rnd and rr is not None and int(rr) != 100:
        s["percentage_random"] = int(rr)
    tp = _n(ts, "ThreadCount")
    rq_ts = _n(ts, "RequestCount")
    if tp and int(tp) > 0:
        s["numjobs"] = int(tp)
        if rq_ts:
            s["iodepth"] = int(rq_ts)
    else:
        tpf = _n(t, "ThreadsPerFile")
        if tpf is not None:
            s["numjobs"] = int(tpf)
    if "iodepth" not in s and (rq := _n(t, "RequestCount")) is not None:
        s["iodepth"] = int(rq)
    size = _n(t, "FileSize")
    if size:
        s["size"] = int(size)
    off = _n(t, "BaseFileOffset")
    if off:
        s["offset"] = int(off)
    s["direct"] = any(t.value(k) == "true" for k in ("DisableOSCache", "DisableAllCache"))
    if t.value("WriteThrough") == "true" or t.value("DisableAllCache") == "true":
        s["sync"] = True
    for key, out in (("Duration", "runtime_s"), ("Warmup", "ramp_time_s"), ("Cooldown", "cooldown_s")):
        v = _n(ts, key)
        if v is not None:
            s[out] = float(v)
    return s


def _lat_table(lat: _Node | None) -> dict[str, Latency]:
    """The <Latency> buckets: percentile 0 is the minimum, 100 the maximum."""
    if lat is None:
        return {}
    out: dict[str, dict[str, Any]] = {k: {"p": {}} for k in ("Read", "Write", "Total")}
    for key, avg, sd in (
        ("Read", "AverageReadMilliseconds", "ReadLatencyStdev"),
        ("Write", "AverageWriteMilliseconds", "WriteLatencyStdev"),
        ("Total", "AverageTotalMilliseconds", "LatencyStdev"),
    ):
        out[key]["mean"] = _ms(_n(lat, avg))
        out[key]["sd"] = _ms(_n(lat, sd))
    for b in lat.all("Bucket"):
        p = _n(b, "Percentile", "a percentile")
        if p is None or not 0 <= p <= 100:
            raise ImportFormatError(
                XML, "a latency bucket without a percentile in 0..100", line=b.line, expected="<Percentile>"
            )
        for key in ("Read", "Write", "Total"):
            v = _ms(_n(b, f"{key}Milliseconds"))
            if v is None:
                continue
            if p == 0:
                out[key]["min"] = v
            elif p == 100:
                out[key]["max"] = v
            else:
                out[key]["p"][float(p)] = v
    return {
        k: Latency(
            mean_ns=v["mean"],
            stddev_ns=v["sd"],
            min_ns=v.get("min"),
            max_ns=v.get("max"),
            percentiles_ns=v["p"],
        )
        for k, v in out.items()
        if v["mean"] is not None or v["p"] or "min" in v
    }


@dataclass
class _Acc:
    """One target's threads summed."""

    bytes: dict[str, int] = field(default_factory=lambda: {"Read": 0, "Write": 0})
    ios: dict[str, int] = field(default_factory=lambda: {"Read": 0, "Write": 0})
    lat_sum: dict[str, float] = field(default_factory=lambda: {"Read": 0.0, "Write": 0.0})
    lat_sq: dict[str, float] = field(default_factory=lambda: {"Read": 0.0, "Write": 0.0})
    lat_n: dict[str, int] = field(default_factory=lambda: {"Read": 0, "Write": 0})
    metrics: dict[str, float] = field(default_factory=dict)
    buckets: dict[int, dict[str, float]] = field(default_factory=dict)
    file_size: int | None = None
    line: int = 0


def _merge_lat(acc: _Acc, d: str, count: int, mean_ns: float | None, sd_ns: float | None) -> None:
    if mean_ns is None or count <= 0:
        return
    acc.lat_n[d] += count
    acc.lat_sum[d] += mean_ns * count
    acc.lat_sq[d] += count * ((sd_ns or 0.0) ** 2 + mean_ns**2)


def _direction(acc: _Acc, d: str, secs: float, pct: Latency | None) -> Direction | None:
    if acc.ios[d] == 0 and acc.bytes[d] == 0:
        return None
    lat = None
    n = acc.lat_n[d]
    if n:
        mean = acc.lat_sum[d] / n
        var = max(acc.lat_sq[d] / n - mean**2, 0.0)
        lat = Latency(mean_ns=mean, stddev_ns=var**0.5)
        if pct is not None:
            lat = Latency(
                mean_ns=mean,
                stddev_ns=var**0.5,
                min_ns=pct.min_ns,
                max_ns=pct.max_ns,
                percentiles_ns=dict(pct.percentiles_ns),
            )
    elif pct is not None:
        lat = pct
    return Direction(
        bw_bytes=acc.bytes[d] / secs if secs > 0 else None,
        iops=acc.ios[d] / secs if secs > 0 else None,
        io_bytes=acc.bytes[d],
        total_ios=acc.ios[d],
        runtime_ms=secs * 1000,
        lat=lat,
    )


def _parse_xml(name: str, data: bytes) -> ParsedFile:
    root = _tree(data)
    system = root.find("System")
    profile = _need(root.find("Profile"), "Profile", root)
    host: dict[str, str] = {}
    version = None
    started = None
    if system is not None:
        if cn := system.value("ComputerName"):
            host["hostname"] = cn[:200]
        tool = system.find("Tool")
        if tool is not None:
            version = (tool.value("Version") or "")[:40] or None
            _version_check(XML, version, tool.line)
        rt = system.value("RunTime")
        if rt:
            try:
                started = datetime.strptime(rt, "%Y/%m/%d %H:%M:%S UTC").replace(tzinfo=UTC)
            except ValueError:
                raise ImportFormatError(
                    XML,
                    f"unreadable <RunTime> {rt[:40]!r}",
                    line=system.line,
                    expected="YYYY/MM/DD HH:MM:SS UTC",
                ) from None
    pspans = _need(profile.find("TimeSpans"), "TimeSpans", profile).all("TimeSpan")
    rspans = root.all("TimeSpan")
    if not rspans:
        raise ImportFormatError(
            XML,
            "no result <TimeSpan> (the file is truncated or the test was interrupted)",
            line=root.line,
            expected="<TimeSpan> results after <Profile>",
        )
    if len(rspans) > len(pspans):
        raise ImportFormatError(
            XML,
            "more result timespans than profile timespans",
            line=rspans[-1].line,
            expected="one <TimeSpan> result per profile timespan",
        )
    runs = []
    for idx, (ps, rs) in enumerate(zip(pspans, rspans, strict=False), 1):
        if rs.find("Error") is not None:
            raise ImportFormatError(
                XML, f"timespan {idx}: {rs.value('Error')}", line=rs.line, expected="a timespan with results"
            )
        secs_d = _n(rs, "TestTimeSeconds")
        if secs_d is None:
            raise ImportFormatError(
                XML, f"timespan {idx} has no <TestTimeSeconds>", line=rs.line, expected="<TestTimeSeconds>"
            )
        secs = float(secs_d)
        targets = _need(ps.find("Targets"), "Targets", ps).all("Target")
        psettings: dict[str, dict[str, Any]] = {}
        for t in targets:
            path = t.value("Path") or ""
            psettings.setdefault(path, _profile_settings(t, ps))
        accs: dict[str, _Acc] = {}
        for th in rs.all("Thread"):
            tid = th.value("Id") or "?"
            for tg in th.all("Target"):
                path = tg.value("Path") or ""
                acc = accs.setdefault(path, _Acc(line=tg.line))
                for d in ("Read", "Write"):
                    b = int(_n(tg, f"{d}Bytes") or 0)
                    c = int(_n(tg, f"{d}Count") or 0)
                    if b < 0 or c < 0:
                        raise ImportFormatError(
                            XML, "a negative count", line=tg.line, expected="byte and I/O counts >= 0"
                        )
                    acc.bytes[d] += b
                    acc.ios[d] += c
                    acc.metrics[f"thread{tid}_{d.lower()}_bytes"] = float(b)
                    acc.metrics[f"thread{tid}_{d.lower()}_ios"] = float(c)
                    _merge_lat(
                        acc,
                        d,
                        c,
                        _ms(_n(tg, f"Average{d}LatencyMilliseconds")),
                        _ms(_n(tg, f"{d}LatencyStdev")),
                    )
                fs = _n(tg, "FileSize")
                if fs is not None:
                    acc.file_size = int(fs)
                iops = tg.find("Iops")
                for bucket in iops.all("Bucket") if iops is not None else []:
                    at = bucket.attrib
                    ms = integer(XML, at.get("SampleMillisecond", ""), bucket.line, "SampleMillisecond")
                    slot = acc.buckets.setdefault(ms, {"Read": 0.0, "Write": 0.0})
                    for d in ("Read", "Write"):
                        if d in at:
                            slot[d] += float(dec(XML, at[d], bucket.line, f"{d} IOPS"))
        if not accs:
            raise ImportFormatError(
                XML,
                f"timespan {idx} has no <Thread>/<Target> results",
                line=rs.line,
                expected="<Thread><Target>...</Target></Thread>",
            )
        table = _lat_table(rs.find("Latency"))
        single = len(accs) == 1
        jobs: list[Job] = []
        for path, acc in accs.items():
            settings = dict(psettings.get(path, {}))
            intervals = [
                Interval(
                    index=i, end_s=ms / 1000, read=Direction(iops=v["Read"]), write=Direction(iops=v["Write"])
                )
                for i, (ms, v) in enumerate(sorted(acc.buckets.items()), 1)
            ]
            jobs.append(
                Job(
                    name=path or f"target {len(jobs) + 1}",
                    settings=settings,
                    read=_direction(acc, "Read", secs, table.get("Read") if single else None),
                    write=_direction(acc, "Write", secs, table.get("Write") if single else None),
                    metrics=acc.metrics,
                    group=f"timespan {idx}",
                    intervals=intervals,
                )
            )
        notes = []
        cpu = rs.find("CpuUtilization")
        avg = cpu.find("Average") if cpu is not None else None
        if avg is not None and (u := avg.value("UsagePercent")):
            notes.append(
                f"CPU usage {u}% (user {avg.value('UserPercent')}%, kernel {avg.value('KernelPercent')}%)"
            )
        absent = [
            "command line (the XML report does not carry it)",
            "submission and completion latency apart (DiskSpd measures the total)",
        ]
        if not single and table:
            absent.append("latency percentiles per target (the XML's table covers all targets together)")
        if rs.find("Latency") is None:
            absent.append("latency (the run was made without -L)")
        run_host = dict(host)
        if pc := rs.value("ProcCount"):
            run_host["cpu_count"] = pc[:10]
        device = {"target": ", ".join(accs)[:500]}
        if single and (size := next(iter(accs.values())).file_size):
            device["size_bytes"] = str(size)
        runs.append(
            Run(
                name=f"DiskSpd timespan {idx}",
                jobs=jobs,
                started_at=started,
                host=run_host,
                device=device,
                absent=absent,
                notes=notes,
            )
        )
    return ParsedFile(format=XML, tool="DiskSpd", version=version, runs=runs)


# --- text --------------------------------------------------------------------------------------

ROW = re.compile(r"^\s*(\d+\s*\||total:)")
SIZE = re.compile(r"^(\d+(?:\.\d+)?)\s*(B|KiB|MiB|GiB|TiB)?$")


def _text_size(s: str, n: int) -> int:
    m = SIZE.match(s.strip())
    if not m:
        raise ImportFormatError(TEXT, f"unreadable size {s[:30]!r}", line=n, expected="N, NKiB, NMiB, NGiB")
    return size_bytes(TEXT, m.group(1), m.group(2) or "B", n)


def _input_params(lines: list[str], start: int, end: int) -> dict[int, dict[str, dict[str, Any]]]:
    """The 'Input parameters:' block: per timespan, per target path, the settings."""
    spans: dict[int, dict[str, dict[str, Any]]] = {}
    ts_settings: dict[str, Any] = {}
    cur: dict[str, Any] | None = None
    span = 0
    for n in range(start, end):
        s = lines[n].strip()
        if m := re.match(r"^timespan:\s*(\d+)", s):
            span = int(m.group(1))
            spans[span] = {}
            ts_settings, cur = {}, None
        elif m := re.match(r"^duration:\s*(\d+)s$", s):
            ts_settings["runtime_s"] = float(m.group(1))
        elif m := re.match(r"^warm up time:\s*(\d+)s$", s):
            ts_settings["ramp_time_s"] = float(m.group(1))
        elif m := re.match(r"^cool down time:\s*(\d+)s$", s):
            ts_settings["cooldown_s"] = float(m.group(1))
        elif m := re.match(r"^thread pool with (\d+) threads$", s):
            ts_settings["numjobs"] = int(m.group(1))
        elif m := re.match(r"^path:\s*(?:template target )?'(.*)'$", s):
            cur = dict(ts_settings)
            cur["direct"] = False
            spans.setdefault(span, {})[m.group(1)] = cur
        elif cur is None:
            continue
        elif s in (
            "software cache disabled",
            "hardware and software write caches disabled, writethrough on",
            "software and hardware write cache disabled",
        ):
            cur["direct"] = True
            if "writethrough" in s or "hardware" in s:
                cur["sync"] = True
        elif s.startswith("hardware write cache disabled, writethrough on"):
            cur["sync"] = True
        elif s == "performing read test":
            cur["_w"] = 0
        elif s == "performing write test":
            cur["_w"] = 100
        elif m := re.match(r"^performing mix test \(read/write ratio: (\d+)/(\d+)\)$", s):
            cur["_w"] = int(m.group(2))
        elif m := re.match(r"^block size:\s*(\S+)$", s):
            cur["bs"] = _text_size(m.group(1), n + 1)
        elif s.startswith("using random I/O"):
            cur["_rand"] = 100
        elif m := re.match(r"^using mixed random/sequential I/O \((\d+)% random\)", s):
            cur["_rand"] = int(m.group(1))
        elif m := re.match(r"^number of outstanding I/O operations(?: per thread)?:\s*(\d+)$", s):
            cur["iodepth"] = int(m.group(1))
        elif m := re.match(r"^threads per file:\s*(\d+)$", s):
            cur.setdefault("numjobs", int(m.group(1)))
        elif m := re.match(r"^(?:base file offset):\s*(\S+)$", s):
            cur["offset"] = _text_size(m.group(1), n + 1)
    for paths in spans.values():
        for st in paths.values():
            w = st.pop("_w", None)
            rnd = st.pop("_rand", 0)
            if w is not None:
                st["rw"] = ("rand" if rnd else "") + ("read" if w == 0 else "write" if w == 100 else "rw")
                if 0 < w < 100:
                    st["rwmixread"] = 100 - w
            if 0 < rnd < 100:
                st["percentage_random"] = rnd
    return spans


def _table(lines: list[str], n: int, label: str) -> tuple[list[tuple[int, dict[str, str]]], int]:
    """Rows of one 'Total IO'/'Read IO'/'Write IO' table starting after its label at index n."""
    head = lines[n + 1] if n + 1 < len(lines) else ""
    if not head.strip().startswith("thread"):
        raise ImportFormatError(
            TEXT,
            f"the {label} table has no header",
            line=n + 2,
            expected="'thread |       bytes     |     I/Os     | ...'",
        )
    cols = [c.strip() for c in head.split("|")]
    rows: list[tuple[int, list[str]]] = []
    i = n + 2
    while i < len(lines):
        s = lines[i]
        if s.strip().startswith("-"):
            i += 1
            continue
        if not ROW.match(s):
            break
        parts = [p.strip() for p in s.split("|")]
        if parts[0].startswith("total:"):
            return [(ln, dict(zip(cols, p, strict=False))) for ln, p in rows], i + 1
        rows.append((i + 1, parts))
        i += 1
    raise ImportFormatError(
        TEXT, f"the {label} table ends without its total row (truncated)", line=i + 1, expected="'total: ...'"
    )


def _pct_table(lines: list[str], n: int) -> tuple[dict[str, Latency], int]:
    if n + 1 >= len(lines) or not lines[n + 1].strip().startswith("---"):
        raise ImportFormatError(
            TEXT, "the %-ile table has no rule under its header", line=n + 2, expected="'-----'"
        )
    vals: dict[str, dict[str, Any]] = {k: {"p": {}} for k in ("Read", "Write", "Total")}
    i = n + 2
    seen_max = False
    while i < len(lines) and "|" in lines[i]:
        parts = [p.strip() for p in lines[i].split("|")]
        if len(parts) != 4:
            raise ImportFormatError(
                TEXT, "a %-ile row without four columns", line=i + 1, expected="'NAME | read | write | total'"
            )
        label = parts[0]
        if label in ("min", "max"):
            p = None
        elif m := re.fullmatch(r"(\d+)th", label):
            p = float(m.group(1))
        elif label in NINES:
            p = NINES[label]
        else:
            raise ImportFormatError(
                TEXT,
                f"unknown percentile {label!r}",
                line=i + 1,
                expected="min, 25th .. 99th, 3-nines .. 9-nines, max",
            )
        for key, v in zip(("Read", "Write", "Total"), parts[1:], strict=True):
            if v == "N/A":
                continue
            ns = scaled(dec(TEXT, v, i + 1, "latency in ms"), 10**6)
            if p is None:
                vals[key][label] = ns
            else:
                vals[key]["p"][p] = ns
        seen_max = seen_max or label == "max"
        i += 1
    if not seen_max:
        raise ImportFormatError(
            TEXT,
            "the %-ile table ends without its max row (truncated)",
            line=i + 1,
            expected="'    max | ...'",
        )
    out = {
        k: Latency(min_ns=v.get("min"), max_ns=v.get("max"), percentiles_ns=v["p"])
        for k, v in vals.items()
        if v["p"] or "min" in v
    }
    return out, i


def _parse_text(name: str, data: bytes) -> ParsedFile:
    text = decode(TEXT, data)
    lines = text.split("\n")
    cmd_idx = next((i for i, s in enumerate(lines[:50]) if s.startswith("Command Line:")), None)
    if cmd_idx is None:
        raise ImportFormatError(
            TEXT,
            "no 'Command Line:' line near the top",
            line=1,
            expected="DiskSpd's text report ('Command Line: diskspd ...')",
        )
    command_line = lines[cmd_idx][len("Command Line:") :].strip()
    # 2.0.x print no 'System information:' section: the parameters end at the first results
    sys_idx = next(
        (i for i, s in enumerate(lines) if s.startswith(("System information:", "Results for timespan"))),
        None,
    )
    if sys_idx is None:
        raise ImportFormatError(
            TEXT,
            "no 'Results for timespan N:' section (truncated)",
            line=len(lines),
            expected="'Results for timespan 1:'",
        )
    params = _input_params(lines, cmd_idx + 1, sys_idx)
    host: dict[str, str] = {}
    started = None
    version = None
    for i in range(sys_idx, min(sys_idx + 40, len(lines))):
        s = lines[i].strip()
        if m := re.match(r"^computer name:\s*(.*)$", s):
            host["hostname"] = m.group(1)[:200]
        elif m := re.match(r"^start time:\s*(\S+ \S+) UTC$", s):
            try:
                started = datetime.strptime(m.group(1), "%Y/%m/%d %H:%M:%S").replace(tzinfo=UTC)
            except ValueError:
                raise ImportFormatError(
                    TEXT,
                    f"unreadable start time {m.group(1)!r}",
                    line=i + 1,
                    expected="YYYY/MM/DD HH:MM:SS UTC",
                ) from None
        elif m := re.match(r"^cpu count:\s*(\d+)$", s):
            host["cpu_count"] = m.group(1)
        elif s.startswith("Results for timespan"):
            break
    runs = []
    i = sys_idx
    while i < len(lines):
        m = re.match(r"^Results for timespan (\d+):", lines[i])
        if not m:
            i += 1
            continue
        span = int(m.group(1))
        secs = None
        tables: dict[str, list[tuple[int, dict[str, str]]]] = {}
        pct: dict[str, dict[str, Latency]] = {}
        notes: list[str] = []
        target_for_pct = ""
        i += 1
        while (
            i < len(lines)
            and not lines[i].startswith("Results for timespan")
            and not lines[i].startswith("Totals:")
        ):
            s = lines[i].strip()
            if mm := re.match(r"^actual test time:\s*(\S+)s$", s):
                secs = float(dec(TEXT, mm.group(1), i + 1, "seconds"))
            elif s.startswith("The test was interrupted"):
                raise ImportFormatError(
                    TEXT,
                    f"timespan {span} was interrupted: no results",
                    line=i + 1,
                    expected="a timespan with results",
                )
            elif mm := re.match(r"^avg\.\|\s*([\d.]+)%\|\s*([\d.]+)%\|\s*([\d.]+)%", s):
                notes.append(f"CPU usage {mm.group(1)}% (user {mm.group(2)}%, kernel {mm.group(3)}%)")
            elif s in ("Total IO", "Read IO", "Write IO"):
                rows, i = _table(lines, i, s)
                tables[s] = rows
                continue
            elif mm := re.match(r"^Latency distribution:\s*(.*)$", s):
                target_for_pct = mm.group(1)
            elif s == "Total latency distribution:":
                target_for_pct = ""
            elif s.startswith("%-ile |"):
                pct[target_for_pct], i = _pct_table(lines, i)
                continue
            i += 1
        if secs is None:
            raise ImportFormatError(
                TEXT,
                f"timespan {span} has no 'actual test time'",
                line=i,
                expected="'actual test time: N.NNs'",
            )
        for label in ("Read IO", "Write IO"):
            if label not in tables:
                raise ImportFormatError(
                    TEXT, f"timespan {span} has no '{label}' table (truncated)", line=i, expected=f"'{label}'"
                )
        accs: dict[str, dict[str, Any]] = {}
        for label, d in (("Read IO", "read"), ("Write IO", "write")):
            for ln, row in tables[label]:
                fcol = row.get("file", "")
                fm = re.match(r"^(.*?)\s*\(([^()]*)\)$", fcol)
                path = fm.group(1) if fm else fcol
                acc = accs.setdefault(
                    path, {"read": [], "write": [], "size": _text_size(fm.group(2), ln) if fm else None}
                )
                tid = integer(TEXT, row.get("thread", ""), ln, "a thread number")
                b = integer(TEXT, row.get("bytes", ""), ln, "bytes")
                c = integer(TEXT, row.get("I/Os", ""), ln, "I/Os")
                mibs = dec(
                    TEXT, row.get("MiB/s", row.get("MB/s", "")), ln, "MiB/s"
                )  # 2.0.x label it MB/s: bytes / 2**20 all the same
                iops = dec(TEXT, row.get("I/O per s", ""), ln, "I/O per s")
                avg = row.get("AvgLat")
                sd = row.get("LatStdDev")
                acc[d].append(
                    (
                        tid,
                        b,
                        c,
                        scaled(mibs, 2**20),
                        float(iops),
                        scaled(dec(TEXT, avg, ln, "AvgLat ms"), 10**6) if avg and avg != "N/A" else None,
                        scaled(dec(TEXT, sd, ln, "LatStdDev ms"), 10**6) if sd and sd != "N/A" else None,
                    )
                )
        if not accs:
            raise ImportFormatError(
                TEXT, f"timespan {span} has no thread rows", line=i, expected="'     0 |  bytes | I/Os | ...'"
            )
        jobs: list[Job] = []
        single = len(accs) == 1
        for path, acc in accs.items():
            metrics: dict[str, float] = {}
            dirs: dict[str, Direction | None] = {}
            tpct = pct.get(path) or (pct.get("") if single else None)
            for d in ("read", "write"):
                rows_ = acc[d]
                ios = sum(r[2] for r in rows_)
                byt = sum(r[1] for r in rows_)
                for r in rows_:
                    metrics[f"thread{r[0]}_{d}_bytes"] = float(r[1])
                    metrics[f"thread{r[0]}_{d}_ios"] = float(r[2])
                if ios == 0 and byt == 0:
                    dirs[d] = None
                    continue
                lat = None
                weighted = [(r[2], r[5], r[6]) for r in rows_ if r[5] is not None and r[2] > 0]
                p = tpct.get(d.capitalize()) if tpct else None
                if weighted:
                    nn = sum(w[0] for w in weighted)
                    mean = sum(w[0] * w[1] for w in weighted) / nn
                    var = max(
                        sum(w[0] * ((w[2] or 0.0) ** 2 + w[1] ** 2) for w in weighted) / nn - mean**2, 0.0
                    )
                    lat = Latency(
                        mean_ns=mean,
                        stddev_ns=var**0.5,
                        min_ns=p.min_ns if p else None,
                        max_ns=p.max_ns if p else None,
                        percentiles_ns=dict(p.percentiles_ns) if p else {},
                    )
                elif p is not None:
                    lat = p
                dirs[d] = Direction(
                    bw_bytes=sum(r[3] for r in rows_),
                    iops=sum(r[4] for r in rows_),
                    io_bytes=byt,
                    total_ios=ios,
                    runtime_ms=secs * 1000,
                    lat=lat,
                )
            settings = dict(params.get(span, {}).get(path, {}))
            if acc["size"] and "size" not in settings:
                settings["size"] = acc["size"]
            jobs.append(
                Job(
                    name=path,
                    settings=settings,
                    read=dirs["read"],
                    write=dirs["write"],
                    metrics=metrics,
                    group=f"timespan {span}",
                )
            )
        absent = [
            "DiskSpd's version (the text report does not print it)",
            "submission and completion latency apart (DiskSpd measures the total)",
        ]
        if not pct:
            absent.append("latency percentiles (the run was made without -L)")
        elif not single and not all(p in pct for p in accs):
            absent.append("latency percentiles per target (only the table over all targets is printed)")
        device = {"target": ", ".join(accs)[:500]}
        if single and (sz := next(iter(accs.values()))["size"]):
            device["size_bytes"] = str(sz)
        runs.append(
            Run(
                name=f"DiskSpd timespan {span}",
                jobs=jobs,
                started_at=started,
                host=dict(host),
                device=device,
                command_line=command_line,
                absent=absent,
                notes=notes,
            )
        )
    if not runs:
        raise ImportFormatError(
            TEXT,
            "no 'Results for timespan N:' section (truncated)",
            line=len(lines),
            expected="'Results for timespan 1:'",
        )
    if not re.search(r"(?i)diskspd", command_line):
        runs = [replace(r, notes=[*r.notes, "the command line does not name diskspd"]) for r in runs]
    return ParsedFile(format=TEXT, tool="DiskSpd", version=version, runs=runs)


class _Xml:
    format = XML
    tool = "DiskSpd"
    aliases = ("diskspd-rxml", "diskspd.xml")

    def sniff(self, name: str, head: bytes) -> bool:
        try:
            text = decode(XML, head)
        except ImportFormatError:
            return False
        s = text.lstrip()[:4096]
        return s.startswith("<Results>") and "<System>" in s or "<Results>" in s[:200] and "<Tool>" in s

    def parse(self, name: str, data: bytes) -> ParsedFile:
        return nonempty(XML, guarded(XML, lambda: _parse_xml(name, data)), "<Thread>/<Target> results")


class _Text:
    format = TEXT
    tool = "DiskSpd"
    aliases = ("diskspd-txt",)

    def sniff(self, name: str, head: bytes) -> bool:
        try:
            text = decode(TEXT, head)
        except ImportFormatError:
            return False
        return "\nCommand Line:" in "\n" + text[:8192] and "Input parameters:" in text

    def parse(self, name: str, data: bytes) -> ParsedFile:
        return nonempty(TEXT, guarded(TEXT, lambda: _parse_text(name, data)), "result tables")


IMPORTERS = [_Xml(), _Text()]
