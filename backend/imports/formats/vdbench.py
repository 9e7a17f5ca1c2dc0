"""vdbench 5.x output files: `summary.html`, `totals.html` and `flatfile.html`, raw (sd/wd) and
file-system (fsd/fwd) runs.

Each file is read on its own (the API takes them one by one or together; `parse_set` merges the
files of one output directory); one run per file, one job per run definition (`Starting RD=...`),
its figures from the averages line (`avg_2-30`), each interval line in `Job.intervals`.

- summary.html / totals.html (HTML around a <pre> block): `Starting RD=rd1; I/O rate: Uncontrolled
  MAX; elapsed=30 warmup=5; For loops: xfersize=4k threads=8`, then for raw runs the two header lines
  `Mar 04, 2019  interval  i/o  MB/sec  bytes  read  resp  read  write  resp  resp queue  cpu%  cpu%`
  / `rate  1024**2  i/o  pct  time  resp  resp  max  stddev depth sys+u  sys` (MB/sec is `1024**2`
  or `1000**2` as the header says; response times in ms) and lines `10:09:27.052  1  12345.00 ...`;
  for file-system runs (`Starting RD=rd1; elapsed=30; fwdrate=max. For loops: None`) the grouped
  header `..Interval.. .ReqstdOps... ...cpu%...  read ....read..... ....write.... ..mb/sec...
  mb/sec .xfer.. ...mkdir.... ...` / `rate resp total sys pct rate resp rate resp read write total
  size rate resp ...`. totals.html holds only the RD lines and their averages.
- flatfile.html: `*` comment lines, a header of one-word column names (`tod timestamp Run Interval
  reqrate rate MB/sec bytes/io read% resp read_resp write_resp resp_max resp_std xfersize threads
  rdpct rhpct whpct seekpct lunsize version ... queue_depth cpu_used ...`, or for file-system runs
  `... rate resp MB/sec Read_rate Read_resp Write_rate Write_resp MB_read MB_write Xfersize
  Mkdir_rate ...`), then one line per interval and per average; `n/a` where there is no value.

Settings under fio's names: xfersize -> bs, threads -> numjobs (vdbench's threads are outstanding
I/Os of one JVM: also iodepth), rdpct -> rwmixread (and rw), seekpct -> random or sequential,
elapsed -> runtime_s, warmup -> ramp_time_s. A raw run's summary gives the total rate and MB/sec:
reads and writes per second are the rate split by the observed read%, the bandwidth is split only
when a run is all reads or all writes (else the total is in the job's metrics `bw_bytes`).
"""

from __future__ import annotations

import html
import re
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

from .base import Direction, ImportFormatError, Interval, Job, Latency, ParsedFile, Run
from .text_common import dec, decode, guarded, nonempty, scaled

SUMMARY = "vdbench-summary"
FLAT = "vdbench-flatfile"
VERSION = re.compile(r"vdbench(\d)(\d\d)(\d\d)(\w*)")
RD = re.compile(r"(?:Starting|Simulating) RD=([^;\s]+)(.*)$", re.M)
DATE_HEAD = re.compile(r"^[A-Z][a-z]{2} \d{1,2}, \d{4}\s+(.*\S)\s*$")
DATA = re.compile(r"^(\d\d:\d\d:\d\d\.\d{3})\s+(\S+)\s+(.*\S)\s*$")
PAIRS = {("rate", "resp"), ("total", "sys"), ("read", "write")}
MS = 10**6  # ms -> ns


def _strip(line: str) -> str:
    return html.unescape(re.sub(r"<[^>]*>", "", line))


def _version(fmt: str, text: str) -> str | None:
    m = VERSION.search(text)
    if not m:
        return None
    if m.group(1) != "5":
        raise ImportFormatError(
            fmt,
            f"vdbench {m.group(0)} is not a version this importer reads",
            expected="vdbench 5.x (vdbench50xxx)",
        )
    return f"{m.group(1)}.{m.group(2)}.{m.group(3)}{m.group(4)}"


