import uuid
from datetime import datetime
from typing import Literal

from pydantic import Field, model_validator

from backend.kit.schema import InputSchema, OutputSchema
from backend.run.schemas import MeterName, TargetPath
from backend.workload.schemas import WorkloadSpec


class CampaignTarget(InputSchema):
    agent_id: uuid.UUID
    target_path: TargetPath
    environment_id: uuid.UUID | None = None


MAX_RUNS = 500
MAX_TARGETS = 50
SWEEP_VALUES = 16  # values per swept field
TargetKind = Literal["directory", "file", "device"]


class CampaignTargetSet(InputSchema):
    """Targets chosen when the campaign is queued — for a schedule, at each slot — instead of a list
    written once: every target the hosts of the team's agents list (`iowatt-agent targets`), of
    the kinds asked, on the agents asked (none: every agent of the team). The host decides: only
    what it lists is taken, and a target its policy refuses for this workload is left out with the
    host's reason. A set never writes a raw device (`destructive` is refused with it): a
    destructive run names its devices in `targets`, confirmed one by one."""

    team_id: uuid.UUID = Field(description="the team whose agents' targets are taken")
    agent_ids: list[uuid.UUID] = Field(
        [], max_length=MAX_TARGETS, description="only these agents of the team; empty: every agent"
    )
    kinds: list[TargetKind] = Field(
        ["directory"],
        min_length=1,
        max_length=3,
        description="the kinds of listed target taken: directory (the agent's own file in it), file, "
        "device (read-only unless the host marked it destructive)",
    )
    environment_id: uuid.UUID | None = Field(
        None, description="as CampaignTarget.environment_id, for every run"
    )

    @model_validator(mode="after")
    def _distinct(self) -> "CampaignTargetSet":
        if len(set(self.agent_ids)) != len(self.agent_ids):
            raise ValueError("agent_ids: an agent is given twice")
        if len(set(self.kinds)) != len(self.kinds):
            raise ValueError("kinds: a kind is given twice")
        return self


class CampaignSweep(InputSchema):
    """Values to sweep over, each set on every job of each block workload; the campaign runs every
    combination (block size × queue depth × threads × read share) on every target."""

    bs_bytes: list[int] = Field([], max_length=SWEEP_VALUES, description="block sizes, bytes")
    iodepth: list[int] = Field([], max_length=SWEEP_VALUES, description="queue depths")
    numjobs: list[int] = Field([], max_length=SWEEP_VALUES, description="threads (fio's numjobs)")
    rwmixread: list[int] = Field(
        [], max_length=SWEEP_VALUES, description="percent reads of jobs that mix reads and writes"
    )

    @model_validator(mode="after")
    def _distinct_positive(self) -> "CampaignSweep":
        for name in ("bs_bytes", "iodepth", "numjobs", "rwmixread"):
            values: list[int] = getattr(self, name)
            if len(set(values)) != len(values):
                raise ValueError(f"{name}: a value is given twice")
            low = 0 if name == "rwmixread" else 1
            if any(v < low or (name == "rwmixread" and v > 100) for v in values):
                raise ValueError(f"{name}: {'0 to 100' if name == 'rwmixread' else 'positive values'} only")
        return self

    def combinations(self) -> int:
        n = 1
        for values in (self.bs_bytes, self.iodepth, self.numjobs, self.rwmixread):
            n *= max(1, len(values))
        return n


class CampaignCreate(InputSchema):
    name: str = Field(min_length=1, max_length=200)
    workload: WorkloadSpec | None = None
    workload_id: uuid.UUID | None = None
    targets: list[CampaignTarget] = Field(
        [], max_length=MAX_TARGETS, description="the targets, or none with `target_set`"
    )
    target_set: CampaignTargetSet | None = Field(
        None, description="instead of `targets`: targets chosen each time it is queued (each slot)"
    )
    repeats: int = Field(1, ge=1, le=50)
    meter: MeterName = None
    destructive: bool = Field(False, description="as RunCreate.destructive, for every run")
    idle_s: float | None = Field(None, ge=0, le=3600)
    scale: float | None = Field(
        None, gt=0, le=1000, description="as RunCreate.scale, for every run (file workloads only)"
    )
    workload_ids: list[uuid.UUID] = Field(
        [], max_length=20, description="more saved workloads, each run like the first on every target"
    )
    sweep: CampaignSweep | None = Field(None, description="a parameter sweep over every block workload")

    @model_validator(mode="after")
    def _one_workload(self) -> "CampaignCreate":
        if (self.workload is None) == (self.workload_id is None):
            raise ValueError("give exactly one of workload or workload_id")
        if (not self.targets) == (self.target_set is None):
            raise ValueError("give targets (at least one) or target_set, not both")
        if self.target_set is not None and self.destructive:
            raise ValueError(
                "destructive: a target set never writes raw devices; name each device in targets"
            )
        if self.cells() * max(1, len(self.targets)) * self.repeats > MAX_RUNS:
            raise ValueError(
                f"at most {MAX_RUNS} runs per campaign (workloads × sweep combinations × targets × repeats "
                f"= {self.cells() * max(1, len(self.targets)) * self.repeats})"
            )
        return self

    def cells(self) -> int:
        """Workloads × sweep combinations: the runs each target gets per repeat."""
        return (1 + len(self.workload_ids)) * (self.sweep.combinations() if self.sweep else 1)

    def max_targets(self) -> int:
        """How many targets fit under the campaign's run limit (a target set takes this many)."""
        return min(MAX_TARGETS, MAX_RUNS // (self.cells() * self.repeats))


class CampaignRead(OutputSchema):
    id: uuid.UUID
    team_id: uuid.UUID
    name: str
    created_at: datetime
    created_by: uuid.UUID | None  # who queued it (null once their account is deleted)
    repeats: int
    run_ids: list[uuid.UUID]
    counts: dict[str, int]
    done: bool
    compare_url: str
    targets_left_out: list[dict[str, str]] = Field(
        description="queued from a `target_set`: the agents and targets it did not take, and why "
        "(agent_id, target_path, reason); empty otherwise"
    )


class CampaignPage(OutputSchema):
    """A page of campaigns, newest first."""

    items: list[CampaignRead]
    total: int


class CampaignCell(OutputSchema):
    workload: str = Field(description="the workload's name (or 'inline workload')")
    params: dict[str, int] = Field(description="the swept fields' values of this cell")
    label: str
    seconds: float | None = Field(description="one run's jobs' time limits summed, s; null: size-bound")


class CampaignPlan(OutputSchema):
    """What POST /campaigns would queue: the cells (workload × sweep combination), the runs and
    how long they measure, before anything is queued."""

    cells: list[CampaignCell]
    runs: int
    targets: int
    repeats: int
    per_slot: bool = Field(
        description="true with a `target_set`: the targets are chosen each time it is queued (each slot "
        "of a schedule) and checked then against each host's policy; targets, runs and measure_s count "
        "those that match now, of agents online now"
    )
    left_out: list[dict[str, str]] = Field(
        description="with a `target_set`: agents and targets not taken now, and why (agent_id, "
        "target_path, reason)"
    )
    measure_s: float | None = Field(
        description="the runs' jobs' time limits summed, s (idle baselines and set-up not included); "
        "null when a workload is bound by its size alone"
    )
