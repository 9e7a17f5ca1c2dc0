"""A SNIA PTS run's report as the API answers it (GET /runs/{id}/pts) and the stored document's
`pts` section as the server reads it (PtsDoc: bounded, extra keys kept)."""

from __future__ import annotations

import uuid
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from backend.kit.schema import OutputSchema

MAX_ROUNDS_STORED = 1500  # Write Saturation's 1,440 rounds (24 h of one-minute rounds), and room
MAX_ELEMENTS = 64  # the IOPS matrix's 56
MAX_HIR_SEGMENTS = 10  # Host Idle Recovery's five wait states and their returns to baseline
MAX_HIR_BURSTS = 360  # bursts per segment
PtsTestName = Literal["iops", "throughput", "latency", "wsat", "hir"]
PtsProfile = Literal["enterprise", "client"]
Text = Annotated[str, Field(max_length=2000)]
Count = Annotated[int, Field(ge=0, le=2**63 - 1)]
Rate = Annotated[float, Field(ge=0, le=1e18)]


class _Loose(BaseModel):
    model_config = ConfigDict(extra="allow", allow_inf_nan=False)


class PtsCellDoc(_Loose):
    name: Annotated[str, Field(max_length=40)]
    bs: Count
    read_pct: int = Field(ge=0, le=100)
    read_iops: Rate = 0.0
    write_iops: Rate = 0.0
    read_bw_bytes: Rate = 0
    write_bw_bytes: Rate = 0
    write_io_bytes: Count = 0
    lat_mean_ns: Rate | None = None
    lat_max_ns: Rate | None = None
    read_clat_percentiles_ns: dict[Annotated[str, Field(max_length=12)], Rate] = Field(
        default_factory=dict, max_length=20
    )
    write_clat_percentiles_ns: dict[Annotated[str, Field(max_length=12)], Rate] = Field(
        default_factory=dict, max_length=20
    )


class PtsRoundDoc(_Loose):
    round: int = Field(ge=1, le=MAX_ROUNDS_STORED)
    tracking: Rate | None = None
    bytes_written: Count = 0
    cells: list[PtsCellDoc] = Field(max_length=MAX_ELEMENTS)


class PtsWindowDoc(_Loose):
    first_round: int = Field(ge=1)
    last_round: int = Field(ge=1)
    values: list[Rate] = Field(max_length=25)
    average: Rate
    data_excursion: Rate
    data_excursion_limit: Rate
    slope: float = Field(ge=-1e18, le=1e18)
    intercept: float = Field(ge=-1e18, le=1e18)
    slope_excursion: Rate
    slope_excursion_limit: Rate
    data_ok: bool
    slope_ok: bool


class PtsSteadyDoc(_Loose):
    applies: bool = True
    reached: bool
    round: int | None = Field(None, ge=1, le=MAX_ROUNDS_STORED)
    rounds: int = Field(ge=0, le=MAX_ROUNDS_STORED)
    window_rounds: int = Field(5, ge=2, le=25)
    max_rounds: int = Field(25, ge=1, le=MAX_ROUNDS_STORED)
    window: PtsWindowDoc | None = None


# what the agent's purge used (agent/src/iowatt_agent/pts.py purge_plans, docs/pts.md § Purge): one
# list for the result the agent sends and the report the API answers
PurgeMethod = Literal[
    "nvme-sanitize-crypto",
    "nvme-sanitize-block",
    "nvme-sanitize-overwrite",
    "nvme-format",
    "ata-secure-erase",
    "blkdiscard",
    "none",
]


class PtsPurgeDoc(_Loose):
    method: PurgeMethod
    commands: list[Text] = Field(default_factory=list, max_length=4)
    seconds: Rate = 0.0
    note: Text = ""


class PtsPreconditioningDoc(_Loose):
    applies: bool = True  # False: WSAT and HIR start from the purged state
    block_size_bytes: Count = 131072
    loops: int = Field(2, ge=0, le=100)
    bytes_written: Count = 0
    write_bw_bytes: Rate = 0
    seconds: Rate = 0.0


class PtsTrackingDoc(_Loose):
    element: Annotated[str, Field(max_length=40)]
    metric: Literal["iops", "bw_bytes", "lat_mean_ns"]


