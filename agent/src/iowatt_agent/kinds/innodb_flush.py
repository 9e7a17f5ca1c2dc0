"""The InnoDB flushing-policy matrix (the kind `innodb_flush`, lease job mode `innodb-flush`;
docs/innodb-flush.md): not the engine but the agent's child `python -m iowatt_agent.innodb.lease`,
in its own process group, which starts a private MariaDB in the directory target as the DBMS's
unprivileged user (TPC-H's isolation) and runs sysbench's oltp_write_only once per setting. The
host must have MariaDB's server and sysbench (else the run fails "unsupported on this host: ...
install it"), must have consented to MariaDB (`iowatt-agent targets allow-dbms mariadb`, checked by
libs/policy), and its limits are judged by libs/workload's innodb_facts of the job, never by facts
from the server."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from iowatt_workload.innodb import INNODB_SECONDS_MAX, INNODB_SECONDS_MIN, INNODB_WARMUP_S_MAX

from ..filework import FileRun
from ..innodb import lease as innodb_lease
from .base import Runner

if TYPE_CHECKING:
    from ..runner import EngineOutcome


class InnodbFlushRunner(Runner):
    kind = "innodb_flush"
    runs_engine = False
    # SIGTERM to SIGKILL: the child stops its DBMS and has its files removed
    kill_grace_s = 30.0

    def available(self) -> bool:
        """MariaDB's server, sysbench and, for a root agent, the DBMS user and the capabilities."""
        return innodb_lease.supported()

    def prepare(
        self, engine: Path | str, engine_job: dict[str, Any], *, text_file: Path, target: str, run_key: str
    ) -> FileRun:
        return innodb_lease.prepare(engine_job, text_file=text_file, target=target, run_key=run_key)

    def limit_facts(self, run: FileRun, engine_job: dict[str, Any]) -> dict[str, Any]:
        """libs/workload's innodb_facts of the job's values."""
        return innodb_lease.facts_of(engine_job)

    def scaled_job(
        self, engine: Path | str, engine_job: dict[str, Any], scale: float, *, scratch: Path
    ) -> dict[str, Any]:
        """`bench --scale`: the seconds per setting and the warm-up `scale` times (as a run's scale
        on the server; at least 1 s measured). ValueError beyond the bounds."""
        o = innodb_lease.options_of(engine_job)
        seconds = max(INNODB_SECONDS_MIN, round(o.seconds * scale))
        if seconds > INNODB_SECONDS_MAX:
            raise ValueError(f"{o.seconds} s times {scale:g} is above {INNODB_SECONDS_MAX} s per setting")
        warmup = min(INNODB_WARMUP_S_MAX, round(o.warmup_s * scale))
        return {**engine_job, "seconds": str(seconds), "warmup_s": str(warmup)}

    def program(self, run: FileRun | None, engine: Path | str) -> Path | str:
        return sys.executable

    def arguments(self, run: FileRun) -> list[str]:
        return [
            "-m",
            "iowatt_agent.innodb.lease",
            f"--job={run.text_file}",
            f"--directory={run.run_dir}",
            f"--target={run.target}",
        ]

    def failure_reason(self, outcome: EngineOutcome) -> str | None:
        """The child's own words, unless the agent stopped it."""
        if outcome.stop_reason is None and outcome.exit_code and outcome.messages:
            return outcome.messages[-1]
        return None
