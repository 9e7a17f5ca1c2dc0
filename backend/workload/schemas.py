"""A workload is a validated engine job spec in base units (bytes, seconds).

The server validates here what it can (422 naming the field); the engine validates again
at run time (exit 2), so a spec that slips through still cannot do harm.
"""

import uuid
from collections.abc import Callable
from typing import Annotated, Any, Literal

from iowatt_workload import KiB, MiB, is_multi_pass
from iowatt_workload import pass_of as pass_of  # re-exported: callers name it from here
from pydantic import BeforeValidator, Field, ValidationError, ValidationInfo, field_validator, model_validator

from backend.kit.schema import InputSchema, OutputSchema

Rw = Literal["read", "write", "randread", "randwrite", "rw", "randrw"]
IoEngine = Literal["psync", "libaio", "io_uring"]
Readahead = Literal["default", "on", "off"]
# engine fadvise_hint per readahead mode: "on" gives no hint, so the kernel's default readahead
# window applies (FADV_SEQUENTIAL would double it: more than "on"); "default" is fio's hint per
# pattern (SEQUENTIAL for sequential, RANDOM for random jobs).
_FADVISE = {"default": "1", "on": "0", "off": "random"}

MAX_BS = 256 * MiB


class JobSpec(InputSchema):
    name: str = Field(min_length=1, max_length=100, pattern=r"^[A-Za-z0-9_.\-]+$")
    rw: Rw
    size_bytes: int = Field(gt=0, description="size of the region (file) the job works on, bytes")
    offset_bytes: int = Field(0, ge=0, description="start of the region, bytes")
    bs_bytes: int = Field(gt=0, le=MAX_BS, description="block size in bytes")
    runtime_s: float | None = Field(None, gt=0, le=7 * 24 * 3600, description="time limit, seconds")
    time_based: bool = False
    ramp_time_s: float = Field(0, ge=0, le=24 * 3600, description="warm-up excluded from stats, seconds")
    rwmixread: int = Field(50, ge=0, le=100, description="percent reads in rw/randrw")
    numjobs: int = Field(1, ge=1, le=256)
    iodepth: int = Field(1, ge=1, le=4096)
    ioengine: IoEngine = "psync"
    direct: bool = False
    invalidate: bool = Field(True, description="drop the region from the page cache before a buffered job")
    readahead: Readahead = Field(
        "default",
        description="buffered runs: default (fio's per-pattern hint: SEQUENTIAL for sequential, RANDOM "
        "for random jobs), on (no hint: the kernel's default readahead), off (RANDOM: no readahead)",
    )
    end_fsync: bool = Field(
        False,
        description="jobs that write: fsync the file when the job ends; the sync's time counts in the "
        "job's runtime and so in its bandwidth (as fio's end_fsync); no effect on read-only jobs",
    )
    io_size_bytes: int | None = Field(
        None,
        gt=0,
        description="bytes to transfer per pass inside the region, as fio's io_size: sequential jobs "
        "do the first io_size_bytes of the region, random jobs distinct blocks drawn from all of it; "
        "null = size_bytes",
    )

    # Cross-field checks sit on the later field so a 422 names the field to fix.
    @field_validator("bs_bytes")
    @classmethod
    def _bs_fits(cls, v: int, info: ValidationInfo) -> int:
        size = info.data.get("size_bytes")
        if size is not None and v > size:
            raise ValueError(f"must not exceed size_bytes ({size})")
        return v

    @field_validator("time_based")
    @classmethod
    def _time_based_needs_runtime(cls, v: bool, info: ValidationInfo) -> bool:
        if v and info.data.get("runtime_s") is None:
            raise ValueError("time_based needs runtime_s")
        return v

    @field_validator("direct")
    @classmethod
    def _direct_aligned(cls, v: bool, info: ValidationInfo) -> bool:
        bs, off = info.data.get("bs_bytes"), info.data.get("offset_bytes")
        if v and ((bs is not None and bs % 512) or (off is not None and off % 512)):
            raise ValueError("direct I/O needs bs_bytes and offset_bytes in multiples of 512")
        return v

    @field_validator("io_size_bytes")
    @classmethod
    def _io_size_fits_a_block(cls, v: int | None, info: ValidationInfo) -> int | None:
        bs = info.data.get("bs_bytes")
        if v is not None and bs is not None and v < bs:
            raise ValueError(f"must be at least bs_bytes ({bs})")
        return v

    def engine_options(self) -> dict[str, str]:
        """fio option names with explicit-unit values, as the engine's JSON job file takes them."""
        opts = {
            "name": self.name,
            "rw": self.rw,
            "bs": str(self.bs_bytes),
            "size": str(self.size_bytes),
            "offset": str(self.offset_bytes),
            "numjobs": str(self.numjobs),
            "iodepth": str(self.iodepth),
            "ioengine": self.ioengine,
            "direct": "1" if self.direct else "0",
            "stonewall": "1",
        }
        if self.rw in ("rw", "randrw"):
            opts["rwmixread"] = str(self.rwmixread)
        if self.runtime_s is not None:
            opts["runtime"] = f"{int(self.runtime_s * 1000)}ms"
        if self.time_based:
            opts["time_based"] = "1"
        if self.ramp_time_s:
            opts["ramp_time"] = f"{int(self.ramp_time_s * 1000)}ms"
        if self.io_size_bytes is not None:
            opts["io_size"] = str(self.io_size_bytes)
        if self.end_fsync:
            opts["end_fsync"] = "1"
        if not self.direct:
            opts["invalidate"] = "1" if self.invalidate else "0"
            opts["fadvise_hint"] = _FADVISE[self.readahead]
        return opts

    def expected_duration_s(self) -> float:
        """Upper bound used for the agent's hard timeout (unbounded jobs get a generous cap)."""
        if self.runtime_s is not None:
            return self.runtime_s + self.ramp_time_s
        # size-bound: as slow as a disk doing small random I/O (256 KiB/s), at most an hour
        io_bytes = self.io_size_bytes or self.size_bytes
        return min(3600.0, io_bytes / (256 * KiB)) + self.ramp_time_s


