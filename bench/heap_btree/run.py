"""Seed 002 Table 3 with iowatt-engine --heap-btree on this machine's targets: the ten cache
fractions × heap/B-tree × insert/point query, one run per target, printed as Table 3 (ops/s) with
hit ratios, device reads and the 100 %/10 % ratios the seed discusses.

    make -C agent/engine
    .venv/bin/python bench/heap_btree/run.py --records 200000 --target tmpfs --target disk \
        --md /tmp/hb.md --json /tmp/hb.json

--target tmpfs | disk | DIR (repeatable): tmpfs = /dev/shm, disk = /var/tmp on the machine's disk
(ext4 or whatever it is: O_DIRECT, so the virtual disk serves the misses). Each run gets a fresh
directory on the target, removed afterwards; the engine removes its own files."""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
ENGINE = REPO / "agent" / "engine" / "build" / "iowatt-engine"
NAMED = {"tmpfs": "/dev/shm", "disk": "/var/tmp"}
COLUMNS = (("heap", "insert"), ("heap", "point_query"), ("btree", "insert"), ("btree", "point_query"))


def run_target(engine: Path, base: str, args: argparse.Namespace) -> dict[str, Any]:
    d = Path(tempfile.mkdtemp(prefix="iowatt-hb-bench-", dir=base))
    try:
        argv = [
            str(engine),
            "--heap-btree",
            f"--directory={d}",
            f"--records={args.records}",
            f"--queries={args.queries}",
            f"--heap-queries={args.heap_queries}",
            f"--randseed={args.randseed}",
        ]
        t0 = time.monotonic()
        p = subprocess.run(argv, capture_output=True, text=True, check=False)
        wall = time.monotonic() - t0
        if p.returncode != 0:
            sys.exit(f"engine exited {p.returncode} on {base}: {p.stderr.strip()}")
        leftovers = list(d.iterdir())
        if leftovers:
            sys.exit(f"the engine left {leftovers} in {d}")
        doc: dict[str, Any] = json.loads(p.stdout)
        doc["bench_wall_s"] = round(wall, 1)
        doc["bench_argv"] = argv
        return doc
    finally:
        shutil.rmtree(d, ignore_errors=True)


def markdown(name: str, doc: dict[str, Any]) -> str:
    run = doc["heap_btree_run"]
    rows: dict[float, dict[tuple[str, str], dict[str, Any]]] = {}
    for e in doc["heap_btree"]:
        rows.setdefault(e["cache_fraction"], {})[(e["structure"], e["operation"])] = e
    out = [
        f"**{name}** ({run['directory'].rsplit('/', 1)[0]}, direct={run['direct']}): "
        f"{run['records']:,} records, "
        f"data pages heap {run['data_pages']['heap']:,} / B-tree {run['data_pages']['btree']:,}, "
        f"{run['queries']:,} B-tree and {run['heap_queries']} heap point queries per fraction, "
        f"whole sweep {doc['bench_wall_s']} s",
        "",
        "| cache | heap insert /s | heap point query /s | B-tree insert /s | B-tree point query /s "
        "| B-tree insert hit % | B-tree insert device reads | B-tree query hit % |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    fracs = sorted(rows)
    for f in fracs:
        r = rows[f]
        cells = [f"{f * 100:.0f} %"] + [f"{r[c]['ops_per_s']:,.0f}" for c in COLUMNS]
        bi, bq = r[("btree", "insert")], r[("btree", "point_query")]
        cells += [f"{bi['hit_ratio'] * 100:.1f}", f"{bi['device_reads']:,}", f"{bq['hit_ratio'] * 100:.1f}"]
        out.append("| " + " | ".join(cells) + " |")
    lo, hi = rows[fracs[0]], rows[fracs[-1]]
    ratios = [f"{hi[c]['ops_per_s'] / lo[c]['ops_per_s']:.1f}×" for c in COLUMNS]
    out.append(f"| **100/10** | {' | '.join(ratios)} | | | |")
    return "\n".join(out) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--records", type=int, default=200000)
    ap.add_argument("--queries", type=int, default=10000)
    ap.add_argument("--heap-queries", type=int, default=50)
    ap.add_argument("--randseed", type=int, default=1)
    ap.add_argument("--target", action="append", default=None)
    ap.add_argument("--engine", type=Path, default=ENGINE)
    ap.add_argument("--md", type=Path)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    targets = args.target or ["tmpfs", "disk"]
    docs: dict[str, dict[str, Any]] = {}
    md = []
    for t in targets:
        base = NAMED.get(t, t)
        print(f"heap-btree on {t} ({base}) ...", file=sys.stderr, flush=True)
        docs[t] = run_target(args.engine, base, args)
        md.append(markdown(t, docs[t]))
    text = "\n".join(md)
    print(text)
    if args.md:
        args.md.write_text(text)
    if args.json:
        args.json.write_text(json.dumps(docs, indent=1) + "\n")


if __name__ == "__main__":
    main()
