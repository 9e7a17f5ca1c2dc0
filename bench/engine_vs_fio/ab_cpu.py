#!/usr/bin/env python3
"""IOPS and CPU per I/O of several commands on one job, side by side: each round runs every
command once (rounds alternate forward and backward order, after a warm-up round), on a loop-ext4
target made as run.py's (a 1 GiB file on ext4 on a loop device over /dev/shm), 2 s time-based runs.
Per run: IOPS, the whole process tree's CPU per I/O (perf stat task-clock: user + system of every
thread, fio's main process included) and, for iowatt-engine's io_uring jobs, the bounded wait's
polls per I/O, hits per I/O and poll CPU per I/O (`iowatt.io_uring`, ADR 0052). The table: each
command's medians and its ratios to the last command (median and range over the rounds).

--place split|pack pins every command to the last CPU at nice -20 and confines the machine's
unbound workqueues (the loop device's worker among them) to CPU 0 (split) or to that CPU (pack),
restored at the end; --renice also sets every kworker and ksoftirqd at nice 0 to -20 while the
comparison runs (new ones every 20 ms) and puts them back after: the pipeline gets the CPUs even
on a busy machine. As root.

    python3 bench/engine_vs_fio/ab_cpu.py --rounds 8 \\
        new=agent/engine/build/iowatt-engine old=/tmp/old/agent/engine/build/iowatt-engine \\
        "fio=fio --refill_buffers=1"
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

RANDRW = "--rw=randrw --rwmixread=70 --bs=4k --ioengine=io_uring --iodepth=16 --direct=1"
WQ = Path("/sys/devices/virtual/workqueue/cpumask")


@contextlib.contextmanager
def loop_ext4() -> Iterator[Path]:
    d = Path(tempfile.mkdtemp(prefix="ab-cpu-", dir="/dev/shm"))
    img, mnt = d / "img", d / "mnt"
    subprocess.run(["truncate", "-s", "1200M", str(img)], check=True)
    subprocess.run(["mkfs.ext4", "-q", str(img)], check=True)
    loop = subprocess.run(["losetup", "-f", "--show", str(img)], capture_output=True, text=True, check=True)
    dev = loop.stdout.strip()
    mnt.mkdir()
    try:
        subprocess.run(["mount", dev, str(mnt)], check=True)
        f = mnt / "f"
        lay = ["fio", "--name=lay", f"--filename={f}", "--size=1g", "--rw=write", "--bs=1m"]
        subprocess.run([*lay, "--output-format=terse"], capture_output=True, check=True)
        yield f
    finally:  # the last run's file may stay busy for a while (seen: over 10 s at load 12): at last lazily
        for _ in range(20):
            if subprocess.run(["umount", str(mnt)], capture_output=True).returncode == 0:
                break
            time.sleep(0.5)
        else:
            subprocess.run(["umount", "-l", str(mnt)])
        subprocess.run(["losetup", "-d", dev], capture_output=True)  # autoclear: gone once unmounted
        if subprocess.run(["rm", "-rf", str(d)]).returncode:
            print(f"warning: could not remove {d}; clean up by hand", file=sys.stderr)


@contextlib.contextmanager
def placed(place: str) -> Iterator[list[str]]:
    if place == "none":
        yield []
        return
    last = (os.cpu_count() or 1) - 1
    old = WQ.read_text()
    WQ.write_text(f"{1 if place == 'split' else 1 << last:x}\n")
    try:
        yield ["taskset", "-c", str(last), "nice", "-n", "-20"]
    finally:
        WQ.write_text(old)


@contextlib.contextmanager
def reniced(on: bool) -> Iterator[None]:
    done: set[int] = set()
    stop = threading.Event()

    def loop() -> None:
        while not stop.is_set():
            ps = subprocess.run(["ps", "-eo", "pid=,ni=,comm="], capture_output=True, text=True).stdout
            for line in ps.splitlines():
                pid, ni, comm = line.split(None, 2)
                if ni != "0" or not comm.startswith(("kworker", "ksoftirqd")) or int(pid) in done:
                    continue
                if subprocess.run(["renice", "-n", "-20", "-p", pid], capture_output=True).returncode == 0:
                    done.add(int(pid))
            stop.wait(0.02)

    t = threading.Thread(target=loop, daemon=True)
    if on:
        t.start()
    try:
        yield
    finally:
        stop.set()
        if on:
            t.join()
        for pid in done:
            subprocess.run(["renice", "-n", "0", "-p", str(pid)], capture_output=True)


def run(cmd: list[str], f: Path, job: list[str], rt: float) -> tuple[float, float, list[float] | None]:
    with tempfile.NamedTemporaryFile("r", suffix=".perf") as ps:
        argv = ["perf", "stat", "-x,", "-e", "task-clock", "-o", ps.name, *cmd]
        argv += [
            "--name=ab",
            f"--filename={f}",
            "--size=1g",
            f"--runtime={rt}",
            "--time_based",
            *job,
            "--output-format=json",
        ]
        out = subprocess.run(argv, capture_output=True, text=True, check=True).stdout
        ms = float(ps.read().strip().splitlines()[-1].split(",")[0])
    j = json.loads(out[out.index("{") :])["jobs"][0]
    n = j["read"]["total_ios"] + j["write"]["total_ios"]
    u = j.get("iowatt", {}).get("io_uring", {})
    polls = None
    if "wait_polls" in u:
        polls = [u["wait_polls"] / n, u["wait_poll_hits"] / n, u["wait_poll_cpu_ns"] / n]
    return j["read"]["iops"] + j["write"]["iops"], ms * 1e6 / n, polls


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("commands", nargs="+", help="NAME=COMMAND; the last is the reference")
    ap.add_argument("--job", default=RANDRW, help="the job's options (default randrw 70/30 4k QD16 io_uring)")
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--runtime", type=float, default=2)
    ap.add_argument("--place", choices=["none", "split", "pack"], default="none")
    ap.add_argument("--renice", action="store_true")
    a = ap.parse_args()
    named = [c.split("=", 1) for c in a.commands]
    job = shlex.split(a.job)
    res: dict[str, list[tuple[float, float, list[float] | None]]] = {n: [] for n, _ in named}
    with loop_ext4() as f, placed(a.place) as prefix, reniced(a.renice):
        for r in range(a.rounds + 1):
            for name, cmd in named if r % 2 else named[::-1]:
                x = run([*prefix, *shlex.split(cmd)], f, job, a.runtime)
                if not r:
                    continue
                res[name].append(x)
                p = f" polls/IO {x[2][0]:.3f} hits/IO {x[2][1]:.3f} poll ns/IO {x[2][2]:.0f}" if x[2] else ""
                print(f"round {r} {name:12s} IOPS {x[0]:10,.0f} CPU ns/IO {x[1]:7,.0f}{p}", flush=True)
    ref = named[-1][0]
    print(f"\n| command | IOPS | IOPS ÷ {ref} (min–max) | CPU ns/IO | CPU/IO ÷ {ref} (min–max) | polls/IO |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, _ in named:
        ri = [x[0] / y[0] for x, y in zip(res[name], res[ref], strict=True)]
        rc = [x[1] / y[1] for x, y in zip(res[name], res[ref], strict=True)]
        polls = [x[2][0] for x in res[name] if x[2]]
        print(
            f"| {name} | {statistics.median(x[0] for x in res[name]):,.0f} | **{statistics.median(ri):.2f}** "
            f"({min(ri):.2f}–{max(ri):.2f}) | {statistics.median(x[1] for x in res[name]):,.0f} | "
            f"**{statistics.median(rc):.2f}** ({min(rc):.2f}–{max(rc):.2f}) | "
            + (f"{statistics.median(polls):.3f} |" if polls else "— |")
        )


if __name__ == "__main__":
    main()
