"""`iowatt-agent meters test`: read a meter for a few seconds and say what it achieved (rate,
tier, level, failed reads). Exit 2 for a spec that does not parse, 1 when no usable data came."""

from __future__ import annotations

import time

from .args import fail
from .meters import Clock, MeterError, open_meter
from .render import out
from .targets_cli import meter_for_bench


def read_meter(spec: str, *, seconds: float, interval: float | None, target: str | None) -> None:
    """Read the meter (a spec or a meter's name) for `seconds`, printing each reading."""
    try:
        meter = open_meter(meter_for_bench(spec)[1], interval_s=interval)
        bind = getattr(meter, "bind_target", None)
        if bind is not None and target is not None:
            bind(target)
    except MeterError as exc:
        raise fail(str(exc), 2) from None
    clock = Clock.now()
    try:
        meter.start(clock)
    except MeterError as exc:
        raise fail(f"no meter data: {exc}", 1) from None
    shown = 0
    deadline = time.monotonic() + seconds
    try:
        while time.monotonic() < deadline:
            time.sleep(min(1.0, max(0.0, deadline - time.monotonic())))
            snap = meter.snapshot()
            for t, v in zip(snap.t_ns[shown:], snap.value[shown:], strict=True):
                unit = "J (counter)" if meter.quantity == "energy_counter" else "W"
                out.print(f"{t / 1e9:8.3f} s  {v:12.3f} {unit}", highlight=False)
            shown = len(snap.t_ns)
    except KeyboardInterrupt:
        pass
    readings = meter.stop()
    info = meter.describe()
    n = len(readings.t_ns)
    span_s = (readings.t_ns[-1] - readings.t_ns[0]) / 1e9 if n > 1 else 0.0
    rate = (n - 1) / span_s if span_s > 0 else 0.0
    out.print(
        f"{info['driver']} · {info['model'] or 'unknown model'} · tier {info['tier']} · {info['quantity']} · "
        f"accuracy {'declared' if info['accuracy_declared'] else 'assumed'} ±{info['accuracy_pct']} %"
        + (f" ± {info['accuracy_w']} W" if info["accuracy_w"] else ""),
        highlight=False,
    )
    values = [v for v in readings.value if v == v and v >= 0]
    if meter.quantity == "energy_counter" and n > 1 and span_s > 0:
        level = f"mean {(readings.value[-1] - readings.value[0]) / span_s:,.2f} W from the counter"
    elif values:
        level = f"mean {sum(values) / len(values):,.2f} W, min {min(values):,.2f}, max {max(values):,.2f}"
    else:
        level = "no usable readings"
    out.print(
        f"{n} readings in {span_s:.1f} s: {rate:.2f} Hz achieved "
        f"(nominal {1 / meter.interval_s:g} Hz); {level}; {readings.errors} failed reads",
        highlight=False,
    )
    if meter.lost or not values:
        raise fail(f"no meter data: {meter.lost or readings.last_error or 'no usable readings'}", 1)
