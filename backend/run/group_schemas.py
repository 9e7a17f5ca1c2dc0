"""Wire shapes of group runs: one workload on targets of several agents, started at one instant
(ADR 0038). The members are ordinary runs (RunRead, with `group`)."""

import uuid
from datetime import datetime
from typing import Literal

from iowatt_policy import MAX_TARGETS
from pydantic import Field, model_validator

from backend.kit.schema import InputSchema, OutputSchema
from backend.models import RunStatus
from backend.run.prepare import MAX_PREPARE_TIMEOUT_S
from backend.run.schemas import MAX_NAME, JobSummary, MeterName, RunTargetIn, TargetPath
from backend.workload.schemas import WorkloadSpec

MAX_MEMBERS = 16
DEFAULT_START_TOLERANCE_NS = 5_000_000
MAX_START_TOLERANCE_NS = 10_000_000_000

RunGroupStatus = Literal["queued", "preparing", "running", "succeeded", "failed", "cancelled"]


class RunGroupMemberIn(InputSchema):
    agent_id: uuid.UUID
    target_path: TargetPath | None = Field(None, description="this member's one target; or targets")
    targets: list[RunTargetIn] | None = Field(
        None, min_length=1, max_length=MAX_TARGETS, description="several targets of this member's agent"
    )


class RunGroupCreate(InputSchema):
    members: list[RunGroupMemberIn] = Field(
        min_length=2,
        max_length=MAX_MEMBERS,
        description=f"one member per agent (2…{MAX_MEMBERS} agents, each once): the workload runs on "
        "each member's targets and every member's engine starts at the instant the server sets",
    )
    workload: WorkloadSpec | None = None
    workload_id: uuid.UUID | None = None
    name: str | None = Field(None, max_length=MAX_NAME)
    environment_id: uuid.UUID | None = None
    meter: MeterName = None
    destructive: bool = False
    idle_s: float | None = Field(None, ge=0, le=3600, description="idle baseline before and after, seconds")
    shorten: float | None = Field(None, ge=0.01, lt=1, description="as RunCreate.shorten")
    start_tolerance_ns: int = Field(
        DEFAULT_START_TOLERANCE_NS,
        ge=0,
        le=MAX_START_TOLERANCE_NS,
        description="a member whose engine starts further than this (plus half its clock measurement's "
        "round trip) from the group's instant marks the group unsynchronized",
    )
    prepare_timeout_s: float | None = Field(
        None,
        ge=1,
        le=MAX_PREPARE_TIMEOUT_S,
        description="seconds: the members must all report ready (laid out, idle baseline taken) within "
        "this of the first one; else the group fails before any engine starts. Default: from what the "
        "members lay out, 120 s + the idle baseline + the largest member's layout at 20 MiB/s, at most "
        "3600 s (RunGroupRead.prepare_timeout_s says the value taken)",
    )
    shared_store: str | None = Field(
        None,
        max_length=200,
        description="the one store the members' targets are, seen from each host (a SAN LUN, a network "
        "file system export): the group's figures are that store's",
    )

    @model_validator(mode="after")
    def _one_workload(self) -> "RunGroupCreate":
        if (self.workload is None) == (self.workload_id is None):
            raise ValueError("give exactly one of workload or workload_id")
        return self


class RunGroupMemberRead(OutputSchema):
    run_id: uuid.UUID
    agent_id: uuid.UUID
    agent_name: str
    target_path: str
    status: RunStatus
    error: str | None
    ready_at: datetime | None = Field(description="when the member reported ready (server time)")
    clock_offset_ns: int | None = Field(description="the server's clock minus the agent's")
    clock_round_trip_ns: int | None = Field(description="the offset's round trip: it is within half of it")
    start_skew_ns: int | None = Field(
        description="the member's engine start minus the group's start_at, in server time (positive: late)"
    )
    missed_start: bool = Field(description="its start skew exceeds the tolerance plus half its round trip")
    jobs: list[JobSummary]
    energy_j: float | None = Field(description="the member host's total energy over the run; null: no meter")


class RunGroupCombined(OutputSchema):
    members: int = Field(description="members whose results are combined (those with a result)")
    jobs: list[JobSummary] = Field(
        description="job i over every member: bytes and I/Os summed, rates over the longest member's "
        "runtime, latency percentiles from the members' merged histograms (left out when one has none)"
    )
    latency: Literal["merged", "not_combined"]
    energy_j: float | None = Field(
        description="the members' hosts' energy summed; null when none had a meter"
    )
    load_w_mean: float | None = Field(description="the members' mean load power summed")
    energy_complete: bool = Field(description="every combined member had a meter: the energy is the group's")


class RunGroupRead(OutputSchema):
    id: uuid.UUID
    team_id: uuid.UUID
    name: str
    status: RunGroupStatus = Field(
        description="from the members': failed when one failed (or the group stopped for it), cancelled "
        "when cancelled, succeeded when all did, running when all started, preparing once leased"
    )
    created_at: datetime
    start_tolerance_ns: int
    prepare_timeout_s: float
    start_at: datetime | None = Field(description="the instant every member started at (server time)")
    stop_reason: str | None = Field(description="why the group stopped before its end, if it did")
    unsynchronized: bool
    max_start_skew_ns: int | None = Field(
        description="the largest |start skew| of the members that reported one"
    )
    shared_store: str | None
    members: list[RunGroupMemberRead]
    combined: RunGroupCombined | None = Field(description="null until a member has a result")


class ClockSample(InputSchema):
    offset_ns: int = Field(description="the server's clock minus the agent's")
    round_trip_ns: int = Field(ge=0, description="the exchange's round trip: the offset is within half of it")


class ReadyReport(InputSchema):
    lease_id: uuid.UUID
    clock: ClockSample | None = Field(None, description="null: the agent could not measure its offset")


class ReadyAck(OutputSchema):
    start_at: datetime | None = Field(
        description="start the engine at this instant of the server's clock; null: not yet (ask again)"
    )
    stop: str | None = Field(description="the group stopped: do not start; report the run cancelled")
    server_time: datetime


class StartedReport(InputSchema):
    lease_id: uuid.UUID
    started_at: datetime = Field(description="the instant the agent started its engine, on its own clock")


class StartedAck(OutputSchema):
    start_skew_ns: int
    missed_start: bool
