#!/usr/bin/env python3
"""iowatt-engine vs fio, side by side on the same file and the same job.

For each job: one warm-up pair (discarded), then ABBA cycles (A = fio, B = iowatt-engine);
each adjacent (A, B) is one pair, and the table shows the median over pairs of the per-pair
ratio iowatt/fio for IOPS, CPU per I/O and clat p50/p99, next to the medians of the raw values.

    .venv/bin/python bench/engine_vs_fio/run.py [--runtime 3] [--cycles 1] [--file PATH] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
ENGINE = REPO / "agent" / "engine" / "build" / "iowatt-engine"

JOBS: list[tuple[str, list[str]]] = [
    ("randread 4k page cache psync", ["--rw=randread", "--bs=4k", "--ioengine=psync", "--invalidate=0"]),
    ("randread 4k direct QD1 psync", ["--rw=randread", "--bs=4k", "--ioengine=psync", "--direct=1"]),
    ("randread 4k direct QD32 io_uring", ["--rw=randread", "--bs=4k", "--ioengine=io_uring", "--iodepth=32", "--direct=1"]),
    ("randread 4k direct QD32 libaio", ["--rw=randread", "--bs=4k", "--ioengine=libaio", "--iodepth=32", "--direct=1"]),
    ("randwrite 4k direct QD32 io_uring", ["--rw=randwrite", "--bs=4k", "--ioengine=io_uring", "--iodepth=32", "--direct=1"]),
    ("read 1m direct QD8 io_uring", ["--rw=read", "--bs=1m", "--ioengine=io_uring", "--iodepth=8", "--direct=1"]),
    ("randrw 70/30 4k direct QD16 io_uring", ["--rw=randrw", "--rwmixread=70", "--bs=4k", "--ioengine=io_uring", "--iodepth=16", "--direct=1"]),
]


def run_one(tool: str, common: list[str], job: list[str]) -> dict[str, float]:
    binary = shutil.which("fio") if tool == "fio" else str(ENGINE)
    cmd = [binary, "--name=bench", *common, *job, "--output-format=json+"]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    if p.returncode != 0:
        raise SystemExit(f"{tool} failed ({p.returncode}): {' '.join(cmd)}\n{p.stderr}")
    j = json.loads(p.stdout[p.stdout.index("{") :])["jobs"][0]
    ios = j["read"]["total_ios"] + j["write"]["total_ios"]
    secs = max(j["read"]["runtime"], j["write"]["runtime"]) / 1000.0
    d = j["read"] if j["read"]["total_ios"] >= j["write"]["total_ios"] else j["write"]
    pct = d["clat_ns"].get("percentile", {})
    return {
        "iops": j["read"]["iops"] + j["write"]["iops"],
        "bw_bytes": j["read"]["bw_bytes"] + j["write"]["bw_bytes"],
        "cpu_ns_per_io": (j["usr_cpu"] + j["sys_cpu"]) / 100.0 * secs / ios * 1e9 if ios else float("nan"),
        "p50_ns": pct.get("50.000000", 0),
        "p99_ns": pct.get("99.000000", 0),
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--file", default="/var/tmp/iowatt-bench.dat", help="test file (created, 256 MiB)")
    ap.add_argument("--size", default="256m")
    ap.add_argument("--runtime", type=float, default=3.0, help="seconds per run")
    ap.add_argument("--cycles", type=int, default=1, help="ABBA cycles per job (2 pairs each)")
    ap.add_argument("--only", help="substring filter on job names")
    ap.add_argument("--json", help="write raw results here")
    a = ap.parse_args()
    if not shutil.which("fio"):
        print("fio not installed (apt-get install fio)", file=sys.stderr)
        return 77
    subprocess.run(["make", "-s", "-C", str(REPO / "agent" / "engine")], check=True)
    common = [f"--filename={a.file}", f"--size={a.size}", f"--runtime={a.runtime}", "--time_based"]
    # lay the file out once with the engine (incompressible data), then read it into the page cache
    subprocess.run([str(ENGINE), f"--filename={a.file}", f"--size={a.size}", "--rw=read", "--bs=1m"],
                   check=True, capture_output=True)
    raw: dict[str, dict[str, list[dict[str, float]]]] = {}
    rows = []
    for name, job in JOBS:
        if a.only and a.only not in name:
            continue
        if "page cache" in name:
            with open(a.file, "rb") as f:
                while f.read(1 << 22):
                    pass
        run_one("fio", common, job), run_one("iowatt", common, job)  # warm-up pair
        res: dict[str, list[dict[str, float]]] = {"fio": [], "iowatt": []}
        for _ in range(a.cycles):
            for tool in ("fio", "iowatt", "iowatt", "fio"):
                res[tool].append(run_one(tool, common, job))
                print(f"  {name:38s} {tool:6s} {res[tool][-1]['iops']:12.0f} IOPS", file=sys.stderr, flush=True)
        raw[name] = res
        pairs = list(zip(res["fio"], res["iowatt"], strict=True))

        def ratio(key: str, pairs=pairs) -> float:
            vals = [b[key] / f[key] for f, b in pairs if f[key]]
            return statistics.median(vals) if vals else float("nan")

        def med(tool: str, key: str, res=res) -> float:
            return statistics.median(r[key] for r in res[tool])

        rows.append((name, med("fio", "iops"), med("iowatt", "iops"), ratio("iops"),
                     med("fio", "cpu_ns_per_io"), med("iowatt", "cpu_ns_per_io"), ratio("cpu_ns_per_io"),
                     ratio("p50_ns"), ratio("p99_ns")))
    fio_ver = subprocess.run(["fio", "--version"], capture_output=True, text=True).stdout.strip()
    print(f"\nfio: {fio_ver}; iowatt-engine: {ENGINE}; file {a.file} ({a.size}); {a.runtime:g} s per run; "
          f"{a.cycles} ABBA cycle(s) after a warm-up pair; ratios = median of per-pair iowatt/fio; "
          f"host: {os.cpu_count()} CPUs, shared\n")
    print("| job | fio IOPS | iowatt IOPS | IOPS ratio | fio CPU ns/IO | iowatt CPU ns/IO | CPU/IO ratio | p50 ratio | p99 ratio |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        print(f"| {r[0]} | {r[1]:,.0f} | {r[2]:,.0f} | {r[3]:.2f} | {r[4]:,.0f} | {r[5]:,.0f} | {r[6]:.2f} | {r[7]:.2f} | {r[8]:.2f} |")
    if a.json:
        Path(a.json).write_text(json.dumps(raw, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
