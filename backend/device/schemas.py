import uuid
from datetime import datetime
from typing import Any, Literal

from pydantic import Field, field_validator

from backend.kit.schema import InputSchema, OutputSchema

Media = Literal["hdd", "ssd", "ram", "unknown"]


class DeviceUpdate(InputSchema):
    name: str | None = Field(None, min_length=1, max_length=300)
    media: Media | None = None
    capacity_bytes: int | None = Field(None, gt=0)
    embodied_kg: float | None = Field(
        None, ge=0, le=100000, description="kgCO2e to make the device; overrides the default"
    )
    embodied_source: str | None = Field(None, max_length=500)
    lifetime_years: float | None = Field(None, gt=0, le=30)

    @field_validator("name", "media", "lifetime_years")
    @classmethod
    def _not_null(cls, v: object) -> object:
        if v is None:  # omit the field to keep its value; null is not a value these can take
            raise ValueError("cannot be null")
        return v


class DeviceRead(OutputSchema):
    id: uuid.UUID
    team_id: uuid.UUID
    agent_id: uuid.UUID
    key: str
    name: str
    kind: str
    media: str | None
    capacity_bytes: int | None
    embodied_kg: float | None  # the figure in use: the override, else the media default, else null
    embodied_source: str | None
    embodied_is_default: bool
    lifetime_years: float
    facts: dict[str, Any]
    created_at: datetime