def _rd_settings(rest: str, n: int, fmt: str) -> tuple[dict[str, Any], str]:
    """The RD line after its name: I/O rate, elapsed/warmup, fwdrate and the For loops values."""
    s: dict[str, Any] = {}
    if m := re.search(r"elapsed=(\d+)", rest):
        s["runtime_s"] = float(m.group(1))
    if m := re.search(r"warmup=(\d+)", rest):
        s["ramp_time_s"] = float(m.group(1))
    if m := re.search(r"I/O rate: (\d+)", rest):
        s["rate_iops"] = int(m.group(1))
    loops = ""
    if m := re.search(r"For loops: (.*)$", rest):
        loops = m.group(1).strip()
        if loops != "None":
            for key, val in re.findall(r"(\w+)=(\S+)", loops):
                _setting(s, key.lower(), val, n, fmt)
    return s, ("" if loops == "None" else loops)


def _setting(s: dict[str, Any], key: str, val: str, n: int, fmt: str) -> None:
    if val in ("n/a", ""):
        return
    if key == "xfersize":
        m = re.fullmatch(r"(\d+(?:\.\d+)?)([kmg]?)", val.lower())
        if m:
            s["bs"] = int(Decimal(m.group(1)) * {"": 1, "k": 1024, "m": 1024**2, "g": 1024**3}[m.group(2)])
    elif key == "threads":
        if re.fullmatch(r"\d+(\.0+)?", val):
            s["iodepth"] = int(Decimal(val))
    elif key == "rdpct":
        if re.fullmatch(r"\d+(\.\d+)?", val):
            s["rwmixread"] = float(Decimal(val))
    elif key == "seekpct":
        if re.fullmatch(r"\d+(\.\d+)?", val):
            s["_seek"] = float(Decimal(val))
        elif val in ("seq", "sequential", "eof"):
            s["_seek"] = 0.0
        elif val == "random":
            s["_seek"] = 100.0


def _finish_settings(s: dict[str, Any]) -> dict[str, Any]:
    out = {k: v for k, v in s.items() if not k.startswith("_")}
    seek = s.get("_seek")
    mix = s.get("rwmixread")
    if seek is not None or mix is not None:
        rnd = "rand" if (seek or 0) > 0 else ""
        kind = "read" if mix == 100 else "write" if mix == 0 else "rw" if mix is not None else None
        if kind:
            out["rw"] = rnd + kind
        if seek is not None and 0 < seek < 100:
            out["percentage_random"] = seek
    if mix in (0, 100):
        out.pop("rwmixread", None)
    return out


def _columns(h1: str, h2: str, n: int, fmt: str) -> tuple[str, list[str]]:
    """Column names of a summary table: ("raw"|"fs", names after the interval column)."""
    t1, t2 = h1.split(), h2.split()
    if t1 and t1[0] == "interval":
        if len(t1) != len(t2) + 1:
            raise ImportFormatError(
                fmt,
                "the two header lines do not pair up",
                line=n,
                expected="one second-line word under each first-line word but 'interval'",
            )
        return "raw", [f"{a} {b}" for a, b in zip(t1[1:], t2, strict=True)]
    if t1 and t1[0].strip(".") == "Interval":
        names: list[str] = []
        i = 0
        for g in t1[1:]:
            group = g.strip(".").lower()
            if i >= len(t2):
                raise ImportFormatError(
                    fmt, f"no second-line column under {group!r}", line=n + 1, expected="the sub-column names"
                )
            if i + 1 < len(t2) and (t2[i], t2[i + 1]) in PAIRS:
                names += [f"{group}_{t2[i]}", f"{group}_{t2[i + 1]}"]
                i += 2
            else:
                names.append(f"{group}_{t2[i]}")
                i += 1
        if i != len(t2):
            raise ImportFormatError(
                fmt,
                "more second-line columns than groups",
                line=n + 1,
                expected="one or two sub-columns per group",
            )
        return "fs", names
    raise ImportFormatError(
        fmt,
        f"unknown table header {h1.strip()[:60]!r}",
        line=n,
        expected="'interval  i/o  MB/sec ...' or '..Interval.. .ReqstdOps... ...'",
    )


