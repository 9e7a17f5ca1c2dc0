"""Helpers shared by the engine's file-mode tests (test_postmark, test_fileset, test_parse_only, via
the fixtures in conftest.py) and their benches (bench/postmark, bench/fileset import this module):
what a directory holds, scratch file systems (a small tmpfs, ext4 on a loop device) and the
alternating-pairs timing of two tools."""

from __future__ import annotations

import contextlib
import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
ENGINE_DIR = REPO / "agent" / "engine"
ENGINE = ENGINE_DIR / "build" / "iowatt-engine"


# ---- what a directory holds ----


def listing(d: Path) -> dict[str, tuple[int, int]]:
    """Every entry below d, files with (size, mtime_ns): the directory 'as found' (a directory's
    own mtime changes with the entries made and removed in it)."""
    out = {}
    for p in sorted(d.rglob("*")):
        st = p.lstat()
        out[str(p.relative_to(d))] = (st.st_size, st.st_mtime_ns) if p.is_file() else (0, 0)
    return out


def on_disk(d: Path) -> tuple[int, int, int]:
    """(files, directories, bytes of the files) below d."""
    files = dirs = size = 0
    for p in d.rglob("*"):
        if p.is_dir():
            dirs += 1
        else:
            files += 1
            size += p.stat().st_size
    return files, dirs, size


# ---- scratch file systems ----


class Unavailable(Exception):
    """This host cannot make the file system (not root, no losetup, mount refused): skip."""


@contextlib.contextmanager
def small_tmpfs(where: Path, size: str = "1m") -> Iterator[Path]:
    """A tmpfs of `size` mounted at where/small (runs out of space after a few hundred KiB)."""
    if os.geteuid() != 0:
        raise Unavailable("mounting a tmpfs needs root")
    mnt = where / "small"
    mnt.mkdir()
    p = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(mnt)], capture_output=True, text=True
    )
    if p.returncode != 0:
        raise Unavailable(f"cannot mount a tmpfs here: {p.stderr.strip()}")
    try:
        yield mnt
    finally:
        subprocess.run(["umount", str(mnt)], capture_output=True, timeout=30)


@contextlib.contextmanager
def ext4_loop(where: Path, size_mib: int) -> Iterator[Path]:
    """ext4 on a loop device of size_mib backed by /dev/shm, mounted at where/mnt."""
    if os.geteuid() != 0 or not shutil.which("losetup") or not shutil.which("mkfs.ext4"):
        raise Unavailable("loop devices need root, losetup and mkfs.ext4")
    fd, name = tempfile.mkstemp(prefix="iowatt-loop-", suffix=".img", dir="/dev/shm")
    os.close(fd)
    backing = Path(name)
    with open(backing, "wb") as f:
        f.truncate(size_mib << 20)
    p = subprocess.run(["losetup", "-f", "--show", str(backing)], capture_output=True, text=True, timeout=30)
    if p.returncode != 0:
        backing.unlink()
        raise Unavailable(f"losetup unavailable: {p.stderr.strip()}")
    dev = p.stdout.strip()
    mnt = where / "mnt"
    mnt.mkdir()
    mounted = False
    try:
        subprocess.run(["mkfs.ext4", "-q", "-F", dev], check=True, capture_output=True, timeout=60)
        p = subprocess.run(["mount", dev, str(mnt)], capture_output=True, text=True, timeout=30)
        if p.returncode != 0:
            raise Unavailable(f"cannot mount here: {p.stderr.strip()}")
        mounted = True
        yield mnt
    finally:
        if mounted:
            subprocess.run(["umount", str(mnt)], capture_output=True, timeout=30)
        subprocess.run(["losetup", "-d", dev], capture_output=True, timeout=30)
        backing.unlink(missing_ok=True)


# ---- a run stopped by a signal ----


def signal_after_progress(
    argv: list[str], phase: str, sig: int = signal.SIGINT, wait_s: float = 60
) -> tuple[int, str, str]:
    """Start argv (an engine run with --progress=jsonl), wait up to wait_s (the machine may be
    loaded) for a progress line of `phase`, then send sig and wait for the exit. Returns (exit
    code, stdout, the last stderr line read before the signal)."""
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stderr is not None
    deadline = time.monotonic() + wait_s
    seen = ""
    while time.monotonic() < deadline:
        line = proc.stderr.readline()
        if not line:
            break
        seen = line
        if f'"phase":"{phase}"' in line:
            break
    proc.send_signal(sig)
    out, _ = proc.communicate(timeout=120)
    return proc.returncode, out, seen


# ---- benches: two tools side by side ----


@dataclass
class Timed:
    wall_s: float
    cpu_s: float  # user + system of the child (RUSAGE_CHILDREN deltas)
    stdout: str
    stderr: str
    rc: int


def timed(cmd: list[str], cwd: str | None = None, timeout: float = 3600) -> Timed:
    """Run cmd to its exit: wall time of the whole process and its CPU time."""
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True, cwd=cwd, timeout=timeout)
    wall = time.perf_counter() - t0
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
    return Timed(wall, cpu, p.stdout, p.stderr, p.returncode)


def alternating_pairs(
    pairs: int,
    tools: tuple[str, str],
    run: Callable[[str], dict[str, Any]],
    check: Callable[[dict[str, dict[str, Any]]], None],
    label: str,
    show: Callable[[dict[str, Any]], str],
) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """One warm-up pair (discarded), then `pairs` pairs in alternating order (A B, B A, ...);
    `check` sees each pair (both did the same work) and `show` prints a tool's result on stderr.
    Returns (first tool's result, second tool's result) per measured pair."""
    out: list[tuple[dict[str, Any], dict[str, Any]]] = []
    for i in range(pairs + 1):
        seq = list(tools) if i % 2 == 0 else list(tools[::-1])
        res = {t: run(t) for t in seq}
        check(res)
        if i:
            out.append((res[tools[0]], res[tools[1]]))
        shown = ", ".join(f"{t} {show(res[t])}" for t in tools)
        print(f"{label} pair {i}{' (warm-up)' if not i else ''}: {shown}", file=sys.stderr)
    return out


def ensure_engine(engine: Path) -> None:
    if not engine.exists():
        subprocess.run(["make", "-s", "-C", str(ENGINE_DIR)], check=True)


def uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
