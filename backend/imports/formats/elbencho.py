"""elbencho's results: the text table (console, or `--resfile`) and the `--csvfile` CSV.

One run per file, one job per phase (WRITE, READ, MKDIRS, STAT, RMFILES, ...), figures of the
"LAST DONE" column (when the slowest thread finished: the phase's end result); the "FIRST DONE"
figures (when the fastest thread finished, elbencho's stonewall) are kept in the job's metrics
with a `_first` suffix.

- Text: an optional header of the results file (`ISO DATE:`, `LABEL:`, `COMMAND LINE: "elbencho"
  "-w" ...`), then `OPERATION   RESULT TYPE   FIRST DONE  LAST DONE`, a `=====` rule and per phase
  rows `WRITE       Elapsed time     :     1.060s     1.143s`, `IOPS`, `Throughput MiB/s` (or
  `Throughput MB/s` with `--base10`, elbencho 3.1.7+), `Total MiB`, `Files/s`, `Dirs/s`, `Objects/s`,
  for --rwmixpct `IOPS write`/`IOPS read`/`MiB/s write`/`MiB/s read`, `IO latency : [ min=88us
  avg=845us max=5.70ms ]`, `IO lat % us : [ 1%<=N 50%<=N ... ]`, and `---` between phases.
- CSV: a header row then one row per phase: `ISO date`, `label`, `path type`, `paths`, `hosts`,
  `threads`, `dirs`, `files`, `file size`, `block size`, `direct IO`, `random`, `random aligned`,
  `IO depth`, `operation`, `time ms [first|last]`, `entries/s`, `IOPS`, `MiB/s`, `entries`, `MiB`
  (`[first|last]`), `Ent|IO lat us [min|avg|max]`, the `rwmix read ...` columns, and (newer
  versions) `CPU% [first|last]`, `version`, `command`. Older files lack some columns: what a file
  lacks is named in the run's `absent`.

elbencho prints whole numbers: MiB/s (2**20 B/s), MiB and IOPS rounded down; they are converted
exactly as printed. Latency is in microseconds (10**3 ns).
"""

from __future__ import annotations

import csv
import io
import re
import shlex
from datetime import datetime
from decimal import Decimal
from typing import Any

from .base import Direction, ImportFormatError, Job, Latency, ParsedFile, Run
from .text_common import dec, decode, guarded, nonempty, scaled, size_bytes

TEXT = "elbencho-text"
CSV = "elbencho-csv"
HEADER = re.compile(r"^OPERATION\s+RESULT TYPE\s+FIRST DONE\s+LAST DONE\s*$")
ROW = re.compile(r"^(?P<op>[A-Z][A-Z0-9_]*)?\s+(?P<type>[A-Za-z%/ .]+?)\s*:\s*(?P<rest>.*)$")
LAT_UNITS = {"us": 1000, "ms": 10**6, "s": 10**9}


def _elapsed_ms(fmt: str, s: str, n: int) -> float:
    """elbencho's elapsed time: 450ms, 1.060s, 1m2.345s, 1h2m3s."""
    m = re.fullmatch(r"(?:(\d+)h)?(?:(\d+)m(?!s))?(?:(\d+(?:\.\d+)?)s)?(?:(\d+)ms)?", s)
    if not m or not any(m.groups()):
        raise ImportFormatError(
            fmt, f"unreadable elapsed time {s[:20]!r}", line=n, expected="450ms, 1.060s, 1m2.345s or 1h2m3s"
        )
    h, mi, sec, ms = m.groups()
    total = Decimal(int(h or 0) * 3600 + int(mi or 0) * 60) * 1000
    total += dec(fmt, sec, n, "seconds") * 1000 if sec else 0
    total += int(ms or 0)
    return float(total)


def _lat(fmt: str, s: str, n: int) -> float:
    m = re.fullmatch(r"(\d+(?:\.\d+)?)(us|ms|s)", s)
    if not m:
        raise ImportFormatError(
            fmt, f"unreadable latency {s[:20]!r}", line=n, expected="N us, N.NN ms or N.NN s"
        )
    return scaled(dec(fmt, m.group(1), n, "latency"), LAT_UNITS[m.group(2)])


