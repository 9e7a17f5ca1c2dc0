"""vdbench file sets (the kind `vdbench`): the engine's --vdbench=FILE with the lease's
parameters, its --scale and --elapsed, in a run directory of the directory target. Its progress
names format and run with the engine's percent of the whole run."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .. import filework
from ..filework import FileRun
from .base import Runner


class VdbenchRunner(Runner):
    kind = "vdbench"
    text_key = "parameters"
    refusal_key = "parameters"

    def new_run(self, engine_job: dict[str, Any], *, text_file: Path, target: str, run_key: str) -> FileRun:
        run = super().new_run(engine_job, text_file=text_file, target=target, run_key=run_key)
        run.scale, run.elapsed = engine_job.get("scale"), engine_job.get("elapsed")
        return run

    def arguments(self, run: FileRun) -> list[str]:
        return filework.mode_args(
            "vdbench", run.text_file, run.run_dir, beneath=run.target, scale=run.scale, elapsed=run.elapsed
        )

    def scaled_job(
        self, engine: Path | str, engine_job: dict[str, Any], scale: float, *, scratch: Path
    ) -> dict[str, Any]:
        """`bench --scale`: the job's scale multiplied, as a run's scale on the server."""
        base = float(engine_job.get("scale") or 1)
        return {**engine_job, "scale": format(base * scale, ".10g")}
