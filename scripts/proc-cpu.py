#!/usr/bin/env python3
"""CPU seconds per kind of program in a run (engine, Chromium, PostgreSQL, the API's processes,
pytest's workers, compilers ...), to see where a CPU-bound test suite spends its time.

    mkdir /sys/fs/cgroup/cpuacct/suite && echo $$ > /sys/fs/cgroup/cpuacct/suite/cgroup.procs
    python3 scripts/proc-cpu.py /sys/fs/cgroup/cpuacct/suite /tmp/cpu.txt &   # samples every 0.5 s
    make test; kill %1                                                         # writes on SIGTERM

Every 0.5 s it reads the processes of the cgroup and of the cgroups below it (v1 cpuacct:
children stay in it, orphans too; IOWATT_TEST_TIMELINE's test processes make their own below it)
and keeps each one's user + system time; at SIGTERM it writes the totals per kind, the share of
the cgroup's CPU it saw (programs shorter than a sample are missed), the 60 largest processes and
OUT.tsv with every process. docs/testing.md § Measuring.
"""

from __future__ import annotations

import collections
import contextlib
import os
import re
import signal
import sys
import time
from pathlib import Path

TICK = os.sysconf("SC_CLK_TCK")


def kind(cmd: list[str], comm: str) -> str:
    """A short name for what a process is, from its command line."""
    line = " ".join(cmd)
    base = os.path.basename(cmd[0]) if cmd else comm
    if base == "iowatt-engine" or comm == "iowatt-engine":
        return "engine"
    if base.startswith("postgres") or comm.startswith("postgres"):
        return "postgres"
    if "redis" in base:
        return "redis"
    if "chrom" in base or "chrom" in comm:
        return "chromium"
    if base in ("node", "npm", "npx") or comm == "node":
        m = re.search(r"(vitest|vite|tsc|biome|\w+\.mjs)", line)
        return "node " + (m.group(1) if m else line[:40])
    if "python" in base or base in ("pytest", "celery", "iowatt-agent", "iowatt-server", "uvicorn"):
        if "multiprocessing.spawn" in line:
            return "py spawned (the API's uvicorn processes)"
        if "exec(eval(sys.stdin.readline()))" in line:
            return "py pytest-xdist worker"
        m = re.search(r" -m ([\w.]+)", line)
        if m:
            return "py -m " + m.group(1)
        return "py " + " ".join(os.path.basename(c) for c in cmd[1:3])
    return comm or base


def main(cg: str, out: str) -> int:
    seen: dict[tuple[int, int], list] = {}
    stop = False

    def _term(*_: object) -> None:
        nonlocal stop
        stop = True

    signal.signal(signal.SIGTERM, _term)
    t0 = time.time()
    while not stop:
        try:
            pids = [int(p) for p in Path(cg, "cgroup.procs").read_text().split()]
        except OSError:
            pids = []
        # the test processes move into cgroups of their own below it (IOWATT_TEST_TIMELINE)
        for sub in Path(cg).glob("*/**/cgroup.procs"):
            with contextlib.suppress(OSError):
                pids += [int(p) for p in sub.read_text().split()]
        for pid in pids:
            try:
                stat = Path(f"/proc/{pid}/stat").read_text()
            except OSError:
                continue
            comm = stat[stat.index("(") + 1 : stat.rindex(")")]
            f = stat[stat.rindex(")") + 2 :].split()
            cpu, key = (int(f[11]) + int(f[12])) / TICK, (pid, int(f[19]))
            if key in seen:
                seen[key][1] = cpu
                continue
            try:
                raw = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
                cmd = [c.decode(errors="replace") for c in raw if c]
            except OSError:
                cmd = []
            seen[key] = [kind(cmd, comm), cpu, " ".join(cmd)[:300]]
        time.sleep(0.5)
    total = int(Path(cg, "cpuacct.usage").read_text()) / 1e9
    agg: dict[str, list[float]] = collections.defaultdict(lambda: [0.0, 0])
    for k, cpu, _ in seen.values():
        agg[k][0] += cpu
        agg[k][1] += 1
    sampled = sum(v[0] for v in agg.values())
    procs = sorted(seen.values(), key=lambda x: -x[1])
    with open(out, "w") as fh:
        fh.write(f"cgroup {total:.0f} CPU-s; sampled {sampled:.0f} ({sampled / max(total, 1e-9):.0%}); ")
        fh.write(f"{time.time() - t0:.0f} s\n")
        for k, (cpu, n) in sorted(agg.items(), key=lambda x: -x[1][0]):
            fh.write(f"{cpu:9.1f} s {int(n):6d} procs  {k}\n")
        fh.write("\nlargest processes:\n")
        for k, cpu, cmd in procs[:60]:
            fh.write(f"{cpu:8.1f}  {k:24s} {cmd[:200]}\n")
    with open(out + ".tsv", "w") as raw_out:
        for k, cpu, cmd in procs:
            raw_out.write(f"{cpu:.2f}\t{k}\t{cmd}\n")
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    sys.exit(main(sys.argv[1], sys.argv[2]))
