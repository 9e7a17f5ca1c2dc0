"""A workload is a validated engine job spec in base units (bytes, seconds).

The server validates here what it can (422 naming the field); the engine validates again
at run time (exit 2), so a spec that slips through still cannot do harm.

`WorkloadSpec` is the wire's one flat object (a kind, a block workload's jobs, and one field of
parameters per other kind, named after it). What a kind does, its parameters' own checks and
limits included, lives in its module of `backend/workload/kinds/` (ADR 0027); this module checks
the shape and asks the spec's kind for the rest. The parameter models and limits are re-exported
here, where callers have always named them.
"""

import uuid
from collections.abc import Callable
from typing import Annotated, Any

from iowatt_workload import TPCH_LABEL as TPCH_LABEL  # re-exported: builtin.py's presets say it
from iowatt_workload import WorkloadKind as WorkloadKind
from iowatt_workload import is_multi_pass
from iowatt_workload import pass_of as pass_of  # re-exported: callers name it from here
from pydantic import BeforeValidator, Field, ValidationError, ValidationInfo, field_validator, model_validator

from backend.kit.schema import InputSchema, OutputSchema
from backend.workload.kinds import KINDS, PARAMETER_KINDS, Kind
from backend.workload.kinds.base import MAX_RANDSEED as MAX_RANDSEED
from backend.workload.kinds.base import SCALE_MAX as SCALE_MAX
from backend.workload.kinds.base import FileFacts as FileFacts
from backend.workload.kinds.base import bad as _bad
from backend.workload.kinds.block import MAX_BS as MAX_BS
from backend.workload.kinds.block import MAX_BSSPLIT as MAX_BSSPLIT
from backend.workload.kinds.block import SHORTEN_MIN as SHORTEN_MIN
from backend.workload.kinds.block import JobSpec as JobSpec
from backend.workload.kinds.heap_btree import HB_MAX_RECORDS as HB_MAX_RECORDS
from backend.workload.kinds.heap_btree import HeapBtreeSpec as HeapBtreeSpec
from backend.workload.kinds.innodb_flush import InnodbFlushSpec as InnodbFlushSpec
from backend.workload.kinds.jobfile import JobfileSpec as JobfileSpec
from backend.workload.kinds.postmark import PostmarkSpec as PostmarkSpec
from backend.workload.kinds.pts import PtsSpec as PtsSpec
from backend.workload.kinds.tpch import TpchSpec as TpchSpec
from backend.workload.kinds.vdbench import VdbenchSpec as VdbenchSpec

# Pass names (`TEST.pK`, pass_of) and best-of-passes are libs/workload's (iowatt_workload.passes):
# the agent and the server read them with the same code.

# each kind's label for messages ("a PostMark workload")
KIND_LABEL: dict[str, str] = {name: k.label for name, k in KINDS.items()}


