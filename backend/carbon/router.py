"""The default carbon data the server uses, with sources: shown in the UI next to every figure."""

import iowatt_energy as ie
from fastapi import APIRouter

from backend.auth.deps import UserDep
from backend.carbon.schemas import EmbodiedDefaultRead, GridIntensityRead
from backend.kit.lanes import BULK

router = APIRouter(prefix="/carbon", tags=["carbon"], dependencies=[BULK])


@router.get("/grid-intensities", response_model=list[GridIntensityRead])
def grid_intensities(_: UserDep) -> list[GridIntensityRead]:
    return [GridIntensityRead(**vars(g)) for g in sorted(ie.GRID_INTENSITY.values(), key=lambda g: g.region)]


@router.get("/embodied-defaults", response_model=list[EmbodiedDefaultRead])
def embodied_defaults(_: UserDep) -> list[EmbodiedDefaultRead]:
    return [EmbodiedDefaultRead(**vars(d)) for d in ie.EMBODIED_DEFAULTS.values()]
