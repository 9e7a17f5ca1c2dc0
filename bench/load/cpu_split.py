"""Where a load run's CPU goes, by kind of process (issue 30).

Samples every 2 s the CPU (utime + stime, /proc) of each process of a `bench/load/run.py` run: its
own process tree (the simulator, the API processes, Celery workers and beat, Caddy, Redis) and its
PostgreSQL (the postmaster whose data directory is the run's `iowatt-load-pg-*`, daemonized out of
the tree, and its backends), summed by kind. Prints each window's CPU seconds per second by kind,
and the whole span's; `--out FILE` keeps the samples (JSON lines). Start it once the run's PID is
known; it ends with the run. Each process counts what it used between two samples, and what its
children that ended and were reaped meanwhile used (/proc's cutime and cstime, less what a sample
already counted of them alive): PostgreSQL's backends that live less than a sample (a connection
opened and closed within 2 s) count at the postmaster. A process whose parent died before it is
reaped by init and not counted.

    .venv/bin/python bench/load/run.py --agents 1000 ... & .venv/bin/python bench/load/cpu_split.py $!
"""

import argparse
import json
import os
import sys
import time
from pathlib import Path

KINDS = (
    ("api", "backend.serve"),
    ("worker", " worker "),
    ("beat", " beat "),
    ("caddy", "caddy"),
    ("postgres", "postgres"),
    ("redis", "redis"),
    ("simulator", "bench/load/run.py"),
)
TICK = os.sysconf("SC_CLK_TCK")


def _procs() -> dict[int, tuple[int, str, float, float]]:
    """pid -> (parent pid, command line, CPU seconds, its reaped children's CPU seconds) of every
    process."""
    out = {}
    for p in os.listdir("/proc"):
        if not p.isdigit():
            continue
        try:
            stat = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
            cmd = Path(f"/proc/{p}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        out[int(p)] = (
            int(stat[1]),
            cmd,
            (int(stat[11]) + int(stat[12])) / TICK,
            (int(stat[13]) + int(stat[14])) / TICK,
        )
    return out


Sample = dict[int, tuple[str, int, float, float]]


def sample(root: int) -> Sample | None:
    """pid -> (kind, parent pid, CPU seconds, its reaped children's CPU seconds) of the run's
    processes now; None once the run has ended."""
    procs = _procs()
    if root not in procs:
        return None
    children: dict[int, list[int]] = {}
    for pid, (ppid, _, _, _) in procs.items():
        children.setdefault(ppid, []).append(pid)
    todo = [root] + [
        pid for pid, (_, cmd, _, _) in procs.items() if "iowatt-load-pg-" in cmd and " -D " in cmd
    ]
    found: Sample = {}
    while todo:
        pid = todo.pop()
        if pid in found or pid not in procs:
            continue
        todo.extend(children.get(pid, []))
        ppid, cmd, cpu, reaped = procs[pid]
        found[pid] = (next((k for k, pattern in KINDS if pattern in cmd), "other"), ppid, cpu, reaped)
    return found


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("pid", type=int, help="bench/load/run.py's process")
    ap.add_argument("--every", type=float, default=10.0, help="print a window every this many seconds")
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    out = args.out.open("w") if args.out else None
    last = sample(args.pid)
    if last is None:
        print(f"no process {args.pid}", file=sys.stderr)
        return 2
    t_first = t_window = t_last = time.monotonic()
    window: dict[str, float] = {}
    span: dict[str, float] = {}
    while True:
        time.sleep(2)
        now = sample(args.pid)
        if now is None:
            break
        t_last = time.monotonic()
        used_by: list[tuple[str, float]] = []
        ended: dict[int, list[int]] = {}  # parent -> its children seen last time and gone now
        for pid, (_, ppid, _, _) in last.items():
            if pid not in now:
                ended.setdefault(ppid, []).append(pid)
        for pid, (kind, _, cpu, reaped) in now.items():  # what each process used since the last sample
            if pid not in last:  # born since: all of it
                used_by.append((kind, cpu + reaped))
                continue
            used_by.append((kind, cpu - last[pid][2]))
            # what its children that ended used and no sample counted (their last moments, and
            # the whole of those that lived less than a sample): to the kind of the ended child
            # that used most, or its own kind when none was seen
            gone = ended.get(pid, [])
            seen = {c: last[c][2] + last[c][3] for c in gone}
            unseen = reaped - last[pid][3] - sum(seen.values())
            heir = max(gone, key=seen.__getitem__, default=pid)
            used_by.append((last[heir][0], max(unseen, 0.0)))
        for kind, used in used_by:
            window[kind] = window.get(kind, 0.0) + used
            span[kind] = span.get(kind, 0.0) + used
        last = now
        if out:
            out.write(json.dumps({"t": time.time(), "cpu_s_by_kind": span}) + "\n")
            out.flush()
        if t_last - t_window >= args.every:
            shown = "  ".join(f"{k} {v / (t_last - t_window):.2f}" for k, v in sorted(window.items()))
            print(f"{t_last - t_first:5.0f} s  {shown}", flush=True)
            window, t_window = {}, t_last
    whole = "  ".join(f"{k} {v / max(t_last - t_first, 1e-9):.2f}" for k, v in sorted(span.items()))
    print(f"whole span, {t_last - t_first:.0f} s (CPU s/s): {whole}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
