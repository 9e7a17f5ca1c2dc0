#!/usr/bin/env python3
"""Kernel work per I/O of each tool on the same job: tracepoint and software-event counts
(`perf stat -a`, system-wide: run it where little else does I/O) divided by the job's I/Os, runs
in A B B A order, medians. Counts, unlike IOPS, hardly depend on how busy the machine is: loop
work items queued and run per I/O (how often the loop device's worker found its queue empty and
had to be woken), wake-ups, io_uring punts to io-wq workers, ext4 journal starts (timestamp
updates), requests issued, context switches, migrations, idle entries (power:cpu_idle counts
entering and leaving idle) and wake-up interrupts between CPUs. As root:

    J="--name=k --filename=F --size=1g --runtime=1 --time_based --rw=randrw --rwmixread=70 --bs=4k \\
       --ioengine=io_uring --iodepth=16 --direct=1"
    python3 bench/engine_vs_fio/kernel_events.py --pairs 6 --a "agent/engine/build/iowatt-engine $J" \\
        --b "fio $J --refill_buffers=1"
"""

from __future__ import annotations

import argparse
import json
import shlex
import statistics
import subprocess
import tempfile

EVENTS = [
    "workqueue:workqueue_queue_work",
    "workqueue:workqueue_execute_start",
    "sched:sched_wakeup",
    "io_uring:io_uring_queue_async_work",
    "ext4:ext4_journal_start_inode",
    "block:block_rq_issue",
    "context-switches",
    "cpu-migrations",
    # how often a CPU went idle (on this VM: a halt, left only by an interrupt from the host) and
    # how often a wake-up needed an interrupt to another CPU (session 24, the randrw QD16 gap)
    "power:cpu_idle",
    "ipi:ipi_send_cpu",
    "sched:sched_wake_idle_without_ipi",
    "io_uring:io_uring_cqring_wait",
]


def run(cmd: str) -> dict[str, float]:
    with tempfile.NamedTemporaryFile("r", suffix=".perf") as stat:
        argv = ["perf", "stat", "-a", "-x", ",", "-o", stat.name, "-e", ",".join(EVENTS)]
        p = subprocess.run([*argv, *shlex.split(cmd), "--output-format=json"], capture_output=True, text=True)
        if p.returncode:
            raise SystemExit(f"failed: {cmd}\n{p.stderr}")
        j = json.loads(p.stdout[p.stdout.index("{") :])["jobs"][0]
        ios = j["read"]["total_ios"] + j["write"]["total_ios"]
        out = {}
        for line in stat.read().splitlines():
            f = line.split(",")
            if len(f) > 3 and f[2] in EVENTS and f[0].replace(".", "").isdigit():
                out[f[2]] = float(f[0]) / ios
        return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--a", required=True)
    ap.add_argument("--b", required=True)
    ap.add_argument("--pairs", type=int, default=6)
    a = ap.parse_args()
    res: dict[str, list[dict[str, float]]] = {"a": [], "b": []}
    for i in range(a.pairs):
        for k in ("a", "b") if i % 2 == 0 else ("b", "a"):
            res[k].append(run(a.a if k == "a" else a.b))
    with open("/proc/loadavg") as f:
        print("load", " ".join(f.read().split()[:3]))
    print("| event per I/O | A | B |\n|---|---:|---:|")
    for e in EVENTS:
        med = [statistics.median(r.get(e, float("nan")) for r in res[k]) for k in ("a", "b")]
        print(f"| {e} | {med[0]:.3f} | {med[1]:.3f} |")


if __name__ == "__main__":
    main()