def _raw_figures(
    v: dict[str, Decimal], mb: int
) -> tuple[Direction | None, Direction | None, dict[str, float]]:
    rate, pct = v.get("i/o rate"), v.get("read pct")
    bw = v.get(f"MB/sec {'1024**2' if mb == 2**20 else '1000**2'}")
    metrics: dict[str, float] = {}
    if rate is not None:
        metrics["iops"] = float(rate)
    if bw is not None:
        metrics["bw_bytes"] = scaled(bw, mb)
    for key, out in (
        ("resp time", "lat_mean_ns"),
        ("resp max", "lat_max_ns"),
        ("resp stddev", "lat_stddev_ns"),
    ):
        if key in v:
            metrics[out] = scaled(v[key], MS)
    for key, out in (
        ("queue depth", "queue_depth"),
        ("cpu% sys+u", "cpu_pct"),
        ("cpu% sys+usr", "cpu_pct"),
        ("cpu% sys", "cpu_sys_pct"),
        ("bytes i/o", "bytes_per_io"),
    ):
        if key in v:
            metrics[out] = float(v[key])
    if rate is None or pct is None:
        return None, None, metrics

    def one(share: Decimal, resp_key: str) -> Direction | None:
        if share == 0:
            return None
        lat = Latency(mean_ns=scaled(v[resp_key], MS)) if resp_key in v else None
        whole = share == 1
        return Direction(
            iops=float(rate * share), bw_bytes=scaled(bw, mb) if whole and bw is not None else None, lat=lat
        )

    share = pct / 100
    return one(share, "read resp"), one(1 - share, "write resp"), metrics


def _fs_figures(
    v: dict[str, Decimal], mb: int
) -> tuple[Direction | None, Direction | None, dict[str, float]]:
    metrics: dict[str, float] = {}

    def one(d: str) -> Direction | None:
        rate, resp, bw = v.get(f"{d}_rate"), v.get(f"{d}_resp"), v.get(f"mb/sec_{d}")
        if not rate and not bw:
            return None
        return Direction(
            iops=float(rate) if rate is not None else None,
            bw_bytes=scaled(bw, mb) if bw is not None else None,
            lat=Latency(mean_ns=scaled(resp, MS)) if resp is not None else None,
        )

    for key, val in v.items():
        if key.startswith(("read_", "write_", "mb/sec_read", "mb/sec_write")):
            continue
        if key.endswith("_resp"):
            metrics[key.replace("reqstdops", "ops").replace("_resp", "_resp_ns")] = scaled(val, MS)
        elif key.endswith("_rate"):
            metrics[key.replace("reqstdops", "ops").replace("_rate", "_per_s")] = float(val)
        elif key == "mb/sec_total":
            metrics["bw_bytes"] = scaled(val, mb)
        elif key == "xfer_size":
            metrics["bytes_per_io"] = float(val)
        elif key == "cpu%_total":
            metrics["cpu_pct"] = float(val)
        elif key == "cpu%_sys":
            metrics["cpu_sys_pct"] = float(val)
        elif key == "read_pct":
            metrics["read_pct"] = float(val)
    if "read_pct" in v:
        metrics["read_pct"] = float(v["read_pct"])
    return one("read"), one("write"), metrics


