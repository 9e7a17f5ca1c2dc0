"""Sizes in fio's syntax: the one reading of `4k`, `1g`, `4KiB`, `0x1000` for iowatt.

The engine (agent/engine/src/util.c `parse_size`) reads sizes as fio does, and everything that
reads a size typed by a person or written in a job (the host policy's limits, the agent's CLI,
stored engine echoes, the web UI through frontend/src/lib/format.ts) reads it the same way, so a
value never means one thing to the engine and another to a check. The rule, as fio documents it:

- a whole number, decimal, octal with a leading `0` (`010k` = 8 KiB, as strtoull base 0) or hex
  `0x…`; no sign, no fraction, no spaces;
- an optional suffix `k m g t p`, optionally followed by `b`, or IEC-looking `i`/`ib`; a bare `b`
  means bytes; case does not matter;
- with kb_base=1024 (fio's default) `k`/`kb` are powers of 1024 and `ki`/`kib` powers of 1000
  (fio's compatibility rule: `4KiB` is 4000 bytes); kb_base=1000 swaps the two.

What it cannot read it refuses (ValueError) rather than guess. Test vectors shared with the
frontend: libs/workload/testdata/sizes.json.
"""

from __future__ import annotations

import re

U64_MAX = 2**64 - 1

KiB = 1024
MiB = 1024 * KiB
GiB = 1024 * MiB
TiB = 1024 * GiB

_NUMBER = re.compile(r"0[xX][0-9a-fA-F]+|0[0-7]*|[1-9][0-9]*")
_POWERS = {"k": 1, "m": 2, "g": 3, "t": 4, "p": 5}
_SUFFIXES = ("p", "t", "g", "m", "k")  # largest first, for format_size


def parse_size(text: str, kb_base: int = 1024) -> int:
    """Bytes of a fio size: `4096`, `4k`, `4KB`, `4KiB`, `1m`, `0x1000`, `010k` (see the module)."""
    if kb_base not in (1000, 1024):
        raise ValueError(f"kb_base must be 1000 or 1024, got {kb_base}")
    match = _NUMBER.match(text)
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


def format_size(n: int) -> str:
    """The shortest fio spelling of `n` bytes that parse_size (kb_base=1024) reads back exactly:
    4096 -> "4k", 1048576 -> "1m", 1536 -> "1536", 0 -> "0". Used where a size becomes a name or
    an option a person may type again (job names such as "randread-4k"); a display for reading
    uses binary units with a space ("4 KiB", the UI's formatBytes)."""
    if isinstance(n, bool) or not isinstance(n, int) or n < 0 or n > U64_MAX:
        raise ValueError(f"not a size in bytes: {n!r}")
    for suffix in _SUFFIXES:
        unit = 1024 ** _POWERS[suffix]
        if n and n % unit == 0:
            return f"{n // unit}{suffix}"
    return str(n)
