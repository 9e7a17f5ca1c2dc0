"""The server's built-in workloads, shipped for offline `bench --preset` (presets.json is exported
from the server's definitions by `python -m backend.workload.export`; a test keeps them equal)."""

from __future__ import annotations

import json
import re
import statistics
from functools import lru_cache
from importlib import resources
from typing import Any

_PASS = re.compile(r"^(?P<test>.+)\.p(?P<k>\d+)$")


@lru_cache
def load() -> dict[str, dict[str, Any]]:
    data: dict[str, dict[str, Any]] = json.loads(
        resources.files(__package__).joinpath("presets.json").read_text()
    )
    return data


def get(name: str) -> dict[str, Any]:
    presets = load()
    if name not in presets:
        raise ValueError(f"unknown preset {name!r}; known: {', '.join(sorted(presets))}")
    return presets[name]


def job_file(name: str, filename: str, overrides: dict[str, str]) -> dict[str, Any]:
    """The preset's engine job file on `filename`; --NAME=VALUE overrides go to every job."""
    job = get(name)["engine_job"]
    return {
        "global": {**job.get("global", {}), "filename": filename},
        "jobs": [{**j, **overrides} for j in job["jobs"]],
    }


def pass_rows(name: str, result: dict[str, Any]) -> list[dict[str, Any]]:
    """CrystalDiskMark-style summary per test: best pass (as CDM reports), median and spread."""
    preset = get(name)
    discard = int(preset.get("discard_passes", 0))
    if int(preset.get("passes", 1)) <= 1 and not discard:
        return []
    tests: dict[str, list[tuple[int, float, float]]] = {}
    for job in result.get("jobs") or []:
        m = _PASS.match(str(job.get("jobname", "")))
        if not m or int(m.group("k")) < discard:
            continue
        side = job.get("write") if "write" in m.group("test") else job.get("read")
        side = side or {}
        tests.setdefault(m.group("test"), []).append(
            (int(m.group("k")), float(side.get("bw_bytes") or 0), float(side.get("iops") or 0))
        )
    rows = []
    for test, items in tests.items():
        bws = [bw for _, bw, _ in items]
        med = statistics.median(bws)
        best = max(items, key=lambda x: x[1])
        rows.append(
            {
                "test": test,
                "passes": len(items),
                "best_bw_bytes": best[1],
                "best_iops": best[2],
                "median_bw_bytes": med,
                "spread_pct": (max(bws) - min(bws)) / med * 100 if med else 0.0,
            }
        )
    return rows
