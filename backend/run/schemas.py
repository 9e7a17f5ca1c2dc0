import re
import uuid
from collections.abc import Iterable
from datetime import datetime
from typing import Annotated, Any, Literal, get_args

from iowatt_policy import MAX_TARGETS
from iowatt_workload import TPCH_LABEL
from pydantic import AfterValidator, Field, model_validator
from pydantic_core import PydanticCustomError

from backend.kit.bounds import MAX_OFFSET as MAX_OFFSET  # the list routes' bound, in one place
from backend.kit.schema import InputSchema, OutputSchema
from backend.models import RunStatus
from backend.power.schemas import EnergyRead, PowerUpload
from backend.pts.schemas import PtsVerdict
from backend.result.pagecache import PageCacheRead
from backend.result.schemas import FileWorkloadSummary, HeapBtreeSummary, TpchSummary
from backend.workload.schemas import StoredWorkloadSpec, WorkloadSpec

MAX_NAME = 200
# progress reports a running run keeps for its live chart (one a second: the last 5 minutes)
PROGRESS_SAMPLES = 300
IDLE_PHASES = ("idle_before", "idle_after")


def fit_name(text: str, limit: int = MAX_NAME) -> str:
    """`text` within `limit` characters: the middle (usually a long path) gives way to '…'."""
    if len(text) <= limit:
        return text
    keep = limit - 1
    return f"{text[: keep - keep // 3]}…{text[len(text) - keep // 3 :]}"


def check_target_path(value: str) -> str:
    if not value.startswith("/"):
        raise PydanticCustomError("absolute_path", "must be an absolute path (starting with /)")
    return value


def check_meter_name(value: str | None) -> str | None:
    if value is not None and ":" in value:
        raise PydanticCustomError(
            "meter_spec",
            "a run names a meter the host configured, never its spec: specs stay on the host "
            "(iowatt-agent meters set NAME SPEC)",
        )
    return value


TargetPath = Annotated[
    str,
    Field(
        min_length=1,
        max_length=4096,
        description="absolute path of one of the host's targets",
        # documented for clients and fuzzers; the check itself is check_target_path (a clearer message)
        json_schema_extra={"pattern": "^/"},
    ),
    AfterValidator(check_target_path),
]
MeterName = Annotated[
    str | None,
    Field(
        max_length=1000,
        description='NAME of a meter the host reported (AgentRead.policy.meters); "" = no meter, '
        "null = the host's default meter. Never a spec: a value with ':' is refused",
    ),
    AfterValidator(check_meter_name),
]


class RunTargetIn(InputSchema):
    """One target of a multi-target run: a path of the run's agent."""

    target_path: TargetPath
    agent_id: uuid.UUID | None = Field(
        None,
        description="the host the target is on; null = the run's agent_id. A multi-target run runs on "
        "one agent: another agent's id is a 422",
    )


class RunCreate(InputSchema):
    agent_id: uuid.UUID
    target_path: TargetPath | None = Field(
        None, description="the run's one target; give this or targets (several targets at once)"
    )
    targets: list[RunTargetIn] | None = Field(
        None,
        min_length=1,
        max_length=MAX_TARGETS,
        description=f"a multi-target run: the workload runs on every target of the agent at the same "
        f"time (1…{MAX_TARGETS} targets, each on its own device; block workloads); give this or "
        "target_path. The run's target_path is the first target",
    )
    workload: WorkloadSpec | None = None
    workload_id: uuid.UUID | None = None
    name: str | None = Field(None, max_length=MAX_NAME)
    environment_id: uuid.UUID | None = None
    meter: MeterName = None
    destructive: bool = Field(
        False,
        description="the run's key of the two-key rule: may write to a raw device the host marked "
        "destructive (the UI sets it after the user types the device's model or serial)",
    )
    idle_s: float | None = Field(None, ge=0, le=3600, description="idle baseline before and after, seconds")
    shorten: float | None = Field(
        None,
        ge=0.01,
        lt=1,
        description="run the workload shortened by this factor (0.1: a tenth of each runtime, for a quick "
        "look; WorkloadSpec.shortened); the run's workload records it as shortened_by; null = full length. "
        "Block workloads only (a file workload takes scale)",
    )
    scale: float | None = Field(
        None,
        gt=0,
        le=1000,
        description="file workloads (postmark, vdbench): run at this factor of the workload's size "
        "(vdbench: its scale multiplied; postmark: files and transactions multiplied, at least 1); the "
        "run's workload records it as scaled_by; null = as saved. A block workload takes shorten",
    )

    @model_validator(mode="after")
    def _one_workload(self) -> "RunCreate":
        if (self.workload is None) == (self.workload_id is None):
            raise ValueError("give exactly one of workload or workload_id")
        return self

    @property
    def target_paths(self) -> list[str]:
        """Every target of the run, in order (one for a single-target run); the service checks
        that exactly one of target_path and targets was given (422 naming the field)."""
        if self.targets is not None:
            return [t.target_path for t in self.targets]
        return [self.target_path] if self.target_path is not None else []


