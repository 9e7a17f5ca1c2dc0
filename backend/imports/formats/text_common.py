"""What the text importers of other tools' outputs share (CrystalDiskMark, DiskSpd, vdbench,
elbencho, sysbench, PostMark): decoding a file as the tool wrote it, exact decimal numbers, size
units, and one way to say "this line is not what the format has there".

No IMPORTERS here: the registry skips this module."""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from decimal import Decimal, InvalidOperation
from typing import TypeVar

from .base import ImportFormatError, ParsedFile

T = TypeVar("T")

# binary prefixes as the tools print them (KiB = 1024 B) and decimal ones (KB = 1000 B)
BINARY = {"": 1, "B": 1, "K": 1024, "KI": 1024, "KIB": 1024, "M": 1024**2, "MI": 1024**2, "MIB": 1024**2}
BINARY |= {"G": 1024**3, "GI": 1024**3, "GIB": 1024**3, "T": 1024**4, "TI": 1024**4, "TIB": 1024**4}
BINARY |= {"P": 1024**5, "PIB": 1024**5}
NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d{1,3})?")
DECIMAL = {"KB": 1000, "MB": 1000**2, "GB": 1000**3, "TB": 1000**4, "PB": 1000**5}


def decode(fmt: str, data: bytes) -> str:
    """The file's text: UTF-16 when it starts with its byte-order mark (CrystalDiskMark 5 and 6 save
    UTF-16LE), else UTF-8 (with or without BOM); bytes that are not UTF-8 are replaced, not fatal
    (a comment in a local code page must not lose the figures). A NUL byte in 8-bit text means a
    binary file, not a report."""
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        text = data.decode("utf-16", errors="replace")
    else:
        if b"\x00" in data:
            raise ImportFormatError(fmt, "binary data (a NUL byte), not a text report", expected="text")
        text = data.decode("utf-8-sig", errors="replace")
    return text.replace("\r\n", "\n").replace("\r", "\n")


def dec(fmt: str, text: str, line: int | None, what: str) -> Decimal:
    """An exact decimal number from the file, finite: plain decimals as the tools print them, a
    bounded exponent at most (int() of 1e999999999 would build a billion-digit integer)."""
    t = text.strip()
    if len(t) > 60 or not NUMBER.fullmatch(t):
        raise ImportFormatError(fmt, f"{t[:40]!r} is not a number", line=line, expected=what)
    try:
        value = Decimal(t)
    except (InvalidOperation, ValueError):
        raise ImportFormatError(fmt, f"{t[:40]!r} is not a number", line=line, expected=what) from None
    if not value.is_finite() or (value and abs(value.adjusted()) > 40):
        raise ImportFormatError(fmt, f"{t[:40]!r} is out of range", line=line, expected=what)
    return value


def num(fmt: str, text: str, line: int | None, what: str) -> float:
    return float(dec(fmt, text, line, what))


def integer(fmt: str, text: str, line: int | None, what: str) -> int:
    t = text.strip()
    if not re.fullmatch(r"[+-]?\d{1,30}", t):
        raise ImportFormatError(fmt, f"{t[:40]!r} is not a whole number", line=line, expected=what)
    return int(t)


def scaled(value: Decimal, factor: int | Decimal) -> float:
    """value x factor, exactly in decimal, then as a float (exact for integers below 2**53)."""
    out = float(value * factor)
    if not math.isfinite(out):
        raise OverflowError("scaled value out of range")
    return out


def size_bytes(fmt: str, number: str, unit: str, line: int | None, *, decimal_units: bool = False) -> int:
    """ "4" "KiB" -> 4096; "1.5" "GiB" -> 1610612736. KB/MB/GB are 1000-based only when the tool
    says so (decimal_units); otherwise the tools here mean 1024 by K, M, G."""
    u = unit.strip().upper().replace("BYTES", "B").replace("BYTE", "B")
    table = dict(BINARY)
    if decimal_units:
        table |= DECIMAL
    else:
        table |= {k: v for k, v in BINARY.items() if k.endswith("IB")} | {
            "KB": 1024,
            "MB": 1024**2,
            "GB": 1024**3,
            "TB": 1024**4,
        }
    if u not in table:
        raise ImportFormatError(
            fmt, f"unknown size unit {unit!r}", line=line, expected="B, KiB, MiB, GiB or TiB"
        )
    value = dec(fmt, number, line, "a size") * table[u]
    if value < 0 or value > 2**63:
        raise ImportFormatError(
            fmt, f"size {number}{unit} out of range", line=line, expected="a size below 8 EiB"
        )
    return int(value)


def guarded(fmt: str, parse: Callable[[], T]) -> T:
    """Run a parser; an arithmetic or indexing slip on hostile input becomes the format's error (the
    API answers 422), never a 500."""
    try:
        return parse()
    except ImportFormatError:
        raise
    except (
        ValueError,
        IndexError,
        KeyError,
        OverflowError,
        ZeroDivisionError,
        ArithmeticError,
        RecursionError,
    ) as e:
        raise ImportFormatError(fmt, f"unreadable input ({type(e).__name__}: {str(e)[:120]})") from None


def nonempty(fmt: str, parsed: ParsedFile, expected: str) -> ParsedFile:
    """A file with no runs or no jobs is not a report of this tool."""
    if not parsed.runs or not any(r.jobs for r in parsed.runs):
        raise ImportFormatError(fmt, "no results found", expected=expected)
    return parsed
