"""A run's job figures as the API shows them: `jobs` (JobSummary) and `passes` (PassSummary) of a
RunRead, from its result_jobs rows.

One mapping, two inputs: the columns read as plain tuples (`repository.job_rows`: a runs list,
whose page of 50 CrystalDiskMark runs holds 1,720 jobs), or ORM rows a caller already loaded
(compare, a group's members, a multi-target upload), taken as the same tuple. Each job is a dict
of plain values that pydantic validates into its models in one call (`JOBS`), not a DirSummary
and a JobSummary built in Python per job from an ORM object's attributes: those were ~75 ms of
the 50-run page's ~130 ms of API CPU (docs/benchmarks.md § The name sort with jobs (session 26)).
What the answer holds is the same, to the byte."""

from collections.abc import Iterable, Sequence
from operator import attrgetter, itemgetter
from typing import Any

from pydantic import TypeAdapter

from backend.models import ResultJob
from backend.run.schemas import DirSummary, JobSummary, PassSummary
from backend.workload.passes import PASS_COLUMNS, BestOf, best_of_results, pass_result_of

_TOP = (
    "job_index",
    "name",
    "rw",
    "bs_bytes",
    "runtime_ns",
    "usr_cpu_pct",
    "sys_cpu_pct",
    "kernel_worker_cpu_pct",
    "target_nowait",
)
_SIDE = tuple(DirSummary.model_fields)
# the result_jobs columns a job's figures are made of, in the order a row holds them
COLUMNS = (*_TOP, *(f"read_{f}" for f in _SIDE), *(f"write_{f}" for f in _SIDE))
_READ, _WRITE, _END = len(_TOP), len(_TOP) + len(_SIDE), len(COLUMNS)
_READ_IOS, _WRITE_IOS = COLUMNS.index("read_total_ios"), COLUMNS.index("write_total_ios")
_PASS = itemgetter(*(COLUMNS.index(c) for c in PASS_COLUMNS))  # a row's PASS_COLUMNS

JOBS: TypeAdapter[list[JobSummary]] = TypeAdapter(list[JobSummary])
values_of = attrgetter(*COLUMNS)  # an ORM row as the tuple a read row is


def job_fields(v: Sequence[Any]) -> dict[str, Any]:
    """A job's JobSummary fields from its COLUMNS (a row may hold more after them); a direction
    that moved no I/O (total_ios null or 0) is null."""
    job = dict(zip(_TOP, v, strict=False))
    job["read"] = dict(zip(_SIDE, v[_READ:_WRITE], strict=True)) if v[_READ_IOS] else None
    job["write"] = dict(zip(_SIDE, v[_WRITE:_END], strict=True)) if v[_WRITE_IOS] else None
    return job


def pass_summary(b: BestOf) -> PassSummary:
    return PassSummary(
        test=b.test,
        direction=b.direction,
        passes=b.passes,
        discarded=b.discarded,
        bw_bytes=[int(bw) for bw in b.bw_bytes],
        iops=list(b.iops),
        best_bw_bytes=int(b.best_bw_bytes),
        median_bw_bytes=b.median_bw_bytes,
        best_iops=b.best_iops,
        median_iops=b.median_iops,
        spread_pct=b.spread_pct,
        best_job=b.best_job,
    )


def summaries(
    spec: dict[str, Any], rows: Sequence[Sequence[Any]]
) -> tuple[list[JobSummary], list[PassSummary]]:
    """A run's `jobs` and `passes` from its rows (COLUMNS, in job order) and its stored spec (the
    passes rule: libs/workload, through backend/workload/passes.py)."""
    results = (pass_result_of(*_PASS(v)) for v in rows)  # consumed only by a multi-pass spec
    return JOBS.validate_python([job_fields(v) for v in rows]), [
        pass_summary(b) for b in best_of_results(spec, results)
    ]


def of_jobs(spec: dict[str, Any], jobs: Iterable[ResultJob]) -> tuple[list[JobSummary], list[PassSummary]]:
    """`summaries` of ORM rows a caller loaded."""
    return summaries(spec, [values_of(j) for j in jobs])
