"""PostMark 1.5x's verbose report (NetApp's mail-server small-file benchmark).

The session as PostMark prints it: the banner `PostMark v1.51 : 8/14/01` (1.5 and the 1.53 of the
distributions are alike), optionally `show`'s configuration (`The base number of files is 500`,
`Transactions: 500`, `Files range between 500 bytes and 9.77 kilobytes in size`, `Block sizes are:
read=512 bytes, write=512 bytes`, `Biases are: read/append=5, create/delete=5`, `Using Unix
buffered file I/O`, `Random number generator seed is 42`), then per `run` the report:

    Time:
            12 seconds total
            10 seconds of transactions (50 per second)
    Files:
            764 created (63 per second)
                    Creation alone: 500 files (250 per second)
                    Mixed with transactions: 264 files (26 per second)
            243 read (24 per second) ... appended ... deleted ...
    Data:
            1.36 megabytes read (113.33 kilobytes per second)
            4.45 megabytes written (371.00 kilobytes per second)

One run per report. Since 1.5 a megabyte is 1024 kilobytes of 1024 bytes (the changelog: "changed
MB definition to 1024KB"); the per-second figures are whole numbers (integer division) over whole
seconds, and the data rates are over the total time, as PostMark computes them. The report has no
latency, no I/O counts and no host facts; a report saved with `run FILE` has no banner, so its
version is unknown (and read with 1.5's units, said in a warning). The terse report is not read.
"""

from __future__ import annotations

import re
from decimal import Decimal
from typing import Any

from .base import Direction, ImportFormatError, Job, ParsedFile, Run
from .text_common import dec, decode, guarded, nonempty, scaled

FMT = "postmark"
BANNER = re.compile(r"^PostMark\s+v?(\d+)\.(\d+)\s*(?::\s*(\S+))?")
SCALE = {"megabytes": 2**20, "kilobytes": 1024, "bytes": 1}
AMOUNT = r"(\d+(?:\.\d+)?) (megabytes|kilobytes|bytes)"
FILES = re.compile(r"^(\d+) (created|read|appended|deleted) \((\d+) per second\)$")
SUB = re.compile(
    r"^(Creation alone|Deletion alone|Mixed with transactions): (\d+) files \((\d+) per second\)$"
)
DATA = re.compile(rf"^{AMOUNT} (read|written) \({AMOUNT} per second\)$")


def _bytes(v: str, unit: str, n: int) -> Decimal:
    return dec(FMT, v, n, "an amount") * SCALE[unit]


