"""A run's power measurement: meter → idle_before → load (the engine) → idle_after → `power`.

`PowerSession` owns one meter for one run. It never fails the run: a meter that cannot be parsed,
reached or read gives `status: "no_meter_data"` with the reason, and the benchmark goes on (the
idle phases are skipped then: waiting for a baseline nobody measures helps no one). Samples are
cleaned with `iowatt_energy.clean()` before upload (NaN, negative, out-of-order and duplicated
readings dropped and counted), so the server gets exactly what contract §4 describes. The energy
and carbon figures of `bench --meter` come from `iowatt_energy` as well, the same code the
server uses to recompute them.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import iowatt_energy as energy
import iowatt_workload

from .meters import Clock, Meter, MeterError, open_meter, redact

log = logging.getLogger("iowatt_agent.power")

DEFAULT_IDLE_S = iowatt_workload.DEFAULT_IDLE_S  # one default for agent and server (libs/workload)
MAX_REASON_CHARS = 2000  # the server's limit for power.reason
PHASES = ("idle_before", "load", "idle_after")

# Called about once a second during an idle phase with (phase, elapsed_s, planned_s); returning
# True asks to stop waiting (a cancel from the server, say).
IdleTick = Callable[[str, float, float], bool | None]


class PowerSession:
    def __init__(
        self,
        spec: str,
        *,
        idle_s: float = DEFAULT_IDLE_S,
        target: str | None = None,
        interval_s: float | None = None,
        name: str | None = None,
    ) -> None:
        if idle_s < 0:
            raise ValueError("idle time must be >= 0 s")
        self.spec = spec
        self.name = name  # the meter's name in the host's meters.json (None: a spec given locally)
        self.idle_s = idle_s
        self.meter: Meter | None = None
        self.reason: str | None = None
        self.clock = Clock.now()
        self.phases: list[dict[str, Any]] = []
        self.started = False
        try:
            self.meter = open_meter(spec, interval_s=interval_s)
            bind = getattr(self.meter, "bind_target", None)
            if bind is not None and target is not None:
                bind(target)
        except MeterError as exc:
            self.reason = str(exc)

    # --- lifecycle -----------------------------------------------------------------------------

    def start(self) -> None:
        """Fix t0 and start sampling; a meter that cannot start is recorded, not raised."""
        self.clock = Clock.now()
        if self.meter is None or self.reason is not None:
            log.warning("meter.unavailable spec=%s reason=%s", redact(self.spec), self.reason)
            return
        try:
            self.meter.start(self.clock)
            self.started = True
            log.info("meter.started driver=%s model=%s", self.meter.driver, self.meter.model)
        except MeterError as exc:
            self.reason = str(exc)
            log.warning("meter.unavailable spec=%s reason=%s", redact(self.spec), self.reason)
        except Exception as exc:  # noqa: BLE001 - a driver bug must not stop the benchmark
            self.reason = f"meter driver error: {type(exc).__name__}: {exc}"
            log.exception("meter.crashed spec=%s", redact(self.spec))

    @property
    def measuring(self) -> bool:
        return self.started and self.meter is not None and self.meter.lost is None

    @contextlib.contextmanager
    def phase(self, name: str) -> Iterator[None]:
        start = self.clock.elapsed_ns()
        try:
            yield
        finally:
            self.phases.append({"name": name, "start_ns": start, "end_ns": self.clock.elapsed_ns()})

    def idle(
        self,
        name: str,
        *,
        stop: threading.Event | None = None,
        on_tick: IdleTick | None = None,
        tick_s: float = 1.0,
    ) -> bool:
        """Wait out an idle phase while the meter samples. False when stopped early."""
        if not self.measuring or self.idle_s <= 0:
            return True
        stop = stop or threading.Event()
        with self.phase(name):
            t0 = time.monotonic()
            deadline = t0 + self.idle_s
            next_tick = t0
            while True:
                now = time.monotonic()
                if now >= deadline:
                    return True
                if on_tick is not None and now >= next_tick:
                    next_tick = now + tick_s
                    try:
                        if on_tick(name, now - t0, self.idle_s):
                            return False
                    except Exception as exc:  # noqa: BLE001 - keep-alive is best effort
                        log.warning("idle.tick_failed phase=%s error=%s", name, exc)
                if stop.wait(min(deadline, next_tick if on_tick else deadline) - now):
                    return False

    def finish(self) -> dict[str, Any]:
        """Stop the meter and build the contract §4 `power` object."""
        meter = self.meter
        t_ns: list[int] = []
        values: list[float] = []
        read_errors, last_error = 0, None
        if meter is not None and self.started:
            readings = meter.stop()
            t_ns, values = readings.t_ns, readings.value
            read_errors, last_error = readings.errors, readings.last_error
        quantity = energy.Quantity(meter.quantity) if meter is not None else energy.Quantity.power
        cleaned = energy.clean(t_ns, values, quantity=quantity)
        reason = self.reason
        if reason is None and meter is not None and meter.lost:
            reason = f"meter lost during the run: {meter.lost}"
        if not cleaned.t_ns:
            status = "no_meter_data"
            if reason is None:
                reason = (
                    f"no usable readings ({len(values)} read, {cleaned.dropped_total} dropped"
                    + (f", {read_errors} failed reads, last: {last_error}" if read_errors else "")
                    + ")"
                )
        else:
            status = "ok"
            if reason is None and read_errors:
                reason = f"{read_errors} reads failed, last: {last_error}"
        if cleaned.dropped_total:
            log.warning("power.cleaned %s", " ".join(f"{k}={v}" for k, v in cleaned.dropped.items()))
        return {
            "meter": self._describe(),
            "status": status,
            "reason": reason[:MAX_REASON_CHARS] if reason else None,
            "t0_utc": self.clock.utc_text(),
            "phases": [p for p in self.phases if p["name"] in PHASES],
            "samples": {"t_ns": cleaned.t_ns, "value": cleaned.value}
            if status == "ok"
            else {"t_ns": [], "value": []},
            "cleaning": {k: int(cleaned.dropped.get(k, 0)) for k in CLEANING_KEYS},
        }

    def _describe(self) -> dict[str, Any]:
        if self.meter is not None:
            return {"name": self.name, **self.meter.describe()}
        # The spec could not be used (e.g. a scheme this agent version does not know): contract §4
        # placeholders; status "no_meter_data" and the reason say that none of it was measured.
        return {
            "name": self.name,
            "spec": redact(self.spec),
            "driver": "unknown",
            "model": "",
            "tier": "unknown",
            "quantity": "power",
            "accuracy_pct": None,
            "accuracy_w": 0.0,
            "accuracy_declared": False,
            "nominal_interval_s": 1.0,
        }


CLEANING_KEYS = ("dropped_nonfinite", "dropped_negative", "dropped_out_of_order", "dropped_duplicate")


# --- energy and carbon for `bench --meter` -----------------------------------------------------


@dataclass(frozen=True)
class Grid:
    g_per_kwh: float
    source: str
    region: str | None
    year: int | None

    @classmethod
    def choose(cls, region: str | None, g_per_kwh: float | None) -> Grid:
        """--grid-g-per-kwh wins over --grid REGION; neither → iowatt_energy's default region."""
        if g_per_kwh is not None:
            if not g_per_kwh >= 0:
                raise ValueError("--grid-g-per-kwh must be >= 0")
            return cls(
                float(g_per_kwh), "given on the command line", region.upper() if region else None, None
            )
        gi = energy.grid_intensity(region or energy.DEFAULT_REGION)
        return cls(gi.g_per_kwh, gi.source, gi.region, gi.year)


