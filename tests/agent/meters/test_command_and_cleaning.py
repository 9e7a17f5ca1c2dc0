"""`command:` meters and what happens to bad readings: kept by the driver, dropped and counted by
cleaning (iowatt_energy.clean) when the run's power object is built."""

from __future__ import annotations

import math
import time

import pytest
from iowatt_agent.meters import Clock, MeterError, open_meter, redact, supported
from iowatt_agent.meters.command import parse_line
from iowatt_agent.power import PowerSession

from tests.agent.meters import instruments as inst
from tests.agent.meters.conftest import sample
from tests.waiting import wait_until


def test_command_once_per_call(tmp_path):
    calls = tmp_path / "calls"
    prog = inst.write_program(
        tmp_path / "watts", f"open({str(calls)!r}, 'a').write('call\\n')\nprint('42.5 W')\n"
    )
    meter = open_meter(f"command:{prog}", interval_s=0.05)
    meter.start(Clock.now())
    # until the program ran four times (a fixed 0.5 s window gave three calls at CI's load)
    wait_until(
        lambda: calls.exists() and calls.read_text().count("call") >= 4,
        timeout=30,
        interval=0.05,
        message="the meter calls its program four times",
    )
    readings = meter.stop()
    assert len(readings.value) >= 4 and set(readings.value) == {42.5}
    assert len(readings.value) <= calls.read_text().count("call"), "one reading per call"
    assert readings.t_ns == sorted(readings.t_ns)
    assert meter.describe()["model"] == "watts" and meter.describe()["tier"] == "inband"


def test_command_streaming_lines_and_counts_garbage(tmp_path):
    prog = inst.write_program(
        tmp_path / "stream",
        "import sys, time\n"
        "for line in ['10', '11.5', 'hello', '12']:\n"
        "    print(line, flush=True); time.sleep(0.03)\n"
        "time.sleep(30)\n",
    )
    meter, readings = sample(f"command:{prog} --flag", 0.4)
    assert readings.value == [10.0, 11.5, 12.0]
    assert readings.errors == 1 and "not a reading: 'hello'" in (readings.last_error or "")


def test_command_failing_program_is_no_meter_data(tmp_path):
    prog = inst.write_program(
        tmp_path / "broken", "import sys\nprint('sensor gone', file=sys.stderr)\nsys.exit(3)\n"
    )
    with pytest.raises(MeterError, match="exited 3: sensor gone"):
        open_meter(f"command:{prog}").start(Clock.now())
    with pytest.raises(MeterError, match="not found on PATH"):
        open_meter("command:no-such-program-xyz").start(Clock.now())


def test_parse_line_forms():
    assert parse_line("61.2\n") == (None, 61.2)
    assert parse_line("61.2 W") == (None, 61.2)
    assert parse_line("1700000000.5 61.2") == (1700000000.5, 61.2)
    assert parse_line("1700000000.5,61.2") == (1700000000.5, 61.2)
    assert math.isnan(parse_line("nan")[1])
    with pytest.raises(MeterError):
        parse_line("1 2 3")


def test_bad_readings_are_dropped_and_counted_never_integrated(tmp_path):
    """Negative and NaN watts, a timestamp going back, a duplicated timestamp: the program has its
    own clock (UNIX_SECONDS WATTS), as a logger tailing a meter would."""
    prog = inst.write_program(
        tmp_path / "logger",
        "import time\n"
        "t = time.time()\n"
        "rows = [(t, 50), (t + 0.1, -3), (t + 0.2, float('nan')), (t + 0.3, 51), (t + 0.25, 52),\n"
        "        (t + 0.3, 53), (t + 0.4, 54), (t + 0.5, float('inf'))]\n"
        "for ts, w in rows:\n"
        "    print(f'{ts:.6f} {w}', flush=True)\n"
        "time.sleep(30)\n",
    )
    session = PowerSession(f"command:{prog}", idle_s=0)
    session.start()
    with session.phase("load"):
        time.sleep(0.4)  # the load phase's window under test (the program printed its rows at once)
    power = session.finish()
    assert power["status"] == "ok" and power["reason"] is None
    assert power["cleaning"] == {
        "dropped_nonfinite": 2,
        "dropped_negative": 1,
        "dropped_out_of_order": 1,
        "dropped_duplicate": 1,
    }
    assert power["samples"]["value"] == [50.0, 51.0, 54.0]
    t = power["samples"]["t_ns"]
    assert t == sorted(t) and len(set(t)) == len(t)
    # the program's clock, kept: printed to 1 µs and parsed as float seconds (~0.25 µs steps at 1.7e9 s)
    assert t[1] - t[0] == pytest.approx(300_000_000, abs=5_000)


def test_only_bad_readings_is_no_meter_data_with_the_counts(tmp_path):
    prog = inst.write_program(tmp_path / "bad", "import time\nprint('-1', flush=True)\ntime.sleep(30)\n")
    session = PowerSession(f"command:{prog}", idle_s=5)
    session.start()
    with session.phase("load"):
        time.sleep(0.2)  # the load phase's window under test
    power = session.finish()
    assert power["status"] == "no_meter_data"
    assert "no usable readings (1 read, 1 dropped" in power["reason"]
    assert power["samples"] == {"t_ns": [], "value": []} and power["cleaning"]["dropped_negative"] == 1


def test_unknown_scheme_names_the_supported_ones():
    with pytest.raises(MeterError) as info:
        open_meter("modbus://meter:502")
    message = str(info.value)
    assert "unknown meter scheme 'modbus'" in message
    for scheme in (
        "ptdaemon",
        "scpi+tcp",
        "ipmi",
        "redfish",
        "hwmon",
        "rapl",
        "shelly",
        "tasmota",
        "snmp",
        "command",
        "estimate",
    ):
        assert scheme in message and scheme in supported()
    with pytest.raises(MeterError, match="empty meter spec"):
        open_meter("  ")
    with pytest.raises(MeterError, match="no host"):
        open_meter("shelly://")
    with pytest.raises(MeterError, match="interval must be"):
        open_meter("tasmota://plug?interval=0")


def test_secrets_are_redacted():
    assert redact("redfish://bmc/redfish/v1/Chassis/1?user=a&password=hunter2") == (
        "redfish://bmc/redfish/v1/Chassis/1?user=a&password=***"
    )
    assert redact("snmp://pdu?oid=.1.3&community=private") == "snmp://pdu?oid=.1.3&community=***"
    assert (
        redact("hwmon:/sys/class/hwmon/hwmon3/power1_input") == "hwmon:/sys/class/hwmon/hwmon3/power1_input"
    )