class ProgressSample(OutputSchema):
    """One progress report of a running run, kept for the live chart."""

    t_s: float = Field(description="seconds since the run started (server clock)")
    job_index: int
    read_iops: float
    read_bw_bytes: int
    write_iops: float
    write_bw_bytes: int


class Progress(OutputSchema):
    job_index: int
    job_name: str
    phase: Literal["idle_before", "job", "idle_after"] = Field(
        description="what the run is doing: the idle baseline before or after (the agent's "
        'job_name "idle_before"/"idle_after"), else the engine running job job_index'
    )
    percent: float = Field(
        description="0-100 of the current job (the engine's), not of the run: see run_percent"
    )
    elapsed_ns: int
    read_iops: float
    read_bw_bytes: int
    write_iops: float
    write_bw_bytes: int
    updated_at: datetime
    run_percent: float = Field(
        description="0-100 of the whole run at this report (backend/run/share.py): the idle baselines, "
        "jobs of known length, a size-bound job by its own percent while it runs and by the run's clock "
        "once done; never less than at an earlier report. A row stored before the field: `percent`"
    )
    run_eta_s: float | None = Field(
        description="seconds the run has left by its plan at this report (a lower bound when "
        "run_eta_at_least); null for a row stored before the field"
    )
    run_eta_at_least: bool = Field(
        description="a job not yet done is size-bound (its length unknown): run_eta_s is a lower bound"
    )
    samples: list[ProgressSample] = Field(
        description=f"the engine's reports while running, oldest first, the last {PROGRESS_SAMPLES} "
        "(about one a second): the live per-second chart"
    )


class RunLive(OutputSchema):
    """What an open page follows of an active run (GET /runs/{id}/progress): its status and its latest
    progress report with only the engine's reports it does not hold yet. A status that moved (the run
    started, ended, or was cancelled) is the page's cue to read the whole run again (GET /runs/{id})."""

    status: RunStatus
    cancel_requested: bool
    progress: Progress | None = Field(
        description="the latest report (null before the first); its `samples` are only those with `t_s` "
        "after the request's `since_t_s`, all that are kept without it"
    )
    samples_kept: int = Field(
        description="how many of the engine's reports the run keeps (its last N): a client appending "
        "`progress.samples` to those it holds keeps as many"
    )


class DirSummary(OutputSchema):
    iops: float
    bw_bytes: int
    io_bytes: int
    total_ios: int
    lat_mean_ns: float | None
    clat_p50_ns: int | None
    clat_p99_ns: int | None
    clat_p999_ns: int | None
    clat_max_ns: int | None


class JobSummary(OutputSchema):
    job_index: int
    name: str
    rw: str
    bs_bytes: int | None
    runtime_ns: int
    usr_cpu_pct: float = Field(description="job threads' user CPU, % of one CPU (fio's usr_cpu)")
    sys_cpu_pct: float = Field(description="job threads' system CPU, % of one CPU (fio's sys_cpu)")
    kernel_worker_cpu_pct: float | None = Field(
        description="io_uring only: CPU of the io-wq kernel workers serving the job, % of one CPU, "
        "not included in usr/sys; null for other ioengines or when the result did not report it"
    )
    target_nowait: bool | None = Field(
        description="io_uring only: the target supports nowait; false means io_uring ran every request "
        "in kernel worker threads; null when not reported"
    )
    read: DirSummary | None
    write: DirSummary | None


