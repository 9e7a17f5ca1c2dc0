"""Power samples: what a meter reading means and how bad readings are removed (and counted)."""

import math
import operator
from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum


class Quantity(StrEnum):
    """What a sample's value is."""

    power = "power"  # instantaneous watts at t_ns (smart plugs, hwmon power*_input, Redfish snapshots)
    power_avg = "power_avg"  # mean watts over the interval ending at t_ns (analyzers, PTDaemon, DCMI average)
    energy_counter = (
        "energy_counter"  # cumulative joules, already unwrapped (RAPL, energy*_input, Shelly aenergy)
    )


@dataclass
class Cleaned:
    """Samples in strictly increasing time order with finite, non-negative values."""

    t_ns: list[int]
    value: list[float]
    dropped: dict[str, int] = field(default_factory=dict)

    @property
    def dropped_total(self) -> int:
        return sum(self.dropped.values())


def clean(t_ns: Sequence[int], values: Sequence[float], *, quantity: Quantity) -> Cleaned:
    """Drop NaN/inf, negative values, out-of-order and duplicated timestamps, and counter
    decreases; never integrate them silently: every drop is counted by reason."""
    if len(t_ns) != len(values):
        raise ValueError(f"t_ns has {len(t_ns)} entries but value has {len(values)}")
    dropped = {
        "dropped_nonfinite": 0,
        "dropped_negative": 0,
        "dropped_out_of_order": 0,
        "dropped_duplicate": 0,
    }
    # The usual upload drops nothing: every value finite and non-negative, the timestamps strictly
    # increasing (and a counter never going back). That is checked over whole lists in C, not sample
    # by sample (a 100,000-sample upload: ~30 -> ~10 ms); anything else takes the loop below, which
    # keeps exactly these samples when nothing is to be dropped.
    ts, vs = list(map(int, t_ns)), list(map(float, values))
    if (
        all(map(math.isfinite, vs))
        and (not vs or min(vs) >= 0)
        and all(map(operator.lt, ts, ts[1:]))
        and (quantity is not Quantity.energy_counter or all(map(operator.le, vs, vs[1:])))
    ):
        return Cleaned(t_ns=ts, value=vs, dropped=dropped)
    return _clean_each(ts, vs, quantity, dropped)


def _clean_each(t_ns: list[int], values: list[float], quantity: Quantity, dropped: dict[str, int]) -> Cleaned:
    """`clean` sample by sample: each drop counted under its reason in `dropped`."""
    out_t: list[int] = []
    out_v: list[float] = []
    for t, v in zip(t_ns, values, strict=True):
        if not math.isfinite(v):
            dropped["dropped_nonfinite"] += 1
        elif v < 0:
            dropped["dropped_negative"] += 1
        elif out_t and t == out_t[-1]:
            dropped["dropped_duplicate"] += 1
        elif out_t and t < out_t[-1]:
            dropped["dropped_out_of_order"] += 1
        elif quantity is Quantity.energy_counter and out_v and v < out_v[-1]:
            dropped["dropped_out_of_order"] += 1  # a counter never goes back once unwrapped
        else:
            out_t.append(t)
            out_v.append(v)
    return Cleaned(t_ns=out_t, value=out_v, dropped=dropped)
