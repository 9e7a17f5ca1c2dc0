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
from collections.abc import Iterator
from dataclasses import dataclass

from iowatt_workload.sizes import U64_MAX, parse_size

__all__ = [
    "U64_MAX",
    "Percent",
    "RwMode",
    "clone_starts",
    "smallest_blocks",
    "parse_bool",
    "parse_bs",
    "parse_bsrange",
    "parse_bssplit_sizes",
    "parse_offset_increment",
    "parse_rate",
    "parse_rw",
    "parse_size",
    "parse_size_range",
    "parse_time_ns",
    "parse_time_range_ns",
    "parse_time_us_default",
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


# --- issue 24's option values (the engine's pace.c, multifile.c, sched.c, patterns.c) ----------

_READ_MODES = frozenset({"read", "randread"})
_TRIM_MODES = frozenset({"trim", "randtrim", "trimwrite", "randtrimwrite"})
_WRITE_MODES = frozenset({"write", "randwrite", "rw", "readwrite", "randrw", "trimwrite", "randtrimwrite"})
_RW_SUFFIX = re.compile(r"-?[0-9]+[A-Za-z]*")


@dataclass(frozen=True)
class RwMode:
    """What an `rw` value does to the target: `mode` is the name before fio's `:N` offset modifier
    (`read:-8k`, `randread:4`, `write:112k`); `writes` is true for every mode that changes the
    target's data, trims included (fio's trim, randtrim, trimwrite, randtrimwrite discard blocks:
    a destructive write), and for any mode this library does not know (the engine refuses it; never counted as
    a read); `trims` says it discards."""

    mode: str
    writes: bool
    trims: bool
    known: bool


def parse_rw(text: str) -> RwMode:
    """An `rw` value: MODE or MODE:N (N a count or a size, a negative size for backwards strides).
    A bad modifier raises ValueError (the engine refuses it); an unknown MODE is a write."""
    mode, colon, suffix = text.partition(":")
    if colon and not _RW_SUFFIX.fullmatch(suffix):
        raise ValueError(f"invalid offset modifier {suffix!r} in rw {text!r}")
    known = mode in _READ_MODES or mode in _WRITE_MODES or mode in _TRIM_MODES
    trims = mode in _TRIM_MODES
    return RwMode(mode=mode, writes=mode not in _READ_MODES, trims=trims, known=known)


def parse_rate(text: str, *, iops: bool, kb_base: int = 1024) -> tuple[int, int]:
    """(read, write) caps of `rate` (bytes/s, sizes) or `rate_iops` (I/Os/s) as the engine reads
    fio's R[,W[,T]]: one value caps both directions, `X,` reads only (the write cap 0 = none),
    `,Y` writes only; 0 is no cap. A trim value other than 0 is refused by the engine (ValueError
    here)."""
    parts = text.split(",")
    if len(parts) > 3:
        raise ValueError(f"at most three values READ,WRITE,TRIM in {text!r}")
    if len(parts) == 3 and parts[2] not in ("", "0"):
        raise ValueError(f"a trim rate is not supported: {text!r}")
    read_text = parts[0]
    write_text = parts[1] if len(parts) > 1 else parts[0]

    def one(part: str) -> int:
        if not part:
            return 0
        return parse_u64(part) if iops else parse_size(part, kb_base)

    return one(read_text), one(write_text)


def parse_time_us_default(text: str) -> int:
    """Nanoseconds of a time whose plain number is microseconds (thinktime, latency_target)."""
    if re.fullmatch(r"[0-9]+", text):
        text += "us"
    return parse_time_ns(text)


def parse_time_range_ns(text: str) -> tuple[int, int]:
    """(low, high) ns of `startdelay`: TIME or LO-HI (each clone draws from the range)."""
    low_text, dash, high_text = text.partition("-")
    low = parse_time_ns(low_text)
    high = parse_time_ns(high_text) if dash else low
    if high < low:
        raise ValueError(f"range {text!r} ends before it starts")
    return low, high


def parse_size_range(text: str, kb_base: int = 1024) -> tuple[int, int]:
    """(low, high) bytes of `filesize`: SIZE or LOW-HIGH, LOW > 0."""
    low_text, dash, high_text = text.partition("-")
    low = parse_size(low_text, kb_base)
    high = parse_size(high_text, kb_base) if dash else low
    if low == 0 or high < low:
        raise ValueError(f"must be greater than 0 and LOW <= HIGH, got {text!r}")
    return low, high


def parse_bsrange(text: str, kb_base: int = 1024) -> list[int]:
    """Every block size bound of `bsrange` (MIN-MAX[,MIN-MAX]): the largest is what the host's
    block-size and memory limits judge."""
    sizes: list[int] = []
    for direction in text.split(",", 1):
        if not direction:
            continue
        low_text, dash, high_text = direction.partition("-")
        low = parse_size(low_text, kb_base)
        high = parse_size(high_text, kb_base) if dash else low
        if low == 0 or high < low:
            raise ValueError(f"invalid block size range {direction!r}")
        sizes += [low, high]
    if not sizes:
        raise ValueError(f"empty bsrange {text!r}")
    return sizes


# --- offset_increment=N% (the engine's control.c; fio's offset_increment_percent) --------------


@dataclass(frozen=True)
class Percent:
    """`N%` (1..100) of the file a clone runs in: resolved only against that file's size."""

    percent: int


def parse_offset_increment(text: str, kb_base: int = 1024) -> int | Percent:
    """`offset_increment`: a size, or `N%` (1..100) of the file's size as the run finds it."""
    if text.endswith("%"):
        digits = text[:-1]
        if not 0 < len(digits) < 16 or not re.fullmatch(r"[0-9]+", digits) or not 1 <= int(digits) <= 100:
            raise ValueError(f"a percentage must be 1..100%, got {text!r}")
        return Percent(int(digits))
    return parse_size(text, kb_base)


def clone_starts(
    offset: int,
    increment: int | Percent,
    numjobs: int,
    *,
    file_bytes: int,
    size: int | None,
    grows: bool,
    align: int,
) -> Iterator[tuple[int, int]]:
    """(clone, where its region starts) of numjobs clones, in the order fio sets them up: clone 0,
    then the last down to clone 1 (the engine's ctl_clone_offset, fio's get_start_offset). A size
    increment: offset + k x increment. A percentage is of the file's size as fio finds it when it
    sets the clone up: file_bytes (0 for a file the run creates) grown by the clones set up before
    it, each laying the file out to its region's end (grows: a file, with size; a device never
    grows), and the whole start is aligned up to align (offset_align, else the smallest block)."""
    order = [0, *range(numjobs - 1, 0, -1)]
    current = file_bytes
    for k in order:
        if isinstance(increment, Percent):
            start = offset + k * (increment.percent * current // 100)
            start = -(-start // align) * align if align > 1 else start
        else:
            start = offset + k * increment
        if grows and size is not None:
            current = max(current, start + size)
        yield k, start


def smallest_blocks(prev: tuple[int, int], name: str, text: str, kb_base: int = 1024) -> tuple[int, int]:
    """(read, write): the smallest block each direction can move once `name=text` (bs, bssplit or
    bsrange) is applied over prev, as the engine's opt_min_bs reads them (the later option wins
    per direction; as fio, `SIZE/0` shares what the others leave and every entry counts, 0 % too)."""
    if name == "bs":
        return parse_bs(text, kb_base)
    lists = text.split(",", 1)
    if name == "bsrange":
        if len(lists) == 1:
            lists = [text, text]
        out = list(prev)
        for d, one in enumerate(lists):
            if one:
                low = parse_bsrange(one, kb_base)[0]
                out[d] = low
        return out[0], out[1]
    if len(lists) == 1:
        lists = [text, text]
    out = []
    for one in lists:
        entries = []
        for entry in one.split(":"):
            if not entry:
                continue
            size_text, slash, pct_text = entry.partition("/")
            entries.append((parse_size(size_text, kb_base), (parse_u64(pct_text) or None) if slash else None))
        if not entries:
            raise ValueError(f"empty bssplit {text!r}")
        rest = 100 - sum(p for _, p in entries if p is not None)
        shared = sum(1 for _, p in entries if p is None)
        if rest < 0 or (not shared and rest) or any(p is not None and p > 100 for _, p in entries):
            raise ValueError(f"bssplit percentages must add up to 100 in {text!r}")
        out.append(min(size for size, _ in entries))
    return out[0], out[1]
