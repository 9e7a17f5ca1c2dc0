"""Intel/AMD RAPL energy counters through powercap (docs/energy.md §1.6). Tier `component`:
CPU package / DRAM DC energy for attribution only, never the system's wall energy.

    rapl                                     every package zone under /sys/class/powercap
                                             (intel-rapl:N and amd-rapl:N), summed
    rapl:/sys/class/powercap/intel-rapl:0    one zone (or a powercap root directory)
    rapl:/sys/class/powercap/intel-rapl:0:1  a sub-zone (e.g. dram)

Each zone's `energy_uj` wraps at its `max_energy_range_uj`; every zone is unwrapped on its own
(Δ = max − last + cur) and the sum is a monotonic counter in joules. Package zones do not
overlap each other; sub-zones overlap their package and are never summed with it.
`energy_uj` is readable by root only since CVE-2020-8694.
"""

from __future__ import annotations

import re
from pathlib import Path

from .base import CounterUnwrapper, Meter, MeterError, ParsedSpec
from .hwmon import read_int, read_text

POWERCAP = Path("/sys/class/powercap")
PACKAGE_ZONE = re.compile(r"(?:intel|amd)-rapl(?:-mmio)?:\d+")


class RaplMeter(Meter):
    scheme = "rapl"
    driver = "rapl"
    tier = "component"
    quantity = "energy_counter"
    native_interval_s = 0.1
    summary = "CPU package/DRAM energy counters (powercap RAPL): attribution only, not wall power"
    needs = "root, and /sys/class/powercap/intel-rapl:* (or amd-rapl) on bare metal"
    example = "rapl"

    def __init__(self, spec: ParsedSpec, *, interval_s: float | None = None) -> None:
        super().__init__(spec, interval_s=interval_s)
        self.root = Path(spec.rest) if spec.rest else POWERCAP
        self.zones: list[tuple[Path, CounterUnwrapper]] = []

    def _find_zones(self) -> list[Path]:
        if (self.root / "energy_uj").exists():
            return [self.root]
        if not self.root.is_dir():
            raise MeterError(f"rapl: {self.root} does not exist (no RAPL here, e.g. in a VM?)")
        zones = sorted(
            p for p in self.root.iterdir() if PACKAGE_ZONE.fullmatch(p.name) and (p / "energy_uj").exists()
        )
        mmio = [z for z in zones if "-mmio" in z.name]
        zones = [z for z in zones if "-mmio" not in z.name] or mmio
        if not zones:
            raise MeterError(f"rapl: no package zones with energy_uj under {self.root} (no RAPL here?)")
        return zones

    def open(self) -> None:
        names = []
        self.zones = []
        for zone in self._find_zones():
            max_uj = (
                read_int(zone / "max_energy_range_uj") if (zone / "max_energy_range_uj").exists() else None
            )
            self.zones.append((zone, CounterUnwrapper(max_uj, 1e-6)))
            names.append(read_text(zone / "name") or zone.name)
        self.model = "RAPL " + "+".join(names)
        try:
            self.read()
        except MeterError as exc:
            if "permission denied" in str(exc):
                raise MeterError(f"{exc}: energy_uj is root-only since CVE-2020-8694") from None
            raise

    def read(self) -> float:
        return sum(unwrap.update(read_int(zone / "energy_uj")) for zone, unwrap in self.zones)

    @property
    def wraps(self) -> int:
        return sum(u.wraps for _, u in self.zones)
