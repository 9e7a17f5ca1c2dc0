"""fio's value syntax, read exactly as iowatt-engine reads it (agent/engine/src/util.c).

The limits are checked on these values, so a value must never mean less here than in the engine:
where the engine's reading is unusual (octal sizes like `010k`, hex `0x1000`, IEC-looking
suffixes as powers of ten under `kb_base=1024`) this module reads it the same way, and what it
cannot read it refuses (ValueError) rather than guess. Sizes are read by iowatt_workload's
parse_size (libs/workload, ADR 0013), the one size parser of agent, server and, through the same
test vectors, the web UI.
"""

from __future__ import annotations

import math
import re

from iowatt_workload.sizes import U64_MAX, parse_size

__all__ = [
    "U64_MAX",
    "parse_bool",
    "parse_bs",
    "parse_bssplit_sizes",
    "parse_size",
    "parse_time_ns",
    "parse_u64",
    "value_text",
]

_TIME = re.compile(r"([0-9]+(?:\.[0-9]*)?(?:[eE][+-]?[0-9]+)?)([A-Za-z]*)")
_TIME_UNITS_NS = {
    "": 1e9,
    "s": 1e9,
    "sec": 1e9,
    "ms": 1e6,
    "msec": 1e6,
    "us": 1e3,
    "usec": 1e3,
    "ns": 1.0,
    "nsec": 1.0,
    "m": 60e9,
    "min": 60e9,
    "h": 3600e9,
    "d": 86400e9,
}


def parse_time_ns(text: str) -> int:
    """Nanoseconds of a fio time: a plain number is seconds; `ns us ms s m h d` (and `sec`,
    `msec`, `usec`, `nsec`, `min`) as suffixes, case-insensitive."""
    match = _TIME.fullmatch(text)
    if match is None:
        raise ValueError(f"invalid time {text!r}")
    unit = _TIME_UNITS_NS.get(match.group(2).lower())
    if unit is None:
        raise ValueError(f"invalid time unit in {text!r}")
    ns = float(match.group(1)) * unit
    if not math.isfinite(ns) or ns > 1e18:
        raise ValueError(f"time {text!r} is out of range")
    return int(ns + 0.5)


def parse_u64(text: str) -> int:
    """A plain decimal count (numjobs, iodepth, loops, rate_iops)."""
    if not re.fullmatch(r"[0-9]+", text):
        raise ValueError(f"invalid number {text!r}")
    value = int(text)
    if value > U64_MAX:
        raise ValueError(f"number {text!r} is out of range")
    return value


def parse_bool(text: str) -> bool:
    low = text.lower()
    if text == "1" or low in ("true", "yes", "on"):
        return True
    if text == "0" or low in ("false", "no", "off"):
        return False
    raise ValueError(f"invalid boolean {text!r} (use 0 or 1)")


def parse_bs(text: str, kb_base: int = 1024) -> tuple[int, int]:
    """(read, write) block sizes of `bs`: `4k`, or `R,W` (an empty W means W = R)."""
    read_text, comma, write_text = text.partition(",")
    read = parse_size(read_text, kb_base)
    write = parse_size(write_text, kb_base) if comma and write_text else read
    if read == 0 or write == 0:
        raise ValueError(f"block size must be greater than 0 in {text!r}")
    return read, write


def parse_bssplit_sizes(text: str, kb_base: int = 1024) -> list[int]:
    """Every block size named in a `bssplit` (`4k/10:64k/50:32k/40`, optionally `READ,WRITE`)."""
    sizes: list[int] = []
    for direction in text.split(",", 1):
        for entry in direction.split(":"):
            if not entry:
                continue  # strtok_r skips empty tokens
            size_text, _, _pct = entry.partition("/")
            sizes.append(parse_size(size_text, kb_base))
    if not sizes:
        raise ValueError(f"empty bssplit {text!r}")
    return sizes


def value_text(value: object) -> str:
    """A job-file value as the engine reads it: JSON strings and numbers as written, booleans as
    1/0. Python's json module writes floats with repr(), so str() is what the engine sees."""
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError("not a finite number")
        return repr(value)
    if isinstance(value, str):
        return value
    raise ValueError("must be a string, number or boolean")
