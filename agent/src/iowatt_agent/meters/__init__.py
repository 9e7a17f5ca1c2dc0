"""Wattmeter drivers: one module per meter family, chosen by a spec string.

    meter = open_meter("hwmon:/sys/class/hwmon/hwmon3/power1_input")
    meter.start(Clock.now()); ...; readings = meter.stop()

Every driver samples in its own thread (base.Meter), records its tier and quantity (contract
§4) and its declared accuracy, or the tier's default from docs/energy.md §3.4 marked undeclared.
"""

from __future__ import annotations

from .base import Clock, Meter, MeterError, ParsedSpec, Readings, redact
from .command import CommandMeter
from .estimate import EstimateMeter
from .hwmon import HwmonMeter
from .ipmi import IpmiMeter
from .ptdaemon import PtDaemonMeter
from .rapl import RaplMeter
from .redfish import RedfishMeter
from .scpi import ScpiMeter
from .shelly import ShellyMeter
from .snmp import SnmpMeter
from .tasmota import TasmotaMeter

DRIVERS: list[type[Meter]] = [
    PtDaemonMeter,
    ScpiMeter,
    IpmiMeter,
    RedfishMeter,
    SnmpMeter,
    ShellyMeter,
    TasmotaMeter,
    HwmonMeter,
    CommandMeter,
    RaplMeter,
    EstimateMeter,
]
SCHEMES: dict[str, type[Meter]] = {d.scheme: d for d in DRIVERS}
SCHEMES["redfish+http"] = RedfishMeter


def supported() -> str:
    return ", ".join(d.scheme for d in DRIVERS)


def open_meter(spec: str, *, interval_s: float | None = None) -> Meter:
    """A driver for `spec`, not connected yet (start() connects). Bad specs raise MeterError."""
    spec = spec.strip()
    if not spec:
        raise MeterError(f"empty meter spec; supported schemes: {supported()}")
    parsed = ParsedSpec.parse(spec)
    driver = SCHEMES.get(parsed.scheme)
    if driver is None:
        raise MeterError(
            f"unknown meter scheme {parsed.scheme!r} in {redact(spec)!r}; supported schemes: {supported()} "
            "(`iowatt-agent meters list` shows what each needs)"
        )
    return driver(parsed, interval_s=interval_s)


__all__ = [
    "DRIVERS",
    "SCHEMES",
    "Clock",
    "Meter",
    "MeterError",
    "ParsedSpec",
    "Readings",
    "open_meter",
    "redact",
    "supported",
]