class PassSummary(OutputSchema):
    """A multi-pass test (CrystalDiskMark-style): best-of as CDM reports it, plus median and spread."""

    test: str
    direction: Literal["read", "write", "mixed"] = Field(
        description="what moved I/O: read, write, or both (mixed: ranked by read + write)"
    )
    passes: int
    discarded: int
    bw_bytes: list[int]  # per measured pass, B/s
    iops: list[float]
    best_bw_bytes: int
    median_bw_bytes: float
    best_iops: float
    median_iops: float
    spread_pct: float  # (max - min) / median of the measured passes, %
    best_job: str  # the pass whose figures CDM would show


class RunOriginFile(OutputSchema):
    """One file of a run imported from several (a vdbench output directory's)."""

    file_name: str
    sha256: str | None
    url: str = Field(description="its download, byte for byte (GET /runs/{id}/source?file=NAME)")


class RunOrigin(OutputSchema):
    """Where an imported or published run's figures come from (backend/imports)."""

    kind: Literal["imported", "published"] = Field(
        description="imported: another tool's output file; published: a datasheet's or review's figures"
    )
    tool: str = Field(description='the tool as users know it ("fio", "CrystalDiskMark"), or the publisher')
    version: str | None
    format: str = Field(description="the importer's format key (fio-json, fio-terse, crystaldiskmark, ...)")
    file_name: str | None
    sha256: str | None = Field(description="the original file's SHA-256 (GET /runs/{id}/source)")
    reference: str | None = Field(None, description="a published figure's source (URL, document, page)")
    label: str = Field(
        description='what the UI shows: "imported from fio 3.33" (the tool\'s version when the file '
        'states it), "published by Samsung: not measured here"'
    )
    source_url: str | None = Field(
        None, description="the original file's download (GET /runs/{id}/source); null on a share link"
    )
    files: list[RunOriginFile] = Field(
        default_factory=list,
        description="a run imported from several files (a vdbench output directory): each with its "
        "download; empty for one file",
    )


class RunTargetRead(OutputSchema):
    """One target of a multi-target run and its own results."""

    target_index: int
    target_path: str
    device_id: uuid.UUID | None
    device_name: str | None
    engine_exit_code: int | None = Field(description="the target's engine exit status; null before a result")
    jobs: list[JobSummary] = Field(description="the target's key figures per job; empty before a result")


class CombinedRead(OutputSchema):
    """What a multi-target run's `jobs` are: its targets' figures combined."""

    targets: int = Field(description="how many targets ran at the same time")
    latency: Literal["merged", "not_combined"] | None = Field(
        description="merged: the percentiles come from the targets' latency histograms merged bin by "
        "bin; not_combined: a target gave no histogram, so the combined jobs have no percentiles (each "
        "target's own are in targets); null before a result"
    )
    rates: str = Field(description="how bytes/s and IOPS combine")
    energy: str = Field(description="what the run's energy measures")


class RunGroupRef(OutputSchema):
    """A group run's member as its run shows it (GET /run-groups/{id} has the whole group)."""

    group_id: uuid.UUID
    members: int
    unsynchronized: bool = Field(
        description="a member of the group started further from the group's instant than its tolerance "
        "(or its clock's offset could not be bounded that closely): the members did not load the store "
        "at the same time; the figures stand, marked"
    )
    clock_offset_ns: int | None = Field(
        description="the server's clock minus the agent's, measured over "
        "the heartbeat exchange; null until it reported ready"
    )
    clock_round_trip_ns: int | None = Field(
        description="the round trip of that measurement: the true offset lies within half of it"
    )
    start_skew_ns: int | None = Field(
        description="when this member's engine started minus the group's start instant, in server time "
        "(positive: late); null until it reported its start"
    )


