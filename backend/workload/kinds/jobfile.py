"""fio job files (the kind `jobfile`, ADR 0029): a storage engineer's job file as its text, kept
byte for byte, and as the engine's parse of it (`iowatt-engine --untrusted --parse-only FILE`: the
engine is the only parser). The agent runs it as a block job in a file, a device or a directory's
data file: the job file's `filename` and `directory` are replaced by the run's target, never
followed (libs/policy's jobfile.block_job, the same on both sides). Neither shortened nor scaled:
it runs as written."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, ClassVar

from iowatt_policy import (
    MAX_JOBFILE_CHARS,
    REPLACED_OPTIONS,
    ParseUnreadable,
    parse_time_ns,
    parsed_jobs,
    replaced_options,
)
from pydantic import Field, StringConstraints, field_validator

from backend.kit.messages import human_bytes
from backend.kit.schema import InputSchema
from backend.workload.kinds.base import Family, Kind, ParseOnly, Sizing, TargetKind, bad

if TYPE_CHECKING:
    from backend.workload.schemas import WorkloadSpec

# a size-bound job (no runtime) is given as long as block's: an hour at most, then slack
SIZE_BOUND_JOB_S = 3600.0

# the text exactly as given: the schemas' whitespace stripping does not apply
Verbatim = Annotated[str, StringConstraints(strip_whitespace=False)]


class JobfileJob(InputSchema):
    """One job the engine makes of the job file (a section, or a numjobs clone's parent)."""

    name: str = Field(max_length=1000, description="the section's name")
    group: int = Field(ge=0, description="the reporting group it runs in (fio's stonewall / new_group)")
    options: dict[str, str] = Field(
        description="its options as the engine read them ([global]'s, then the section's own)"
    )
    line: int | None = Field(None, description="the line of its section in the text (null: not given)")


class JobfileParse(InputSchema):
    """The engine's --parse-only of the text (set by the server; a value sent is replaced)."""

    global_options: dict[str, str] = Field(description="the [global] section's options")
    jobs: list[JobfileJob] = Field(description="the jobs, in order")
    replaced: list[str] = Field(
        description="the job file's filename / directory options the run's target replaces "
        "('SECTION: option=value'); they are never followed"
    )


class JobfileText(InputSchema):
    """A fio job file's text ([global], sections, options as fio's HOWTO), read only by the engine."""

    text: Verbatim = Field(
        min_length=1,
        max_length=MAX_JOBFILE_CHARS,
        description="the job file's text, kept and shown byte for byte (at most 64 KiB); include and "
        "${VAR} environment expansion are refused, filename and directory are replaced by the run's "
        "target",
    )

    @field_validator("text")
    @classmethod
    def _fits(cls, v: str) -> str:
        size = len(v.encode())
        if size > MAX_JOBFILE_CHARS:
            raise bad(f"the job file is {human_bytes(size)}: at most 64 KiB")
        if not v.strip():
            raise bad("the job file is empty")
        return v


class JobfileSpec(JobfileText):
    """A fio job file: its text and the engine's parse of it."""

    parsed: JobfileParse | None = Field(
        None, description="the engine's parse of the text (set by the server; a value sent is replaced)"
    )


def parse_of(doc: dict[str, Any]) -> JobfileParse:
    """The engine's iowatt-jobfile/1 document as JobfileParse (ParseUnreadable for another shape)."""
    glob, jobs = parsed_jobs(doc)
    replaced = replaced_options(doc)
    raw = doc.get("jobs") or []
    lines = [j.get("line") if isinstance(j, dict) else None for j in raw]
    return JobfileParse(
        global_options=glob,
        jobs=[
            JobfileJob(name=n, group=g, options=o, line=line if isinstance(line, int) and line > 0 else None)
            for (n, g, o), line in zip(jobs, lines, strict=True)
        ],
        replaced=replaced,
    )


def _seconds(options: dict[str, str], name: str) -> float | None:
    text = options.get(name)
    if text is None:
        return 0.0
    try:
        return parse_time_ns(text) / 1e9
    except ValueError:
        return None


class Jobfile(Kind):
    name = "jobfile"
    label = "a fio job file"
    parameters_model = JobfileSpec
    family: ClassVar[Family] = "block"  # its results are the engine's jobs, compared as block jobs
    sizing: ClassVar[Sizing] = "none"
    targets: ClassVar[tuple[TargetKind, ...]] = ("file", "device", "directory")

    def engine_job(self, spec: WorkloadSpec) -> dict[str, object]:
        """{"mode": "jobfile", "text": TEXT}: the agent parses the text itself and trusts only that."""
        assert spec.jobfile is not None
        return {"mode": "jobfile", "text": spec.jobfile.text}

    def parse_only(self, spec: WorkloadSpec) -> ParseOnly:
        assert spec.jobfile is not None
        return ParseOnly(
            None, ["--untrusted"], spec.jobfile.text, "jobfile.text", file_name="job.fio", positional=True
        )

    def with_parse(self, spec: WorkloadSpec, doc: dict[str, Any]) -> WorkloadSpec:
        from backend.workload.engine_limits import EngineUnavailable

        assert spec.jobfile is not None
        try:
            parsed = parse_of(doc)
        except ParseUnreadable as exc:
            raise EngineUnavailable(f"iowatt-engine --parse-only: {exc}: rebuild it (make engine)") from None
        return spec.model_copy(
            update={"facts": None, "jobfile": spec.jobfile.model_copy(update={"parsed": parsed})}
        )

    def policy_facts(self, spec: WorkloadSpec) -> dict[str, Any] | None:
        """check_run's file_facts: the parse as the engine printed it (iowatt-jobfile/1)."""
        p = spec.jobfile.parsed if spec.jobfile is not None else None
        if p is None:
            return None
        return {
            "schema": "iowatt-jobfile/1",
            "global": dict(p.global_options),
            "jobs": [{"name": j.name, "group": j.group, "options": dict(j.options)} for j in p.jobs],
            "refused": [],
        }

    def identity_jobs(self, spec: WorkloadSpec) -> list[dict[str, Any]]:
        """The jobs as the engine read them (comments and spacing do not make another workload);
        the target's replacements left out."""
        assert spec.jobfile is not None
        p = spec.jobfile.parsed
        if p is None:
            return [{"kind": self.name, "text": spec.jobfile.text}]
        glob = {k: v for k, v in p.global_options.items() if k not in REPLACED_OPTIONS}
        jobs = [
            {
                "name": j.name,
                "group": j.group,
                **{k: v for k, v in j.options.items() if k not in REPLACED_OPTIONS},
            }
            for j in p.jobs
        ]
        return [{"kind": self.name, "global": glob, "jobs": jobs}]

    def timeout_s(self, spec: WorkloadSpec) -> int:
        """Each group lasts as long as its longest job (runtime + ramp_time + startdelay; a job
        without a runtime, or one unreadable here, SIZE_BOUND_JOB_S); groups run one after another;
        x1.5, plus laying out files and slack, as a block workload's."""
        p = spec.jobfile.parsed if spec.jobfile is not None else None
        if p is None:
            return int(SIZE_BOUND_JOB_S * 1.5 + 310)
        groups: dict[int, float] = {}
        for job in p.jobs:
            options = {**p.global_options, **job.options}
            runtime, ramp, delay = (_seconds(options, k) for k in ("runtime", "ramp_time", "startdelay"))
            if runtime is None or ramp is None or delay is None or not runtime:
                seconds = SIZE_BOUND_JOB_S + (ramp or 0.0) + (delay or 0.0)
            else:
                seconds = runtime + ramp + delay
            groups[job.group] = max(groups.get(job.group, 0.0), seconds)
        return int(sum(groups.values()) * 1.5 + 10 * len(p.jobs) + 300)

    def scaled(self, spec: WorkloadSpec, factor: float) -> dict[str, object]:
        raise ValueError("a fio job file runs as written: change its runtime or size in the text")

    def default_name(self, spec: WorkloadSpec) -> str:
        p = spec.jobfile.parsed if spec.jobfile is not None else None
        names = "+".join(j.name for j in p.jobs) if p is not None else ""
        return (names or "fio job file")[:120]
