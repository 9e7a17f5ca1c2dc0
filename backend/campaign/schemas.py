import uuid
from datetime import datetime

from pydantic import Field, model_validator

from backend.kit.schema import InputSchema, OutputSchema
from backend.run.schemas import MeterName, TargetPath
from backend.workload.schemas import WorkloadSpec


class CampaignTarget(InputSchema):
    agent_id: uuid.UUID
    target_path: TargetPath
    environment_id: uuid.UUID | None = None


MAX_RUNS = 500
SWEEP_VALUES = 16  # values per swept field


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
    targets: list[CampaignTarget] = Field(min_length=1, max_length=50)
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
        cells = (1 + len(self.workload_ids)) * (self.sweep.combinations() if self.sweep else 1)
        if cells * len(self.targets) * self.repeats > MAX_RUNS:
            raise ValueError(
                f"at most {MAX_RUNS} runs per campaign (workloads × sweep combinations × targets × repeats "
                f"= {cells * len(self.targets) * self.repeats})"
            )
        return self


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
    measure_s: float | None = Field(
        description="the runs' jobs' time limits summed, s (idle baselines and set-up not included); "
        "null when a workload is bound by its size alone"
    )
