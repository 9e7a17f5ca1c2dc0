"""Block workloads (the kind `block`): the engine's JSON job file, in a file, a device or a
directory's data file (`policy.engine_job_for` builds it: the plan's block path, no run
directory). The engine is the program; its job file is its argument (`runner.EngineProcess`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..filework import FileRun
from .base import Runner


class BlockRunner(Runner):
    kind = "block"

    def prepare(
        self, engine: Path | str, engine_job: dict[str, Any], *, text_file: Path, target: str, run_key: str
    ) -> FileRun:
        raise ValueError("a block job is planned by policy.engine_job_for, not as a file workload")

    def arguments(self, run: FileRun) -> list[str]:
        raise ValueError("a block job's argument is its job file")

    def engine_args(self) -> list[str]:
        """A server's job file is read --untrusted (docs/contracts.md § 1): no include, no ${VAR},
        every path option beneath the target's `beneath` (the agent's own filename)."""
        return ["--untrusted"]
