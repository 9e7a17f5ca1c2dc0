"""The server's built-in workloads, shipped for offline `bench --preset` (presets.json is exported
from the server's definitions by `python -m backend.workload.export`; a test keeps them equal)."""

from __future__ import annotations

import json
from functools import lru_cache
from importlib import resources
from typing import Any

from iowatt_workload import PassResult, best_of_passes


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


def is_file_preset(name: str) -> bool:
    """A file workload (PostMark, vdbench file set: `engine_job.mode`), not engine jobs. An
    unknown name is not (bench then says which presets exist)."""
    preset = load().get(name)
    return preset is not None and "mode" in preset["engine_job"]


def job_file(name: str, filename: str, overrides: dict[str, str]) -> dict[str, Any]:
    """The preset's engine job file on `filename`; --NAME=VALUE overrides go to every job."""
    job = get(name)["engine_job"]
    return {
        "global": {**job.get("global", {}), "filename": filename},
        "jobs": [{**j, **overrides} for j in job["jobs"]],
    }


def pass_rows(name: str, result: dict[str, Any]) -> list[dict[str, Any]]:
    """CrystalDiskMark-style summary per test (libs/workload's best_of_passes, the server's rule):
    direction, best pass (as CDM reports), median and spread."""
    preset = get(name)
    results = [_pass_result(job) for job in result.get("jobs") or []]
    tests = best_of_passes(
        results, passes=int(preset.get("passes", 1)), discard=int(preset.get("discard_passes", 0))
    )
    return [
        {
            "test": b.test,
            "direction": b.direction,
            "passes": b.passes,
            "best_bw_bytes": b.best_bw_bytes,
            "best_iops": b.best_iops,
            "median_bw_bytes": b.median_bw_bytes,
            "spread_pct": b.spread_pct,
            "best_job": b.best_job,
        }
        for b in tests
    ]


def _pass_result(job: dict[str, Any]) -> PassResult:
    read, write = job.get("read") or {}, job.get("write") or {}
    return PassResult(
        name=str(job.get("jobname", "")),
        read_bw_bytes=float(read.get("bw_bytes") or 0),
        read_iops=float(read.get("iops") or 0),
        read_ios=int(read.get("total_ios") or 0),
        write_bw_bytes=float(write.get("bw_bytes") or 0),
        write_iops=float(write.get("iops") or 0),
        write_ios=int(write.get("total_ios") or 0),
    )