class PtsStopDoc(_Loose):
    rule: Literal["steady_state", "round_limit", "capacity", "time"]
    round: int = Field(ge=1, le=MAX_ROUNDS_STORED)
    round_limit: int = Field(ge=1, le=MAX_ROUNDS_STORED)
    round_s: int = Field(ge=1, le=86400)
    bytes_written: Count = 0
    bytes_limit: Count | None = None


class PtsHirPointDoc(_Loose):
    burst: int = Field(ge=1, le=MAX_HIR_BURSTS)
    t_s: float = Field(ge=0, le=1e9)
    iops: Rate
    idle_s: Rate | None = None


class PtsHirSegmentDoc(_Loose):
    kind: Literal["wait", "baseline"]
    wait_state: int = Field(ge=1, le=10)
    idle_s: Rate
    points: list[PtsHirPointDoc] = Field(max_length=MAX_HIR_BURSTS)
    average_iops: Rate


class PtsHirDoc(_Loose):
    burst_s: int = Field(ge=1, le=3600)
    bursts: int = Field(ge=1, le=MAX_HIR_BURSTS)
    segments: list[PtsHirSegmentDoc] = Field(max_length=MAX_HIR_SEGMENTS)


class PtsDoc(_Loose):
    """The agent's `pts` section (agent/src/iowatt_agent/pts.py; docs/pts.md § Output)."""

    spec: Text
    test: PtsTestName
    # the specification's profile (libs/workload PROFILES); a run from before it was recorded used
    # the Enterprise parameters (the defaults then and now)
    profile: PtsProfile = "enterprise"
    compliant: bool
    deviations: list[Text] = Field(default_factory=list, max_length=20)
    capacity_bytes: Count
    region_bytes: Count
    threads: int = Field(ge=1, le=4096)
    iodepth: int = Field(ge=1, le=65536)
    round_s: int = Field(ge=1, le=86400)
    purge: PtsPurgeDoc
    preconditioning: PtsPreconditioningDoc
    tracking: PtsTrackingDoc
    rounds: list[PtsRoundDoc] = Field(max_length=MAX_ROUNDS_STORED)
    steady_state: PtsSteadyDoc
    window_averages: list[PtsCellDoc] = Field(default_factory=list, max_length=MAX_ELEMENTS)
    bytes_written: Count = 0
    hir: PtsHirDoc | None = None
    stop: PtsStopDoc | None = None  # None: a run from before December 2026 (not recorded)


# --- the API's report -----------------------------------------------------------------------------


class PtsVerdict(OutputSchema):
    """A PTS run's verdict in brief (RunRead.pts; the validity flags and reviews read it)."""

    test: PtsTestName
    profile: PtsProfile = Field(
        description="the specification's profile the run follows: enterprise, or client (never "
        "compliant: the sources at hand do not state all of PTS Client's parameters, docs/pts.md)"
    )
    compliant: bool = Field(
        description="false: a short trial or a departure from the specification (deviations)"
    )
    deviations: list[str]
    steady_state_applies: bool = Field(description="false for WSAT, which runs its rounds regardless")
    steady_state_reached: bool
    steady_state_round: int | None = Field(
        description="the round in which steady state was reached (the window's last)"
    )
    rounds: int
    window_first_round: int | None
    window_last_round: int | None


class PtsFitPoint(OutputSchema):
    round: int
    value: float = Field(description="the tracking variable in that round (its metric's unit)")
    fitted: float = Field(description="the least-squares line's value in that round")


class PtsWindow(OutputSchema):
    first_round: int
    last_round: int
    average: float
    data_excursion: float = Field(description="max - min of the window's values")
    data_excursion_limit: float = Field(description="20 % of the average")
    slope: float = Field(description="the least-squares line's slope, unit per round")
    intercept: float
    slope_excursion: float = Field(description="|slope| x (rounds - 1): the line's change across the window")
    slope_excursion_limit: float = Field(description="10 % of the average")
    data_ok: bool
    slope_ok: bool
    points: list[PtsFitPoint]


class PtsElement(OutputSchema):
    """One element of the matrix: its figure in every round and its measurement window's
    averages (the figures the specification reports)."""

    name: str
    bs_bytes: int
    read_pct: int = Field(description="R/W mix as read %: 100 = 100/0, 0 = 0/100")
    per_round: list[float | None] = Field(
        description="the test's metric in each round (iops, bw_bytes or lat_mean_ns)"
    )
    iops: float = Field(description="window average, read + write")
    read_iops: float
    write_iops: float
    bw_bytes: float = Field(description="window average, read + write, bytes/s")
    lat_mean_ns: float | None
    lat_max_ns: float | None = Field(description="the window's maximum")
    read_percentiles_ns: dict[str, float] = Field(
        description="completion latency percentiles, window average"
    )
    write_percentiles_ns: dict[str, float]


