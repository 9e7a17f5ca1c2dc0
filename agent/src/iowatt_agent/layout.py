"""Engines started together lay their files out first (ADR 0038, issue 27).

fio's `--client` lays a read job's file out after RUN, so hosts start their I/O apart by their
layout times; elbencho prepares everything first. A group run's member, and each target of a
multi-target run, does as elbencho: before the idle baseline and the member's `ready`, the engine
runs the same job once with `create_only=1` (fio's option: lay the files out, then no I/O) and
`unlink=0` (keep them). At the start instant every engine only opens what is there and starts
its I/O; the layout's time and energy are in neither the idle baseline nor the load.

The run itself then finds the file in place: a directory target's data file loses `create_new`
(it exists now: this agent's engine made it, `O_EXCL`, moments ago). The agent keeps the entry the
layout made open (`O_PATH`, never followed) and, just before the engine starts, checks that the
name still leads to it: a file swapped in meanwhile (or a hard link to another file) is refused
and that engine never starts. A multi-file job's run directory is the agent's own (0700) and is
checked the same way. The engine's `unlink=1` removes only files its own run created, so the data
file is removed by the agent after the run (runner.cleanup_target, as one a killed engine left).

Only block jobs on a directory target lay out this way (a fio job file's too); file workloads
(PostMark, vdbench, heap-btree, TPC-H) make their file sets as the measured workload itself, and a
file or device target has nothing to lay out.
"""

from __future__ import annotations

import contextlib
import logging
import os
import stat
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from .plan import Plan
from .runner import EngineProcess, cleanup_target

log = logging.getLogger("iowatt_agent.layout")

# the layout pass's own options on top of the run's: no I/O after the layout, nothing removed
LAYOUT_OPTIONS = {"create_only": "1", "unlink": "0"}


class LayoutFailed(Exception):
    """The layout did not finish: the run fails with `reason`, nothing was measured."""

    def __init__(
        self, reason: str, *, cancelled: bool = False, exit_code: int | None = None, stderr_tail: str = ""
    ) -> None:
        super().__init__(reason)
        self.reason = reason
        self.cancelled = cancelled
        self.exit_code = exit_code
        self.stderr_tail = stderr_tail


def needs_layout(plan: Plan) -> bool:
    """A block job on a directory target: its data file (`create_new`) or its run directory."""
    if plan.file_run is not None or plan.data_file is None:
        return False
    glob = plan.job.get("global") or {}
    return glob.get("create_new") == "1" or glob.get("directory") == str(plan.data_file)


def layout_job(job: dict[str, Any]) -> dict[str, Any]:
    """The same job laying its files out only: `create_only=1` and `unlink=0` in the global section
    and in every job (a job's own `unlink` would win over the global one), no `startdelay` (it
    would only make the layout wait)."""
    glob = {k: v for k, v in (job.get("global") or {}).items() if k != "startdelay"}
    jobs = [
        {**{k: v for k, v in j.items() if k != "startdelay"}, **LAYOUT_OPTIONS} for j in job.get("jobs") or []
    ]
    return {"global": {**glob, **LAYOUT_OPTIONS}, "jobs": jobs}


def main_job(job: dict[str, Any]) -> dict[str, Any]:
    """The run's job once its file is laid out: the data file exists, so no `create_new`."""
    glob = {k: v for k, v in (job.get("global") or {}).items() if k != "create_new"}
    return {"global": glob, "jobs": [dict(j) for j in job.get("jobs") or []]}


@dataclass
class Laid:
    """The entries the layout made, held open until the engines start."""

    held: list[tuple[Path, int]] = field(default_factory=list)  # (path, O_PATH descriptor)

    def changed(self) -> str | None:
        """Why an entry's name no longer leads to what the layout made; None when each does."""
        for path, fd in self.held:
            try:
                now, then = os.lstat(path), os.fstat(fd)
            except OSError as exc:
                return f"the laid-out {path} is gone before the start: {exc.strerror or exc}: not started"
            if stat.S_ISLNK(now.st_mode) or (now.st_dev, now.st_ino) != (then.st_dev, then.st_ino):
                return f"the laid-out {path} was replaced before the start: not started"
        return None

    def close(self) -> None:
        for _, fd in self.held:
            with contextlib.suppress(OSError):
                os.close(fd)
        self.held.clear()


def lay_out(
    plans: list[Plan],
    *,
    engine_for: Callable[[Plan, int], EngineProcess],
    running: Callable[[EngineProcess | None], None],
    stop: threading.Event,
) -> Laid:
    """Lay out every plan that needs it, one after another, and hold what each made. The plans'
    jobs become the run's (main_job). `engine_for(plan, i)`: the layout's engine process (its job
    is `plan.job`, its progress forwarded so the lease lives and a cancel stops it); `running`
    is told the process that runs (a forced drain stops it). On failure everything laid out is
    removed and LayoutFailed raised."""
    laid = Laid()
    try:
        for i, plan in enumerate(plans):
            if not needs_layout(plan):
                continue
            if stop.is_set():
                raise LayoutFailed("agent stopped before the benchmark started")
            proc = engine_for(replace(plan, job=layout_job(plan.job)), i)
            t0 = time.monotonic()
            running(proc)
            try:
                outcome = proc.run()
            finally:
                running(None)
                proc.job_file.unlink(missing_ok=True)
            if not outcome.ok:
                raise LayoutFailed(
                    f"laying out {plan.filename} before the start failed: {outcome.error or 'engine failed'}",
                    cancelled=outcome.cancelled,
                    exit_code=outcome.exit_code,
                    stderr_tail=outcome.stderr_tail,
                )
            assert plan.data_file is not None
            try:
                fd = os.open(plan.data_file, os.O_PATH | os.O_NOFOLLOW)
            except OSError as exc:
                raise LayoutFailed(
                    f"the laid-out {plan.data_file} cannot be opened: {exc.strerror or exc}"
                ) from None
            laid.held.append((plan.data_file, fd))
            plan.job = main_job(plan.job)
            log.info("layout.done path=%s seconds=%.3f", plan.data_file, time.monotonic() - t0)
        problem = laid.changed()
        if problem is not None:
            raise LayoutFailed(problem)
        return laid
    except BaseException:
        laid.close()
        for plan in plans:
            cleanup_target(plan.data_file)
        raise