def _command_settings(cmd: str) -> dict[str, Any]:
    """The settings an elbencho command line states, under fio's names."""
    try:
        args = shlex.split(cmd)
    except ValueError:
        return {}
    s: dict[str, Any] = {}
    it = iter(range(len(args)))
    for i in it:
        a = args[i]
        key, _, val = a.partition("=")
        nxt = val or (args[i + 1] if i + 1 < len(args) else "")
        takes = not val
        if key in ("-t", "--threads"):
            if nxt.isdigit():
                s["numjobs"] = int(nxt)
        elif key in ("-b", "--block"):
            m = re.fullmatch(r"(\d+)([KMGT]?)i?B?", nxt, re.I)
            if m:
                s["bs"] = size_bytes(TEXT, m.group(1), m.group(2) or "B", None)
        elif key in ("-s", "--size"):
            m = re.fullmatch(r"(\d+)([KMGT]?)i?B?", nxt, re.I)
            if m:
                s["size"] = size_bytes(TEXT, m.group(1), m.group(2) or "B", None)
        elif key == "--iodepth":
            if nxt.isdigit():
                s["iodepth"] = int(nxt)
        elif key == "--direct":
            s["direct"] = True
            takes = False
        elif key == "--rand":
            s["_rand"] = True
            takes = False
        elif key == "--rwmixpct":
            if nxt.isdigit():
                s["rwmixread"] = int(nxt)
        else:
            takes = False
        if takes:
            next(it, None)
    return s


def _rw(op: str, settings: dict[str, Any], mixed: bool) -> str | None:
    rnd = "rand" if settings.get("_rand") else ""
    if mixed:
        return rnd + "rw"
    return {"WRITE": rnd + "write", "READ": rnd + "read"}.get(op)


# --- text --------------------------------------------------------------------------------------


def _parse_text(name: str, data: bytes) -> ParsedFile:
    lines = decode(TEXT, data).split("\n")
    host: dict[str, str] = {}
    started = None
    command = None
    label = None
    header_at = None
    for n, raw in enumerate(lines, 1):
        s = raw.strip()
        if s.startswith("ISO DATE:"):
            try:
                started = datetime.strptime(s[9:].strip(), "%Y-%m-%dT%H:%M:%S%z")
            except ValueError:
                raise ImportFormatError(
                    TEXT,
                    f"unreadable ISO DATE {s[9:].strip()[:40]!r}",
                    line=n,
                    expected="YYYY-MM-DDTHH:MM:SS+ZZZZ",
                ) from None
        elif s.startswith("LABEL:"):
            label = s[6:].strip()[:200]
        elif s.startswith("COMMAND LINE:"):
            command = s[13:].strip()
        elif HEADER.match(s):
            header_at = n
            break
    if header_at is None:
        raise ImportFormatError(
            TEXT,
            "no result table header",
            line=1,
            expected="'OPERATION   RESULT TYPE   FIRST DONE  LAST DONE'",
        )
    settings = _command_settings(command) if command else {}
    phases: list[tuple[int, str, dict[str, Any]]] = []
    cur: dict[str, Any] | None = None
    for n in range(header_at + 1, len(lines) + 1):
        raw = lines[n - 1]
        s = raw.strip()
        if not s or s.startswith("===") or s == "---":
            if s == "---":
                cur = None
            continue
        if HEADER.match(s):
            continue
        m = ROW.match(raw)
        if not m:
            if s.startswith(("WARNING", "NOTE", "ERROR", "Phase:", "Skipping")):
                continue
            raise ImportFormatError(
                TEXT, f"unexpected line {s[:60]!r}", line=n, expected="'OP   RESULT TYPE : FIRST LAST'"
            )
        op = m.group("op")
        if op:
            cur = {"_line": n}
            phases.append((n, op, cur))
        elif cur is None:
            raise ImportFormatError(
                TEXT,
                "a result row before any operation",
                line=n,
                expected="'WRITE       Elapsed time     : ...'",
            )
        typ, rest = m.group("type").strip(), m.group("rest").strip()
        if rest.startswith("["):
            if not rest.endswith("]"):
                raise ImportFormatError(
                    TEXT,
                    "a latency row without its closing bracket (truncated)",
                    line=n,
                    expected="'[ min=.. avg=.. max=.. ]'",
                )
            body = rest[1:-1].strip()
            if typ.endswith("latency"):
                vals = dict(re.findall(r"(min|avg|max)=(\S+)", body))
                cur[typ] = {k: _lat(TEXT, v, n) for k, v in vals.items()}
            elif "lat %" in typ:
                cur[typ] = {
                    float(p): scaled(dec(TEXT, v, n, "latency us"), 1000)
                    for p, v in re.findall(r"([\d.]+)%<=(\d+(?:\.\d+)?)\b", body)
                }
            continue
        parts = rest.split()
        if len(parts) != 2:
            raise ImportFormatError(
                TEXT, f"{typ!r} needs FIRST DONE and LAST DONE values", line=n, expected="two values"
            )
        if typ == "Elapsed time":
            cur[typ] = (_elapsed_ms(TEXT, parts[0], n), _elapsed_ms(TEXT, parts[1], n))
        else:
            cur[typ] = (dec(TEXT, parts[0], n, typ), dec(TEXT, parts[1], n, typ))
    if not phases:
        raise ImportFormatError(
            TEXT,
            "no phase results under the header (truncated)",
            line=len(lines),
            expected="'WRITE       Elapsed time     : ...'",
        )
    jobs = [_text_job(op, vals, settings, n) for n, op, vals in phases]
    absent = ["elbencho's version (the text results do not print it)", "latency standard deviation"]
    if not command:
        absent.append(
            "settings (block size, threads, I/O depth): the console output has no command line; "
            "the results file (--resfile) does"
        )
    notes = [f"label {label}"] if label else []
    host_absent = "host and device facts (elbencho prints none)"
    return ParsedFile(
        format=TEXT,
        tool="elbencho",
        version=None,
        runs=[
            Run(
                name="elbencho " + (label or name),
                jobs=jobs,
                started_at=started,
                host=host,
                command_line=command,
                absent=[*absent, host_absent],
                notes=notes,
            )
        ],
    )


