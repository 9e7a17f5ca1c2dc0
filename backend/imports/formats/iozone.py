"""iozone 3.x's report table (automatic mode `-a` or chosen tests `-i N`), versions 3.2xx to 3.4xx.

The layout, from iozone.c and its published outputs: a banner (`Iozone: Performance Test of File
I/O`, `Version $Revision: 3.492 $`), the options it runs with (`O_DIRECT feature enabled`,
`Include fsync in write timing`, `Command line used: iozone ...`, `Output is in kBytes/sec`, or
`OPS Mode. Output is in operations per second.`, or `Output is in microseconds per operation`),
then a two-line header (`random random bkwd record stride` over `kB reclen write rewrite read
reread read write read rewrite read fwrite frewrite fread freread`; older versions print `KB`)
and one line per file size and record length. The columns are right-aligned in fixed widths and a
test that was not run leaves its column blank, so values are matched to the header by their right
edge. One run per file, one job per file size, record length and test.

Units: iozone's kB is 1024 B (a `-s 100M` file is `102400 kB`): kBytes/sec -> x 1024 B/s;
operations per second -> IOPS; microseconds per operation -> the mean latency.
The throughput mode's report (`-t`, "Children see throughput for ...") is not read.
"""

from __future__ import annotations

import re
from typing import Any

from .base import Direction, ImportFormatError, Job, Latency, ParsedFile, Run
from .text_common import dec, decode, guarded, integer, nonempty, scaled

FMT = "iozone"
REVISION = re.compile(r"Version \$Revision: (\d+)\.(\d+) \$")
TESTS: dict[str, tuple[str, str]] = {  # column -> (fio rw, direction)
    "write": ("write", "write"),
    "rewrite": ("write", "write"),
    "read": ("read", "read"),
    "reread": ("read", "read"),
    "random read": ("randread", "read"),
    "random write": ("randwrite", "write"),
    "bkwd read": ("read", "read"),
    "record rewrite": ("write", "write"),
    "stride read": ("read", "read"),
    "fwrite": ("write", "write"),
    "frewrite": ("write", "write"),
    "fread": ("read", "read"),
    "freread": ("read", "read"),
    "pwrite": ("write", "write"),
    "repwrite": ("write", "write"),
    "pread": ("read", "read"),
    "repread": ("read", "read"),
}


def _tokens(line: str) -> list[tuple[int, str]]:
    """(right edge, word) of each word of a line."""
    return [(m.end(), m.group()) for m in re.finditer(r"\S+", line)]


def _parse(name: str, data: bytes) -> ParsedFile:
    lines = decode(FMT, data).split("\n")
    version = None
    unit = None
    settings: dict[str, Any] = {"direct": False}
    command = None
    notes: list[str] = []
    header: list[tuple[int, str]] | None = None
    head_line = 0
    jobs: list[Job] = []
    banner = False
    for n, line in enumerate(lines, 1):
        s = line.strip()
        if not s:
            continue
        if "Iozone: Performance Test of File I/O" in s:
            banner = True
            continue
        if m := REVISION.search(s):
            if m.group(1) != "3":
                raise ImportFormatError(
                    FMT,
                    f"iozone {m.group(1)}.{m.group(2)} is not a version this importer reads",
                    line=n,
                    expected="iozone 3.x",
                )
            version = f"{m.group(1)}.{m.group(2)}"
            continue
        if m := re.search(r"Output is in (.+?)\.?$", s):
            what = m.group(1).lower()
            unit = (
                "kB"
                if "kbytes" in what
                else "ops"
                if "operations per second" in what or "ops/sec" in what
                else "us"
                if "microseconds" in what
                else None
            )
            if unit is None:
                raise ImportFormatError(
                    FMT,
                    f"unknown output unit {m.group(1)[:40]!r}",
                    line=n,
                    expected="kBytes/sec, operations per second or microseconds per operation",
                )
            continue
        if s.startswith("Command line used:"):
            command = s[len("Command line used:") :].strip()
            continue
        if s == "O_DIRECT feature enabled":
            settings["direct"] = True
            continue
        if s.startswith("Include fsync in write timing"):
            settings["end_fsync"] = True
            continue
        if s.startswith(("SYNC Mode", "O_SYNC")):
            settings["sync"] = True
            continue
        if s.startswith("Children see throughput"):
            raise ImportFormatError(
                FMT, "a throughput-mode (-t) report", line=n, expected="the table of iozone -a or -i runs"
            )
        if re.match(r"^(kB|KB)\s+reclen\b", s):
            prev = lines[n - 2] if n >= 2 else ""
            header = _header(prev, line)
            head_line = n
            continue
        if header is not None and re.match(r"^\d", s):
            jobs += _row(line, header, n, settings, unit)
            continue
        if header is not None and s.startswith("iozone test complete"):
            header = None
    if not banner and version is None:
        raise ImportFormatError(
            FMT, "no iozone banner", line=1, expected="'Iozone: Performance Test of File I/O'"
        )
    if head_line == 0:
        raise ImportFormatError(
            FMT,
            "no result table (truncated, or another report)",
            line=len(lines),
            expected="'kB  reclen    write  rewrite ...'",
        )
    if unit is None:
        raise ImportFormatError(
            FMT,
            "no 'Output is in ...' line: the unit is unknown",
            line=head_line,
            expected="'Output is in kBytes/sec'",
        )
    if not jobs:
        raise ImportFormatError(
            FMT,
            "a table without result lines (truncated)",
            line=len(lines),
            expected="a line per file size and record length",
        )
    absent = [
        "latency distribution",
        "host and device facts",
        "I/O counts and bytes moved",
        "iozone's start time as a date (its 'Run began' line is local time)",
    ]
    if unit != "us":
        absent.append("latency (the run printed rates; iozone -N prints microseconds per operation)")
    if unit == "ops":
        absent.append("bandwidth (OPS mode prints operations per second)")
    if unit == "kB":
        absent.append("IOPS (kB/s mode)")
    if command is None:
        absent.append("command line")
    return ParsedFile(
        format=FMT,
        tool="iozone",
        version=version,
        runs=[Run(name=f"iozone {name}", jobs=jobs, command_line=command, absent=absent, notes=notes)],
    )


