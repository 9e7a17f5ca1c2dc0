"""Linux hwmon power and energy files (docs/energy.md §1.5; kernel Documentation/hwmon/sysfs-interface).

    hwmon:/sys/class/hwmon/hwmonN/power1_input     µW, instantaneous       -> quantity power
    hwmon:/sys/class/hwmon/hwmonN/power1_average   µW, averaged over power1_average_interval (ms)
                                                                            -> quantity power_avg
    hwmon:/sys/class/hwmon/hwmonN/energy1_input    µJ, cumulative counter  -> quantity energy_counter
    hwmon:/sys/class/hwmon/hwmonN                  the first of power1_average, power1_input,
                                                   energy1_input that exists

Energy counters that wrap (some drivers keep a 32-bit register) are unwrapped: `?max_uj=N` gives
the counter's range; without it a decrease is taken as one wrap of the smallest register width
(32, 48 or 64 bit) that held the last value. The model is the hwmon `name` (plus `powerN_label`).
"""

from __future__ import annotations

import re
from pathlib import Path

from .base import CounterUnwrapper, Meter, MeterError, ParsedSpec

FILE_RE = re.compile(r"(power\d+_(?:input|average)|energy\d+_input)")


def read_int(path: Path) -> int:
    try:
        text = path.read_text().strip()
    except PermissionError:
        raise MeterError(f"{path}: permission denied (run the agent as root)") from None
    except OSError as exc:
        raise MeterError(f"{path}: {exc.strerror or exc}") from None
    try:
        return int(text)
    except ValueError:
        raise MeterError(f"{path}: not an integer: {text[:40]!r}") from None


def read_text(path: Path) -> str | None:
    try:
        return path.read_text().strip() or None
    except OSError:
        return None


class HwmonMeter(Meter):
    scheme = "hwmon"
    driver = "hwmon"
    tier = "inband"
    native_interval_s = 0.1
    summary = "Linux hwmon power (µW) or energy (µJ counter) file, e.g. ACPI power meter, PMBus PSU"
    needs = "a hwmon device with powerN_input/_average or energyN_input (ls /sys/class/hwmon/*/)"
    example = "hwmon:/sys/class/hwmon/hwmon3/power1_input"

    def __init__(self, spec: ParsedSpec, *, interval_s: float | None = None) -> None:
        super().__init__(spec, interval_s=interval_s)
        if not spec.rest:
            raise MeterError("hwmon: needs a path, e.g. hwmon:/sys/class/hwmon/hwmon3/power1_input")
        self.path = Path(spec.rest)
        self.max_uj = spec.float_opt("max_uj")
        self.unwrapper: CounterUnwrapper | None = None

    def _choose(self) -> Path:
        if self.path.is_dir():
            for name in ("power1_average", "power1_input", "energy1_input"):
                if (self.path / name).exists():
                    return self.path / name
            raise MeterError(f"{self.path}: no power1_average, power1_input or energy1_input here")
        if not self.path.exists():
            raise MeterError(f"{self.path}: no such file")
        if not FILE_RE.fullmatch(self.path.name):
            raise MeterError(
                f"{self.path}: not a hwmon power or energy file (powerN_input, powerN_average, energyN_input)"
            )
        return self.path

    def open(self) -> None:
        self.path = self._choose()
        name = self.path.name
        if name.startswith("energy"):
            self.quantity = "energy_counter"
            self.unwrapper = CounterUnwrapper(self.max_uj, 1e-6)
        elif name.endswith("_average"):
            self.quantity = "power_avg"
            interval_ms = read_text(self.path.with_name(name.replace("_average", "_average_interval")))
            if interval_ms and interval_ms.isdigit() and int(interval_ms) > 0:
                self.interval_s = max(self.interval_s, int(interval_ms) / 1000)
        else:
            self.quantity = "power"
        label = read_text(self.path.with_name(name.split("_")[0] + "_label"))
        device = read_text(self.path.parent / "name")
        self.model = " ".join(x for x in (device, label) if x) or None
        self.read()

    def read(self) -> float:
        raw = read_int(self.path)
        if self.unwrapper is not None:
            return self.unwrapper.update(raw)
        return raw / 1e6
