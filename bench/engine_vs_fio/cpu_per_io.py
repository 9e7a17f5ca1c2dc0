#!/usr/bin/env python3
"""Per-I/O CPU and context switches of iowatt-engine and fio on the same size-bound job: the
measure that stays meaningful on a busy machine (IOPS do not: they follow the CPU the scheduler
gives each tool). Each run does --ios I/Os (number_ios) on FILE under `nice -n 19 perf stat`;
runs alternate A B B A; the table shows medians of the job thread's CPU per I/O (usr_cpu +
sys_cpu as each tool reports them: fio's RUSAGE_THREAD definition), its context switches per
I/O, and the user / system time of the whole process tree per I/O (perf stat; fio's includes its
main process). Syscalls per I/O: run one job under `strace -c -f` by hand.

    python3 bench/engine_vs_fio/cpu_per_io.py --file /mnt/x/bench.dat --job randrw --ios 40000
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import subprocess
from pathlib import Path

ENGINE = Path(__file__).resolve().parents[2] / "agent" / "engine" / "build" / "iowatt-engine"
JOBS = {
    "qd1": ["--rw=randread", "--bs=4k", "--ioengine=psync", "--direct=1"],
    "randrw": ["--rw=randrw", "--rwmixread=70", "--bs=4k", "--ioengine=io_uring", "--iodepth=16"]
    + ["--direct=1"],
}


def run(binary: str, file: str, job: list[str], ios: int, extra: list[str]) -> tuple[float, ...]:
    stat = "/tmp/iowatt-cpu-per-io.perf"
    cmd = ["nice", "-n", "19", "perf", "stat", "-e", "task-clock,context-switches", "-o", stat, binary]
    cmd += ["--name=b", f"--filename={file}", "--size=256m", f"--number_ios={ios}", *job, *extra]
    out = subprocess.run([*cmd, "--output-format=json"], capture_output=True, text=True, check=True).stdout
    j = json.loads(out[out.index("{") :])["jobs"][0]
    n = j["read"]["total_ios"] + j["write"]["total_ios"]
    ps = Path(stat).read_text()
    user = re.search(r"([\d.]+) seconds user", ps)
    sys_ = re.search(r"([\d.]+) seconds sys", ps)
    assert user and sys_, ps
    thread = (j["usr_cpu"] + j["sys_cpu"]) / 100 * j["job_runtime"] * 1e6
    return thread / n, j["ctx"] / n, float(user.group(1)) * 1e9 / n, float(sys_.group(1)) * 1e9 / n


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--file", required=True, help="a laid-out file of 256 MiB or more (loop-mounted ext4)")
    ap.add_argument("--job", choices=sorted(JOBS), default="randrw")
    ap.add_argument("--ios", type=int, default=20000)
    ap.add_argument("--engine", default=str(ENGINE))
    a = ap.parse_args()
    job = JOBS[a.job]
    fio_extra = ["--refill_buffers=1"] if "randrw" in job[0] else []  # as run.py: fresh write buffers
    res: dict[str, list[tuple[float, ...]]] = {"fio": [], "iowatt": []}
    for order in (("fio", "iowatt"), ("iowatt", "fio"), ("fio", "iowatt"), ("iowatt", "fio")):
        for t in order:
            binary, extra = ("fio", fio_extra) if t == "fio" else (a.engine, [])
            res[t].append(run(binary, a.file, job, a.ios, extra))
    print("| job | tool | job-thread CPU ns/IO | ctx/IO | tree user ns/IO | tree sys ns/IO |")
    print("|---|---|---:|---:|---:|---:|")
    for t, rows in res.items():
        m = [statistics.median(r[i] for r in rows) for i in range(4)]
        print(f"| {a.job} | {t} | {m[0]:,.0f} | {m[1]:.2f} | {m[2]:,.0f} | {m[3]:,.0f} |")


if __name__ == "__main__":
    main()
