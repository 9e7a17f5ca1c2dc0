"""fio's value syntax, read exactly as iowatt-engine reads it (agent/engine/src/util.c).

The limits are checked on these values, so a value must never mean less here than in the engine:
where the engine's reading is unusual (octal sizes like `010k`, hex `0x1000`, IEC-looking
suffixes as powers of ten under `kb_base=1024`) this module reads it the same way, and what it
cannot read it refuses (ValueError) rather than guess.
"""

from __future__ import annotations

import math
import re

U64_MAX = 2**64 - 1

_SIZE_NUMBER = re.compile(r"0[xX][0-9a-fA-F]+|0[0-7]*|[1-9][0-9]*")
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
_POWERS = {"k": 1, "m": 2, "g": 3, "t": 4, "p": 5}


def parse_size(text: str, kb_base: int = 1024) -> int:
    """Bytes of a fio size: `4096`, `4k`, `4KB`, `4KiB`, `1m`, `0x1000`, `010k` (octal, as strtoull).

    With kb_base=1024 (fio's default) `k m g t p` (optionally followed by `b`) are powers of 1024
    and IEC-looking `ki`/`kib` powers of 1000; kb_base=1000 swaps the two (fio's rule)."""
    if kb_base not in (1000, 1024):
        raise ValueError(f"kb_base must be 1000 or 1024, got {kb_base}")
    match = _SIZE_NUMBER.match(text)
    if match is None:
        raise ValueError(f"invalid size {text!r}")
    digits = match.group(0)
    if digits[:2] in ("0x", "0X"):
        value = int(digits, 16)
    elif len(digits) > 1 and digits[0] == "0":
        value = int(digits, 8)
    else:
        value = int(digits)
    if value > U64_MAX:
        raise ValueError(f"size {text!r} is out of range")
    rest = text[match.end() :]
    power, iec = 0, False
    if rest:
        head, tail = rest[0].lower(), rest[1:]
        if head == "b":
            if tail:
                raise ValueError(f"invalid size suffix in {text!r}")
        elif head in _POWERS:
            power = _POWERS[head]
            if tail.lower() in ("ib", "i"):
                iec = True
            elif tail and tail.lower() != "b":
                raise ValueError(f"invalid size suffix in {text!r}")
        else:
            raise ValueError(f"invalid size suffix in {text!r}")
    unit = 1024 if (kb_base == 1000) == iec else 1000
    result: int = value * unit**power
    if result > U64_MAX:
        raise ValueError(f"size {text!r} is out of range")
    return result


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
