"""SNIA PTS runs (the kind `pts`; docs/pts.md, ADR 0046) on a raw device the host marked
destructive, with the run's own `destructive` (both keys, ADR 0009): not the engine but the
agent's child `python -m iowatt_agent.pts` (`pts.py`), in its own process group like TPC-H's,
which purges the device, preconditions it and runs the test's rounds, each round one engine run
of a block job file libs/policy judged beforehand, and prints one document.

The runner reads the device's capacity here (the tested region and the host's check of every
engine job the run makes depend on it), writes the child's job 0600 beside the lease's files and
keeps a work directory there for the engine's job files (never on the device)."""

from __future__ import annotations

import json
import os
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from iowatt_workload.pts import PtsJobError, engine_runs_max, hir_idle_seconds, parse_job

from .. import filework
from ..filework import FileJobRefused, FileRun
from ..policy import engine_options
from ..pts import PURGE_TIMEOUT_S
from .base import Runner

if TYPE_CHECKING:
    from ..runner import EngineOutcome, Phases


def device_capacity(path: str) -> int:
    """Bytes of the block device at `path` (its end, as the kernel reports it)."""
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    try:
        return os.lseek(fd, 0, os.SEEK_END)
    finally:
        os.close(fd)


@dataclass
class PtsRun(FileRun):
    """A PTS run: `target` is the device; the run's directory is a work directory in the agent's
    state directory (engine job files), never on the device."""

    work_dir: Path | None = None
    capacity_bytes: int = 0

    @property
    def run_dir(self) -> Path:
        assert self.work_dir is not None
        return self.work_dir

    def make_dir(self) -> None:
        assert self.work_dir is not None
        shutil.rmtree(self.work_dir, ignore_errors=True)
        self.work_dir.mkdir(mode=0o700, parents=True)

    def remove_dir(self) -> None:
        if self.work_dir is not None:
            shutil.rmtree(self.work_dir, ignore_errors=True)

    def discard(self) -> None:
        self.remove_dir()
        self.text_file.unlink(missing_ok=True)


class PtsRunner(Runner):
    kind = "pts"
    runs_engine = False  # the child runs the engine (and the purge's programs)
    kill_grace_s = 15.0  # SIGTERM reaches the engine too: it stops its round and exits
    refusal_key = "test"

    def available(self) -> bool:
        """Any Linux host with the engine: the purge takes what the device and host have."""
        return True

    def prepare(
        self, engine: Path | str, engine_job: dict[str, Any], *, text_file: Path, target: str, run_key: str
    ) -> FileRun:
        """The child's job (0600): the parameters, the device, the engine, the capacity and the
        agent's own options of a destructive device target. FileJobRefused when the job is not a
        PTS run or the device cannot be read."""
        try:
            parse_job(engine_job)
        except PtsJobError as exc:
            raise FileJobRefused(f"pts: {exc}", str(exc)) from None
        try:
            capacity = device_capacity(target)
        except OSError as exc:
            raise FileJobRefused(f"pts: cannot read the size of {target}: {exc.strerror}") from None
        options, _ = engine_options("device", target, run_key, writable=True, destructive=True)
        work_dir = text_file.with_name(text_file.name + ".d")
        run = PtsRun(
            mode="pts",
            text_file=text_file,
            target=target,
            run_dir_name=filework.run_dir_name(run_key),
            work_dir=work_dir,
            capacity_bytes=capacity,
        )
        doc = {
            "params": engine_job,
            "device": target,
            "engine": str(engine),
            "capacity_bytes": capacity,
            "agent_options": options,
            "work_dir": str(work_dir),
        }
        filework.write_text(text_file, json.dumps(doc) + "\n")
        return run

    def runtime_cap_s(self, engine_job: dict[str, Any], per_engine_run_s: float) -> float:
        """A PTS run is many engine runs, each judged against the host's max_runtime_s (libs/policy
        checks every engine job the run makes): the purge's own limit, then every engine run the
        run may take (the preconditioning where the test has one, every round up to the limit:
        25, WSAT 1,440; Host Idle Recovery's bursts and returns to baseline), each at the host's
        limit of one engine run, and Host Idle Recovery's host idle, when no engine runs. A whole
        specification run (25 rounds of 56 one-minute elements: 23 h 20 min of rounds) is not cut
        at the limit of one engine run."""
        params = parse_job(engine_job)
        return PURGE_TIMEOUT_S + engine_runs_max(params) * per_engine_run_s + hir_idle_seconds(params)

    def limit_facts(self, run: FileRun, engine_job: dict[str, Any]) -> dict[str, Any]:
        """The device's capacity as read here: libs/policy builds the run's engine jobs from it
        and judges each as a block job."""
        assert isinstance(run, PtsRun)
        return {"mode": "pts", "capacity_bytes": run.capacity_bytes}

    def program(self, run: FileRun | None, engine: Path | str) -> Path | str:
        return sys.executable

    def arguments(self, run: FileRun) -> list[str]:
        return ["-m", "iowatt_agent.pts", f"--job={run.text_file}"]

    def phases(self, run: FileRun) -> Phases | None:
        return None  # the child reports the whole run's percent

    def failure_reason(self, outcome: EngineOutcome) -> str | None:
        """The child's own words ("pts: round 3: the engine exited 2: ..."), unless the agent
        stopped it."""
        if outcome.stop_reason is None and outcome.exit_code and outcome.messages:
            return outcome.messages[-1]
        return None
