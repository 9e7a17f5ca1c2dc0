"""TPC-H-derived runs (issue 15) with `iowatt-agent bench --preset tpch` on this machine's targets:
one run per DBMS x target, one after another, each kept as JSON under bench/tpch/results/ with the
machine facts and the load before and after, then a table: load_s, Power/Throughput/QphH@Size,
the slowest and fastest power-test queries, answers ok.

    .venv/bin/python bench/tpch/run.py --scale-factor 1 --dbms postgresql --target disk --target shm
    .venv/bin/python bench/tpch/run.py --table bench/tpch/results/*.json     # print kept runs only

--target disk | shm | DIR (repeatable): disk = /var/tmp on the machine's disk, shm = /dev/shm
(tmpfs, RAM). --dbms postgresql | mariadb (repeatable). Each run makes and removes its own
iowatt-tpch-<id>/ in the target (the agent does); the script checks the target holds nothing new
afterwards. TPC-H-derived, not audited: see docs/tpch.md."""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
AGENT = REPO / ".venv" / "bin" / "iowatt-agent"
RESULTS = Path(__file__).resolve().parent / "results"
NAMED = {"disk": "/var/tmp", "shm": "/dev/shm"}


def uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True, check=False).stdout.strip()


def loadavg() -> list[str]:
    return Path("/proc/loadavg").read_text().split()[:3]


def cmd_out(argv: list[str]) -> str:
    try:
        return subprocess.run(argv, capture_output=True, text=True, check=False).stdout.strip()
    except OSError:
        return ""


def machine() -> dict[str, Any]:
    cpu = ""
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            cpu = line.split(":", 1)[1].strip()
            break
    mem_kb = 0
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemTotal:"):
            mem_kb = int(line.split()[1])
    return {
        "hostname": platform.node(),
        "kernel": platform.release(),
        "cpu": cpu,
        "cpus": os.cpu_count(),
        "mem_total_gib": round(mem_kb / 1024 / 1024, 1),
        "python": platform.python_version(),
    }


def target_facts(path: str) -> dict[str, Any]:
    src = cmd_out(["findmnt", "-n", "-o", "SOURCE,FSTYPE,OPTIONS", "-T", path])
    parts = src.split(None, 2)
    facts: dict[str, Any] = {"path": path}
    if len(parts) >= 2:
        facts["source"], facts["fstype"] = parts[0], parts[1]
        facts["mount_options"] = parts[2] if len(parts) > 2 else ""
    st = os.statvfs(path)
    facts["free_gib"] = round(st.f_bavail * st.f_frsize / 2**30, 1)
    return facts


def run_one(dbms: str, target: str, args: argparse.Namespace) -> dict[str, Any]:
    path = NAMED.get(target, target)
    argv = [
        str(AGENT),
        "bench",
        "--preset",
        "tpch",
        "--dbms",
        dbms,
        "--scale-factor",
        str(args.scale_factor),
        "--query-timeout",
        str(args.query_timeout),
        "--target",
        path,
        "--json",
    ]
    if args.buffer_pool:
        argv += ["--buffer-pool", args.buffer_pool]
    before_entries = {p.name for p in Path(path).iterdir() if p.name.startswith("iowatt-tpch-")}
    record: dict[str, Any] = {
        "command": " ".join(["iowatt-agent", *argv[1:]]),
        "target_name": target,
        "target": target_facts(path),
        "machine": machine(),
        "started_at": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "load_before": loadavg(),
        "uptime_before": uptime(),
    }
    print(f"== {dbms} on {target} ({path}): {record['uptime_before']}", file=sys.stderr, flush=True)
    t0 = time.monotonic()
    # the agent's progress goes to stderr (shown as it comes); the document to stdout
    p = subprocess.run(argv, stdout=subprocess.PIPE, text=True, check=False)
    record["wall_s"] = round(time.monotonic() - t0, 1)
    record["load_after"] = loadavg()
    record["uptime_after"] = uptime()
    record["exit_code"] = p.returncode
    after_entries = {x.name for x in Path(path).iterdir() if x.name.startswith("iowatt-tpch-")}
    record["left_in_target"] = sorted(after_entries - before_entries)
    if p.returncode == 0:
        record["tpch"] = json.loads(p.stdout)["tpch"]
    else:
        record["stdout"] = p.stdout[-4000:]
    return record


