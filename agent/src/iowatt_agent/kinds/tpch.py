"""TPC-H-derived runs (the kind `tpch`): not the engine but the agent's own child,
`python -m iowatt_agent.tpch.lease` (`tpch/lease.py`: the same code as `bench --preset tpch`), in
its own process group; it generates the data, starts a private DBMS in the directory target,
loads it and runs the power and throughput tests as the unprivileged TPC-H user. The host must
have the generator and the DBMS's server (else "unsupported on this host: ... install it"), and
its limits are judged by libs/workload's one TPC-H bound, never by facts from the server.

This module wires the kind into the registry from outside `tpch/` (ADR 0027): the child's
command line and run directory are `tpch.lease.TpchRun`'s, its grace and preparation
`tpch.lease`'s."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..filework import FileJobRefused, FileRun
from ..tpch import lease as tpch_lease
from .base import Runner

if TYPE_CHECKING:
    from ..runner import EngineOutcome


class TpchRunner(Runner):
    kind = "tpch"
    runs_engine = False
    # the child stops its DBMS and removes its files on SIGTERM: that takes a while
    kill_grace_s = tpch_lease.KILL_GRACE_S

    def available(self) -> bool:
        """A lease could run here on at least one DBMS (tpch.lease.supported_dbms: the generator,
        the [tpch] extra, the DBMS's server and, for a root agent, a TPC-H user and the
        capabilities to hand the run to it)."""
        return bool(tpch_lease.supported_dbms())

    def prepare(
        self, engine: Path | str, engine_job: dict[str, Any], *, text_file: Path, target: str, run_key: str
    ) -> FileRun:
        """The run of a checked TPC-H job (the job written, 0600); FileJobRefused when this host
        lacks what it needs (nothing written then)."""
        try:
            return tpch_lease.prepare(engine_job, text_file=text_file, target=target, run_key=run_key)
        except tpch_lease.Unavailable as exc:
            raise FileJobRefused(str(exc)) from None

    def limit_facts(self, run: FileRun, engine_job: dict[str, Any]) -> dict[str, Any] | None:
        """libs/workload's TPC-H bound (None from a libs/workload without one)."""
        return tpch_lease.facts_of(engine_job)

    def program(self, run: FileRun | None, engine: Path | str) -> Path | str:
        assert isinstance(run, tpch_lease.TpchRun)
        return run.program(engine)

    def arguments(self, run: FileRun) -> list[str]:
        assert isinstance(run, tpch_lease.TpchRun)
        return run.engine_args()

    def failure_reason(self, outcome: EngineOutcome) -> str | None:
        """The child's own words ("unsupported on this host: ..."), unless the agent stopped it."""
        if outcome.stop_reason is None and outcome.exit_code and outcome.messages:
            return outcome.messages[-1]
        return None