class WorkloadSpec(InputSchema):
    kind: WorkloadKind = Field(
        "block",
        description="block: fio-style jobs (jobs); postmark: PostMark (postmark); vdbench: a vdbench file "
        f"set (vdbench); tpch: {TPCH_LABEL}, on a private DBMS (tpch); heap_btree: the P3608 "
        "report's heap/B-tree sweep (heap_btree); jobfile: a fio job file's text (jobfile); pts: a SNIA PTS "
        "run on a raw device: purge, preconditioning, rounds until steady state (pts); innodb_flush: the "
        "InnoDB flushing-policy matrix, sysbench oltp_write_only on a private MariaDB (innodb_flush)",
    )
    jobs: list[JobSpec] = Field(
        default_factory=list,
        max_length=200,
        validate_default=True,
        description="block workloads: 1 to 200 jobs; file workloads: none",
    )
    passes: int = Field(1, ge=1, le=20, description="measured passes per test (CrystalDiskMark-style)")
    discard_passes: int = Field(0, ge=0, le=5, description="leading passes run but not counted")
    shortened_by: float | None = Field(
        None,
        gt=0,
        lt=1,
        description="the factor this workload's jobs were shortened by (WorkloadSpec.shortened: runtimes, "
        "or a size-bound job's I/O, times the factor), recorded so results say so; null = full length",
    )
    postmark: PostmarkSpec | None = Field(None, validate_default=True, description="kind postmark only")
    vdbench: VdbenchSpec | None = Field(None, validate_default=True, description="kind vdbench only")
    tpch: TpchSpec | None = Field(None, validate_default=True, description=f"kind tpch only ({TPCH_LABEL})")
    heap_btree: HeapBtreeSpec | None = Field(None, validate_default=True, description="kind heap_btree only")
    jobfile: JobfileSpec | None = Field(
        None, validate_default=True, description="kind jobfile only (a fio job file, ADR 0029)"
    )
    pts: PtsSpec | None = Field(
        None, validate_default=True, description="kind pts only (a SNIA PTS run, docs/pts.md, ADR 0046)"
    )
    innodb_flush: InnodbFlushSpec | None = Field(
        None,
        validate_default=True,
        description="kind innodb_flush only (the InnoDB flushing-policy matrix, docs/innodb-flush.md)",
    )
    scaled_by: float | None = Field(
        None,
        gt=0,
        description="file workloads: the run's scale applied to this spec (vdbench: multiplied into "
        "vdbench.scale; postmark: number and transactions times it; tpch: the scale factor times it; "
        "heap_btree: records times it), recorded so results say so; null = as saved",
    )
    facts: FileFacts | None = Field(
        None,
        description="file workloads: the engine's --parse-only bounds as the server got them (set by "
        "the server; a value sent is replaced); null for block workloads",
    )

    @field_validator("jobs")
    @classmethod
    def _jobs_for_block_only(cls, v: list[JobSpec], info: ValidationInfo) -> list[JobSpec]:
        kind = info.data.get("kind", "block")
        if kind not in KINDS:  # refused at kind already
            return v
        if not KINDS[kind].is_file and not v:
            raise _bad(f"{KIND_LABEL[kind]} needs at least one job")
        if KINDS[kind].is_file and v:
            raise _bad(f"{KIND_LABEL[kind]} has no jobs: its parameters are in '{kind}'")
        return v

    @field_validator(*PARAMETER_KINDS)
    @classmethod
    def _parameters_for_their_kind(cls, v: object, info: ValidationInfo) -> object:
        """A kind's parameters are given for that kind and no other (the field is the kind's name)."""
        name = str(info.field_name)
        given = info.data.get("kind", "block")
        if given == name and v is None:
            raise _bad(f"{KIND_LABEL[name]} needs its parameters here")
        if given != name and v is not None:
            raise _bad(f"only a workload of kind {name!r} has these parameters (this one is {given!r})")
        return v

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

    @property
    def kind_def(self) -> Kind:
        """The spec's kind (backend/workload/kinds): what it runs, how long, how it is sized."""
        return KINDS[self.kind]

    @property
    def is_file(self) -> bool:
        return self.kind_def.is_file

    def shortened(self, factor: float) -> "WorkloadSpec":
        """The one implementation of a shortened preset ("×0.1 for a quick look"): every job cut
        to `factor` of its length, and the factor recorded (multiplied when shortened twice).
        Block workloads only: the other kinds are made smaller with `scaled`."""
        if self.kind_def.sizing != "shorten":
            how = "runs as written" if self.kind_def.sizing == "none" else "is made smaller with scale"
            raise ValueError(f"{self.kind_def.label} {how}, not shortened")
        if not SHORTEN_MIN <= factor < 1:
            raise ValueError(f"a shortening factor is from {SHORTEN_MIN} to below 1")
        recorded = round((self.shortened_by or 1.0) * factor, 6)
        return self.model_copy(
            update={"jobs": [j.shortened(factor) for j in self.jobs], "shortened_by": max(recorded, 1e-6)}
        )

    def scaled(self, factor: float) -> "WorkloadSpec":
        """A file workload at `factor` of its size (ADR 0022), as its kind scales it (vdbench's
        scale, PostMark's files and transactions, TPC-H's scale factor, heap/B-tree's records);
        the factor recorded in scaled_by (multiplied when scaled twice). The facts no longer hold:
        they are cleared (the server asks the engine again). ValueError when the result is out
        of bounds."""
        if self.kind_def.sizing != "scale":
            how = "runs as written" if self.kind_def.sizing == "none" else "is made shorter with shorten"
            raise ValueError(f"{self.kind_def.label} {how}, not scaled")
        if not factor > 0:
            raise ValueError("a scale is above 0")
        recorded = float(f"{(self.scaled_by or 1.0) * factor:.12g}")
        update: dict[str, object] = {"scaled_by": recorded, "facts": None}
        update.update(self.kind_def.scaled(self, factor))
        return self.model_copy(update=update)

    def engine_job(self) -> dict[str, object]:
        """What the agent receives in lease.engine_job: the engine's job file for a block workload;
        for the other kinds {"mode": MODE, ...parameters as strings, as the engine's flags} (each
        kind's engine_job says which)."""
        return self.kind_def.engine_job(self)

    def identity_jobs(self) -> list[dict[str, Any]]:
        """What the compare's like-for-like rule (iowatt_workload.identity) sees: a block
        workload's jobs; another kind's parameters as one entry ({"kind": ..., then its
        parameters}), so two such workloads are the same only when they run the same thing."""
        return self.kind_def.identity_jobs(self)

    def timeout_s(self) -> int:
        """The agent's hard wall-clock limit, seconds (each kind's timeout_s says how)."""
        return self.kind_def.timeout_s(self)