class RunRead(OutputSchema):
    id: uuid.UUID
    team_id: uuid.UUID
    name: str
    status: RunStatus
    agent_id: uuid.UUID
    agent_name: str
    target_path: str
    device_id: uuid.UUID | None
    device_name: str | None
    environment_id: uuid.UUID | None
    workload_id: uuid.UUID | None
    preset: str | None = Field(
        description="the built-in preset the run was created from (its workload's name), recorded when "
        "the run was queued; null for an inline or saved workload, an imported result, and runs stored "
        "before the server recorded it"
    )
    workload: StoredWorkloadSpec
    created_at: datetime
    created_by: uuid.UUID | None = Field(
        description="the user who queued it (null: imported by a token since deleted, or a deleted user)"
    )
    assigned_at: datetime | None
    started_at: datetime | None
    finished_at: datetime | None
    attempt: int
    cancel_requested: bool
    error: str | None
    progress: Progress | None
    jobs: list[JobSummary]
    passes: list[PassSummary]  # empty unless the workload runs passes
    meter: str | None = Field(
        description="the meter's name on the host; \"\" = none, null = the host's default"
    )
    destructive: bool
    idle_s: float | None
    energy: EnergyRead
    source: Literal["agent", "import"] = Field(
        description="agent: queued here and run by an agent; import: a finished result uploaded "
        "(POST /api/v1/results, an uploader token)"
    )
    tags: list[str] = Field(description="the run's tags, sorted (PUT /api/v1/runs/{id}/tags)")
    origin: RunOrigin | None = Field(
        None, description="an imported or published run's origin (POST /imports); null: measured by an agent"
    )
    file_workload: FileWorkloadSummary | None = Field(
        description="a postmark or vdbench file-set run's result in brief (per-operation rates and "
        "response times, MB/s, CPU, counts); null for block runs and before a result. Its per-interval "
        "series: GET /runs/{id}/series (file_intervals)"
    )
    tpch: TpchSummary | None = Field(
        None,
        description=f"a TPC-H-derived run's result ({TPCH_LABEL}): per-query seconds per "
        "stream with answer_ok/timed_out, load_s, Power@Size, Throughput@Size, QphH@Size, the DBMS's "
        "settings; null for other runs and before a result",
    )
    heap_btree: HeapBtreeSummary | None = Field(
        None,
        description="a heap/B-tree sweep's result (the P3608 report's Table 3): one row per cache "
        "fraction × structure × operation; null for other runs and before a result",
    )
    pts: PtsVerdict | None = Field(
        None,
        description="a SNIA PTS run's verdict: steady state reached and in which round, PTS-compliant "
        "or why not (the report: GET /runs/{id}/pts); null for other runs and before a result",
    )
    targets: list[RunTargetRead] = Field(
        default_factory=list,
        description="a multi-target run's targets (the first is target_path) with each one's results; "
        "empty for a run on one target",
    )
    combined: CombinedRead | None = Field(
        None,
        description="a multi-target run: `jobs` are the targets' figures combined (bytes and I/Os summed, "
        "rates over the longest target's runtime, latency merged from histograms); null for one target",
    )
    group: RunGroupRef | None = Field(
        None, description="a member of a group run (several agents started at one instant); null otherwise"
    )


class RunPage(OutputSchema):
    """A page of runs in the order asked for (newest first by default) and how many match, counted up
    to a bound: counting every match of a broad filter reads a large part of the runs table."""

    items: list[RunRead]
    total: int = Field(
        description="how many runs match, counted up to offset + 1,000; when more match, "
        "`total_exact` is false and more than `total` runs match"
    )
    total_exact: bool = Field(
        description="true: `total` is the number of matching runs; false: it is a lower bound "
        "(more than `total` match)"
    )


# --- runs list filters and tags ---------------------------------------------------------------

RunSort = Literal["created", "-created", "name", "-name", "status", "-status"]
RunSource = Literal["agent", "import"]
MAX_TAGS = 20
MAX_TAG = 64
MAX_TEXT_QUERY = 200
# letters, digits and . _ : / + - ; single spaces inside ("fw 2.1"), none at either end
TAG_PATTERN = re.compile(r"^[A-Za-z0-9._:/+-]+(?: [A-Za-z0-9._:/+-]+)*$")