def _text_job(op: str, v: dict[str, Any], settings: dict[str, Any], n: int) -> Job:
    def pair(*keys: str) -> tuple[Decimal, Decimal] | None:
        for k in keys:
            if k in v:
                return v[k]  # type: ignore[no-any-return]
        return None

    base10 = any(k.startswith(("Throughput MB/s", "MB/s")) for k in v)
    unit = 10**6 if base10 else 2**20
    mib = "MB" if base10 else "MiB"
    mixed = "IOPS write" in v or "IOPS read" in v
    elapsed = v.get("Elapsed time")
    metrics: dict[str, float] = {}
    if elapsed:
        metrics["elapsed_ms_first"] = elapsed[0]

    def direction(
        iops_keys: tuple[str, ...],
        bw_keys: tuple[str, ...],
        tot_keys: tuple[str, ...],
        lat_key: str,
        pct_key: str,
        tag: str,
    ) -> Direction | None:
        iops, bw, tot = pair(*iops_keys), pair(*bw_keys), pair(*tot_keys)
        if iops is None and bw is None and tot is None:
            return None
        for key, p, factor in (
            (f"{tag}iops_first", iops, 1),
            (f"{tag}bw_bytes_first", bw, unit),
            (f"{tag}io_bytes_first", tot, 2**20),
        ):
            if p is not None:
                metrics[key] = scaled(p[0], factor)
        lat = None
        if lat_key in v or pct_key in v:
            lv = v.get(lat_key, {})
            lat = Latency(
                mean_ns=lv.get("avg"),
                min_ns=lv.get("min"),
                max_ns=lv.get("max"),
                percentiles_ns=dict(v.get(pct_key, {})),
            )
        return Direction(
            bw_bytes=scaled(bw[1], unit) if bw else None,
            iops=float(iops[1]) if iops else None,
            io_bytes=int(tot[1] * 2**20) if tot else None,  # totals are MiB, --base10 or not
            runtime_ms=elapsed[1] if elapsed else None,
            lat=lat,
        )

    read = write = None
    if mixed:
        write = direction(
            ("IOPS write",),
            (f"{mib}/s write",),
            ("MiB write",),
            "IO wr latency",
            "IO wr lat % us",
            "write_",
        )
        read = direction(
            ("IOPS read",), (f"{mib}/s read",), ("MiB read",), "IO rd latency", "IO rd lat % us", "read_"
        )
    else:
        d = direction(("IOPS",), (f"Throughput {mib}/s",), ("Total MiB",), "IO latency", "IO lat % us", "")
        if op.startswith("READ"):
            read = d
        elif d is not None:
            write = d
    for key, val in v.items():
        if key.startswith("_") or not isinstance(val, tuple) or key in ("Elapsed time",):
            continue
        m = re.fullmatch(r"(Files|Dirs|Objects|Entries)/s(?: (write|read|total))?", key)
        if m:
            tag = f"{m.group(1).lower()}_per_s" + (f"_{m.group(2)}" if m.group(2) else "")
            metrics[tag] = float(val[1])
            metrics[tag + "_first"] = float(val[0])
        elif re.fullmatch(r"(Files|Dirs|Objects) total", key):
            metrics[key.split()[0].lower()] = float(val[1])
        elif key.startswith("CPU"):
            metrics["cpu_pct"] = float(val[1])
    for key, lv in v.items():
        if isinstance(lv, dict) and key.endswith("latency") and not key.startswith("IO"):
            for k, ns in lv.items():
                metrics[f"entry_lat_{k}_ns"] = ns
    s = {k: val for k, val in settings.items() if not k.startswith("_")}
    rw = _rw(op, settings, mixed) if settings else None  # random or not is in the command line only
    if rw:
        s["rw"] = rw
    return Job(name=op, settings=s, read=read, write=write, metrics=metrics, group=None)