def _parse_summary(name: str, data: bytes) -> ParsedFile:
    raw = decode(SUMMARY, data)
    lines = [_strip(x) for x in raw.split("\n")]
    version = _version(SUMMARY, raw)
    rds: list[dict[str, Any]] = []
    cur: dict[str, Any] | None = None
    kind, mb = "", 2**20
    cols: list[str] = []
    seen_table = False
    i = 0
    while i < len(lines):
        s = lines[i].rstrip()
        n = i + 1
        if m := RD.search(s):
            settings, loops = _rd_settings(m.group(2), n, SUMMARY)
            cur = {
                "name": m.group(1),
                "loops": loops,
                "settings": settings,
                "intervals": [],
                "avg": None,
                "extra": {},
                "line": n,
            }
            rds.append(cur)
        elif m := DATE_HEAD.match(s.strip()):
            if i + 1 >= len(lines):
                raise ImportFormatError(
                    SUMMARY,
                    "a table header without its second line (truncated)",
                    line=n,
                    expected="the second header line",
                )
            kind, cols = _columns(m.group(1), lines[i + 1], n, SUMMARY)
            mb = 10**6 if "1000**2" in lines[i + 1] else 2**20
            seen_table = True
            i += 2
            continue
        elif m := DATA.match(s.strip()):
            label, rest = m.group(2), m.group(3).split()
            if cur is None or not cols:
                if not cols and cur is not None and label.isdigit():
                    raise ImportFormatError(
                        SUMMARY,
                        "a data line before any table header",
                        line=n,
                        expected="the table's header lines",
                    )
                i += 1
                continue
            if not (label.isdigit() or re.fullmatch(r"(avg|std|max)_\d+-\d+", label)):
                i += 1
                continue  # a time-stamped message line (e.g. 'Vdbench execution completed')
            if len(rest) != len(cols):
                raise ImportFormatError(
                    SUMMARY,
                    f"{len(rest)} values where the header has {len(cols)} columns",
                    line=n,
                    expected=f"{len(cols)} values after the interval",
                )
            vals = {
                c: dec(SUMMARY, x, n, c) for c, x in zip(cols, rest, strict=True) if x not in ("n/a", "NaN")
            }
            read, write, metrics = _raw_figures(vals, mb) if kind == "raw" else _fs_figures(vals, mb)
            if label.isdigit():
                cur["intervals"].append(Interval(index=int(label), read=read, write=write, metrics=metrics))
            elif label.startswith("avg_"):
                cur["avg"], cur["avg_label"], cur["kind"], cur["mb"] = (read, write, metrics), label, kind, mb
            else:
                cur["extra"] |= {f"{k}_{label[:3]}": v for k, v in metrics.items()}
        i += 1
    if not rds:
        raise ImportFormatError(
            SUMMARY, "no 'Starting RD=' line", line=1, expected="vdbench's summary.html or totals.html"
        )
    if not seen_table:
        raise ImportFormatError(
            SUMMARY,
            "no result table",
            line=len(lines),
            expected="the 'interval  i/o  MB/sec' or '..Interval..' header",
        )
    return _assemble(SUMMARY, name, version, rds, None)


