"""What fio's three output formats (JSON, terse, normal) share: its options read into the contract's
settings (base units under fio's names), its size and time syntax, and its version string.

No IMPORTERS here: the registry skips this module."""

from __future__ import annotations

import re
from typing import Any

from iowatt_workload import parse_size as parse_fio_size

# the contract's settings: fio's option names, base units (bytes, seconds, bool, %)
SIZE_KEYS = ("bs", "size")
INT_KEYS = ("iodepth", "numjobs", "rwmixread")
TIME_KEYS = {"runtime": "runtime_s", "ramp_time": "ramp_time_s"}
RW_ALIASES = {"readwrite": "rw", "randreadwrite": "randrw"}
MAX_OPTIONS = 200  # options kept per job (a job file may set hundreds; the document keeps them all)
MAX_TEXT = 200  # characters of one option's value kept


def fio_version(text: str | None) -> str | None:
    """ "fio-3.33" -> "3.33"; "fio-2.2.10-23-gabc" -> "2.2.10-23-gabc"; None stays None."""
    if not text:
        return None
    s = str(text).strip()
    return s[4:] if s.startswith("fio-") else s


def major(version: str | None) -> int | None:
    m = re.match(r"(\d+)", version or "")
    return int(m.group(1)) if m else None


def seconds(value: Any) -> float | None:
    """fio's time value: a bare number is seconds (runtime, ramp_time), or with a unit (us ... d)."""
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*(us|usec|ms|msec|s|sec|m|min|h|d)?\s*", str(value))
    if not m:
        return None
    unit: dict[str | None, float] = {"us": 1e-6, "usec": 1e-6, "ms": 1e-3, "msec": 1e-3, "s": 1.0, "sec": 1.0}
    unit.update({"m": 60.0, "min": 60.0, "h": 3600.0, "d": 86400.0, None: 1.0})
    return float(m.group(1)) * unit[m.group(2)]


def size(value: Any, kb_base: int = 1024) -> int | None:
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    try:
        return parse_fio_size(str(value).strip(), kb_base)
    except (ValueError, TypeError, OverflowError):
        return None


def settings(options: dict[str, Any]) -> dict[str, Any]:
    """A job's options (the global ones, then its own, as fio states them: strings) as the
    contract's settings: the known ones in base units, every other kept as fio's text."""
    out: dict[str, Any] = {}
    kb = 1000 if str(options.get("kb_base", "1024")).strip() == "1000" else 1024
    for key, raw in list(options.items())[:MAX_OPTIONS]:
        if not isinstance(key, str) or len(key) > 64:
            continue
        text = raw if isinstance(raw, str) else ("" if raw is None else str(raw))
        if key in SIZE_KEYS:
            n = size(text, kb)
            out[key] = n if n is not None else text[:MAX_TEXT]
        elif key in INT_KEYS:
            out[key] = int(text) if text.strip().isdigit() else text[:MAX_TEXT]
        elif key in TIME_KEYS:
            s = seconds(text)
            if s is not None:
                out[TIME_KEYS[key]] = s
            else:
                out[key] = text[:MAX_TEXT]
        elif key in ("rw", "readwrite"):
            out["rw"] = RW_ALIASES.get(text.split(":")[0], text.split(":")[0])[:MAX_TEXT]
        elif key == "direct":
            out["direct"] = text.strip().lower() in ("1", "true", "")
        else:
            out[key] = text[:MAX_TEXT]
    return out


def percent_key(text: str) -> float | None:
    """fio's percentile key ("99.000000", "99.99") as the percent."""
    try:
        p = float(text)
    except (TypeError, ValueError):
        return None
    return p if 0.0 <= p <= 100.0 else None