class PtsRound(OutputSchema):
    round: int
    tracking: float | None
    bytes_written: int = Field(description="bytes written by the rounds up to and including this one")


class PtsPurge(OutputSchema):
    method: PurgeMethod
    commands: list[str]
    seconds: float
    note: str


class PtsStop(OutputSchema):
    """Why the rounds stopped (libs/workload stop_rule)."""

    rule: Literal["steady_state", "round_limit", "capacity", "time"] = Field(
        description="steady_state: the rule held; round_limit: the last round allowed without steady "
        "state; Write Saturation: capacity (4 x the tested region written) or time (its 24 hours: "
        "round_limit rounds of round_s, 1,440 one-minute rounds; a short trial's shorter rounds shorten it), "
        "whichever came first"
    )
    round: int = Field(description="the last round run")
    round_limit: int = Field(description="rounds at most (Write Saturation: its 24 hours as rounds)")
    round_s: int = Field(description="seconds per element per round")
    bytes_written: int = Field(description="bytes written by the rounds")
    bytes_limit: int | None = Field(
        description="Write Saturation: 4 x the tested region; null for the other tests"
    )


class PtsHirPoint(OutputSchema):
    t_s: float = Field(description="when the burst started, seconds from the first burst's start")
    iops: float = Field(description="the burst's write IOPS")
    idle_s: float | None = Field(
        description="the host idle measured before the burst, seconds: from the previous engine's exit "
        "to this engine's start (the engines' own start and exit, without I/O, add to the device's idle); "
        "0 in a return to baseline and after one, null for the first burst"
    )


class PtsHirSegment(OutputSchema):
    kind: Literal["wait", "baseline"] = Field(
        description="wait: bursts each followed by the host idle; baseline: the return to baseline, "
        "the same writes without idle"
    )
    wait_state: int = Field(description="N: the idle after each burst is N bursts' length")
    idle_s: float = Field(description="the idle asked after each burst (0 for a return to baseline)")
    average_iops: float
    points: list[PtsHirPoint]


class PtsHir(OutputSchema):
    """Host Idle Recovery: IOPS per burst over time, wait state by wait state."""

    burst_s: int = Field(description="seconds of 4 KiB random writes per burst")
    bursts: int = Field(description="bursts per wait state")
    preconditioned_iops: float | None = Field(
        description="the preconditioning's steady-state IOPS (its window average; null without a window)"
    )
    segments: list[PtsHirSegment]


class PtsReport(OutputSchema):
    """A SNIA PTS run's report pages as data: verdict, convergence, window with its fit and bands,
    and the tables (docs/pts.md)."""

    run_id: uuid.UUID
    spec: str = Field(description="the specification and profile, e.g. SNIA SSS PTS v2.0.x Client")
    verdict: PtsVerdict
    metric: Literal["iops", "bw_bytes", "lat_mean_ns"] = Field(
        description="the test's figure in per_round and the tracking variable"
    )
    tracking_element: str
    capacity_bytes: int
    region_bytes: int
    threads: int
    iodepth: int
    round_s: int
    purge: PtsPurge
    preconditioning_bytes: int
    preconditioning_bw_bytes: float
    rounds: list[PtsRound]
    window: PtsWindow | None = Field(
        description="the steady-state measurement window with its fit (null: fewer than five rounds, or "
        "Write Saturation, to which no steady-state window applies)"
    )
    averaged_first_round: int | None = Field(
        description="the first of the rounds the elements' figures average: the measurement window's; "
        "Write Saturation: its last five rounds' (null: no round)"
    )
    averaged_last_round: int | None
    stop: PtsStop | None = Field(
        description="why the rounds stopped (null: a run from before this was recorded)"
    )
    elements: list[PtsElement]
    bytes_written: int
    preconditioning_applies: bool = Field(
        description="false: WSAT and HIR start from the purged state, without the workload-independent "
        "preconditioning"
    )
    hir: PtsHir | None = Field(description="Host Idle Recovery's bursts (null for the other tests)")