def fmt(v: Any, digits: int = 1) -> str:
    if v is None:
        return "—"
    if isinstance(v, float):
        return f"{v:,.{digits}f}"
    return str(v)


def table(records: list[dict[str, Any]]) -> str:
    out = [
        "| DBMS | target | SF | S | load_s | power test s | throughput_s | Power@Size | Throughput@Size "
        "| QphH@Size | slowest power queries (s) | fastest (s) | answers ok | load avg before → after |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---|---:|---|",
    ]
    for r in records:
        t = r.get("tpch")
        tgt = f"{r['target_name']} ({r['target']['path']}, {r['target'].get('fstype', '?')})"
        load = f"{' '.join(r['load_before'])} → {' '.join(r['load_after'])}"
        if t is None:
            out.append(f"| ? | {tgt} | | | | | | | | | exit {r['exit_code']} | | | {load} |")
            continue
        power = sorted(
            (q for q in t["queries"] if q["test"] == "power" and q.get("seconds") is not None),
            key=lambda q: -q["seconds"],
        )
        power_s = sum(q["seconds"] for q in power)
        slow = ", ".join(f"Q{q['query']} {q['seconds']:.1f}" for q in power[:3])
        fast = ", ".join(f"Q{q['query']} {q['seconds']:.2f}" for q in power[-2:])
        ans = t["answers"]
        out.append(
            f"| {' '.join((t.get('dbms_version') or t['dbms']).split()[:2])} | {tgt} "
            f"| {t['scale_factor']:g} | {t['streams']} | {fmt(t['load_s'])} | {fmt(power_s)} "
            f"| {fmt(t['throughput_s'])} | {fmt(t['power_at_size'], 0)} | {fmt(t['throughput_at_size'], 0)} "
            f"| {fmt(t['qphh_at_size'], 0)} | {slow} | {fast} | {ans['ok']}/{ans['checked']} | {load} |"
        )
    return "\n".join(out)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dbms", action="append", choices=["postgresql", "mariadb"])
    ap.add_argument("--target", action="append", help="disk | shm | DIR (repeatable)")
    ap.add_argument("--scale-factor", type=float, default=1.0)
    ap.add_argument("--query-timeout", type=int, default=900)
    ap.add_argument("--buffer-pool", default="", help="passed on as --buffer-pool (default: the agent's)")
    ap.add_argument("--results", type=Path, default=RESULTS, help="where the JSON records go")
    ap.add_argument("--table", nargs="+", type=Path, metavar="JSON", help="only print these kept records")
    a = ap.parse_args()
    if a.table:
        print(table([json.loads(p.read_text()) for p in a.table]))
        return 0
    if not a.dbms or not a.target:
        ap.error("--dbms and --target are required (or --table)")
    if a.scale_factor <= 0:
        ap.error("--scale-factor must be > 0")
    a.results.mkdir(parents=True, exist_ok=True)
    records = []
    rc = 0
    for dbms in a.dbms:
        for target in a.target:
            r = run_one(dbms, target, a)
            day = r["started_at"][:10]
            sf = f"{a.scale_factor:g}".replace(".", "_")
            name = f"{day}-{dbms}-{r['target_name'] if r['target_name'] in NAMED else 'dir'}-sf{sf}.json"
            (a.results / name).write_text(json.dumps(r, indent=1) + "\n")
            kept = f"kept {a.results / name} (exit {r['exit_code']}, {r['wall_s']} s)"
            print(kept, file=sys.stderr, flush=True)
            records.append(r)
            if r["exit_code"] != 0 or r["left_in_target"]:
                rc = 1
    print(table(records))
    return rc


if __name__ == "__main__":
    sys.exit(main())
