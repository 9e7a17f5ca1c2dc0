"""A column per device, each cell the mean over that device's runs: the PostMark and TPC-H views."""

from backend.compare.stats import describe
from backend.power.schemas import EnergyRead
from backend.views.builders.common import _cell, _col
from backend.views.loading import Loaded
from backend.views.schemas import BaseUnit, ViewCell, ViewColumn


def _device_key(r: Loaded) -> tuple[str, str]:
    """A column of the PostMark table: the device (or target) on its agent, every level and repeat
    of it together."""
    key = f"{r.run.agent_id}:{r.run.device_id or r.run.target_path}"
    return key, f"{r.info.device_name or r.info.target_path} on {r.info.agent_name}"


def energy_ok(r: Loaded) -> EnergyRead | None:
    """A run's energy when it was computed (status ok), else None."""
    return r.energy if r.energy is not None and r.energy.status == "ok" else None


def _device_mean_cell(
    vals: list[float],
    rs: list[Loaded],
    energy_row: bool,
    unit: BaseUnit,
    device: str,
    estimated: list[str],
) -> tuple[float | None, ViewCell]:
    """A device's cell in postmark-levels and tpch-qphh: the mean of its runs' figures, noting how many
    and, on an energy row, that datasheet watts were used (the device is added to `estimated`)."""
    stats = describe(vals)  # compare's statistics: the mean of the runs
    mean = stats.mean if stats is not None else None
    notes = []
    if len(vals) > 1:
        notes.append(f"mean of {len(vals)} runs")
    if energy_row and any((e := energy_ok(r)) is not None and e.estimated for r in rs):
        notes.append("estimated (datasheet watts, no meter)")
        estimated.append(device)
    return mean, _cell(mean, "; ".join(notes) or None, unit if mean is not None else None)


def _device_columns(
    devices: dict[str, tuple[str, list[Loaded]]],
    keys: list[str],
    base_key: str,
    other_key: str | None,
    where: str,
) -> list[ViewColumn]:
    """A column per device (the mean over its runs `where`), then the report's Rate column: the other
    device's figure divided by the baseline's (postmark-levels and tpch-qphh)."""
    cols = [
        _col(
            f"device_{i}",
            devices[k][0],
            None,
            f"mean over the runs of {devices[k][0]} {where}; each cell names its unit",
        )
        for i, k in enumerate(keys)
    ]
    if other_key is not None:
        cols.append(
            _col(
                "rate",
                f"Rate ({devices[other_key][0]} ÷ {devices[base_key][0]})",
                "×",
                f"the row's figure of {devices[other_key][0]} divided by that of {devices[base_key][0]} "
                "(the baseline), as the report's Rate column",
                "ratio",
            )
        )
    return cols
