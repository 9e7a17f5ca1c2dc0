"""Which grid intensity, PUE and embodied carbon apply to a run, and from which source."""

from dataclasses import dataclass
from datetime import datetime

import iowatt_energy as ie
from sqlalchemy.orm import Session

from backend.environment import repository as environment_repo
from backend.models import Device


@dataclass(frozen=True)
class CarbonContext:
    g_per_kwh: float  # annual (or override) value, also the fallback for hours missing from a series
    source: str
    method: str  # annual | override | hourly
    pue: float
    hourly: dict[datetime, float]


def context_for(
    session: Session, environment_id: object | None, window: tuple[datetime, datetime]
) -> CarbonContext:
    env = environment_repo.get(session, environment_id) if environment_id is not None else None
    if env is None:
        d = ie.grid_intensity(ie.DEFAULT_REGION)
        return CarbonContext(
            d.g_per_kwh, f"{d.name} {d.year}: {d.source} (no environment set)", "annual", 1.0, {}
        )
    if env.grid_g_per_kwh is not None:
        base = CarbonContext(
            env.grid_g_per_kwh, env.grid_source or "set by the team", "override", env.pue, {}
        )
    else:
        d = ie.grid_intensity(env.region or ie.DEFAULT_REGION)
        base = CarbonContext(d.g_per_kwh, f"{d.name} {d.year}: {d.source}", "annual", env.pue, {})
    start, end = window
    hourly = environment_repo.hours_between(session, env.id, start, end)
    if hourly:
        return CarbonContext(
            base.g_per_kwh,
            "imported hourly series (annual value for missing hours)",
            "hourly",
            env.pue,
            hourly,
        )
    return base


def device_embodied(device: Device | None) -> tuple[float, str, float] | None:
    """(kgCO2e, source, lifetime years) of a device, or None when it cannot be known."""
    if device is None:
        return None
    if device.embodied_kg is not None:
        return device.embodied_kg, device.embodied_source or "set by the team", device.lifetime_years
    if device.media not in ie.EMBODIED_DEFAULTS:
        return None
    try:
        kg, d = ie.embodied_kg(media=device.media, capacity_bytes=device.capacity_bytes)
    except ValueError:
        return None
    return kg, d.source, device.lifetime_years
