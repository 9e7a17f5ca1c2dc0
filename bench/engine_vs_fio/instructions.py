#!/usr/bin/env python3
"""User-space instructions per I/O of fio and iowatt-engine, counted by valgrind's callgrind
(deterministic: no noise from a shared host, unlike time).

Each tool runs the same job twice under callgrind (runtime --short and --long seconds); the
marginal count (Ir_long - Ir_short) / (ios_long - ios_short) removes start-up and exit. For fio
only its job process is counted (the busiest of its processes): its main process's polling is
left out, which favours fio. Kernel work is not counted by callgrind.

    .venv/bin/python bench/engine_vs_fio/instructions.py --filename /dev/shm/x.dat -- \\
        --rw=randread --bs=4k --ioengine=psync --invalidate=0
"""

from __future__ import annotations

import argparse
import glob
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
ENGINE = REPO / "agent" / "engine" / "build" / "iowatt-engine"


def measure(binary: str, args: list[str], runtime: float) -> tuple[int, int]:
    with tempfile.TemporaryDirectory() as d:
        out = subprocess.run(
            [
                "valgrind",
                "--tool=callgrind",
                "--trace-children=yes",
                f"--callgrind-out-file={d}/cg.%p",
                binary,
                "--name=ir",
                *args,
                f"--runtime={runtime * 1000:g}ms",
                "--time_based",
                "--output-format=json",
            ],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        job = json.loads(out[out.index("{") :])["jobs"][0]
        ios = job["read"]["total_ios"] + job["write"]["total_ios"]
        irs = []
        for f in glob.glob(f"{d}/cg.*"):
            for line in Path(f).read_text().splitlines():
                if line.startswith("summary:"):
                    irs.append(int(line.split()[1]))
        return max(irs), ios


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--filename", required=True)
    ap.add_argument("--short", type=float, default=1.0)
    ap.add_argument("--long", type=float, default=3.0)
    ap.add_argument("job", nargs="*", help="job options after --")
    a = ap.parse_args()
    if not shutil.which("valgrind") or not shutil.which("fio"):
        print("needs valgrind and fio", file=sys.stderr)
        return 77
    res = {}
    for tool, binary in (("fio", shutil.which("fio")), ("iowatt", str(ENGINE))):
        assert binary
        extra = ["--destructive=1"] if tool == "iowatt" and Path(a.filename).is_block_device() else []
        args = [f"--filename={a.filename}", *a.job, *extra]
        ir0, n0 = measure(binary, args, a.short)
        ir1, n1 = measure(binary, args, a.long)
        res[tool] = (ir1 - ir0) / (n1 - n0)
        print(
            f"{tool:6s} {res[tool]:8.0f} user instructions per I/O "
            f"(Ir {ir0:,} / {n0:,} I/Os at {a.short:g} s, {ir1:,} / {n1:,} at {a.long:g} s)"
        )
    print(f"ratio iowatt/fio: {res['iowatt'] / res['fio']:.2f}  ({' '.join(a.job)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
