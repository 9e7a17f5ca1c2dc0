"""TPC-H-derived runs (the kind `tpch`): not the engine but the agent's own child,
`python -m iowatt_agent.tpch.lease` (`tpch/lease.py`: the same code as `bench --preset tpch`), in
its own process group; it generates the data, starts a private DBMS in the directory target,
loads it and runs the power and throughput tests as the unprivileged TPC-H user. The host must
have the generator and the DBMS's server (else the run fails "unsupported on this host: ...
install it"), and its limits are judged by libs/workload's one TPC-H bound, never by facts from
the server.

The child's command line and grace are this runner's; the run directory (made by the child,
removed by a helper, `tpch.lease.TpchRun`), the host check and the job written are
`tpch.lease`'s (ADR 0027)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..filework import FileRun
from ..tpch import lease as tpch_lease
from .base import Runner

if TYPE_CHECKING:
    from ..runner import EngineOutcome


class TpchRunner(Runner):
    kind = "tpch"
    runs_engine = False
    # SIGTERM to SIGKILL: the child stops its DBMS and removes its files, which takes a while
    kill_grace_s = 30.0

    def available(self) -> bool:
        """A lease could run here on at least one DBMS (tpch.lease.supported_dbms: the generator,
        the [tpch] extra, the DBMS's server and, for a root agent, a TPC-H user and the
        capabilities to hand the run to it)."""
        return bool(tpch_lease.supported_dbms())

    def prepare(
        self, engine: Path | str, engine_job: dict[str, Any], *, text_file: Path, target: str, run_key: str
    ) -> FileRun:
        """The run of a checked TPC-H job (the job written, 0600); FileJobRefused ("unsupported
        on this host: ...") when this host lacks what it needs (nothing written then)."""
        return tpch_lease.prepare(engine_job, text_file=text_file, target=target, run_key=run_key)

    def limit_facts(self, run: FileRun, engine_job: dict[str, Any]) -> dict[str, Any]:
        """libs/workload's TPC-H bound of the job's scale factor and streams."""
        return tpch_lease.facts_of(engine_job)

    def program(self, run: FileRun | None, engine: Path | str) -> Path | str:
        """This Python, running the child module (never the engine)."""
        return sys.executable

    def arguments(self, run: FileRun) -> list[str]:
        """The child's: the job written by `prepare`, the run directory and its target."""
        return [
            "-m",
            "iowatt_agent.tpch.lease",
            f"--job={run.text_file}",
            f"--directory={run.run_dir}",
            f"--target={run.target}",
        ]

    # phases: none (base): the child reports the whole run's percent

    def failure_reason(self, outcome: EngineOutcome) -> str | None:
        """The child's own words ("unsupported on this host: ..."), unless the agent stopped it."""
        if outcome.stop_reason is None and outcome.exit_code and outcome.messages:
            return outcome.messages[-1]
        return None