def _parse_flat(name: str, data: bytes) -> ParsedFile:
    raw = decode(FLAT, data)
    lines = raw.split("\n")
    head: list[str] | None = None
    rds: list[dict[str, Any]] = []
    started = None
    version = None
    comments = False
    for n, line in enumerate(lines, 1):
        s = _strip(line).strip()
        if not s:
            continue
        if s.startswith("*"):
            comments = True
            continue
        if head is None:
            words = s.split()
            if words[0] != "tod":
                if comments:  # after the comments comes the header, nothing else
                    raise ImportFormatError(
                        FLAT,
                        f"unknown flatfile header {s[:60]!r}",
                        line=n,
                        expected="'tod timestamp Run Interval ...'",
                    )
                continue  # the HTML title vdbench writes first
            if "Run" not in words or "Interval" not in words:
                raise ImportFormatError(
                    FLAT,
                    f"unknown flatfile header {s[:60]!r}",
                    line=n,
                    expected="'tod timestamp Run Interval ...'",
                )
            head = words
            continue
        row = s.split()
        if len(row) != len(head):
            raise ImportFormatError(
                FLAT,
                f"{len(row)} values where the header has {len(head)} columns (truncated?)",
                line=n,
                expected=f"{len(head)} values",
            )
        r = dict(zip(head, row, strict=True))
        if (v := r.get("version")) and v != "n/a":
            version = version or _version(FLAT, "vdbench" + v.replace(".", "")) or v[:20]
        if (ts := r.get("timestamp")) and started is None:
            tm = re.fullmatch(r"(\d\d/\d\d/\d{4}-\d\d:\d\d:\d\d)-(\w+)", ts)
            if tm:
                t = datetime.strptime(tm.group(1), "%m/%d/%Y-%H:%M:%S")
                started = t.replace(tzinfo=UTC) if tm.group(2) in ("UTC", "GMT") else t
        # a new run when the RD name changes or its intervals start again after an average (a
        # For loop repeats the RD name: rd1 with xfersize=4k, then rd1 with xfersize=64k)
        last = rds[-1] if rds else None
        if last is None or last["name"] != r["Run"] or (last["avg"] is not None and r["Interval"].isdigit()):
            last = {
                "name": r["Run"],
                "loops": "",
                "settings": {},
                "intervals": [],
                "avg": None,
                "extra": {},
                "line": n,
            }
            rds.append(last)
        rd = last
        for key in ("xfersize", "threads", "rdpct", "seekpct"):
            if key in r:
                val = r[key]
                if key == "xfersize" and re.fullmatch(r"\d+(\.0+)?", val):
                    val = str(int(Decimal(val)))
                _setting(rd["settings"], key, val, n, FLAT)
        if (lun := r.get("lunsize")) not in (None, "n/a"):
            rd["lunsize_gib"] = lun
        vals: dict[str, Decimal] = {}
        for k, x in r.items():
            if k in ("tod", "timestamp", "Run", "Interval", "version") or x == "n/a":
                continue
            try:
                vals[k] = dec(FLAT, x, n, k)
            except ImportFormatError:
                continue  # a text column (e.g. a requested rate 'max')
        fs = "Read_rate" in r
        read, write, metrics = _flat_figures(vals, fs)
        label = r["Interval"]
        if label.isdigit():
            rd["intervals"].append(Interval(index=int(label), read=read, write=write, metrics=metrics))
        elif label.startswith("avg_"):
            rd["avg"], rd["avg_label"], rd["kind"], rd["mb"] = (
                (read, write, metrics),
                label,
                "fs" if fs else "raw",
                2**20,
            )
        elif re.fullmatch(r"(std|max)_\d+-\d+", label):
            rd["extra"] |= {f"{k}_{label[:3]}": v for k, v in metrics.items()}
        else:
            raise ImportFormatError(
                FLAT, f"unknown interval {label[:20]!r}", line=n, expected="an interval number or avg_N-M"
            )
    if head is None:
        raise ImportFormatError(
            FLAT,
            "no column header" + (" after the comments (truncated)" if comments else ""),
            line=len(lines),
            expected="'tod timestamp Run Interval ...'",
        )
    if not rds:
        raise ImportFormatError(
            FLAT, "a header without data lines", line=len(lines), expected="one line per interval"
        )
    return _assemble(FLAT, name, version, rds, started)