def _header(line1: str, line2: str) -> list[tuple[int, str]]:
    """The columns by right edge, with the upper line's prefix (random, bkwd, record, stride)."""
    upper = dict(_tokens(line1)) if re.search(r"\brandom\b", line1) else {}
    cols = []
    for end, word in _tokens(line2):
        prefix = upper.get(end)
        cols.append((end, f"{prefix} {word}" if prefix else word))
    return cols


def _row(
    line: str, header: list[tuple[int, str]], n: int, base: dict[str, Any], unit: str | None
) -> list[Job]:
    values: dict[str, str] = {}
    for end, word in _tokens(line):
        end_col, name = min(header, key=lambda h: abs(h[0] - end))
        if abs(end_col - end) > 2 or name in values:
            raise ImportFormatError(
                FMT,
                f"the value {word[:20]!r} is under no column",
                line=n,
                expected="values right-aligned under the header",
            )
        values[name] = word
    kb = values.get("kB", values.get("KB"))
    rec = values.get("reclen")
    if kb is None or rec is None:
        raise ImportFormatError(
            FMT,
            "a line without its file size and record length",
            line=n,
            expected="'kB  reclen' values first",
        )
    size = integer(FMT, kb, n, "a file size in kB") * 1024
    bs = integer(FMT, rec, n, "a record length in kB") * 1024
    jobs = []
    for col, raw in values.items():
        if col in ("kB", "KB", "reclen"):
            continue
        if col not in TESTS:
            raise ImportFormatError(FMT, f"unknown column {col!r}", line=n, expected=", ".join(TESTS))
        rw, d = TESTS[col]
        v = dec(FMT, raw, n, col)
        if unit == "kB":
            direction = Direction(bw_bytes=scaled(v, 1024))
        elif unit == "ops":
            direction = Direction(iops=float(v))
        else:
            direction = Direction(lat=Latency(mean_ns=scaled(v, 1000)))
        settings = dict(base) | {"rw": rw, "bs": bs, "size": size}
        name = f"{col} {size // 1024}k/{bs // 1024}k"
        jobs.append(
            Job(
                name=name,
                settings=settings,
                read=direction if d == "read" else None,
                write=direction if d == "write" else None,
                group=col,
            )
        )
    return jobs


class _Importer:
    format = FMT
    tool = "iozone"
    aliases = ("iozone-text",)

    def sniff(self, name: str, head: bytes) -> bool:
        try:
            text = decode(FMT, head)
        except ImportFormatError:
            return False
        return "Iozone: Performance Test of File I/O" in text or bool(
            re.search(r"(?m)^\s*(kB|KB)\s+reclen\s+write\b", text)
        )

    def parse(self, name: str, data: bytes) -> ParsedFile:
        return nonempty(FMT, guarded(FMT, lambda: _parse(name, data)), "iozone result lines")


IMPORTERS = [_Importer()]
