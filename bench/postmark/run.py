#!/usr/bin/env python3
"""iowatt-engine --postmark vs Debian's postmark, side by side on the same parameters and target.

For each configuration and target directory: one warm-up pair (discarded), then N pairs in
alternating order (postmark iowatt, iowatt postmark, ...: A B B A ...). Each run gets a fresh
empty directory on the target. Per pair the ratio iowatt/postmark of

  * wall time: the whole process, start to exit (both tools' start-up included; PostMark's own
    report has whole seconds only), and
  * CPU: user + system time of the process (wait4 via RUSAGE_CHILDREN deltas),

and the table shows the median of the per-pair ratios (with min-max) and each tool's medians.
Every pair also checks that both tools did the same work: files created, read, appended and
deleted (from PostMark's report and iowatt's JSON) must be identical.

    make -C agent/engine
    .venv/bin/python bench/postmark/run.py --pairs 5 --md /tmp/pm.md --json /tmp/pm.json
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from tests.engine.filemode import ENGINE, alternating_pairs, ensure_engine, timed, uptime  # noqa: E402

# name -> PostMark settings (set ... lines); the paper's levels (seed 000, Table 1: 10/10,000/50,000,
# 10/30,000/50,000, 100/70,000/100,000 with 4 KB blocks) are scaled by --scale for this machine
CONFIGS: dict[str, dict[str, Any]] = {
    "small-files": {"number": 5000, "transactions": 20000, "size": "500 10000", "subdirectories": 10},
    "paper-low": {
        "number": 10000,
        "transactions": 50000,
        "size": "500 10000",
        "subdirectories": 10,
        "read": 4096,
        "write": 4096,
    },
    "paper-high": {
        "number": 70000,
        "transactions": 100000,
        "size": "500 10000",
        "subdirectories": 100,
        "read": 4096,
        "write": 4096,
    },
    "4k-unbuffered": {
        "number": 2000,
        "transactions": 10000,
        "size": "4096 65536",
        "subdirectories": 10,
        "read": 4096,
        "write": 4096,
        "buffering": "false",
    },
}

TARGETS = {"tmpfs": "/dev/shm", "disk": "/var/tmp"}


def command_text(cfg: dict[str, Any], location: str, scale: float) -> str:
    lines = [f"set location {location}", "set seed 42"]
    for k, v in cfg.items():
        if k in ("number", "transactions"):
            v = max(1, int(int(v) * scale))
        lines.append(f"set {k} {v}")
    lines += ["run", "quit", ""]
    return "\n".join(lines)


def parse_postmark(text: str) -> dict[str, int]:
    def num(pattern: str) -> int:
        m = re.search(pattern, text)
        if not m:
            raise SystemExit(f"postmark's report lacks {pattern!r}:\n{text}")
        return int(m.group(1))

    return {
        "files_created": num(r"\t(\d+) created"),
        "files_read": num(r"\t(\d+) read \("),
        "files_appended": num(r"\t(\d+) appended"),
        "files_deleted_alone": num(r"Deletion alone: (\d+) files"),
    }


def run_one(tool: str, cfg: dict[str, Any], base: Path, scale: float, engine: Path) -> dict[str, Any]:
    d = Path(tempfile.mkdtemp(prefix=f"pm-{tool}-", dir=base))
    cmdfile = Path(tempfile.mkstemp(prefix="pm-", suffix=".cfg")[1])
    try:
        cmdfile.write_text(command_text(cfg, str(d), scale))
        if tool == "postmark":
            t = timed(["postmark", str(cmdfile)], cwd=str(d))
            if t.rc != 0:
                raise SystemExit(f"postmark exited {t.rc}: {t.stderr}")
            counts = parse_postmark(t.stdout)
            internal = None
        else:
            t = timed([str(engine), f"--postmark={cmdfile}", f"--directory={d}"])
            if t.rc != 0:
                raise SystemExit(f"iowatt-engine exited {t.rc}: {t.stderr}")
            p = json.loads(t.stdout)["postmark"]
            counts = {
                k: p[k] for k in ("files_created", "files_read", "files_appended", "files_deleted_alone")
            }
            internal = p["elapsed_ns"] / 1e9
        left = list(d.iterdir())
        if left:
            raise SystemExit(f"{tool} left {len(left)} entries in {d}")
        return {"tool": tool, "wall_s": t.wall_s, "cpu_s": t.cpu_s, "counts": counts, "elapsed_s": internal}
    finally:
        shutil.rmtree(d, ignore_errors=True)
        cmdfile.unlink(missing_ok=True)


def bench(name: str, target: str, base: Path, pairs: int, scale: float, engine: Path) -> dict[str, Any]:
    cfg = CONFIGS[name]

    def same_work(res: dict[str, dict[str, Any]]) -> None:
        if res["postmark"]["counts"] != res["iowatt"]["counts"]:
            raise SystemExit(
                f"{name}/{target}: counts differ: {res['postmark']['counts']} vs {res['iowatt']['counts']}"
            )

    runs = alternating_pairs(
        pairs,
        ("postmark", "iowatt"),
        lambda tool: run_one(tool, cfg, base, scale, engine),
        same_work,
        f"{name} {target}",
        lambda r: f"{r['wall_s']:.3f} s",
    )
    wall_ratio = [b["wall_s"] / a["wall_s"] for a, b in runs]
    cpu_ratio = [b["cpu_s"] / a["cpu_s"] for a, b in runs if a["cpu_s"] > 0]
    return {
        "config": name,
        "target": target,
        "dir": str(base),
        "settings": command_text(cfg, "DIR", scale).splitlines()[:-3],
        "counts": runs[0][0]["counts"],
        "postmark_wall_s": statistics.median(a["wall_s"] for a, _ in runs),
        "iowatt_wall_s": statistics.median(b["wall_s"] for _, b in runs),
        "iowatt_elapsed_s": statistics.median(b["elapsed_s"] for _, b in runs),
        "postmark_cpu_s": statistics.median(a["cpu_s"] for a, _ in runs),
        "iowatt_cpu_s": statistics.median(b["cpu_s"] for _, b in runs),
        "wall_ratio": statistics.median(wall_ratio),
        "wall_ratio_min": min(wall_ratio),
        "wall_ratio_max": max(wall_ratio),
        "cpu_ratio": statistics.median(cpu_ratio) if cpu_ratio else None,
        "pairs": [{"postmark": a, "iowatt": b} for a, b in runs],
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pairs", type=int, default=5)
    ap.add_argument("--scale", type=float, default=1.0, help="multiplies number and transactions")
    ap.add_argument("--config", action="append", choices=sorted(CONFIGS), help="default: all")
    ap.add_argument("--target", action="append", help="tmpfs, disk or a directory (default: tmpfs and disk)")
    ap.add_argument("--engine", type=Path, default=ENGINE)
    ap.add_argument("--md", type=Path)
    ap.add_argument("--json", type=Path)
    a = ap.parse_args()
    if not shutil.which("postmark"):
        print("Debian's postmark is not installed: apt-get install postmark", file=sys.stderr)
        return 2
    ensure_engine(a.engine)
    load = Path("/proc/loadavg").read_text().split()[:3]
    up = uptime()
    results = []
    for target in a.target or list(TARGETS):
        base = Path(TARGETS.get(target, target))
        for name in a.config or list(CONFIGS):
            results.append(bench(name, target, base, a.pairs, a.scale, a.engine))
    uptime_after = uptime()
    head = (
        f"iowatt-engine --postmark vs Debian postmark 1.53 (reports v1.51), {a.pairs} pairs + 1 warm-up, "
        f"scale {a.scale:g}, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}\n"
        f"load before: {' '.join(load)} (`{up}`); after: `{uptime_after}`\n\n"
        "| config | target | files created / read / appended / deleted alone (both) | postmark wall s | "
        "iowatt wall s | iowatt elapsed s (own timer) | wall ratio iowatt/postmark (min–max) | "
        "CPU s postmark / iowatt | CPU ratio |\n"
        "|---|---|---|---|---|---|---|---|---|\n"
    )
    rows = []
    for r in results:
        c = r["counts"]
        rows.append(
            f"| {r['config']} | {r['target']} ({r['dir']}) | {c['files_created']} / {c['files_read']} / "
            f"{c['files_appended']} / {c['files_deleted_alone']} | {r['postmark_wall_s']:.3f} | "
            f"{r['iowatt_wall_s']:.3f} | {r['iowatt_elapsed_s']:.3f} | **{r['wall_ratio']:.3f}** "
            f"({r['wall_ratio_min']:.3f}–{r['wall_ratio_max']:.3f}) | {r['postmark_cpu_s']:.3f} / "
            f"{r['iowatt_cpu_s']:.3f} | {r['cpu_ratio']:.3f} |"
        )
    md = head + "\n".join(rows) + "\n"
    print(md)
    if a.md:
        a.md.write_text(md)
    if a.json:
        a.json.write_text(json.dumps({"load": load, "uptime": up, "results": results}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
