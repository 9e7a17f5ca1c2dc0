#!/usr/bin/env python3
"""iowatt-engine --vdbench vs Debian's sysbench fileio on the same file set, side by side.

sysbench fileio's file set is N files of S bytes in one directory, each thread issuing random
block reads and writes (rndrw, --file-rw-ratio reads per write) on any file (no per-file
ownership), files kept open. The equivalent vdbench file set: fsd depth=0, files=N, size=S;
fwd rdpct = 100 x ratio / (ratio + 1), xfersize = block, fileselect=random,
fileio=(random,shared), the same threads; rd format=yes and maxdata = requests x block, so both
tools move the same bytes (sysbench: --events=requests --time=0). Neither fsyncs (sysbench
--file-fsync-freq=0 --file-fsync-end=off) and both are buffered (or both O_DIRECT with
--direct). Preparation (sysbench prepare, our format) is outside both measurements.

For each configuration and target: a warm-up pair (discarded), then N pairs in alternating order
(A B, B A, ...). Per pair the ratio iowatt/sysbench of the operation rate (requests / each
tool's own measured time: sysbench's "total time", our fileset.measured_ns) and of the CPU per
operation (user + system of the run process from wait4, RUSAGE_CHILDREN deltas; ours minus the
format phase's CPU that the JSON reports); the table shows the medians of the per-pair ratios.
Every pair checks both moved exactly requests x block bytes.

    make -C agent/engine
    .venv/bin/python bench/fileset/run.py --pairs 5 --md /tmp/fs.md --json /tmp/fs.json
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from tests.engine.filemode import ENGINE, alternating_pairs, ensure_engine, timed, uptime  # noqa: E402

# name -> file set: files, size per file, block, reads per write, threads, requests
CONFIGS: dict[str, dict[str, Any]] = {
    "rndrw-4k-16x4m": {
        "files": 16,
        "size": "4M",
        "block": 4096,
        "ratio": 1.5,
        "threads": 4,
        "requests": 400_000,
    },
    "rndrw-16k-64x1m": {
        "files": 64,
        "size": "1M",
        "block": 16384,
        "ratio": 1.5,
        "threads": 2,
        "requests": 200_000,
    },
    "rndrd-4k-16x4m": {
        "files": 16,
        "size": "4M",
        "block": 4096,
        "ratio": None,
        "threads": 2,
        "requests": 400_000,
    },
}
TARGETS = {"tmpfs": "/dev/shm", "disk": "/var/tmp"}


def rdpct(cfg: dict[str, Any]) -> int:
    return 100 if cfg["ratio"] is None else round(100 * cfg["ratio"] / (cfg["ratio"] + 1))


def vdbench_text(cfg: dict[str, Any], direct: bool) -> str:
    flags = ",openflags=o_direct" if direct else ""
    maxdata = cfg["requests"] * cfg["block"]
    return (
        f"fsd=fsd1,anchor=/sysbench,depth=0,width=1,files={cfg['files']},size={cfg['size']}{flags}\n"
        f"fwd=fwd1,fsd=fsd1,rdpct={rdpct(cfg)},xfersize={cfg['block']},fileselect=random,"
        f"fileio=(random,shared),threads={cfg['threads']}\n"
        f"rd=rd1,fwd=fwd1,fwdrate=max,format=yes,elapsed=3600,interval=3600,maxdata={maxdata}\n"
    )


def sysbench_args(cfg: dict[str, Any], direct: bool) -> list[str]:
    size = int(cfg["size"][:-1]) << 20
    args = [
        "sysbench",
        "fileio",
        f"--file-num={cfg['files']}",
        f"--file-total-size={size * cfg['files']}",
        f"--file-block-size={cfg['block']}",
        f"--file-test-mode={'rndrd' if cfg['ratio'] is None else 'rndrw'}",
        "--file-fsync-freq=0",
        "--file-fsync-end=off",
        f"--threads={cfg['threads']}",
        "--time=0",
        f"--events={cfg['requests']}",
    ]
    if cfg["ratio"] is not None:
        args.append(f"--file-rw-ratio={cfg['ratio']}")
    if direct:
        args.append("--file-extra-flags=direct")
    return args


def run_sysbench(cfg: dict[str, Any], base: Path, direct: bool) -> dict[str, Any]:
    d = Path(tempfile.mkdtemp(prefix="fs-sysbench-", dir=base))
    try:
        args = sysbench_args(cfg, direct)
        p = subprocess.run(
            [*args[:2], *args[2:5], "prepare"], capture_output=True, text=True, cwd=d, timeout=600
        )
        if p.returncode != 0:
            raise SystemExit(f"sysbench prepare exited {p.returncode}: {p.stderr}")
        t = timed([*args, "run"], cwd=str(d))
        cpu, out = t.cpu_s, t.stdout
        if t.rc != 0:
            raise SystemExit(f"sysbench exited {t.rc}: {t.stderr}{out}")
        secs = float(re.search(r"total time:\s+([\d.]+)s", out).group(1))  # type: ignore[union-attr]
        rps = float(re.search(r"reads/s:\s+([\d.]+)", out).group(1))  # type: ignore[union-attr]
        wps = float(re.search(r"writes/s:\s+([\d.]+)", out).group(1))  # type: ignore[union-attr]
        events = int(re.search(r"total number of events:\s+(\d+)", out).group(1))  # type: ignore[union-attr]
        return {
            "tool": "sysbench",
            "secs": secs,
            "ops": events,
            "reads": round(rps * secs),
            "writes": round(wps * secs),
            "bytes": events * cfg["block"],
            "rate": events / secs,
            "cpu_s": cpu,
            "cpu_ns_per_op": cpu * 1e9 / events,
        }
    finally:
        shutil.rmtree(d, ignore_errors=True)


def run_iowatt(cfg: dict[str, Any], base: Path, direct: bool, engine: Path) -> dict[str, Any]:
    d = Path(tempfile.mkdtemp(prefix="fs-iowatt-", dir=base))
    pf = Path(tempfile.mkstemp(prefix="fs-", suffix=".vdb")[1])
    try:
        pf.write_text(vdbench_text(cfg, direct))
        t = timed([str(engine), f"--vdbench={pf}", f"--directory={d}"])
        if t.rc != 0:
            raise SystemExit(f"iowatt-engine exited {t.rc}: {t.stderr}")
        cpu = t.cpu_s
        fs = json.loads(t.stdout)["fileset"]
        if list(d.iterdir()):
            raise SystemExit(f"iowatt-engine left entries in {d}")
        tot = fs["total"]
        ops = tot["ops_total"]
        fmt = fs["format"]["cpu"]
        run_cpu = cpu - fmt["process_user_s"] - fmt["process_system_s"]
        secs = fs["measured_ns"] / 1e9
        return {
            "tool": "iowatt",
            "secs": secs,
            "ops": ops,
            "reads": tot["ops"].get("read", {}).get("ops", 0),
            "writes": tot["ops"].get("write", {}).get("ops", 0),
            "bytes": tot["read_bytes"] + tot["write_bytes"],
            "rate": ops / secs,
            "cpu_s": run_cpu,
            "cpu_ns_per_op": run_cpu * 1e9 / ops,
            "opens": tot["ops"].get("open", {}).get("ops", 0),
        }
    finally:
        shutil.rmtree(d, ignore_errors=True)
        pf.unlink(missing_ok=True)


def bench(name: str, target: str, base: Path, pairs: int, direct: bool, engine: Path) -> dict[str, Any]:
    cfg = CONFIGS[name]
    want = cfg["requests"] * cfg["block"]

    def same_bytes(res: dict[str, dict[str, Any]]) -> None:
        for t, r in res.items():
            if r["bytes"] != want:
                raise SystemExit(f"{name}/{target}: {t} moved {r['bytes']} bytes, not {want}")

    runs = alternating_pairs(
        pairs,
        ("sysbench", "iowatt"),
        lambda t: run_sysbench(cfg, base, direct)
        if t == "sysbench"
        else run_iowatt(cfg, base, direct, engine),
        same_bytes,
        f"{name} {target}",
        lambda r: f"{r['rate']:.0f}/s",
    )
    rate_ratio = [b["rate"] / a["rate"] for a, b in runs]
    cpu_ratio = [b["cpu_ns_per_op"] / a["cpu_ns_per_op"] for a, b in runs if a["cpu_ns_per_op"] > 0]
    return {
        "config": name,
        "target": target,
        "dir": str(base),
        "direct": direct,
        "file_set": cfg,
        "vdbench": vdbench_text(cfg, direct).splitlines(),
        "sysbench": " ".join(sysbench_args(cfg, direct)),
        "bytes": want,
        "sysbench_rate": statistics.median(a["rate"] for a, _ in runs),
        "iowatt_rate": statistics.median(b["rate"] for _, b in runs),
        "sysbench_cpu_ns_per_op": statistics.median(a["cpu_ns_per_op"] for a, _ in runs),
        "iowatt_cpu_ns_per_op": statistics.median(b["cpu_ns_per_op"] for _, b in runs),
        "rate_ratio": statistics.median(rate_ratio),
        "rate_ratio_min": min(rate_ratio),
        "rate_ratio_max": max(rate_ratio),
        "cpu_ratio": statistics.median(cpu_ratio) if cpu_ratio else None,
        "pairs": [{"sysbench": a, "iowatt": b} for a, b in runs],
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pairs", type=int, default=5)
    ap.add_argument("--config", action="append", choices=sorted(CONFIGS), help="default: all")
    ap.add_argument("--target", action="append", help="tmpfs, disk or a directory (default: tmpfs and disk)")
    ap.add_argument("--direct", action="store_true", help="O_DIRECT in both (not on tmpfs)")
    ap.add_argument("--engine", type=Path, default=ENGINE)
    ap.add_argument("--md", type=Path)
    ap.add_argument("--json", type=Path)
    a = ap.parse_args()
    if not shutil.which("sysbench"):
        print("Debian's sysbench is not installed: apt-get install sysbench", file=sys.stderr)
        return 2
    ensure_engine(a.engine)
    version = subprocess.run(["sysbench", "--version"], capture_output=True, text=True).stdout.strip()
    up = uptime()
    results = []
    for target in a.target or list(TARGETS):
        base = Path(TARGETS.get(target, target))
        for name in a.config or list(CONFIGS):
            results.append(bench(name, target, base, a.pairs, a.direct, a.engine))
    uptime_after = uptime()
    head = (
        f"iowatt-engine --vdbench vs Debian {version} fileio, {a.pairs} pairs + 1 warm-up"
        f"{', O_DIRECT' if a.direct else ', buffered'}, "
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}\n"
        f"load before: {up}\nload after:  {uptime_after}\n"
    )
    rows = [
        "| file set | target | bytes moved | sysbench ops/s | iowatt ops/s | rate ratio (min-max) "
        "| sysbench CPU ns/op | iowatt CPU ns/op | CPU/op ratio |",
        "|---|---|---:|---:|---:|---|---:|---:|---:|",
    ]
    for r in results:
        rows.append(
            f"| {r['config']} | {r['target']} | {r['bytes']:,} "
            f"| {r['sysbench_rate']:,.0f} | {r['iowatt_rate']:,.0f} "
            f"| **{r['rate_ratio']:.2f}x** ({r['rate_ratio_min']:.2f}-{r['rate_ratio_max']:.2f}) "
            f"| {r['sysbench_cpu_ns_per_op']:,.0f} | {r['iowatt_cpu_ns_per_op']:,.0f} "
            f"| {r['cpu_ratio']:.2f} |"
        )
    md = head + "\n" + "\n".join(rows) + "\n"
    print(md)
    if a.md:
        a.md.write_text(md)
    if a.json:
        a.json.write_text(json.dumps({"header": head, "results": results}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