def _flat_figures(
    v: dict[str, Decimal], fs: bool
) -> tuple[Direction | None, Direction | None, dict[str, float]]:
    if fs:
        mapped = {
            "read_rate": v.get("Read_rate"),
            "read_resp": v.get("Read_resp"),
            "write_rate": v.get("Write_rate"),
            "write_resp": v.get("Write_resp"),
            "mb/sec_read": v.get("MB_read"),
            "mb/sec_write": v.get("MB_write"),
            "mb/sec_total": v.get("MB/sec"),
            "reqstdops_rate": v.get("rate"),
            "reqstdops_resp": v.get("resp"),
            "xfer_size": v.get("Xfersize"),
        }
        for k, x in v.items():
            if (m := re.fullmatch(r"([A-Z][a-z]+)_(rate|resp)", k)) and m.group(1) not in ("Read", "Write"):
                mapped[f"{m.group(1).lower()}_{m.group(2)}"] = x
        return _fs_figures({k: x for k, x in mapped.items() if x is not None}, 2**20)
    mapped = {
        "i/o rate": v.get("rate"),
        "MB/sec 1024**2": v.get("MB/sec"),
        "bytes i/o": v.get("bytes/io"),
        "read pct": v.get("read%"),
        "resp time": v.get("resp"),
        "read resp": v.get("read_resp"),
        "write resp": v.get("write_resp"),
        "resp max": v.get("resp_max"),
        "resp stddev": v.get("resp_std"),
        "queue depth": v.get("queue_depth"),
        "cpu% sys+u": v.get("cpu_used"),
        "cpu% sys": v.get("cpu_kernel"),
    }
    return _raw_figures({k: x for k, x in mapped.items() if x is not None}, 2**20)


def _assemble(
    fmt: str, name: str, version: str | None, rds: list[dict[str, Any]], started: datetime | None
) -> ParsedFile:
    jobs = []
    absent: set[str] = {
        "latency percentiles (vdbench prints mean, max and standard deviation)",
        "host and device facts (in vdbench's other files: logfile.html, host_*.html)",
    }
    for rd in rds:
        if rd["avg"] is None:
            raise ImportFormatError(
                fmt,
                f"run {rd['name']} has no averages line (truncated or interrupted)",
                line=rd["line"],
                expected="an 'avg_N-M' line after its intervals",
            )
        read, write, metrics = rd["avg"]
        metrics = dict(metrics) | rd["extra"]
        settings = _finish_settings(rd["settings"])
        if rd.get("kind") == "raw" and read is not None and write is not None:
            absent.add(
                "bandwidth per direction of mixed raw runs (vdbench gives the total MB/sec: job "
                "metrics bw_bytes)"
            )
        if fmt == SUMMARY and not rd["loops"]:
            absent.add(
                "transfer size, threads and read/seek percentages unless a 'For loops' varies them "
                "(they are in the parameter file and flatfile.html)"
            )
        if rd.get("mb") == 10**6:
            metrics["mb_is_decimal"] = 1.0
        if "lunsize_gib" in rd:
            metrics["lunsize_gib"] = float(Decimal(rd["lunsize_gib"]))
        if label := rd.get("avg_label", ""):
            metrics["avg_from_interval"] = float(label[4:].split("-")[0])
        jobs.append(
            Job(
                name=rd["name"] + (f" {rd['loops']}" if rd["loops"] else ""),
                settings=settings,
                read=read,
                write=write,
                metrics=metrics,
                group=rd["name"],
                intervals=rd["intervals"],
            )
        )
    counts: dict[str, int] = {}
    for j in jobs:
        counts[j.name] = counts.get(j.name, 0) + 1
    for i, j in enumerate(jobs):
        if counts[j.name] > 1:  # a For loop without its text (flatfile): name the runs by their settings
            tag = (
                " ".join(f"{k}={j.settings[k]}" for k in ("bs", "iodepth", "rwmixread") if k in j.settings)
                or f"#{i + 1}"
            )
            jobs[i] = Job(
                name=f"{j.name} {tag}",
                settings=j.settings,
                read=j.read,
                write=j.write,
                metrics=j.metrics,
                group=j.group,
                intervals=j.intervals,
            )
    if fmt == SUMMARY and not any(j.intervals for j in jobs):
        absent.add("per-interval figures (totals.html has the averages only)")
    if version is None:
        absent.add("vdbench's version (not in this file)")
    if started is None:
        absent.add("start date (the summary prints times of day only; flatfile.html has the date)")
    kind = "file-system (fsd/fwd)" if any(rd.get("kind") == "fs" for rd in rds) else "raw (sd/wd)"
    run = Run(
        name=f"vdbench {name}", jobs=jobs, started_at=started, absent=sorted(absent), notes=[f"{kind} run"]
    )
    return ParsedFile(format=fmt, tool="vdbench", version=version, runs=[run])


