"""One measured run, the same for `bench` and for a server's lease: idle baseline before, the
engine's load, idle baseline after, with the power session around them.

    idle_before ─ load (engine) ─ [data file removed] ─ idle_after (only after a good run)

Without a meter only the engine runs. `stop` ends an idle phase early and keeps the engine from
starting once it is set (the caller also stops a running engine: `EngineProcess.stop`). The data
file of a directory target is removed before idle_after, so its removal is not "idle" power.
A file workload's run directory (`filework.FileRun`) is made just before the engine starts and
removed, with anything left in it, right after it ends, also when it fails or is stopped.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

from .filework import FileRun
from .pagecache import PageCacheProbe
from .power import IdleTick, PowerSession
from .runner import EngineOutcome, cleanup_target

log = logging.getLogger("iowatt_agent.measured")


@dataclass
class MeasuredRun:
    outcome: EngineOutcome | None  # None: stopped before the engine started
    power: dict[str, Any] | None  # the contract §4 power object; None without a meter


class Engine(Protocol):
    """What runs the load: one `EngineProcess`, or a multi-target run's `multi.EngineGroup`."""

    job_file: Path

    def run(self) -> EngineOutcome: ...


def run_measured(
    proc: Engine,
    session: PowerSession | None,
    *,
    stop: threading.Event,
    data_file: Path | None,
    on_idle: IdleTick | None = None,
    tick_s: float = 1.0,
    on_meter_started: Callable[[PowerSession], None] | None = None,
    file_run: FileRun | None = None,
    before_load: Callable[[], bool] | None = None,
    page_cache: PageCacheProbe | None = None,
) -> MeasuredRun:
    """Run the sequence to its end (or to `stop`). The job file and the data file are gone and
    the meter is stopped when this returns, also when it raises. `before_load` runs between the
    idle baseline and the engine (a group run's start barrier: group.py); False: the engine
    never starts (as a stop before it). `page_cache` records the host's write-back settings and,
    for buffered I/O, samples Dirty/Writeback while the engine runs (pagecache.py): the result's
    document carries them as its `page_cache`."""
    finished = False

    def finish() -> dict[str, Any] | None:
        nonlocal finished
        finished = True
        return session.finish() if session is not None else None

    try:
        if session is not None:
            session.start()
            if on_meter_started is not None:
                on_meter_started(session)
            if not session.idle("idle_before", stop=stop, on_tick=on_idle, tick_s=tick_s):
                return MeasuredRun(None, finish())
        if stop.is_set():  # a forced stop that came before the engine: it never starts
            return MeasuredRun(None, finish())
        if before_load is not None and not before_load():
            return MeasuredRun(None, finish())
        try:
            if file_run is not None:
                try:
                    file_run.make_dir()
                except OSError as exc:
                    now = datetime.now(UTC)
                    reason = f"cannot make the run directory {file_run.run_dir}: {exc.strerror or exc}"
                    return MeasuredRun(
                        EngineOutcome(None, None, None, "", "", [], now, now, error=reason), finish()
                    )
            if page_cache is not None:
                page_cache.start()
            try:
                if session is not None:
                    with session.phase("load"):
                        outcome = proc.run()
                else:
                    outcome = proc.run()
            finally:
                if page_cache is not None:
                    page_cache.stop()
            if page_cache is not None and isinstance(outcome.result, dict):
                outcome.result.setdefault("page_cache", page_cache.document())
        finally:
            _cleanup(proc, data_file, file_run)
        if session is not None and outcome.ok:
            session.idle("idle_after", stop=stop, on_tick=on_idle, tick_s=tick_s)
        return MeasuredRun(outcome, finish())
    finally:
        if not finished:  # raised: stop the meter without hiding the error
            try:
                finish()
            except Exception:  # noqa: BLE001
                log.exception("meter.finish_failed")
        _cleanup(proc, data_file, file_run)


def _cleanup(proc: Engine, data_file: Path | None, file_run: FileRun | None) -> None:
    cleanup_target(data_file)
    if file_run is not None:
        file_run.remove_dir()
    proc.job_file.unlink(missing_ok=True)
