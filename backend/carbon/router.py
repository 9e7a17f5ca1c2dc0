"""The default carbon data the server uses, with sources: shown in the UI next to every figure."""

import iowatt_energy as ie
from fastapi import APIRouter

from backend.auth.deps import UserDep
from backend.kit.schema import OutputSchema

router = APIRouter(prefix="/carbon", tags=["carbon"])


class GridIntensityRead(OutputSchema):
    region: str
    name: str
    g_per_kwh: float
    year: int
    source: str


class EmbodiedDefaultRead(OutputSchema):
    media: str
    kg_per_drive: float | None
    kg_per_gb: float | None
    low: float
    high: float
    source: str


@router.get("/grid-intensities", response_model=list[GridIntensityRead])
def grid_intensities(_: UserDep) -> list[GridIntensityRead]:
    return [GridIntensityRead(**vars(g)) for g in sorted(ie.GRID_INTENSITY.values(), key=lambda g: g.region)]


@router.get("/embodied-defaults", response_model=list[EmbodiedDefaultRead])
def embodied_defaults(_: UserDep) -> list[EmbodiedDefaultRead]:
    return [EmbodiedDefaultRead(**vars(d)) for d in ie.EMBODIED_DEFAULTS.values()]
