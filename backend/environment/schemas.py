import uuid
from datetime import datetime
from typing import Literal

import iowatt_energy as ie
from pydantic import Field, field_validator

from backend.kit.schema import InputSchema, OutputSchema

Kind = Literal["local", "das", "san", "nas", "raid", "cloud", "other"]


def _region(v: str | None) -> str | None:
    if v is None:
        return None
    v = v.upper()
    if v not in ie.GRID_INTENSITY:
        raise ValueError(f"unknown region; known: {', '.join(sorted(ie.GRID_INTENSITY))}")
    return v


class EnvironmentCreate(InputSchema):
    team_id: uuid.UUID
    name: str = Field(min_length=1, max_length=120)
    kind: Kind
    description: str = Field("", max_length=2000)
    notes: str = Field("", max_length=20_000, description="the team's notes on the environment")
    region: str | None = Field(None, description="grid region code (GET /carbon/grid-intensities)")
    grid_g_per_kwh: float | None = Field(
        None, ge=0, le=2000, description="overrides the region's intensity, gCO2e/kWh"
    )
    grid_source: str | None = Field(None, max_length=500, description="where the override comes from")
    pue: float = Field(1.0, ge=1.0, le=3.0, description="power usage effectiveness of the site")
    electricity_price_per_kwh: float | None = Field(None, ge=0, le=10, description="in `currency` per kWh")
    currency: str = Field("EUR", pattern=r"^[A-Z]{3}$")

    _check_region = field_validator("region")(_region)


class EnvironmentUpdate(InputSchema):
    name: str | None = Field(None, min_length=1, max_length=120)
    kind: Kind | None = None
    description: str | None = Field(None, max_length=2000)
    notes: str | None = Field(None, max_length=20_000)
    region: str | None = None
    grid_g_per_kwh: float | None = Field(None, ge=0, le=2000)
    grid_source: str | None = Field(None, max_length=500)
    pue: float | None = Field(None, ge=1.0, le=3.0)
    electricity_price_per_kwh: float | None = Field(None, ge=0, le=10)
    currency: str | None = Field(None, pattern=r"^[A-Z]{3}$")

    _check_region = field_validator("region")(_region)

    @field_validator("name", "kind", "description", "notes", "pue", "currency")
    @classmethod
    def _not_null(cls, v: object) -> object:
        if v is None:  # omit the field to keep its value; null is not a value these can take
            raise ValueError("cannot be null")
        return v


class EnvironmentRead(OutputSchema):
    id: uuid.UUID
    team_id: uuid.UUID
    name: str
    kind: str
    description: str
    notes: str
    region: str | None
    grid_g_per_kwh: float | None
    grid_source: str | None
    pue: float
    electricity_price_per_kwh: float | None
    currency: str
    effective_g_per_kwh: float
    effective_source: str
    hourly_hours: int
    created_at: datetime


class GridSeriesImported(OutputSchema):
    environment_id: uuid.UUID
    hours: int
    first_hour_utc: datetime
    last_hour_utc: datetime