# --- CSV ---------------------------------------------------------------------------------------

NEEDED = ("operation",)


def _parse_csv(name: str, data: bytes) -> ParsedFile:
    text = decode(CSV, data)
    try:
        rows = list(csv.reader(io.StringIO(text)))
    except csv.Error as e:
        raise ImportFormatError(CSV, f"not CSV ({e})", expected="elbencho's --csvfile") from None
    rows = [r for r in rows if any(c.strip() for c in r)]
    if not rows:
        raise ImportFormatError(CSV, "empty file", line=1, expected="a header row")
    head = [c.strip() for c in rows[0]]
    for col in NEEDED:
        if col not in head:
            raise ImportFormatError(
                CSV,
                f"no {col!r} column",
                line=1,
                expected="elbencho's CSV header (ISO date, label, ..., operation, ...)",
            )
    if not any(c.startswith(("IOPS", "MiB/s", "entries/s")) for c in head):
        raise ImportFormatError(
            CSV, "no result columns", line=1, expected="'IOPS [last]', 'MiB/s [last]' or 'entries/s [last]'"
        )
    jobs: list[Job] = []
    versions: set[str] = set()
    commands: set[str] = set()
    started = None
    labels: set[str] = set()
    lineno = 1
    for r in rows[1:]:
        lineno += 1
        if [c.strip() for c in r] == head:
            continue  # a header repeated by a later run appending to the same file
        if len(r) != len(head):
            raise ImportFormatError(
                CSV,
                f"{len(r)} fields where the header has {len(head)} (truncated or another file)",
                line=lineno,
                expected=f"{len(head)} fields",
            )
        row = {k: c.strip() for k, c in zip(head, r, strict=True)}

        def num(col: str, row: dict[str, str] = row, ln: int = lineno) -> Decimal | None:
            v = row.get(col, "")
            return dec(CSV, v, ln, col) if v != "" else None

        if v := row.get("version"):
            if not re.match(r"^[123]\.\d+", v):
                raise ImportFormatError(
                    CSV,
                    f"elbencho {v[:20]} is not a version this importer reads",
                    line=lineno,
                    expected="elbencho 1.x, 2.x or 3.x",
                )
            versions.add(v[:20])
        if c := row.get("command"):
            commands.add(c)
        if lab := row.get("label"):
            labels.add(lab[:200])
        if d := row.get("ISO date"):
            try:
                t = datetime.strptime(d, "%Y-%m-%dT%H:%M:%S%z")
            except ValueError:
                raise ImportFormatError(
                    CSV, f"unreadable ISO date {d[:40]!r}", line=lineno, expected="YYYY-MM-DDTHH:MM:SS+ZZZZ"
                ) from None
            started = min(started, t) if started else t
        op = row["operation"]
        if not op:
            raise ImportFormatError(
                CSV, "an empty operation", line=lineno, expected="WRITE, READ, MKDIRS, ..."
            )
        s: dict[str, Any] = {}
        for col, key in (
            ("threads", "numjobs"),
            ("IO depth", "iodepth"),
            ("file size", "size"),
            ("block size", "bs"),
        ):
            val = num(col)
            if val is not None:
                s[key] = int(val)
        if (val := num("direct IO")) is not None:
            s["direct"] = bool(val)
        rnd = num("random")
        mixed = any(row.get(f"rwmix read {k} [last]") for k in ("IOPS", "MiB/s"))
        settings = s | ({"_rand": True} if rnd else {})
        rw = _rw(op, settings, mixed)
        if rw:
            s["rw"] = rw
        elapsed = num("time ms [last]")
        metrics: dict[str, float] = {}
        for col, key in (
            ("time ms [first]", "elapsed_ms_first"),
            ("entries/s [last]", "entries_per_s"),
            ("entries/s [first]", "entries_per_s_first"),
            ("entries [last]", "entries"),
            ("CPU% [last]", "cpu_pct"),
            ("CPU% [first]", "cpu_pct_first"),
            ("IOPS [first]", "iops_first"),
        ):
            if (val := num(col)) is not None:
                metrics[key] = float(val)
        if (val := num("MiB/s [first]")) is not None:
            metrics["bw_bytes_first"] = scaled(val, 2**20)
        for k in ("min", "avg", "max"):
            if (val := num(f"Ent lat us [{k}]")) is not None:
                metrics[f"entry_lat_{k}_ns"] = scaled(val, 1000)

        def direction(prefix: str, elapsed: Decimal | None = elapsed) -> Direction | None:
            iops, bw, tot = (
                num(f"{prefix}IOPS [last]"),
                num(f"{prefix}MiB/s [last]"),
                num(f"{prefix}MiB [last]"),
            )
            if iops is None and bw is None and tot is None:
                return None
            lat = None
            lv = {k: num(f"{prefix}IO lat us [{k}]") for k in ("min", "avg", "max")}
            if any(x is not None for x in lv.values()):
                ns = {k: scaled(x, 1000) if x is not None else None for k, x in lv.items()}
                lat = Latency(mean_ns=ns["avg"], min_ns=ns["min"], max_ns=ns["max"])
            return Direction(
                bw_bytes=scaled(bw, 2**20) if bw is not None else None,
                iops=float(iops) if iops is not None else None,
                io_bytes=int(tot * 2**20) if tot is not None else None,
                runtime_ms=float(elapsed) if elapsed is not None else None,
                lat=lat,
            )

        main = direction("")
        read = write = None
        if mixed:
            write, read = main, direction("rwmix read ")
        elif op.startswith("READ"):
            read = main
        elif main is not None:
            write = main
        jobs.append(Job(name=op, settings=s, read=read, write=write, metrics=metrics))
    if not jobs:
        raise ImportFormatError(
            CSV, "a header without any result row", line=lineno, expected="one row per phase"
        )
    absent = [
        "host and device facts (elbencho prints none)",
        "latency percentiles and standard deviation (the CSV has min, avg and max)",
    ]
    for col, what in (
        ("version", "elbencho's version"),
        ("command", "command line"),
        ("CPU% [last]", "CPU usage"),
        ("IO depth", "I/O depth"),
    ):
        if col not in head:
            absent.append(f"{what} (this version's CSV has no {col!r} column)")
    version = sorted(versions)[-1] if versions else None
    return ParsedFile(
        format=CSV,
        tool="elbencho",
        version=version,
        runs=[
            Run(
                name="elbencho " + (", ".join(sorted(labels)) or name),
                jobs=jobs,
                started_at=started,
                command_line=sorted(commands)[0] if commands else None,
                absent=absent,
                notes=[f"{len(commands)} different command lines"] if len(commands) > 1 else [],
            )
        ],
    )


class _Text:
    format = TEXT
    tool = "elbencho"
    aliases = ("elbencho", "elbencho-resfile")

    def sniff(self, name: str, head: bytes) -> bool:
        try:
            text = decode(TEXT, head)
        except ImportFormatError:
            return False
        return any(HEADER.match(s.strip()) for s in text.split("\n")[:60])

    def parse(self, name: str, data: bytes) -> ParsedFile:
        return nonempty(TEXT, guarded(TEXT, lambda: _parse_text(name, data)), "phase results")


class _Csv:
    format = CSV
    tool = "elbencho"
    aliases = ("elbencho-csvfile",)

    def sniff(self, name: str, head: bytes) -> bool:
        try:
            first = decode(CSV, head).split("\n", 1)[0]
        except ImportFormatError:
            return False
        return "operation" in first and "IOPS [last]" in first and "," in first

    def parse(self, name: str, data: bytes) -> ParsedFile:
        return nonempty(CSV, guarded(CSV, lambda: _parse_csv(name, data)), "phase rows")


IMPORTERS = [_Text(), _Csv()]
