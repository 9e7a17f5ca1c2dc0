"""POST /api/v1/results: a finished result uploaded from outside (a CI pipeline's upload token)."""

import uuid
from datetime import datetime
from typing import Any, Literal

from pydantic import AwareDatetime, Field, ValidationInfo, field_validator
from pydantic_core import PydanticCustomError

from backend.kit.schema import InputSchema, OutputSchema
from backend.power.schemas import TierName
from backend.run.schemas import MAX_NAME, MAX_TAGS, Tag, unique_tags

BIGINT = 2**63 - 1
MAX_UPLOADED_SAMPLES = 500_000  # 5.7 days at 1 Hz, 14 h at 10 Hz
MediaName = Literal["hdd", "ssd", "ram", "virtual", "unknown"]


class DeclaredDevice(InputSchema):
    """The device the result measured, as the uploader knows it (an external host has no inventory)."""

    model: str = Field(min_length=1, max_length=200, description='e.g. "Samsung SSD 990 PRO 2TB"')
    serial: str | None = Field(
        None,
        max_length=200,
        description="the disk's serial: only its sha256 is kept; the same serial on the same host is "
        "the same device in every upload (without one: the model and capacity are)",
    )
    capacity_bytes: int | None = Field(None, gt=0, le=BIGINT)
    media: MediaName | None = Field(None, description="for the embodied-carbon default; null: unknown")


class UploadedPowerSample(InputSchema):
    t_ns: int = Field(ge=0, le=BIGINT, description="ns since started_at")
    watts: float = Field(ge=0, le=1e7, allow_inf_nan=False)


class UploadedPower(InputSchema):
    """What a wattmeter measured during the run: its energy is then `measured` (else none)."""

    meter: str = Field(min_length=1, max_length=120, description="the meter's name, as shown with the energy")
    driver: str = Field("upload", min_length=1, max_length=50, description="what read the meter")
    tier: TierName = Field("unknown", description="accuracy tier (docs/energy.md): lab, bmc, pdu, plug, ...")
    samples: list[UploadedPowerSample] = Field(min_length=2, max_length=MAX_UPLOADED_SAMPLES)


class ResultImport(InputSchema):
    team_id: uuid.UUID
    upload_id: str = Field(
        min_length=1,
        max_length=200,
        description="the upload's own id (e.g. the CI job's id): the same id again answers 200 with the "
        "run it made, nothing is duplicated",
    )
    host: str = Field(
        min_length=1,
        max_length=120,
        pattern=r"^[A-Za-z0-9_.\-]+$",
        description="the machine that ran it: an external host of the team (made on first use; never "
        "dispatched to); the name of an enrolled agent is refused",
    )
    device: DeclaredDevice
    environment_id: uuid.UUID | None = None
    name: str = Field(min_length=1, max_length=MAX_NAME)
    engine_result: dict[str, Any] = Field(
        description="an iowatt-engine JSON document or fio's --output-format=json (or json+), stored whole"
    )
    target_path: str | None = Field(
        None, max_length=4096, description="what the job ran against; null: the document's first filename"
    )
    started_at: AwareDatetime
    finished_at: AwareDatetime
    power: UploadedPower | None = None
    tags: list[Tag] = Field(default_factory=list, max_length=MAX_TAGS)

    @field_validator("finished_at")
    @classmethod
    def _after_start(cls, v: datetime, info: ValidationInfo) -> datetime:
        started = info.data.get("started_at")
        if started is not None and v < started:
            raise PydanticCustomError("before_start", "must not be before started_at")
        return v

    @field_validator("tags")
    @classmethod
    def _unique(cls, v: list[str]) -> list[str]:
        return unique_tags(v)


class ResultImported(OutputSchema):
    run_id: uuid.UUID
    url: str = Field(description="the run's page")
    duplicate: bool = Field(description="true: this upload_id was stored before; nothing was added")