def io_totals(engine_result: dict[str, Any]) -> tuple[int, int]:
    """Bytes moved and I/Os done by every job, both directions (fio's io_bytes, total_ios)."""
    io_bytes = total_ios = 0
    for job in engine_result.get("jobs") or []:
        for direction in ("read", "write", "trim"):
            d = job.get(direction) or {}
            io_bytes += int(d.get("io_bytes") or 0)
            total_ios += int(d.get("total_ios") or 0)
    return io_bytes, total_ios


def energy_and_carbon(
    power: dict[str, Any], engine_result: dict[str, Any], *, grid: Grid, pue: float
) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """The `energy` and `carbon` objects of `bench --meter --json`, from iowatt_energy."""
    meter = power["meter"]
    if power["status"] != "ok":
        return {
            "status": "no_meter_data",
            "reason": power["reason"],
            "source": meter["spec"],
            "tier": meter["tier"],
        }, None
    io_bytes, total_ios = io_totals(engine_result)
    cleaned = energy.Cleaned(
        t_ns=list(power["samples"]["t_ns"]),
        value=list(power["samples"]["value"]),
        dropped=dict(power["cleaning"]),
    )
    summary = energy.summarize(
        meter=energy.Meter.from_dict(meter),
        phases=[energy.Phase(p["name"], p["start_ns"], p["end_ns"]) for p in power["phases"]],
        cleaned=cleaned,
        io_bytes=io_bytes,
        total_ios=total_ios,
    )
    doc = {"status": "ok", "reason": power["reason"], **summary.to_dict()}
    carbon = {
        "grid_gco2e_per_kwh": grid.g_per_kwh,
        "grid_source": grid.source,
        "grid_region": grid.region,
        "grid_year": grid.year,
        "pue": pue,
        "operational_gco2e": energy.operational_gco2e(
            energy_j=summary.total_j, g_per_kwh=grid.g_per_kwh, pue=pue
        ),
        "dynamic_operational_gco2e": (
            energy.operational_gco2e(energy_j=max(0.0, summary.dynamic_j), g_per_kwh=grid.g_per_kwh, pue=pue)
            if summary.dynamic_j is not None
            else None
        ),
    }
    return doc, carbon