# --- stored specs ------------------------------------------------------------------------------
# A spec is stored as JSON with the version of this schema that wrote it ("spec_version"; rows
# written before versions existed have none: version 0). Reading upgrades it step by step to
# SPEC_VERSION, then validates it against today's rules; a stored spec that today's rules refuse
# (a limit tightened since) is still read with its stored values, never an error: it was valid
# when it was written, and the engine checks every job again before it runs (exit 2).
# Changing WorkloadSpec or JobSpec: bump SPEC_VERSION and add the upgrade from the previous
# version to _UPGRADES (a renamed field is moved there, a removed one dropped).

SPEC_VERSION = 8
_UPGRADES: dict[int, Callable[[dict[str, Any]], dict[str, Any]]] = {
    0: lambda doc: doc,  # version 1 is version 0 with a version number: nothing moves
    # version 2 adds job options (bssplit, rate_iops, random_distribution, fsync_every, sync,
    # randseed, loops) and the spec's shortened_by, all with defaults that mean "unset": nothing moves
    1: lambda doc: doc,
    # version 3 adds kind (default block), postmark, vdbench, scaled_by and facts (ADR 0022): every
    # version-2 spec is a block workload as it stands, so nothing moves
    2: lambda doc: doc,
    # version 4 adds kinds tpch and heap_btree with their tpch / heap_btree, both null
    # for every earlier kind: nothing moves
    3: lambda doc: doc,
    # version 5 adds kind jobfile with its jobfile (null for every earlier kind: nothing moves)
    4: lambda doc: doc,
    # version 6 adds kind pts with its pts (null for every earlier kind: nothing moves)
    5: lambda doc: doc,
    # version 7 adds kind innodb_flush with its innodb_flush (null for every earlier kind: nothing moves)
    6: lambda doc: doc,
    # version 8 adds the pts test hir with pts.burst_s, bursts and wait_states (null for every
    # other test: nothing moves)
    7: lambda doc: doc,
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
        jobs = [_job_as_stored(job) for job in doc.get("jobs", [])]
        nested: dict[str, Any] = {}
        models: list[tuple[str, type[InputSchema]]] = [
            (name, m) for name, k in KINDS.items() if (m := k.parameters_model) is not None
        ]
        models.append(("facts", FileFacts))
        for key, model in models:
            if isinstance(doc.get(key), dict):
                nested[key] = model.model_construct(
                    **{k: v for k, v in doc[key].items() if k in model.model_fields}
                )
        plain = {
            k: v for k, v in doc.items() if k in WorkloadSpec.model_fields and k not in ("jobs", *nested)
        }
        return WorkloadSpec.model_construct(jobs=jobs, **plain, **nested)


def _job_as_stored(job: dict[str, Any]) -> JobSpec:
    return JobSpec.model_construct(**{k: v for k, v in job.items() if k in JobSpec.model_fields})


def load_job(doc: dict[str, Any] | JobSpec) -> JobSpec:
    """A job as stored or as answered, as a JobSpec. Never fails: an imported job's unstated
    settings (null in an answer, with their list) and what today's rules refuse are kept as read."""
    if isinstance(doc, JobSpec):
        return doc
    try:
        return JobSpec.model_validate(doc)
    except ValidationError:
        return _job_as_stored(doc)


# An output field holding a job read back from an answer (a shared view's frozen JSON): load_job.
StoredJobSpec = Annotated[JobSpec, BeforeValidator(load_job)]

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
