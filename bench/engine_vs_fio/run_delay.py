"""How long each tool's job thread waits for a CPU, per I/O: runs one command (a time-based job with
JSON output), samples every task of its process tree from /proc/PID/task/TID/schedstat (CPU time,
time runnable but waiting for a CPU, timeslices) every 20 ms, and prints for the busiest task (the
job thread, or fio's job process) over its own sampled life, from 0.2 s after it first appears to
its last sample: its CPU share, its run delay per second and per I/O, timeslices and CPU per I/O,
with the IOPS from the JSON. Run it for both tools in turn, A B B A:

    J="--name=k --filename=F --size=1g --runtime=2 --time_based --rw=randrw --rwmixread=70 --bs=4k
       --ioengine=io_uring --iodepth=16 --direct=1 --output-format=json"
    python3 bench/engine_vs_fio/run_delay.py eng agent/engine/build/iowatt-engine $J
    python3 bench/engine_vs_fio/run_delay.py fio fio $J

A thread that waited for a CPU finds its completions already queued: fewer waits, higher latency and
fewer IOPS at lower CPU; the run delay says how much of that a run had."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

Sample = tuple[float, int, int, int]  # seconds since start, CPU ns, run delay ns, timeslices


def tree(root: int) -> list[int]:
    """root and every process below it"""
    kids: dict[int, list[int]] = {}
    for p in os.listdir("/proc"):
        if p.isdigit():
            try:
                ppid = int(Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError):
                continue
            kids.setdefault(ppid, []).append(int(p))
    out, todo = [], [root]
    while todo:
        x = todo.pop()
        out.append(x)
        todo += kids.get(x, [])
    return out


def main() -> None:
    label, cmd = sys.argv[1], sys.argv[2:]
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    t0 = time.monotonic()
    hist: dict[tuple[int, int], list[Sample]] = {}
    while p.poll() is None:
        now = time.monotonic() - t0
        for pid in tree(p.pid):
            try:
                for tid in os.listdir(f"/proc/{pid}/task"):
                    cpu, delay, slices = map(
                        int, Path(f"/proc/{pid}/task/{tid}/schedstat").read_text().split()
                    )
                    hist.setdefault((pid, int(tid)), []).append((now, cpu, delay, slices))
            except (OSError, ValueError):
                pass
        time.sleep(0.02)
    out = p.stdout.read() if p.stdout else ""
    iops = sum(j["read"]["iops"] + j["write"]["iops"] for j in json.loads(out[out.index("{") :])["jobs"])
    best: tuple[float, int, int, int] | None = None  # window s, CPU ns, run delay ns, timeslices
    for h in hist.values():
        first = next((s for s in h if s[0] >= h[0][0] + 0.2), None)
        if first is None or h[-1][0] - first[0] < 0.5:
            continue
        dt = h[-1][0] - first[0]
        d = (dt, h[-1][1] - first[1], h[-1][2] - first[2], h[-1][3] - first[3])
        if best is None or d[1] / dt > best[1] / best[0]:
            best = d
    if best is None:
        sys.exit(f"{label}: no task lived 0.7 s (give a longer runtime)")
    dt, cpu, delay, slices = best
    print(
        f"{label}: IOPS {iops:,.0f}  job task CPU {cpu / dt / 1e9:.2f}  run delay {delay / dt / 1e6:.0f} ms/s"
        f" = {delay / dt / iops:,.0f} ns/IO  timeslices/IO {slices / dt / iops:.3f}"
        f"  CPU ns/IO {cpu / dt / iops:,.0f}"
    )


if __name__ == "__main__":
    main()
