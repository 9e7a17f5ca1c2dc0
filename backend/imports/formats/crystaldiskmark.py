"""CrystalDiskMark's text export (File > Save text / Ctrl+C, versions 5 to 9) and KDiskMark's
(versions 2 and 3), one run per file, one job per test line.

What each version writes (read from the tools' published sources and examples):

- CrystalDiskMark 8 and 9: `  SEQ    1MiB (Q=  8, T= 1):  3534.255 MB/s [   3370.5 IOPS] <  2371.55 us>`
  under `[Read]`, `[Write]` and optionally `[Mix] Read 70%/Write 30%`, then `Profile:` (Default,
  Peak, Real, Demo), `Test: 1 GiB (x5) [C: 24% (56/237GiB)]`, `Mode: [Admin]`, `Time: Measure 5 sec
  / Interval 5 sec`, `Date:`, `OS:`, `Comment:`. The NVMe SSD preset changes the test lines' block
  size, queues and threads, which the lines carry; IOPS is MB/s x 10^6 / block size.
- CrystalDiskMark 7: `Sequential 1MiB (Q=  8, T= 1): ...` and `Random 4KiB (...)`, the same
  sections, `Test: 1 GiB (x5) [Interval: 5 sec] <DefaultAffinity=DISABLED>`; no measure time.
- CrystalDiskMark 5 and 6 (saved as UTF-16): one line per test, `   Sequential Read (Q= 32,T= 1) :
  559.294 MB/s`, `  Random Read 4KiB (Q=  8,T= 8) :  402.548 MB/s [  98278.3 IOPS]`, and CDM 5's
  `Sequential Read (T= 1)`; `  Test : 1024 MiB [C: 51.8% (123.0/237.4 GiB)] (x5)  [Interval=5 sec]`.
  No latency; the sequential tests' block size is not printed: 128 KiB for the queued test and
  1 MiB for CDM 5's `(T= 1)` test, the tools' fixed definitions (said in the run's notes).
- KDiskMark: `Sequential   1 MiB (Q=  8, T= 1): ...`, `Profile: Default|Peak Performance|Real World
  Performance|Demo [+Mix]`, `Test: 1 GiB (x5) [Measure: 5 sec / Interval: 5 sec]` (3.x) or
  `[Interval: 5 sec]` (2.x), `Date:`, `OS:`, ` Target:` (3.x), and the fio version it drove.

Units: CrystalDiskMark's MB/s is 10^6 B/s as its header says (its IOPS is MB/s x 10^6 / block size);
KiB = 1024 B; latency in us (10^3 ns), the mean from submission to completion (fio's lat). KDiskMark
prints the same header, but its figure is fio's bw in KiB/s divided by 1000: it is converted with
1 "MB" = 1,024,000 B (read from KDiskMark's source, every version); its latency is fio's lat mean
before 3.2 and clat mean from 3.2. All conversions are exact decimal products.
"""

from __future__ import annotations

import re
from datetime import datetime
from decimal import Decimal

from .base import Direction, ImportFormatError, Job, Latency, ParsedFile, Run
from .text_common import dec, decode, guarded, integer, nonempty, scaled, size_bytes

CDM = "crystaldiskmark"
KDM = "kdiskmark"
UNITS_LINE = "* MB/s = 1,000,000 bytes/s"
SUPPORTED_CDM = (5, 6, 7, 8, 9)
SUPPORTED_KDM = (2, 3)