# Pass names (`TEST.pK`, pass_of) and best-of-passes are libs/workload's (iowatt_workload.passes):
# the agent and the server read them with the same code.


class WorkloadSpec(InputSchema):
    jobs: list[JobSpec] = Field(min_length=1, max_length=200)
    passes: int = Field(1, ge=1, le=20, description="measured passes per test (CrystalDiskMark-style)")
    discard_passes: int = Field(0, ge=0, le=5, description="leading passes run but not counted")

    @model_validator(mode="after")
    def _unique_names(self) -> "WorkloadSpec":
        names = [j.name for j in self.jobs]
        if len(names) != len(set(names)):
            raise ValueError("job names must be unique within a workload")
        if is_multi_pass(self.passes, self.discard_passes):
            total = self.passes + self.discard_passes
            bad = [n for n in names if (pass_of(n) or ("", total))[1] >= total]
            if bad:
                raise ValueError(f"with passes, job names end in .p0 … .p{total - 1}: {', '.join(bad[:3])}")
        return self

    def engine_job(self) -> dict[str, object]:
        return {"global": {}, "jobs": [j.engine_options() for j in self.jobs]}

    def timeout_s(self) -> int:
        # The engine lays out and pre-fills files before reading: allow for that and for slack.
        return int(sum(j.expected_duration_s() for j in self.jobs) * 1.5 + 10 * len(self.jobs) + 300)


# --- stored specs ------------------------------------------------------------------------------
# A spec is stored as JSON with the version of this schema that wrote it ("spec_version"; rows
# written before versions existed have none: version 0). Reading upgrades it step by step to
# SPEC_VERSION, then validates it against today's rules; a stored spec that today's rules refuse
# (a limit tightened since) is still read with its stored values, never an error: it was valid
# when it was written, and the engine checks every job again before it runs (exit 2).
# Changing WorkloadSpec or JobSpec: bump SPEC_VERSION and add the upgrade from the previous
# version to _UPGRADES (a renamed field is moved there, a removed one dropped).

SPEC_VERSION = 1
_UPGRADES: dict[int, Callable[[dict[str, Any]], dict[str, Any]]] = {
    0: lambda doc: doc,  # version 1 is version 0 with a version number: nothing moves
}


def stored_spec(spec: WorkloadSpec) -> dict[str, Any]:
    """The JSON a run or workload row stores: the spec and the version of the schema writing it."""
    return {**spec.model_dump(mode="json"), "spec_version": SPEC_VERSION}


def upgrade_spec(doc: dict[str, Any]) -> dict[str, Any]:
    """A stored spec brought to today's field names and shape (without its version key)."""
    doc = dict(doc)
    version = int(doc.pop("spec_version", 0))
    while version < SPEC_VERSION:
        doc = _UPGRADES[version](doc)
        version += 1
    return doc


def load_spec(doc: dict[str, Any] | WorkloadSpec) -> WorkloadSpec:
    """A stored spec as a WorkloadSpec. Never fails on a row written by an older schema: what
    today's rules refuse keeps its stored value (fields unknown today are left out)."""
    if isinstance(doc, WorkloadSpec):
        return doc
    doc = upgrade_spec(doc)
    try:
        return WorkloadSpec.model_validate(doc)
    except ValidationError:
        jobs = [
            JobSpec.model_construct(**{k: v for k, v in job.items() if k in JobSpec.model_fields})
            for job in doc.get("jobs", [])
        ]
        return WorkloadSpec.model_construct(
            jobs=jobs, **{k: v for k, v in doc.items() if k in WorkloadSpec.model_fields and k != "jobs"}
        )


# An output field holding a stored spec: read with load_spec, so a response carrying an old row
# is not re-validated against today's input limits (the instance load_spec returns is taken as it
# is: models do not re-validate instances), and the OpenAPI schema stays WorkloadSpec.
StoredWorkloadSpec = Annotated[WorkloadSpec, BeforeValidator(load_spec)]


class WorkloadCreate(InputSchema):
    name: str = Field(min_length=1, max_length=120)
    description: str = Field("", max_length=2000)
    team_id: uuid.UUID
    spec: WorkloadSpec


class WorkloadRead(OutputSchema):
    id: uuid.UUID
    name: str
    description: str
    spec: StoredWorkloadSpec
    builtin: bool
