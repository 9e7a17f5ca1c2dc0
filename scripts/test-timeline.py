#!/usr/bin/env python3
"""Where the test suite's wall time went, from IOWATT_TEST_TIMELINE files (tests/conftest.py).

    IOWATT_TEST_TIMELINE=/tmp/tl/t make test-py      # or any pytest run
    python3 scripts/test-timeline.py /tmp/tl/t        # reads /tmp/tl/t.gw0, /tmp/tl/t.gw1, ...

Prints, per test process: when its first test started and its last ended (seconds from the
first start anywhere), the seconds spent in tests, and the longest tests; then the xdist groups
with the sum of their tests' durations. The process that ends last is the suite's critical path.
"""

from __future__ import annotations

import glob
import sys
from collections import defaultdict


def main(prefix: str, top: int = 8) -> int:
    rows = []
    cpus: dict[str, float] = {}
    kids: dict[str, float] = {}
    trees: dict[str, float] = {}
    for path in sorted(glob.glob(prefix + ".*")):
        with open(path, encoding="utf-8") as f:
            for line in f:
                start, end, worker, rest = line.rstrip("\n").split(" ", 3)
                fields = rest.split(" ", 3)
                # `cpu children tree nodeid`; older files: `cpu children nodeid`, `cpu nodeid`
                # (both together) or `nodeid`
                nums = []
                for x in fields[:3]:
                    try:
                        nums.append(float(x))
                    except ValueError:
                        break
                nodeid = " ".join(fields[len(nums) :])
                cpus[nodeid] = nums[0] if nums else float("nan")
                kids[nodeid] = nums[1] if len(nums) > 1 else float("nan")
                trees[nodeid] = nums[2] if len(nums) > 2 else float("nan")
                rows.append((float(start), float(end), worker, nodeid))
    if not rows:
        print(f"no timeline files {prefix}.*", file=sys.stderr)
        return 2
    t0 = min(r[0] for r in rows)
    by_worker: dict[str, list[tuple[float, float, str, str]]] = defaultdict(list)
    groups: dict[str, float] = defaultdict(float)
    for r in rows:
        by_worker[r[2]].append(r)
        group = r[3].rsplit("@", 1)[1] if "@" in r[3] else "-"
        groups[group] += r[1] - r[0]
    end_all = max(r[1] for r in rows) - t0
    print(f"{len(rows)} tests, {end_all:.0f} s from the first start to the last end")
    for worker, items in sorted(by_worker.items()):
        first = min(i[0] for i in items) - t0
        last = max(i[1] for i in items) - t0
        busy = sum(i[1] - i[0] for i in items)
        print(f"\n{worker}: {len(items)} tests, {first:.0f}-{last:.0f} s, {busy:.0f} s in tests")
        for start, end, _, nodeid in sorted(items, key=lambda i: i[0] - i[1])[:top]:
            print(f"  {end - start:6.1f} s  cpu {cpus[nodeid]:5.1f} s  at {start - t0:5.0f} s  {nodeid}")
        tail = sorted(items, key=lambda i: i[1])[-3:]
        print("  last: " + "; ".join(f"{i[3]} (ends {i[1] - t0:.0f} s)" for i in tail))
    print("\ngroups (sum of test durations):")
    for group, secs in sorted(groups.items(), key=lambda g: -g[1]):
        print(f"  {secs:7.0f} s  {group}")
    for title, table in (
        ("most CPU in the test process itself (its code, in-process apps)", cpus),
        ("most CPU of children reaped during the test (programs it ran, servers it stopped)", kids),
        ("most CPU of the process tree during the test (its cgroup: servers, browsers, engines)", trees),
    ):
        print(f"\n{title}:")
        for nodeid, secs in sorted(table.items(), key=lambda c: -c[1] if c[1] == c[1] else 0)[: top * 3]:
            print(f"  {secs:7.1f} s  {nodeid}")
        print(f"  total {sum(v for v in table.values() if v == v):.0f} s")
    files: dict[str, float] = defaultdict(float)
    for nodeid, secs in trees.items():
        if secs == secs:
            files[nodeid.split("::", 1)[0]] += secs
    if files:
        print("\nmost CPU of the whole process tree, by test file:")
        for name, secs in sorted(files.items(), key=lambda f: -f[1])[: top * 5]:
            print(f"  {secs:7.1f} s  {name}")
    return 0


if __name__ == "__main__":
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    sys.exit(main(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 8))
