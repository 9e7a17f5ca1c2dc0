"""hwmon, RAPL (powercap) and the datasheet estimate against file trees laid out like the kernel's."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from iowatt_agent.meters import Clock, MeterError, open_meter
from iowatt_agent.meters.base import CounterUnwrapper
from iowatt_agent.meters.estimate import device_of

from tests.agent.meters import instruments as inst
from tests.agent.meters.conftest import sample


def hwmon_dir(tmp_path: Path, name: str = "acpi_power_meter") -> Path:
    d = tmp_path / "hwmon3"
    d.mkdir()
    (d / "name").write_text(f"{name}\n")
    return d


def test_hwmon_power_input_is_microwatts(tmp_path):
    d = hwmon_dir(tmp_path)
    (d / "power1_label").write_text("system\n")
    feed = inst.SysfsValue(d / "power1_input", [61_200_000, 61_400_000, 75_000_000], period_s=0.05)
    try:
        meter, readings = sample(f"hwmon:{d}/power1_input?interval=0.02", 0.3)
    finally:
        feed.close()
    assert set(readings.value) <= {61.2, 61.4, 75.0} and readings.value[-1] == 75.0
    info = meter.describe()
    assert (info["tier"], info["quantity"], info["model"]) == ("inband", "power", "acpi_power_meter system")
    assert info["accuracy_declared"] is False and info["accuracy_pct"] == 5.0


def test_hwmon_directory_prefers_the_average_and_its_interval(tmp_path):
    d = hwmon_dir(tmp_path)
    (d / "power1_input").write_text("1000000\n")
    (d / "power1_average").write_text("2000000\n")
    (d / "power1_average_interval").write_text("500\n")
    meter = open_meter(f"hwmon:{d}")
    meter.start(Clock.now())
    readings = meter.stop()
    assert meter.quantity == "power_avg" and meter.interval_s == 0.5
    assert readings.value in ([], [2.0])


def test_hwmon_energy_counter_unwraps_a_32_bit_wrap(tmp_path):
    d = hwmon_dir(tmp_path, "amdgpu")
    f = d / "energy1_input"
    f.write_text(f"{2**32 - 1_000_000}\n")  # no max_uj: wraps at the register width
    meter = open_meter(f"hwmon:{f}")
    meter.open()
    assert meter.quantity == "energy_counter"
    f.write_text(f"{2**32 - 400_000}\n")
    assert meter.read() == pytest.approx(0.6)  # J since open()'s first read
    f.write_text("500000\n")  # wrapped: 400000 µJ to the top, 500000 after
    assert meter.read() == pytest.approx(0.6 + 0.4 + 0.5)


def test_hwmon_refuses_other_files(tmp_path):
    d = hwmon_dir(tmp_path)
    (d / "temp1_input").write_text("42000\n")
    with pytest.raises(MeterError, match="not a hwmon power or energy file"):
        open_meter(f"hwmon:{d}/temp1_input").start(Clock.now())
    with pytest.raises(MeterError, match="no such file"):
        open_meter(f"hwmon:{d}/power9_input").start(Clock.now())


def rapl_zone(root: Path, name: str, label: str, max_uj: int, value: int) -> Path:
    z = root / name
    z.mkdir(parents=True)
    (z / "name").write_text(f"{label}\n")
    (z / "max_energy_range_uj").write_text(f"{max_uj}\n")
    (z / "energy_uj").write_text(f"{value}\n")
    return z


def test_rapl_sums_packages_unwraps_each_and_ignores_subzones(tmp_path):
    root = tmp_path / "powercap"
    p0 = rapl_zone(root, "intel-rapl:0", "package-0", 262_143_328_850, 262_143_000_000)
    p1 = rapl_zone(root, "intel-rapl:1", "package-1", 1_000_000_000, 10_000_000)
    sub = rapl_zone(root, "intel-rapl:0:0", "dram", 65_712_999_613, 5)
    rapl_zone(root, "intel-rapl-mmio:0", "package-0", 262_143_328_850, 7)
    meter = open_meter(f"rapl:{root}")
    meter.open()
    assert meter.model == "RAPL package-0+package-1" and meter.describe()["tier"] == "component"
    (p0 / "energy_uj").write_text("1000000\n")  # wrapped at max_energy_range_uj
    (p1 / "energy_uj").write_text("12000000\n")
    (sub / "energy_uj").write_text("999999999\n")  # overlaps package-0: never summed
    expected_uj = (262_143_328_850 - 262_143_000_000 + 1_000_000) + 2_000_000
    assert meter.read() == pytest.approx(expected_uj / 1e6)
    assert meter.wraps == 1


def test_rapl_sampling_thread_keeps_the_counter_monotonic_across_wraps(tmp_path):
    root = tmp_path / "powercap"
    z = rapl_zone(root, "intel-rapl:0", "package-0", 1_000_000, 0)
    feed = inst.SysfsValue(z / "energy_uj", inst.counter_values(0, 150_000, 1_000_000, 40), period_s=0.01)
    try:
        meter, readings = sample(f"rapl:{root}?interval=0.02", 0.35)
    finally:
        feed.close()
    assert meter.quantity == "energy_counter" and meter.wraps >= 1
    assert readings.value == sorted(readings.value) and readings.value[-1] > 1.0  # J, past the 1 J range


def test_counter_unwrapper_without_a_declared_range_guesses_the_register():
    u = CounterUnwrapper(None, 1.0)
    assert [u.update(v) for v in (10, 2**32 - 5, 3)] == [0, 2**32 - 15, 2**32 - 15 + 5 + 3]


def test_rapl_missing_is_clear(tmp_path):
    with pytest.raises(MeterError, match="does not exist"):
        open_meter(f"rapl:{tmp_path}/none").start(Clock.now())
    with pytest.raises(MeterError, match="no package zones"):
        open_meter(f"rapl:{tmp_path}").start(Clock.now())


# --- estimate ------------------------------------------------------------------------------------


def diskstats(path: Path, io_ticks_ms: int) -> None:
    path.write_text(
        "   8       0 sda 100 0 800 50 10 0 80 5 0 40 55 0 0 0 0\n"
        f" 259       0 fakedisk 5000 0 40000 900 7000 0 56000 800 0 {io_ticks_ms} 1700 0 0 0 0\n"
    )


def test_estimate_scales_datasheet_watts_by_device_utilisation(tmp_path):
    stats = tmp_path / "diskstats"
    diskstats(stats, 1000)
    meter = open_meter(f"estimate:5,9?device=fakedisk&diskstats={stats}")
    meter.start(Clock.now())  # baseline read at open
    meter.stop()
    meter.open()
    t0 = time.monotonic()
    time.sleep(0.2)  # wall time the fake disk is busy 100 ms of: the utilisation under test
    diskstats(stats, 1100)  # 100 ms busy
    watts = meter.read()
    util = 0.1 / (time.monotonic() - t0)
    assert watts == pytest.approx(5 + 4 * util, abs=0.3)
    diskstats(stats, 1_000_000)  # busier than wall time (merged counters): clipped at 100 %
    assert meter.read() == 9.0
    info = meter.describe()
    assert info["tier"] == "estimate" and info["quantity"] == "power_avg"
    assert "datasheet 5 W idle / 9 W active" in info["model"]


def test_estimate_needs_a_block_device():
    shm = "/dev/shm"
    if not os.path.isdir(shm):
        pytest.skip("no /dev/shm")
    with pytest.raises(MeterError, match="not on a block device"):
        device_of(shm)
    with pytest.raises(MeterError, match="IDLE_W,ACTIVE_W"):
        open_meter("estimate:five")
    with pytest.raises(MeterError, match="IDLE_W <= ACTIVE_W"):
        open_meter("estimate:9,5")
