import uuid
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from backend.kit.schema import InputSchema, OutputSchema

Media = Literal["hdd", "ssd", "ram", "virtual", "unknown"]


class DeviceUpdate(InputSchema):
    name: str | None = Field(None, min_length=1, max_length=300)
    media: Media | None = None
    capacity_bytes: int | None = Field(None, gt=0)
    embodied_kg: float | None = Field(
        None, ge=0, le=100000, description="kgCO2e to make the device; overrides the default"
    )
    embodied_source: str | None = Field(None, max_length=500)
    lifetime_years: float | None = Field(None, gt=0, le=30)
    notes: str | None = Field(None, max_length=20_000, description="the team's notes on the device")

    @field_validator("name", "media", "lifetime_years", "notes")
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
    notes: str
    facts: dict[str, Any]
    created_at: datetime


# --- what the engine reports about the target it opened (engine README "Top-level iowatt") ---
# Read from the agent's upload, never trusted to be well formed: a block that does not parse
# leaves the run's device as the path named it (the result is stored all the same).


class _EngineFacts(BaseModel):
    model_config = ConfigDict(extra="ignore")


class OpenedDevice(_EngineFacts):
    """`iowatt.target.device`: the kernel block device under the opened file or device (from its
    st_rdev / st_dev through /sys/dev/block/MAJ:MIN), and the whole disk of a partition."""

    name: str = Field(min_length=1, max_length=300)
    disk: str = Field(min_length=1, max_length=300)
    model: str | None = Field(None, max_length=300)
    disk_size_bytes: int | None = Field(None, ge=0)
    rotational: int | None = None
    scheduler: str | None = Field(None, max_length=300)
    logical_block_size: int | None = Field(None, ge=0)
    physical_block_size: int | None = Field(None, ge=0)


class OpenedFs(_EngineFacts):
    """`iowatt.target.fs`: the file system holding a file target (null for a block device)."""

    type: str = Field(max_length=300)
    mount_point: str = Field(max_length=4096)
    source: str = Field(max_length=4096)
    mount_options: str | None = Field(None, max_length=4096)


class OpenedTarget(_EngineFacts):
    path: str = Field(max_length=4096)
    kind: Literal["file", "blockdev"]
    device: OpenedDevice | None = None
    fs: OpenedFs | None = None

    @classmethod
    def of(cls, engine_result: object) -> "OpenedTarget | None":
        """The target block of an engine document, or None when it has none that parses."""
        iowatt = engine_result.get("iowatt") if isinstance(engine_result, dict) else None
        target = iowatt.get("target") if isinstance(iowatt, dict) else None
        try:
            return cls.model_validate(target) if isinstance(target, dict) else None
        except ValidationError:
            return None
