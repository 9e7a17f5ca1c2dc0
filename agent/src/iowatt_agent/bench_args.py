"""`bench`'s arguments as given: what cli.py builds, bench.py dispatches on and each preset's
bench (tpch/bench.py ...) reads. A module of its own that imports nothing of the agent, so a
preset's bench never imports bench.py (which imports it: no import cycle)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass
class BenchArgs:
    """bench's arguments as given (None: not given)."""

    target: str
    options: dict[str, str | None]  # name, rw, bs, size, runtime, iodepth, numjobs, direct, ioengine
    extra: list[str]  # any other --NAME=VALUE engine option
    preset: str | None
    json_output: bool
    output_format: str
    engine: Path | None
    meter: str | None
    idle: float | None
    grid: str | None
    grid_g_per_kwh: float | None
    pue: float
    scale: float | None = None  # a file preset's scale (postmark-*, vdbench-*)
    jobfile: Path | None = None  # `bench FILE.fio`: a fio job file's jobs instead of one job
