import uuid
from datetime import datetime
from typing import Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from cronsim import CronSim, CronSimError
from pydantic import Field, field_validator, model_validator

from backend.campaign.schemas import CampaignCreate
from backend.kit.schema import InputSchema, OutputSchema

MAX_EVERY_HOURS = 24 * 366
CRON_HELP = (
    "five fields (minute hour day-of-month month day-of-week), e.g. `0 2 * * *` for 02:00 every day, "
    "in `timezone`; or give `every_hours` instead"
)


def check_cron(expr: str) -> str:
    try:
        CronSim(expr, datetime(2026, 1, 1))
    except CronSimError as exc:
        raise ValueError(f"not a cron expression: {exc}") from exc
    if len(expr.split()) != 5:  # cronsim also takes a seconds field; slots are whole minutes
        raise ValueError("give five fields: minute hour day-of-month month day-of-week")
    return expr


def check_timezone(name: str) -> str:
    try:
        ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError) as exc:
        raise ValueError(f"unknown time zone {name!r} (an IANA name such as Europe/Berlin or UTC)") from exc
    return name


class ScheduleCreate(InputSchema):
    name: str = Field(min_length=1, max_length=200)
    cron: str | None = Field(None, max_length=200, description=CRON_HELP)
    every_hours: int | None = Field(None, ge=1, le=MAX_EVERY_HOURS, description="or: due every N hours")
    timezone: str = Field("UTC", max_length=64, description="IANA time zone the cron expression is read in")
    campaign: CampaignCreate = Field(
        description="what each slot queues: a campaign, as POST /campaigns takes"
    )
    enabled: bool = True

    _cron = field_validator("cron")(lambda cls, v: v if v is None else check_cron(v))
    _tz = field_validator("timezone")(lambda cls, v: check_timezone(v))

    @model_validator(mode="after")
    def _one_rule(self) -> "ScheduleCreate":
        if (self.cron is None) == (self.every_hours is None):
            raise ValueError("give exactly one of cron or every_hours")
        return self


class ScheduleUpdate(InputSchema):
    name: str | None = Field(None, min_length=1, max_length=200)
    cron: str | None = Field(None, max_length=200, description=CRON_HELP)
    every_hours: int | None = Field(None, ge=1, le=MAX_EVERY_HOURS)
    timezone: str | None = Field(None, max_length=64)
    enabled: bool | None = None

    _cron = field_validator("cron")(lambda cls, v: v if v is None else check_cron(v))
    _tz = field_validator("timezone")(lambda cls, v: v if v is None else check_timezone(v))

    @model_validator(mode="after")
    def _one_rule(self) -> "ScheduleUpdate":
        if self.cron is not None and self.every_hours is not None:
            raise ValueError("give at most one of cron or every_hours")
        return self


class SlotRead(OutputSchema):
    slot_at: datetime
    status: Literal["queued", "skipped"]
    reason: str | None = Field(description="why it was skipped, or which targets it left out")
    campaign_id: uuid.UUID | None
    skipped_targets: list[dict[str, str]] = Field(
        description="targets left out of this slot's campaign: agent_id, target_path, reason"
    )
    created_at: datetime


class ScheduleRead(OutputSchema):
    id: uuid.UUID
    team_id: uuid.UUID
    name: str
    cron: str | None
    every_hours: int | None
    timezone: str
    enabled: bool
    next_slot_at: datetime = Field(description="when it is next due (UTC)")
    upcoming: list[datetime] = Field(description="the next few due instants (UTC), for a preview")
    runs_per_slot: int | None = Field(
        description="runs each slot queues when every target is free; null: the campaign's "
        "`target_set` chooses its targets at each slot"
    )
    campaign: CampaignCreate
    created_by: uuid.UUID | None
    created_at: datetime
    last_slot: SlotRead | None


class SchedulePage(OutputSchema):
    items: list[ScheduleRead]
    total: int


class SlotPage(OutputSchema):
    items: list[SlotRead]
    total: int
