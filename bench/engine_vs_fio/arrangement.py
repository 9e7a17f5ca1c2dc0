#!/usr/bin/env python3
"""Where each CPU's time went during each run of two commands, beside the run's IOPS: the tool's
busiest thread (T, the job thread), unbound kworkers (L: the loop device's worker), per-CPU
kworkers (D: ext4's direct-I/O completions, every write's), ksoftirqd (S: block completions),
idle, and anything else; plus the idle entries per I/O (on a VM an idle vCPU halts, and waking it
takes the host). Runs in A B B A order under `perf sched record -a`; one line per run, so that a
tool whose IOPS swing from run to run can be read against where its work ran. Written for the
loop-ext4 randrw QD16 row (session 24). Needs a machine where nothing else runs. As root:

    J="--name=k --filename={file} --size=1g --runtime=2 --time_based --rw=randrw --rwmixread=70 \\
       --bs=4k --ioengine=io_uring --iodepth=16 --direct=1"
    python3 bench/engine_vs_fio/arrangement.py --pairs 4 --a "agent/engine/build/iowatt-engine $J" \\
        --b "fio $J --refill_buffers=1"

`{file}` in the commands: a file on ext4 on a loop device over /dev/shm (as run.py's loop-ext4),
made here, laid out by one 1 s run of A, and removed at the end.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import json
import re
import shlex
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

SWITCH = re.compile(
    r"\s*\[(\d+)\]\s+([\d.]+):\s+sched:sched_switch:\s+prev_comm=(.*?) prev_pid=(\d+) .*?"
    r"next_comm=(.*?) next_pid=(\d+)"
)
KINDS = ("T", "L", "D", "S", "idle", "other")


def shares(data: str, tool: str) -> dict[int, dict[str, float]]:
    """Per CPU, the share of the traced time each kind of task ran."""
    argv = ["perf", "script", "-i", data, "-F", "cpu,time,event,trace"]
    out = subprocess.run(argv, capture_output=True, text=True)
    spans: list[tuple[int, str, str, float]] = []
    last: dict[int, float] = {}
    run_by_tid: dict[str, float] = collections.defaultdict(float)
    for line in out.stdout.splitlines():
        m = SWITCH.match(line)
        if not m:
            continue
        cpu, t, comm, tid = int(m.group(1)), float(m.group(2)), m.group(3), m.group(4)
        if cpu in last:
            spans.append((cpu, comm, tid, t - last[cpu]))
            if comm.startswith(tool):
                run_by_tid[tid] += t - last[cpu]
        last[cpu] = t
    job = max(run_by_tid, key=lambda k: run_by_tid[k]) if run_by_tid else ""

    def kind(comm: str, tid: str) -> str:
        if tid == "0":
            return "idle"
        if tid == job:
            return "T"
        if comm.startswith("kworker/u"):
            return "L"
        if comm.startswith("kworker/"):
            return "D"
        return "S" if comm.startswith("ksoftirqd") else "other"

    acc: dict[int, dict[str, float]] = collections.defaultdict(lambda: collections.defaultdict(float))
    for cpu, comm, tid, dt in spans:
        acc[cpu][kind(comm, tid)] += dt
    return {c: {k: v / max(sum(a.values()), 1e-9) for k, v in a.items()} for c, a in sorted(acc.items())}


def run(cmd: str) -> str:
    argv = shlex.split(cmd)
    tool = argv[0].rsplit("/", 1)[-1][:15]
    with (
        tempfile.NamedTemporaryFile(suffix=".data") as data,
        tempfile.NamedTemporaryFile("r", suffix=".stat") as st,
    ):
        p = subprocess.run(
            ["perf", "stat", "-a", "-x", ",", "-o", st.name, "-e", "power:cpu_idle,ipi:ipi_send_cpu", "--",
             "perf", "sched", "record", "-q", "-o", data.name, "--", *argv, "--output-format=json"],
            capture_output=True, text=True,
        )  # fmt: skip
        if p.returncode:
            raise SystemExit(f"failed: {cmd}\n{p.stderr}")
        j = json.loads(p.stdout[p.stdout.index("{") :])["jobs"][0]
        ios = j["read"]["total_ios"] + j["write"]["total_ios"]
        rows = [x.split(",") for x in st.read().splitlines()]
        ev = {f[2]: float(f[0]) / ios for f in rows if len(f) > 3 and f[0].isdigit()}
        per_cpu = shares(data.name, tool)
    cols = "  ".join(
        f"CPU{c}: " + " ".join(f"{k} {100 * s.get(k, 0):3.0f}" for k in KINDS) for c, s in per_cpu.items()
    )
    iops = j["read"]["iops"] + j["write"]["iops"]
    idle, ipi = ev.get("power:cpu_idle", 0) / 2, ev.get("ipi:ipi_send_cpu", 0)  # enter + exit events
    return f"{tool:15s} {iops:9,.0f} IOPS  idle/IO {idle:.3f} ipi/IO {ipi:.3f}  {cols}"


@contextlib.contextmanager
def loop_ext4() -> Iterator[str]:
    """A 1200 MiB ext4 image in /dev/shm on a loop device, mounted; yields the test file's path."""
    d = Path(tempfile.mkdtemp(prefix="arrangement-", dir="/dev/shm"))
    img, mnt = d / "img", d / "mnt"
    mnt.mkdir()
    subprocess.run(["truncate", "-s", "1200M", str(img)], check=True)
    subprocess.run(["mkfs.ext4", "-q", "-F", str(img)], check=True)
    loop = subprocess.run(["losetup", "-f", "--show", str(img)], check=True, capture_output=True, text=True)
    dev = loop.stdout.strip()
    try:
        subprocess.run(["mount", dev, str(mnt)], check=True)
        try:
            yield str(mnt / "f")
        finally:
            subprocess.run(["umount", str(mnt)], check=False)
    finally:
        subprocess.run(["losetup", "-d", dev], check=False)
        subprocess.run(["rm", "-rf", str(d)], check=False)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--a", required=True)
    ap.add_argument("--b", required=True)
    ap.add_argument("--pairs", type=int, default=4)
    a = ap.parse_args()
    with contextlib.ExitStack() as stack:
        if "{file}" in a.a + a.b:
            path = stack.enter_context(loop_ext4())
            a.a, a.b = a.a.replace("{file}", path), a.b.replace("{file}", path)
            subprocess.run([*shlex.split(a.a), "--runtime=1"], check=True, capture_output=True)
        print("tool, IOPS, idle entries and IPIs per I/O, then per CPU the % of time: " + " ".join(KINDS))
        for i in range(a.pairs):
            for cmd in (a.a, a.b) if i % 2 == 0 else (a.b, a.a):
                print(run(cmd), flush=True)
    with open("/proc/loadavg") as f:
        print("load", " ".join(f.read().split()[:3]))


if __name__ == "__main__":
    main()
