"""What every workload kind is on the agent (ADR 0027): one `Runner` per module of this package,
listed once in `RUNNERS` (`__init__.py`), the same kinds as the server's `backend/workload/kinds`.

A runner owns how a checked lease job of its kind runs here: the run it prepares (text written,
the engine's --parse-only facts), the facts the host's limits are judged by, the program and its
arguments, the progress phases, how long a stop may take before SIGKILL, and the failed run's
reason in the child's own words. What a lease job may contain is libs/policy's (check_run), before
any runner sees it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from iowatt_workload import KIND_MODES, WorkloadKind

from .. import filework
from ..filework import FileRun

if TYPE_CHECKING:
    from ..runner import EngineOutcome, Phases


class Runner:
    """One workload kind on the host. The defaults are an engine file workload's: its text
    written to the state directory, the engine's --parse-only read for its facts, the engine
    run in a directory the agent makes inside the directory target."""

    kind: ClassVar[WorkloadKind]
    # the engine runs it (always available); else the agent's own program, which may need installs
    runs_engine: ClassVar[bool] = True
    # at least this long from SIGTERM to SIGKILL of the process group, seconds (None: the agent's)
    kill_grace_s: ClassVar[float | None] = None
    # the job's key whose text is written to the text file (None: the job as JSON) and which
    # libs/policy's FILE_JOB_KEYS names a refusal after
    text_key: ClassVar[str | None] = None
    refusal_key: ClassVar[str] = "records"
    # planned as a block job file on any target (a fio job file, ADR 0029), not in a run directory
    block_job: ClassVar[bool] = False

    @property
    def mode(self) -> str | None:
        """The lease job's "mode" (libs/workload's KIND_MODES: None for a block job file)."""
        return KIND_MODES[self.kind]

    def runtime_cap_s(self, engine_job: dict[str, Any], per_engine_run_s: float) -> float:
        """The agent's hard wall-clock limit of a run of this kind, from the host's limit of one
        engine run (max_runtime_s x 1.5 + slack: libs/policy judged the run's engine job against
        max_runtime_s): one engine run. A kind whose run is several engine runs, each judged
        against the host's limits, is capped at its planned number of them."""
        return per_engine_run_s

    def engine_args(self) -> list[str]:
        """Given to the engine before its job file (a fio job file's --untrusted)."""
        return []

    def available(self) -> bool:
        """This host can run the kind (the inventory's capabilities.workload_kinds)."""
        return self.runs_engine

    def prepare(
        self, engine: Path | str, engine_job: dict[str, Any], *, text_file: Path, target: str, run_key: str
    ) -> FileRun:
        """Write the workload's text (0600), run the engine's --parse-only on it and return the run
        with its facts. Raises filework.FileJobRefused (the text file is removed again)."""
        mode = str(engine_job["mode"])
        text = str(engine_job[self.text_key]) if self.text_key else json.dumps(engine_job) + "\n"
        run = self.new_run(engine_job, text_file=text_file, target=target, run_key=run_key)
        filework.write_text(text_file, text)
        try:
            run.facts = filework.parse_only(engine, self.arguments(run))
            filework.bounds_of(run.facts)
        except filework.FileJobRefused as exc:
            text_file.unlink(missing_ok=True)
            raise filework.FileJobRefused(
                filework.refusal(mode, exc.reason, self.refusal_key), exc.reason
            ) from None
        except BaseException:
            text_file.unlink(missing_ok=True)
            raise
        return run

    def scaled_job(
        self, engine: Path | str, engine_job: dict[str, Any], scale: float, *, scratch: Path
    ) -> dict[str, Any]:
        """A preset's job at `scale` for `bench --scale`, as a run's scale applies on the server
        (`scratch`: a private directory for any text). ValueError for a kind bench cannot scale."""
        raise ValueError(f"unknown file workload mode {self.mode!r}")

    def new_run(self, engine_job: dict[str, Any], *, text_file: Path, target: str, run_key: str) -> FileRun:
        return FileRun(
            mode=str(engine_job["mode"]),
            text_file=text_file,
            target=target,
            run_dir_name=filework.run_dir_name(run_key),
        )

    def limit_facts(self, run: FileRun, engine_job: dict[str, Any]) -> dict[str, Any]:
        """The facts the host's limits are judged by: the engine's bounds (never the server's).
        Raises filework.FileJobRefused when there are none."""
        return filework.bounds_of(run.facts)

    def program(self, run: FileRun | None, engine: Path | str) -> Path | str:
        """What runs: the engine."""
        return engine

    def arguments(self, run: FileRun) -> list[str]:
        """The program's arguments before --output-format and --progress."""
        raise NotImplementedError

    def phases(self, run: FileRun) -> Phases | None:
        """Progress weights of the engine's phases (None: its percent is of the whole run)."""
        return None

    def progress_phase(self, event: dict[str, Any]) -> str:
        """The phase a progress event without one is in ("" for none)."""
        return ""

    def failure_reason(self, outcome: EngineOutcome) -> str | None:
        """The failed run's reason when the program says it better than the exit code (None:
        the runner's own reason)."""
        return None
