"""The heap-file and B+tree sweep (the kind `heap_btree`; the engine's mode and flag, and the
preset, are spelled `heap-btree`): the engine's --heap-btree with the lease job's values as its
flags (each checked by libs/policy's check_run: plain numbers and names), in a run directory of
the directory target. The job has no text: its JSON is written instead, so a killed agent's run
is found at start-up like the others' (`leftovers`). Its progress names no phase: the structure,
operation and cache fraction are the phase."""

from __future__ import annotations

from typing import Any

from iowatt_policy import job_value

from ..filework import FileRun
from .base import Runner

# the job's keys -> the engine's flags
FLAGS = {
    "records": "--records",
    "queries": "--queries",
    "cache_fractions": "--cache-fraction",
    "randseed": "--randseed",
    "structure": "--structure",
}


def options(engine_job: dict[str, Any]) -> list[str]:
    """The engine's --heap-btree flags of a checked job (every value a plain number or name)."""
    return [
        f"{flag}={value}" for key, flag in FLAGS.items() if (value := job_value(engine_job, key)) is not None
    ]


class HeapBtreeRunner(Runner):
    kind = "heap_btree"

    def new_run(self, engine_job: dict[str, Any], **kw: Any) -> FileRun:
        run = super().new_run(engine_job, **kw)
        run.options = options(engine_job)
        return run

    def arguments(self, run: FileRun) -> list[str]:
        return ["--heap-btree", f"--directory={run.run_dir}", f"--beneath={run.target}", *run.options]

    def progress_phase(self, event: dict[str, Any]) -> str:
        parts = (event.get("structure"), event.get("operation"), event.get("cache_fraction"))
        return " ".join(f"{p:g}" if isinstance(p, float) else str(p) for p in parts if p is not None)