def _parse(name: str, data: bytes) -> ParsedFile:
    lines = decode(FMT, data).split("\n")
    version = None
    warnings: list[str] = []
    settings: dict[str, Any] = {}
    runs: list[Run] = []
    cur: dict[str, Any] | None = None
    sub_of = ""

    def finish(n: int) -> None:
        nonlocal cur
        if cur is None:
            return
        for need in ("total_s", "read", "written"):
            if need not in cur:
                raise ImportFormatError(
                    FMT,
                    f"the report that starts at line {cur['line']} ends without its "
                    f"{'Data' if need != 'total_s' else 'Time'} lines (truncated)",
                    line=n,
                    expected="'Time:', 'Files:' and 'Data:' blocks",
                )
        runs.append(_run(cur, settings, len(runs) + 1))
        cur = None

    for n, raw in enumerate(lines, 1):
        s = raw.strip()
        while s.startswith("pm>"):
            s = s[3:].strip()
        if not s:
            continue
        if m := BANNER.match(s):
            major, minor = int(m.group(1)), int(m.group(2))
            if major != 1 or not 50 <= minor <= 59 and minor != 5:
                raise ImportFormatError(
                    FMT,
                    f"PostMark v{major}.{minor} is not a version this importer reads",
                    line=n,
                    expected="PostMark v1.5x (earlier versions count a megabyte differently)",
                )
            version = f"{major}.{minor}"
            continue
        if s == "Time:":
            finish(n)
            cur = {"line": n, "files": {}, "metrics": {}}
            continue
        if cur is None:
            if m := re.match(r"^The base number of files is (\d+)$", s):
                settings["nrfiles"] = int(m.group(1))
            elif m := re.match(r"^Transactions: (\d+)$", s):
                settings["transactions"] = int(m.group(1))
            elif m := re.match(rf"^Files range between {AMOUNT} and {AMOUNT} in size$", s):
                lo, hi = _bytes(m.group(1), m.group(2), n), _bytes(m.group(3), m.group(4), n)
                settings["filesize"] = f"{int(lo)}-{int(hi)}"
                if m.group(4) != "bytes":
                    warnings.append("the largest file size is printed rounded to 0.01 of its unit")
            elif m := re.match(rf"^Files are {AMOUNT} in size$", s):
                settings["filesize"] = int(_bytes(m.group(1), m.group(2), n))
            elif m := re.match(rf"^Block sizes are: read={AMOUNT}, write={AMOUNT}$", s):
                settings["bs"] = (
                    f"{int(_bytes(m.group(1), m.group(2), n))},{int(_bytes(m.group(3), m.group(4), n))}"
                )
            elif m := re.match(r"^Biases are: read/append=(-?\d+), create/delete=(-?\d+)$", s):
                settings["bias_read"], settings["bias_create"] = int(m.group(1)), int(m.group(2))
            elif s in ("Using Unix buffered file I/O", "Not using Unix buffered file I/O"):
                settings["buffered"] = s.startswith("Using")
            elif m := re.match(r"^(\d+) subdirector(?:y|ies) will be used$", s):
                settings["subdirectories"] = int(m.group(1))
            elif m := re.match(r"^Random number generator seed is (-?\d+)$", s):
                settings["randseed"] = int(m.group(1))
            elif re.fullmatch(r"[\d.]+( [\d.]+){12}", s):
                raise ImportFormatError(
                    FMT, "a terse report", line=n, expected="the verbose report ('set report verbose')"
                )
            continue
        if m := re.match(r"^(\d+) seconds total$", s):
            cur["total_s"] = int(m.group(1))
        elif m := re.match(r"^(\d+) seconds of transactions \((\d+) per second\)$", s):
            cur["trans_s"], cur["metrics"]["transactions_per_s"] = int(m.group(1)), float(m.group(2))
        elif s in ("Files:", "Data:"):
            continue
        elif m := FILES.match(s):
            what = m.group(2)
            cur["metrics"][f"files_{what}"] = float(m.group(1))
            cur["metrics"][f"files_{what}_per_s"] = float(m.group(3))
            sub_of = what
        elif m := SUB.match(s):
            kind = {"Creation alone": "alone", "Deletion alone": "alone", "Mixed with transactions": "mixed"}[
                m.group(1)
            ]
            cur["metrics"][f"files_{sub_of}_{kind}"] = float(m.group(2))
            cur["metrics"][f"files_{sub_of}_{kind}_per_s"] = float(m.group(3))
        elif m := DATA.match(s):
            amount = _bytes(m.group(1), m.group(2), n)
            rate = _bytes(m.group(4), m.group(5), n)
            cur[m.group(3)] = (amount, rate)
        elif s.startswith(
            (
                "Creating",
                "Performing transactions",
                "Deleting",
                "Reading configuration",
                "Current configuration",
                "Report format",
                "Working director",
                "Eh?",
                "out of files",
                "For this workload",
            )
        ) or re.match(r"^(set |run|show|load|help|quit|exit)\b", s):  # commands echoed after the prompt
            continue
        else:
            raise ImportFormatError(
                FMT,
                f"unexpected line in a report {s[:60]!r}",
                line=n,
                expected="PostMark's Time/Files/Data lines",
            )
    finish(len(lines))
    if not runs:
        raise ImportFormatError(
            FMT,
            "no report ('Time:' block)",
            line=len(lines),
            expected="PostMark's verbose report starting with 'Time:'",
        )
    if version is None:
        warnings.append(
            "no PostMark banner: the version is unknown; the amounts are read with 1.5's units (MB = 1024 KB)"
        )
    return ParsedFile(format=FMT, tool="PostMark", version=version, runs=runs, warnings=warnings)


def _run(cur: dict[str, Any], settings: dict[str, Any], index: int) -> Run:
    total_ms = float(cur["total_s"] * 1000)

    def direction(key: str) -> Direction:
        amount, rate = cur[key]
        return Direction(
            bw_bytes=scaled(rate, 1), io_bytes=int(amount.to_integral_value()), runtime_ms=total_ms
        )

    metrics = dict(cur["metrics"])
    metrics["seconds_total"] = float(cur["total_s"])
    if "trans_s" in cur:
        metrics["seconds_transactions"] = float(cur["trans_s"])
    job = Job(
        name="postmark",
        settings=dict(settings),
        read=direction("read"),
        write=direction("written"),
        metrics=metrics,
    )
    absent = [
        "latency (PostMark does not time single operations)",
        "IOPS and I/O counts (PostMark counts files, not I/Os)",
        "host and device facts",
        "start date",
    ]
    if not settings:
        absent.append("configuration (no 'show' output in the file)")
    notes = [
        "data rates are over the total time (creation, transactions and deletion), per-second file "
        "rates are whole numbers, amounts are printed to 0.01 of their unit",
    ]
    return Run(name=f"PostMark run {index}", jobs=[job], absent=absent, notes=notes)


class _Importer:
    format = FMT
    tool = "PostMark"
    aliases = ("postmark-1.5",)

    def sniff(self, name: str, head: bytes) -> bool:
        try:
            text = decode(FMT, head)
        except ImportFormatError:
            return False
        return ("PostMark v" in text[:2000]) or ("seconds of transactions (" in text and "\nFiles:" in text)

    def parse(self, name: str, data: bytes) -> ParsedFile:
        return nonempty(FMT, guarded(FMT, lambda: _parse(name, data)), "a PostMark report")


IMPORTERS = [_Importer()]