def parse_set(files: list[tuple[str, bytes]]) -> ParsedFile:
    """The files of one output directory together: flatfile.html's figures and settings, with the
    summary's RD names and For loops text when both are given; what no given file has stays absent.
    Files that list different run definitions (another run's files) are refused, naming them."""
    flat = [f for f in files if FLAT_IMPORTER.sniff(*f)]
    summ = [f for f in files if SUMMARY_IMPORTER.sniff(*f)]
    if not flat and not summ:
        raise ImportFormatError(
            SUMMARY,
            "none of the files is a vdbench output file",
            expected="summary.html, totals.html or flatfile.html",
        )
    first = flat[0] if flat else summ[0]
    base = FLAT_IMPORTER.parse(*first) if flat else SUMMARY_IMPORTER.parse(*first)
    parsed = [(f, FLAT_IMPORTER.parse(*f)) for f in flat[1:]] + [
        (f, SUMMARY_IMPORTER.parse(*f)) for f in (summ if flat else summ[1:])
    ]
    groups = [j.group for j in base.runs[0].jobs]
    for f, p in parsed:  # every file of the set describes the same run definitions
        if len(p.runs) != 1 or [j.group for j in p.runs[0].jobs] != groups:
            raise ImportFormatError(
                p.format,
                f"{f[0]} and {first[0]} list different runs (not one output directory)",
                expected="the files of one vdbench output directory",
            )
    if not flat or not summ:
        return base
    other = parsed[len(flat) - 1][1]  # the first summary
    r = base.runs[0]
    theirs = other.runs[0].jobs
    jobs = [
        Job(
            name=t.name,
            settings=t.settings | j.settings,
            read=j.read,
            write=j.write,
            metrics=j.metrics,
            group=j.group,
            intervals=j.intervals,
        )
        for j, t in zip(r.jobs, theirs, strict=True)
    ]
    absent = [
        a
        for a in r.absent
        if not a.startswith("vdbench's version") or base.version is None and other.version is None
    ]
    run = Run(
        name=r.name,
        jobs=jobs,
        started_at=r.started_at,
        absent=absent,
        notes=r.notes + [f"merged with {summ[0][0]}"],
    )
    return ParsedFile(format=FLAT, tool="vdbench", version=base.version or other.version, runs=[run])


class _Summary:
    format = SUMMARY
    tool = "vdbench"
    aliases = ("vdbench", "vdbench-totals")

    def sniff(self, name: str, head: bytes) -> bool:
        try:
            text = decode(SUMMARY, head)
        except ImportFormatError:
            return False
        return (
            bool(RD.search(text))
            and ("interval" in text or "Interval" in text)
            and not text.lstrip().startswith("*")
        )

    def parse(self, name: str, data: bytes) -> ParsedFile:
        return nonempty(
            SUMMARY, guarded(SUMMARY, lambda: _parse_summary(name, data)), "run definitions with averages"
        )


class _Flat:
    format = FLAT
    tool = "vdbench"
    aliases = ("vdbench-flat",)

    def sniff(self, name: str, head: bytes) -> bool:
        try:
            text = decode(FLAT, head)
        except ImportFormatError:
            return False
        return "'flatfile.html' contains Vdbench" in text or bool(
            re.search(r"(?m)^\s*tod\s+timestamp\s+Run\s+Interval\b", text)
        )

    def parse(self, name: str, data: bytes) -> ParsedFile:
        return nonempty(FLAT, guarded(FLAT, lambda: _parse_flat(name, data)), "interval lines")


SUMMARY_IMPORTER = _Summary()
FLAT_IMPORTER = _Flat()
IMPORTERS = [SUMMARY_IMPORTER, FLAT_IMPORTER]