def check_tag(value: str) -> str:
    value = value.strip()
    if not 1 <= len(value) <= MAX_TAG:
        raise PydanticCustomError("tag_length", f"a tag has 1 to {MAX_TAG} characters")
    if not TAG_PATTERN.match(value):
        raise PydanticCustomError(
            "tag_chars",
            "a tag may use letters, digits, '.', '_', ':', '/', '+', '-' and single spaces between words",
        )
    return value


Tag = Annotated[
    str,
    Field(
        min_length=1,
        max_length=MAX_TAG + 20,  # surrounding spaces are trimmed; check_tag checks the length after
        description=f"1 to {MAX_TAG} characters: letters, digits, . _ : / + - and single inner spaces",
        json_schema_extra={"pattern": r"^\s*[A-Za-z0-9._:/+-]+(?: [A-Za-z0-9._:/+-]+)*\s*$"},
    ),
    AfterValidator(check_tag),
]


def unique_tags(tags: list[str]) -> list[str]:
    """Tags sorted, each once (case kept; "Baseline" and "baseline" are two tags)."""
    return sorted(set(tags))


class RunTagsUpdate(InputSchema):
    """The run's tags, replacing the ones it had ([] removes them all)."""

    tags: list[Tag] = Field(max_length=MAX_TAGS, description=f"at most {MAX_TAGS} tags")

    @model_validator(mode="after")
    def _dedupe(self) -> "RunTagsUpdate":
        self.tags = unique_tags(self.tags)
        return self


class TagCount(OutputSchema):
    tag: str
    runs: int = Field(description="how many of the team's runs carry it")


class TagList(OutputSchema):
    """A team's tags, most used first (the runs filter's suggestions)."""

    items: list[TagCount]


# --- agent side -------------------------------------------------------------------------


class LeaseRef(InputSchema):
    lease_id: uuid.UUID


class ProgressReport(InputSchema):
    lease_id: uuid.UUID
    job_index: int = Field(ge=0)
    job_name: str = Field(max_length=200)
    percent: float = Field(ge=0, le=100)
    elapsed_ns: int = Field(ge=0)
    read_iops: float = Field(0, ge=0)
    read_bw_bytes: int = Field(0, ge=0)
    write_iops: float = Field(0, ge=0)
    write_bw_bytes: int = Field(0, ge=0)


class ProgressAck(OutputSchema):
    cancel_requested: bool
    lease_expires_at: datetime | None


class TargetResultUpload(InputSchema):
    """One target's engine result of a multi-target run."""

    target_index: int = Field(ge=0, lt=MAX_TARGETS, description="the target's place in Lease.targets")
    engine_result: dict[str, Any]
    engine_exit_code: int = Field(ge=-255, le=255)


class ResultUpload(InputSchema):
    lease_id: uuid.UUID
    upload_id: uuid.UUID
    engine_result: dict[str, Any] | None = Field(
        None,
        description="the engine's document; null for a multi-target run, whose results are in targets "
        "(the server combines them)",
    )
    targets: list[TargetResultUpload] | None = Field(
        None,
        max_length=MAX_TARGETS,
        description="a multi-target run: one engine result per target of the lease, each once",
    )
    engine_exit_code: int = Field(ge=-255, le=255, description="the engine's exit status; negative: a signal")
    started_at: datetime
    finished_at: datetime
    agent_version: str = Field("", max_length=50)
    power: PowerUpload | None = None


class ResultStored(OutputSchema):
    run_id: uuid.UUID
    upload_id: uuid.UUID
    status: RunStatus
    duplicate: bool


class FailureReport(InputSchema):
    lease_id: uuid.UUID
    upload_id: uuid.UUID
    reason: str = Field(min_length=1, max_length=2000)
    exit_code: int | None = None
    stderr_tail: str = Field("", max_length=20000)
    cancelled: bool = False


