"""A running run's whole share done and the time it has left, from its latest progress report and its
workload: the one owner of that rule (pure, no database). The server computes it at each report and
stores it with the report; the run page, the runs list, the dashboard and `iowatt run` all read
`progress.run_percent`, where the UI used to compute it in TypeScript and the CLI drew the engine's
percent of the current job (a run in the 5th of its 80 jobs read 87 %).

The run's plan, in order: the idle baseline before (idle_s), each job (ramp + runtime when the job is
time-bound; a size-bound job's length is known only once it runs, from its own percent, and once done
from the run's clock), the idle baseline after (idle_s), then the upload. The engine's percent is of
the current job. A workload without job specs (file and database workloads) is one load of unknown
length: its own percent when the run has no idle baseline.
"""

from dataclasses import dataclass
from typing import Any

# below this share of a size-bound job, its length from its own percent is too rough to count
_MIN_SHARE_TO_EXTRAPOLATE = 0.01


@dataclass(frozen=True)
class RunShare:
    percent: float  # 0..100 of the whole run
    eta_s: float  # seconds left by the plan (a lower bound when eta_at_least)
    eta_at_least: bool  # a job not yet done has no known length (size-bound)


def _plan_s(job: dict[str, Any]) -> float | None:
    runtime = job.get("runtime_s")
    if runtime is None:
        return None  # size-bound
    return float(job.get("ramp_time_s") or 0) + float(runtime)


def run_share(
    jobs: list[dict[str, Any]] | None,
    *,
    idle_s: float | None,
    phase: str,
    job_index: int,
    percent: float,
    elapsed_ns: int,
    run_s: float | None,
) -> RunShare:
    """The whole run's share at a report: `phase` "idle_before", "job" or "idle_after", the engine's
    `percent` and `elapsed_ns` of its current job `job_index`, `run_s` the seconds since the run
    started (None when unknown)."""
    specs = list(jobs or []) or [{}]  # no job specs: one load of unknown length
    n = len(specs)
    idle = float(idle_s or 0)
    k = min(max(0, job_index), n - 1)
    job_pct = max(0.0, min(100.0, percent)) / 100
    elapsed = elapsed_ns / 1e9
    in_job = phase == "job"

    def current_plan(i: int) -> float | None:
        planned = _plan_s(specs[i])
        if planned is not None:
            return planned
        return elapsed / job_pct if job_pct > _MIN_SHARE_TO_EXTRAPOLATE else None

    plans = [current_plan(i) if i == k and in_job else _plan_s(j) for i, j in enumerate(specs)]
    known = [s or 0.0 for s in plans]
    # size-bound jobs already done: their length is in no report, but the run's clock has it (the
    # time since the run started, less the idle baseline, the current job's time and the other jobs
    # before it); counted as 0, a run read 71 % late in such a job and 50 % as the next began
    done_before = k if in_job else n
    done_unknown = [i for i, s in enumerate(plans[:done_before]) if s is None]
    if done_unknown and run_s is not None and phase != "idle_before":
        current = elapsed if in_job else idle * job_pct
        measured = max(0.0, run_s - idle - current - sum(known[:done_before]))
        for i in done_unknown:
            known[i] = measured / len(done_unknown)
    total = 2 * idle + sum(known)

    if phase == "idle_before":
        done = idle * job_pct
    elif phase == "idle_after":
        done = idle + sum(known) + idle * job_pct
    else:
        done = idle + sum(known[:k]) + known[k] * job_pct
        if k == n - 1 and job_pct >= 1 and idle == 0:  # the last job done: the upload
            return RunShare(percent=100.0, eta_s=0.0, eta_at_least=False)
    later = plans[k + 1 :] if in_job else []
    at_least = any(s is None for s in later) or (in_job and plans[k] is None)
    share = min(100.0, 100 * done / total) if total > 0 else 100 * job_pct
    return RunShare(percent=share, eta_s=max(0.0, total - done), eta_at_least=at_least)
