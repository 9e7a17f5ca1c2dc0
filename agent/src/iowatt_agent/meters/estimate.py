"""A labelled estimate where no meter exists (tier `estimate`): datasheet watts × utilisation.

    estimate:IDLE_W,ACTIVE_W[?device=NAME]

P = IDLE_W + (ACTIVE_W − IDLE_W) × u, where u is the share of wall time the target's block
device was busy (the "time spent doing I/Os" column of /proc/diskstats, i.e. %util) over each
interval, so each value is an interval average (`power_avg`). The device is the one holding the
run's target (a block device itself, or the file system's device), or `device=NAME`. It models
the device only, from its datasheet — never a measurement; every figure derived from it is
labelled an estimate.
"""

from __future__ import annotations

import os
import stat
import time
from pathlib import Path

from .base import Meter, MeterError, ParsedSpec

DISKSTATS = Path("/proc/diskstats")


def device_of(path: str) -> str:
    """Block device name holding `path` (the device itself for a block special file)."""
    try:
        st = os.stat(path)
    except OSError as exc:
        raise MeterError(f"estimate: {path}: {exc.strerror or exc}") from None
    dev = st.st_rdev if stat.S_ISBLK(st.st_mode) else st.st_dev
    major, minor = os.major(dev), os.minor(dev)
    uevent = Path(f"/sys/dev/block/{major}:{minor}/uevent")
    try:
        for line in uevent.read_text().splitlines():
            if line.startswith("DEVNAME="):
                return line.partition("=")[2]
    except OSError:
        pass
    raise MeterError(
        f"estimate: {path} is not on a block device ({major}:{minor}: tmpfs, overlay or network "
        "file system?); give the device with estimate:IDLE,ACTIVE?device=NAME"
    )


def io_ticks_ms(device: str, diskstats: Path = DISKSTATS) -> int:
    try:
        text = diskstats.read_text()
    except OSError as exc:
        raise MeterError(f"estimate: cannot read {diskstats}: {exc.strerror or exc}") from None
    for line in text.splitlines():
        fields = line.split()
        if len(fields) >= 13 and fields[2] == device:
            return int(fields[12])
    raise MeterError(f"estimate: device {device!r} is not in {diskstats}")


class EstimateMeter(Meter):
    scheme = "estimate"
    driver = "estimate"
    tier = "estimate"
    quantity = "power_avg"
    native_interval_s = 0.5  # io_ticks count in jiffies: shorter windows get coarse
    summary = "no meter: datasheet idle/active watts × the target device's %util (an estimate)"
    needs = "the device's idle and active watts from its datasheet"
    example = "estimate:5.0,9.5"

    def __init__(self, spec: ParsedSpec, *, interval_s: float | None = None) -> None:
        super().__init__(spec, interval_s=interval_s)
        body, options = spec.rest, spec.query
        try:
            idle_w, active_w = (float(x) for x in body.split(","))
        except ValueError:
            raise MeterError(
                f"meter spec {spec.spec!r}: expected estimate:IDLE_W,ACTIVE_W "
                "(datasheet watts, e.g. estimate:5,9.5)"
            ) from None
        if not (0 <= idle_w <= active_w < 1e5):
            raise MeterError(f"meter spec {spec.spec!r}: need 0 <= IDLE_W <= ACTIVE_W")
        self.idle_w, self.active_w = idle_w, active_w
        self.device: str | None = options.get("device") or None
        self.diskstats = Path(options.get("diskstats") or DISKSTATS)
        self._last: tuple[int, int] | None = None

    def bind_target(self, path: str) -> None:
        """The run's target decides the device unless the spec named one."""
        if self.device is None:
            self.device = device_of(path)

    def open(self) -> None:
        if self.device is None:
            raise MeterError("estimate: no device: run it against a target, or give ?device=NAME")
        self.model = f"datasheet {self.idle_w:g} W idle / {self.active_w:g} W active × %util of {self.device}"
        self._last = (time.monotonic_ns(), io_ticks_ms(self.device, self.diskstats))

    def read(self) -> float:
        assert self.device is not None and self._last is not None
        now, ticks = time.monotonic_ns(), io_ticks_ms(self.device, self.diskstats)
        last_ns, last_ticks = self._last
        self._last = (now, ticks)
        wall_ms = (now - last_ns) / 1e6
        util = min(1.0, max(0.0, (ticks - last_ticks) / wall_ms)) if wall_ms > 0 else 0.0
        return self.idle_w + (self.active_w - self.idle_w) * util
