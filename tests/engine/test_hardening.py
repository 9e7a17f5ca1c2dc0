"""The engine's default build is hardened (agent/engine/Makefile HARDEN): a position-independent
executable, full RELRO (a GNU_RELRO segment and every symbol bound at load, so the GOT is
read-only once the program runs), stack canaries and fortified libc calls. Read from the built
ELF with binutils' readelf, not from the Makefile's text."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest


def readelf(binary: Path, *flags: str) -> str:
    if not shutil.which("readelf"):
        pytest.skip("readelf (binutils) is not installed")
    p = subprocess.run(["readelf", "-W", *flags, str(binary)], capture_output=True, text=True, check=True)
    return p.stdout


def test_position_independent_executable(engine_bin: Path) -> None:
    header = readelf(engine_bin, "-h")
    assert re.search(r"Type:\s+DYN\b", header), header
    assert re.search(r"\bPIE\b", readelf(engine_bin, "-d")), "FLAGS_1 lacks PIE"


def test_full_relro(engine_bin: Path) -> None:
    segments = readelf(engine_bin, "-l")
    assert re.search(r"^\s*GNU_RELRO\s", segments, re.M), "no GNU_RELRO segment: -z relro missing"
    dynamic = readelf(engine_bin, "-d")
    bind_now = re.search(r"\(FLAGS\)\s+.*\bBIND_NOW\b", dynamic) or re.search(
        r"\(FLAGS_1\)\s+.*\bNOW\b", dynamic
    )
    assert bind_now, "neither FLAGS BIND_NOW nor FLAGS_1 NOW: -z now missing (partial RELRO only)\n" + dynamic


def test_stack_protector_and_fortify(engine_bin: Path) -> None:
    symbols = readelf(engine_bin, "--dyn-syms")
    names = set(re.findall(r"\s(__\w+_chk\w*)(?:@\S+)?(?:\s+\(\d+\))?\s*$", symbols, re.M))
    assert "__stack_chk_fail" in names, "no __stack_chk_fail: -fstack-protector-strong missing"
    fortified = names - {"__stack_chk_fail"}
    # the engine formats and copies with these: each is the checked variant _FORTIFY_SOURCE selects
    for expected in ("__snprintf_chk", "__memcpy_chk", "__vfprintf_chk"):
        assert expected in fortified, f"{expected} missing (fortified: {sorted(fortified)})"


def test_no_executable_stack(engine_bin: Path) -> None:
    m = re.search(r"^\s*GNU_STACK\s.*$", readelf(engine_bin, "-l"), re.M)
    assert m and not re.search(r"\bRWE\b", m.group(0)), m.group(0) if m else "no GNU_STACK segment"
