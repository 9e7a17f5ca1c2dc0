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

    @model_validator(mode="after")
    def _one_workload(self) -> "CampaignCreate":
        if (self.workload is None) == (self.workload_id is None):
            raise ValueError("give exactly one of workload or workload_id")
        if len(self.targets) * self.repeats > 500:
            raise ValueError("at most 500 runs per campaign (targets × repeats)")
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
