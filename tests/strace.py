"""A command's system calls as strace writes them, one file per thread (`strace -ff`).

With `-f` into one file, a call that another thread's (or process's) line interrupts is split
into "call(args <unfinished ...>" and "<... call resumed>) = result" lines: a parser that reads a
call and its result from one line then misses it or fails on it. On a loaded machine that
happened to fio's and the engine's layout writes (test_layout_syncs: 61440 bytes counted of
65536). With `-ff` each thread's calls are in a file of their own, each call whole on one line;
`straced` merges the files again in the order the calls began (strace's `-ttt` stamps), as `-f`
would have written them, so a parser reads the same lines without a pid in front. Not in the
order of the files' pids: the machine's pid_max is 32768 and the suite starts thousands of
processes, so pids wrap."""

from __future__ import annotations

import heapq
import shutil
import subprocess
from pathlib import Path
from typing import Any

STRACE = shutil.which("strace")


def straced(
    argv: list[str], out: Path, *options: str, **run: Any
) -> tuple[subprocess.CompletedProcess[str], list[str]]:
    """`argv` under `strace -ff -ttt -o OUT OPTIONS` (`run`: subprocess.run's keywords; stdout and
    stderr are captured as text), and the calls of all its threads and processes in the order
    they began, each line as strace writes it without the time stamp. The files OUT.PID are
    removed."""
    for old in out.parent.glob(out.name + ".*"):
        old.unlink()
    p = subprocess.run(
        [STRACE or "strace", "-ff", "-ttt", *options, "-o", str(out), *argv],
        capture_output=True,
        text=True,
        **run,
    )
    files = list(out.parent.glob(out.name + ".*"))
    threads = []
    for f in files:
        stamped = (line.partition(" ") for line in f.read_text().splitlines())
        threads.append([(float(t), line) for t, _, line in stamped])
        f.unlink()
    return p, [line for _, line in heapq.merge(*threads, key=lambda c: c[0])]