# Every flag a run's validity can carry: the rules in backend/compare/validity.py (flags_for, used by
# the run page and comparisons) and buffered_device from backend/run/service.py's system (the run
# page only). The message says the particulars; this table says what raises each flag.
RunValidityFlagName = Literal[
    "buffered_device",
    "working_set_below_ram",
    "cache_resident",
    "short_run",
    "shortened",
    "virtualized",
    "above_line_rate",
    "unconditioned_ssd",
    "imported",
    "published",
    "unsynchronized",
    "not_steady_state",
    "not_pts_compliant",
]
RUN_VALIDITY_FLAGS: dict[RunValidityFlagName, str] = {
    "buffered_device": "a run on a raw block device (/dev/...) whose jobs are not all O_DIRECT: the page "
    "cache answers part of it (run/service.py system; the run page only, not comparisons)",
    "working_set_below_ram": "a buffered job's size is below the host's RAM (the agent's inventory): it "
    "may measure the page cache (compare/validity.py)",
    "cache_resident": "a file workload's file set, a TPC-H database on PostgreSQL or a heap/B-tree sweep's "
    "files not opened O_DIRECT fit in the host's RAM (compare/validity.py)",
    "short_run": "a job ran, or a time-based job asks to run, under MIN_RUNTIME_S (compare/validity.py)",
    "shortened": "the run was queued shortened (RunCreate.shorten): not the preset's full measurement "
    "(compare/validity.py)",
    "virtualized": "the agent's inventory reports a hypervisor (compare/validity.py)",
    "above_line_rate": "a job's bandwidth is above the line rate of the device's interface (SATA, SAS, USB): "
    "a cache answered (compare/validity.py)",
    "unconditioned_ssd": "writes to an SSD without SNIA-style preconditioning: fresh-out-of-box speed "
    "(compare/validity.py)",
    "imported": "a result imported from another tool's output (POST /imports): its settings, host and "
    "device were not controlled or checked by iowatt (run/service.py origin_flags)",
    "published": "a vendor's or a review's published figures entered by hand (POST /imports/published): "
    "not measured here (run/service.py origin_flags)",
    "unsynchronized": "a member of a group run whose members did not all start within the group's "
    "tolerance of its start instant (run/service.py group_flags)",
    "not_steady_state": "a SNIA PTS run whose tracking variable did not meet the steady-state rule within "
    "its round limit: its figures are not steady-state figures (pts/service.py validity_flags)",
    "not_pts_compliant": "a SNIA PTS run that departs from the specification (a short trial's scale, a "
    "reduced matrix, no purge, steady state not reached): listed in the message (pts/service.py)",
}


def describe_flags(flags: Iterable[tuple[str, str]]) -> str:
    """An OpenAPI description listing every flag and what raises it."""
    return "; ".join(f"{name}: {source}" for name, source in flags)


class RunValidityFlag(OutputSchema):
    flag: RunValidityFlagName = Field(description=describe_flags(RUN_VALIDITY_FLAGS.items()))
    message: str


if set(get_args(RunValidityFlagName)) != set(RUN_VALIDITY_FLAGS):  # pragma: no cover - import-time check
    raise RuntimeError("RunValidityFlagName and RUN_VALIDITY_FLAGS disagree")


class RunSystem(OutputSchema):
    """What a run ran on, for the run page's header: the host as its agent last reported it and the
    device and file system under the target as identified from what the engine opened."""

    hostname: str | None
    kernel: str | None
    distro: str | None
    virtualization: str | None
    cpu_model: str | None
    mem_bytes: int | None
    device_name: str | None
    device_model: str | None
    device_kind: str | None
    interface: str | None
    media: str | None
    fstype: str | None
    mountpoint: str | None
    mount_options: str | None
    cache: Literal["direct", "buffered", "mixed", "unstated"] = Field(
        description="direct: every job O_DIRECT; buffered: none; mixed: some; unstated: an imported run "
        "whose file did not state it for every job"
    )
    page_cache: PageCacheRead | None = Field(
        description="the kernel's write-back settings and the target device's queue when the run "
        "started, as its agent read them (docs/writeback.md); null from older agents and imports"
    )
    validity: list[RunValidityFlag]
