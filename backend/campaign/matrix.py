"""A campaign as a matrix: several workloads, and parameter sweeps over block workloads' jobs
(block size × queue depth × threads × read share, as fio users script by hand), expanded here on
the server into cells — one workload spec each — before any run is queued.

A sweep sets the field on every job of the workload (a job file's or a preset's jobs alike), so a
cell is the workload as saved with that one change; the combination is named in the cell's label
and in its runs' names. What a sweep cannot mean is refused with a 422 naming the field: sweeping
a file workload (no jobs), a block size where a job sets bssplit (bssplit decides the sizes), a
read share where no job mixes reads and writes."""

import itertools
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from backend.errors import Invalid
from backend.workload.schemas import WorkloadSpec

SWEPT = ("bs_bytes", "iodepth", "numjobs", "rwmixread")  # the order of a cell's label
MIXED = ("rw", "randrw")


@dataclass(frozen=True)
class Cell:
    spec: WorkloadSpec
    workload_index: int  # which of the campaign's workloads (0: workload/workload_id)
    params: dict[str, int]  # the swept fields' values of this cell
    label: str  # "4 KiB · QD 32 · 4 threads · 70 % reads" (empty without a sweep)


def _size(n: int) -> str:
    for unit, factor in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= factor and n % factor == 0:
            return f"{n // factor} {unit}"
    return f"{n} B"


def _word(field: str, v: int) -> str:
    if field == "bs_bytes":
        return _size(v)
    if field == "iodepth":
        return f"QD {v}"
    if field == "numjobs":
        return f"{v} thread{'s' if v != 1 else ''}"
    return f"{v} % reads"


def label(params: dict[str, int]) -> str:
    return " · ".join(_word(k, params[k]) for k in SWEPT if k in params)


def params_of(spec: dict[str, Any]) -> dict[str, int]:
    """The swept fields a run's workload holds one value of across its jobs (as a cell sets them)."""
    jobs = spec.get("jobs") or []
    out: dict[str, int] = {}
    for k in SWEPT:
        values = {j.get(k) for j in jobs if k != "rwmixread" or j.get("rw") in MIXED}
        if len(values) == 1 and isinstance(v := next(iter(values)), int):
            out[k] = v
    return out


def combinations(sweep: dict[str, list[int]]) -> list[dict[str, int]]:
    """Every combination of the swept values, the first field varying slowest."""
    fields = [k for k in SWEPT if sweep.get(k)]
    return [
        dict(zip(fields, values, strict=True)) for values in itertools.product(*(sweep[k] for k in fields))
    ]


def expand(specs: list[WorkloadSpec], sweep: dict[str, list[int]]) -> list[Cell]:
    combos = combinations(sweep)
    cells: list[Cell] = []
    for i, spec in enumerate(specs):
        if not combos:
            cells.append(Cell(spec=spec, workload_index=i, params={}, label=""))
            continue
        where = "workload" if i == 0 else f"workload_ids.{i - 1}"
        if spec.kind != "block" or not spec.jobs:
            raise Invalid(
                f"sweep.{next(iter(combos[0]))}",
                f"{where}: a sweep sets block workloads' job options; this is a {spec.kind} workload",
            )
        doc = spec.model_dump(mode="json", exclude_none=True)
        jobs: list[dict[str, Any]] = doc["jobs"]
        if "bs_bytes" in combos[0] and any(j.get("bssplit") for j in jobs):
            raise Invalid("sweep.bs_bytes", f"{where}: a job sets bssplit, which decides its block sizes")
        if "rwmixread" in combos[0] and not any(j.get("rw") in MIXED for j in jobs):
            raise Invalid("sweep.rwmixread", f"{where}: no job mixes reads and writes (rw or randrw)")
        for params in combos:
            for j in jobs:
                for k, v in params.items():
                    if k != "rwmixread" or j.get("rw") in MIXED:
                        j[k] = v
            try:
                cell_spec = WorkloadSpec.model_validate(doc)
            except ValidationError as exc:
                err = exc.errors()[0]
                loc = ".".join(str(p) for p in err["loc"])
                raise Invalid(
                    f"sweep.{next(iter(params))}", f"{where} with {label(params)}: {loc}: {err['msg']}"
                ) from exc
            cells.append(Cell(spec=cell_spec, workload_index=i, params=dict(params), label=label(params)))
            doc = spec.model_dump(mode="json", exclude_none=True)
            jobs = doc["jobs"]
    return cells


def seconds(spec: WorkloadSpec) -> float | None:
    """The jobs' time limits summed (ramp and run time, every pass): what a time-based run
    measures, and at most what a size-bound one does; None when a job has no time limit."""
    if spec.kind != "block" or not spec.jobs:
        return None
    total = 0.0
    for j in spec.jobs:
        if not j.runtime_s:
            return None
        total += (j.ramp_time_s or 0) + j.runtime_s
    return total * (spec.passes + spec.discard_passes)
