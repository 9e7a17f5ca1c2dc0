"""The workload kinds on the agent, one runner each (ADR 0027; docs/architecture.md "Adding a
workload kind"). `RUNNERS` lists every kind once and is refused at import when it does not list
exactly libs/workload's WORKLOAD_KINDS, the list the server's `backend/workload/kinds` is held to
too. A lease job is found its runner by its "mode" (a block job file has none)."""

from __future__ import annotations

from typing import Any

from iowatt_workload import WORKLOAD_KINDS, WorkloadKind, kind_of_mode

from .base import Runner
from .block import BlockRunner
from .heap_btree import HeapBtreeRunner
from .innodb_flush import InnodbFlushRunner
from .jobfile import JobfileRunner
from .postmark import PostmarkRunner
from .pts import PtsRunner
from .tpch import TpchRunner
from .vdbench import VdbenchRunner

RUNNERS: dict[WorkloadKind, Runner] = {
    r.kind: r
    for r in (
        BlockRunner(),
        PostmarkRunner(),
        VdbenchRunner(),
        TpchRunner(),
        HeapBtreeRunner(),
        JobfileRunner(),
        PtsRunner(),
        InnodbFlushRunner(),
    )
}
if tuple(RUNNERS) != WORKLOAD_KINDS:  # pragma: no cover - a kind added on one side only
    raise RuntimeError(
        f"the agent's workload kinds {tuple(RUNNERS)} are not libs/workload's {WORKLOAD_KINDS}"
    )


def runner_for_mode(mode: str | None) -> Runner | None:
    """The runner of a lease job's or progress event's mode (None: a mode no kind has)."""
    kind = kind_of_mode(mode)
    return RUNNERS[kind] if kind is not None else None


def runner_for_job(engine_job: dict[str, Any]) -> Runner:
    """The runner of a lease job libs/policy's check_run has allowed (its mode is a known one).
    ValueError for an unknown mode."""
    mode = engine_job.get("mode")
    runner = runner_for_mode(mode) if mode is None or isinstance(mode, str) else None
    if runner is None:
        raise ValueError(f"unknown workload mode {mode!r}")
    return runner


__all__ = ["RUNNERS", "Runner", "runner_for_job", "runner_for_mode"]