CDM_HEAD = re.compile(r"^\s*CrystalDiskMark\s+(\d+)\.(\d+)\.(\d+)(\S*)\s*(.*?)\s*\(C\)\s*[\d-]+\s+hiyohiyo")
KDM_HEAD = re.compile(r"^\s*KDiskMark\s*\((\d+)\.(\d+)(?:\.(\d+))?([^)]*)\)\s*:")
FIO_LINE = re.compile(r"^\s*Flexible I/O Tester\s*\(([^)]*)\)")
# 7, 8, 9 and KDiskMark: one test per line with MB/s, IOPS and latency
TEST = re.compile(
    r"^\s*(?P<kind>SEQ|RND|Sequential|Random)\s*(?P<size>\d+)\s*(?P<unit>KiB|MiB)\s*"
    r"\(Q=\s*(?P<q>\d+),\s*T=\s*(?P<t>\d+)\)\s*:\s*(?P<mbs>\d+(?:\.\d+)?)\s*MB/s\s*"
    r"\[\s*(?P<iops>\d+(?:\.\d+)?)\s*IOPS\]\s*<\s*(?P<lat>\d+(?:\.\d+)?)\s*us>\s*$"
)
# 5 and 6: direction in the name, IOPS only for the random tests, no latency
OLD_TEST = re.compile(
    r"^\s*(?P<kind>Sequential|Random)\s+(?P<dir>Read|Write)(?:\s+(?P<size>\d+)(?P<unit>KiB|MiB))?\s*"
    r"\((?:Q=\s*(?P<q>\d+),\s*)?T=\s*(?P<t>\d+)\)\s*:\s*(?P<mbs>\d+(?:\.\d+)?)\s*MB/s"
    r"(?:\s*\[\s*(?P<iops>\d+(?:\.\d+)?)\s*IOPS\])?\s*$"
)
MIX = re.compile(r"^\s*\[Mix\]\s*Read\s*(\d+)%\s*/\s*Write\s*(\d+)%\s*$")
SECTION = re.compile(r"^\s*\[(Read|Write)\]\s*$")
FOOT = re.compile(r"^\s*(Profile|Test|Mode|Time|Date|OS|Comment|Target)\s*:\s?(.*)$")
TEST_SIZE = re.compile(r"^\s*(\d+)\s*(MiB|GiB)\b")
COUNT = re.compile(r"\(x(\d+)\)")
DRIVE = re.compile(r"\[([A-Za-z]:[^\]]*)\]")
DRIVE_CAP = re.compile(
    r"^([A-Za-z]:)\s*(\d+(?:\.\d+)?)%\s*\((\d+(?:\.\d+)?)/(\d+(?:\.\d+)?)\s*(MiB|GiB|TiB)\)"
)
MEASURE = re.compile(r"Measure:?\s*(\d+)\s*(sec|min)")
INTERVAL = re.compile(r"Interval\s*[:=]?\s*(\d+)\s*(sec|min)")
AFFINITY = re.compile(r"<DefaultAffinity=(\w+)>")
KDM_OS = re.compile(r"^(.*?)\s*\[(\S+)\s+(.*)\]\s*$")


def _seconds(n: str, unit: str) -> float:
    return float(int(n) * (60 if unit == "min" else 1))


# KDiskMark prints fio's `bw` (KiB/s, a whole number) divided by 1000 under the header's "MB/s":
# its unit is 1000 KiB/s = 1,024,000 B/s, whatever the header says (src/benchmark.cpp, every version
# from 2.0 to 3.x). Its latency is fio's lat_ns mean before 3.2 and clat_ns mean from 3.2.
KDM_MB = 1_024_000


def _direction(
    fmt: str, mbs: str, iops: str | None, lat_us: str | None, n: int, *, clat: bool = False
) -> Direction:
    bw = scaled(dec(fmt, mbs, n, "MB/s"), KDM_MB if fmt == KDM else 10**6)
    io = float(dec(fmt, iops, n, "IOPS")) if iops is not None else None
    lat = Latency(mean_ns=scaled(dec(fmt, lat_us, n, "latency in us"), 1000)) if lat_us is not None else None
    return Direction(bw_bytes=bw, iops=io, lat=None if clat else lat, clat=lat if clat else None)


def _rw(kind: str, section: str) -> str:
    rnd = kind in ("RND", "Random")
    if section == "mix":
        return "randrw" if rnd else "rw"
    return ("rand" if rnd else "") + section


def _name(kind: str, bs: int, q: int, t: int) -> str:
    short = "RND" if kind in ("RND", "Random") else "SEQ"
    size = f"{bs // 1048576}M" if bs >= 1048576 and bs % 1048576 == 0 else f"{bs // 1024}K"
    return f"{short}{size} Q{q}T{t}"


