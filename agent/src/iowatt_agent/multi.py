"""Multi-target leases: one run on several targets of this host at once (docs/adr/0036).

Each target is planned as a lease of its own (`plan.plan_lease`: the host policy on that target,
with the host-wide limits shared between the targets, its own engine job with its own
`filename`/`beneath`, read-only or destructive options), and each gets an engine process of its
own; `EngineGroup` starts them together (a barrier, then each thread's Popen) and waits for all.
One that fails, times out or is stopped stops the others, and the run fails naming the target.
Each target's document is kept apart and uploaded as `targets` (the server combines them).
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from iowatt_policy import MAX_TARGETS

from .plan import Plan, Refused
from .runner import EngineOutcome, EngineProcess, EngineProgress, cleanup_target
from .schemas import Lease

log = logging.getLogger("iowatt_agent.multi")


def target_leases(lease: Lease) -> list[Lease]:
    """The lease as one lease per target (same run, lease and job), or Refused when the targets
    cannot be run together here."""
    targets = lease.targets or [lease.target_path]
    if len(targets) > MAX_TARGETS:
        raise Refused(f"a run may name at most {MAX_TARGETS} targets; this lease names {len(targets)}")
    if len(set(targets)) != len(targets):
        raise Refused("the lease names a target twice")
    if targets[0] != lease.target_path:
        raise Refused("the lease's first target is not its target_path")
    return [lease.model_copy(update={"target_path": t, "targets": None}) for t in targets]


def check_block(plans: list[Plan]) -> None:
    """Several targets run block workloads only (no file workload, no job file's directory)."""
    for plan in plans:
        if plan.file_run is not None or plan.runner.mode is not None or plan.runner.block_job:
            raise Refused("a multi-target run runs block workloads only")


class EngineGroup:
    """The engine processes of a multi-target run, one per target, run at the same time. It
    stands where one `EngineProcess` stands in `measured.run_measured` (run, stop, job_file: the
    first target's; the other targets' job and data files are removed here when they end)."""

    def __init__(self, procs: list[EngineProcess], paths: list[str], data_files: list[Path | None]) -> None:
        self.procs = procs
        self.paths = paths
        self.data_files = data_files
        self.job_file = procs[0].job_file
        self._failed: int | None = None
        self._lock = threading.Lock()

    def stop(self, reason: str, *, cancelled: bool = False) -> None:
        for proc in self.procs:
            proc.stop(reason, cancelled=cancelled)

    @property
    def running(self) -> bool:
        return any(p.running for p in self.procs)

    def combined_progress(self, i: int, first: EngineProgress) -> EngineProgress:
        """Target i's progress with the rates of every other target still running added."""
        others = [p.latest for j, p in enumerate(self.procs) if j != i and p.running and p.latest is not None]
        latest = [first, *others]
        return EngineProgress(
            job_index=first.job_index,
            job_name=first.job_name,
            percent=min([first.percent] + [p.percent for p in latest[1:]]),
            elapsed_ns=first.elapsed_ns,
            planned_ns=first.planned_ns,
            read_iops=sum(p.read_iops for p in latest),
            read_bw_bytes=sum(p.read_bw_bytes for p in latest),
            write_iops=sum(p.write_iops for p in latest),
            write_bw_bytes=sum(p.write_bw_bytes for p in latest),
        )

    def forward_progress(self, forward: Callable[[EngineProgress], bool]) -> None:
        """Progress goes to the server once per interval, with every target's rates, from the
        first target's engine still running (a target that ends early hands the reports, and so
        the lease's keep-alive, to the next)."""

        def from_target(i: int) -> Callable[[EngineProgress], bool | None]:
            def on_progress(p: EngineProgress) -> bool | None:
                if any(proc.running for proc in self.procs[:i]):
                    return None  # an earlier target reports for the run
                return forward(self.combined_progress(i, p))

            return on_progress

        for i, proc in enumerate(self.procs):
            proc.on_progress = from_target(i)

    def run(self) -> EngineOutcome:
        n = len(self.procs)
        outcomes: list[EngineOutcome | None] = [None] * n
        barrier = threading.Barrier(n)

        def one(i: int) -> None:
            # another thread never came: start anyway (the skew shows in the results' times)
            with contextlib.suppress(threading.BrokenBarrierError):
                barrier.wait(timeout=30)
            outcome = self.procs[i].run()
            outcomes[i] = outcome
            if not outcome.ok:
                with self._lock:
                    first = self._failed is None
                    if first:
                        self._failed = i
                if first:
                    why = outcome.stop_reason or outcome.error or "engine failed"
                    for j, proc in enumerate(self.procs):
                        if j != i:
                            proc.stop(
                                f"target {i} ({self.paths[i]}) ended the run: {why}",
                                cancelled=outcome.cancelled,
                            )

        threads = [threading.Thread(target=one, args=(i,), name=f"engine-{i}", daemon=True) for i in range(n)]
        try:
            for t in threads:
                t.start()
            for t in threads:
                t.join()
        finally:
            for proc, data_file in zip(self.procs[1:], self.data_files[1:], strict=True):
                cleanup_target(data_file)
                proc.job_file.unlink(missing_ok=True)
        return self._outcome([o for o in outcomes if o is not None])

    def _outcome(self, outcomes: list[EngineOutcome]) -> EngineOutcome:
        """One outcome: ok with every target's document (`target_results`) when all are ok, else
        the failing target's, its reason naming the target."""
        started = min(o.started_at for o in outcomes)
        finished = max(o.finished_at for o in outcomes)
        if len(outcomes) == len(self.procs) and all(o.ok for o in outcomes):
            first = outcomes[0]
            results: list[dict[str, Any]] = [o.result for o in outcomes if o.result is not None]
            return EngineOutcome(
                0,
                None,
                first.result,
                "",
                "\n".join(o.stderr_tail for o in outcomes if o.stderr_tail)[-4000:],
                [m for o in outcomes for m in o.messages],
                started,
                finished,
                target_results=results,
            )
        i = (
            self._failed
            if self._failed is not None
            else next((k for k, o in enumerate(outcomes) if not o.ok), 0)
        )
        bad = outcomes[i] if i < len(outcomes) else outcomes[0]
        error = bad.error or "engine failed"
        return EngineOutcome(
            bad.exit_code,
            bad.term_signal,
            None,
            "",
            bad.stderr_tail,
            bad.messages,
            started,
            finished,
            timed_out=any(o.timed_out for o in outcomes),
            cancelled=any(o.cancelled for o in outcomes),
            stop_reason=bad.stop_reason,
            error=f"target {i} ({self.paths[i]}): {error}",
        )