def _parse(fmt: str, name: str, data: bytes) -> ParsedFile:
    text = decode(fmt, data)
    lines = text.split("\n")
    tool, version, major, kdm_minor = None, None, 0, 0
    notes: list[str] = []
    host: dict[str, str] = {}
    device: dict[str, str] = {}
    head_line = 0
    for i, line in enumerate(lines[:12], 1):
        m = CDM_HEAD.match(line) if fmt == CDM else KDM_HEAD.match(line)
        if m:
            head_line = i
            if fmt == CDM:
                tool, major = "CrystalDiskMark", int(m.group(1))
                version = f"{m.group(1)}.{m.group(2)}.{m.group(3)}{m.group(4)}"
                if m.group(5):
                    host["edition"] = m.group(5)[:80]
            else:
                tool, major, kdm_minor = "KDiskMark", int(m.group(1)), int(m.group(2))
                version = ".".join(g for g in m.group(1, 2, 3) if g) + (m.group(4) or "")
            break
    if not tool:
        want = "a 'CrystalDiskMark N.N.N ... hiyohiyo' line" if fmt == CDM else "a 'KDiskMark (N.N.N):' line"
        raise ImportFormatError(fmt, f"no {fmt} header in the first lines", line=1, expected=want)
    supported = SUPPORTED_CDM if fmt == CDM else SUPPORTED_KDM
    if major not in supported:
        raise ImportFormatError(
            fmt,
            f"{tool} {version} is not a version this importer reads",
            line=head_line,
            expected=f"{tool} {', '.join(map(str, supported))}",
        )
    if not any(line.strip().startswith(UNITS_LINE) for line in lines[:16]):
        raise ImportFormatError(fmt, "the units line is missing", line=head_line + 1, expected=UNITS_LINE)
    kdm_clat = False
    if fmt == KDM:
        kdm_clat = (major, kdm_minor) >= (3, 2)
        notes.append("KDiskMark's MB/s is fio's KiB/s / 1000 (1 'MB' = 1,024,000 B), converted as such")
        for line in lines[:4]:
            fm = FIO_LINE.match(line)
            if fm:
                host["fio_version"] = fm.group(1).removeprefix("fio-")[:40]

    jobs: list[Job] = []
    section: str | None = None
    mix_read: int | None = None
    foot: dict[str, tuple[int, str]] = {}
    old_seen = False
    comment_lines: list[str] = []
    for n, line in enumerate(lines, 1):
        if n <= head_line or not line.strip():
            continue
        s = line.strip()
        if s.startswith(("---", "* ", "Crystal Dew World", "Flexible I/O Tester")):
            continue
        if m := SECTION.match(line):
            section = m.group(1).lower()
            continue
        if m := MIX.match(line):
            section, mix_read = "mix", int(m.group(1))
            if mix_read + int(m.group(2)) != 100:
                raise ImportFormatError(
                    fmt, "mix percentages do not add to 100", line=n, expected="Read N%/Write 100-N%"
                )
            continue
        if m := TEST.match(line):
            if major < 7 and fmt == CDM:
                raise ImportFormatError(
                    fmt, f"a {major}.x file with a 7+ test line", line=n, expected="CrystalDiskMark 5/6 lines"
                )
            if section is None:
                raise ImportFormatError(
                    fmt, "a test line outside [Read], [Write] or [Mix]", line=n, expected="a section header"
                )
            bs = size_bytes(fmt, m.group("size"), m.group("unit"), n)
            q, t = integer(fmt, m.group("q"), n, "queues"), integer(fmt, m.group("t"), n, "threads")
            if bs <= 0 or q <= 0 or t <= 0:
                raise ImportFormatError(fmt, "block size, queues and threads must be positive", line=n)
            settings: dict[str, object] = {
                "rw": _rw(m.group("kind"), section),
                "bs": bs,
                "iodepth": q,
                "numjobs": t,
            }
            d = _direction(fmt, m.group("mbs"), m.group("iops"), m.group("lat"), n, clat=kdm_clat)
            if section == "mix":
                settings["rwmixread"] = mix_read
                metrics = {"bw_bytes": d.bw_bytes or 0.0, "iops": d.iops or 0.0}
                mean = (d.clat or d.lat or Latency()).mean_ns
                if mean is not None:
                    metrics["clat_mean_ns" if kdm_clat else "lat_mean_ns"] = mean
                jobs.append(
                    Job(
                        name=f"MIX {_name(m.group('kind'), bs, q, t)}",
                        settings=settings,
                        metrics=metrics,
                        group="mix",
                    )
                )
            else:
                jobs.append(
                    Job(
                        name=f"{_name(m.group('kind'), bs, q, t)} {section}",
                        settings=settings,
                        read=d if section == "read" else None,
                        write=d if section == "write" else None,
                        group=section,
                    )
                )
            continue
        if m := OLD_TEST.match(line):
            if fmt != CDM or major >= 7:
                raise ImportFormatError(
                    fmt,
                    f"a 5/6-style test line in a {tool} {version} file",
                    line=n,
                    expected="'SEQ 1MiB (Q= 8, T= 1): ... MB/s [... IOPS] <... us>'",
                )
            old_seen = True
            kind, direction = m.group("kind"), m.group("dir").lower()
            q = integer(fmt, m.group("q"), n, "queues") if m.group("q") else 1
            t = integer(fmt, m.group("t"), n, "threads")
            if m.group("size"):
                bs = size_bytes(fmt, m.group("size"), m.group("unit"), n)
            elif kind == "Sequential":
                bs = 131072 if m.group("q") else 1048576
            else:
                raise ImportFormatError(
                    fmt,
                    "a random test without its block size",
                    line=n,
                    expected="'Random Read 4KiB (Q=..,T=..)'",
                )
            if kind == "Random" and m.group("iops") is None:
                raise ImportFormatError(fmt, "a random test without IOPS", line=n, expected="'[ N IOPS]'")
            d = _direction(fmt, m.group("mbs"), m.group("iops"), None, n)
            jobs.append(
                Job(
                    name=f"{_name(kind, bs, q, t)} {direction}",
                    settings={"rw": _rw(kind, direction), "bs": bs, "iodepth": q, "numjobs": t},
                    read=d if direction == "read" else None,
                    write=d if direction == "write" else None,
                    group=direction,
                )
            )
            continue
        if m := FOOT.match(line):
            key = m.group(1)
            if key in foot and key != "Comment":
                raise ImportFormatError(
                    fmt, f"a second {key} line", line=n, expected="one footer of each kind"
                )
            foot[key] = (n, m.group(2).strip())
            continue
        if re.match(r"^\s*(SEQ|RND|Sequential|Random)\b", line) or re.search(r"MB/s|IOPS", line) and not foot:
            raise ImportFormatError(
                fmt,
                f"unreadable test line {s[:60]!r}",
                line=n,
                expected="'SEQ 1MiB (Q= 8, T= 1): N MB/s [N IOPS] <N us>'",
            )
        if "Date" in foot or "OS" in foot:
            comment_lines.append(s)  # CDM 5/6 print the comment without a label after OS
            continue
        raise ImportFormatError(
            fmt,
            f"unexpected line {s[:60]!r}",
            line=n,
            expected="a test line, a section header or a footer line",
        )

    if not jobs:
        raise ImportFormatError(fmt, "no test lines", expected="at least one test result line")
    if "Test" not in foot:
        raise ImportFormatError(
            fmt,
            "no 'Test:' line (the file is truncated)",
            line=len(lines),
            expected="the 'Test: SIZE (xN)' footer",
        )

    absent: list[str] = []
    run_settings: dict[str, object] = {}
    n, test = foot["Test"]
    sm = TEST_SIZE.match(test)
    if not sm:
        raise ImportFormatError(
            fmt, f"unreadable test size in {test[:60]!r}", line=n, expected="'1 GiB (x5)' or '1024 MiB ...'"
        )
    run_settings["size"] = size_bytes(fmt, sm.group(1), sm.group(2), n)
    if cm := COUNT.search(test):
        run_settings["passes"] = int(cm.group(1))
    else:
        absent.append("number of passes")
    if dm := DRIVE.search(test):
        drive = dm.group(1).strip()
        cap = DRIVE_CAP.match(drive)
        if cap:
            device["target"] = cap.group(1)
            device["used_pct"] = cap.group(2)
            unit = 1024 ** {"MiB": 2, "GiB": 3, "TiB": 4}[cap.group(5)]
            device["used_bytes"] = str(int(Decimal(cap.group(3)) * unit))
            device["size_bytes"] = str(int(Decimal(cap.group(4)) * unit))
        else:
            device["target"] = drive[:120]
    if "<0Fill>" in test or "<0Fill>" in foot.get("Mode", (0, ""))[1]:
        run_settings["zero_buffers"] = True
    if am := AFFINITY.search(test):
        notes.append(f"default affinity {am.group(1).lower()}")
    time_text = foot.get("Time", (0, ""))[1] + " " + test
    if mm := MEASURE.search(time_text):
        run_settings["runtime_s"] = _seconds(mm.group(1), mm.group(2))
    else:
        absent.append("measure time of each test (this version does not print it)")
    if im := INTERVAL.search(time_text):
        run_settings["interval_s"] = _seconds(im.group(1), im.group(2))
    else:
        absent.append("interval between tests")
    if "Mode" in foot and "[Admin]" in foot["Mode"][1]:
        host["admin"] = "true"

    profile = foot.get("Profile", (0, ""))[1]
    group = profile.replace("[+Mix]", "").strip() or None
    if profile:
        notes.append(f"profile {profile}")
    if any(j.settings["bs"] == 131072 and j.settings["rw"] in ("read", "write") for j in jobs) and old_seen:
        notes.append(
            f"CrystalDiskMark {major} does not print the sequential tests' block size: 128 KiB (queued "
            "test) and 1 MiB (T=1 test) are its fixed definitions"
        )
    if old_seen:
        absent.append("latency (CrystalDiskMark 5 and 6 print MB/s and IOPS only)")
        absent.append("IOPS of the sequential tests (CrystalDiskMark 5 and 6 print MB/s only)")
    if any(j.group == "mix" for j in jobs):
        absent.append(
            "read/write split of the Mix tests (one combined figure: job metrics bw_bytes, iops, lat_mean_ns)"
        )
    absent += [
        "latency percentiles, minimum and maximum",
        "bytes moved and I/O counts",
        "direct I/O flag (not in the text; the tool opens its test file unbuffered)",
    ]

    started_at = None
    if "Date" in foot:
        dn, dt = foot["Date"]
        for pattern in ("%Y/%m/%d %H:%M:%S", "%Y-%m-%d %H:%M:%S"):
            try:
                started_at = datetime.strptime(dt, pattern)
                break
            except ValueError:
                continue
        if started_at is None:
            raise ImportFormatError(
                fmt, f"unreadable date {dt[:40]!r}", line=dn, expected="YYYY/MM/DD H:MM:SS"
            )
        notes.append("the date is the tester's local time; its time zone is not in the file")
        absent.append("time zone of the date")
    else:
        absent.append("date of the run")
    if "OS" in foot:
        os_text = foot["OS"][1]
        host["os"] = os_text[:200]
        if fmt == KDM and (km := KDM_OS.match(os_text)):
            host["os"], host["kernel"] = km.group(1)[:120], f"{km.group(2)} {km.group(3)}"[:120]
    else:
        absent.append("operating system")
    if "Target" in foot:
        target = foot["Target"][1]
        tm = re.match(r"^(.*?)\s*\[([^\]]*)\]\s*$", target)
        device["target"] = (tm.group(1) if tm else target)[:200]
        if tm:
            device["model"] = tm.group(2)[:200]
    if "model" not in device:
        absent.append("drive model")
    comment = foot.get("Comment", (0, ""))[1] or " ".join(comment_lines)
    if comment:
        notes.append(f"comment: {comment[:500]}")

    jobs = [
        Job(
            name=j.name,
            settings=run_settings | j.settings,
            read=j.read,
            write=j.write,
            metrics=j.metrics,
            group=group if j.group != "mix" else f"{group or 'Default'} mix",
        )
        for j in jobs
    ]
    run = Run(
        name=f"{tool} {version}" + (f" {profile}" if profile else ""),
        jobs=jobs,
        started_at=started_at,
        host=host,
        device=device,
        absent=absent,
        notes=notes,
    )
    return ParsedFile(format=fmt, tool=tool, version=version, runs=[run])


class _Importer:
    format: str
    tool: str

    def __init__(self, fmt: str, tool: str, marker: bytes, aliases: tuple[str, ...]):
        self.format, self.tool, self._marker, self.aliases = fmt, tool, marker, aliases

    def sniff(self, name: str, head: bytes) -> bool:
        try:
            text = decode(self.format, head[:4096])
        except ImportFormatError:
            return False
        first = "\n".join(text.split("\n")[:6])
        return self._marker.decode() in first and "MB/s" in text

    def parse(self, name: str, data: bytes) -> ParsedFile:
        return nonempty(
            self.format, guarded(self.format, lambda: _parse(self.format, name, data)), "test result lines"
        )


IMPORTERS = [
    _Importer(CDM, "CrystalDiskMark", b"CrystalDiskMark ", ("cdm", "crystaldiskmark-text")),
    _Importer(KDM, "KDiskMark", b"KDiskMark (", ("kdm", "kdiskmark-text")),
]
