"""Drivers against fake instruments on loopback that speak each meter's real protocol."""

from __future__ import annotations

import json
import math

import pytest
from iowatt_agent.meters import Clock, MeterError, open_meter

from tests.agent.meters import instruments as inst
from tests.agent.meters.conftest import sample
from tests.waiting import wait_until

# --- PTDaemon ------------------------------------------------------------------------------------


def test_ptdaemon_handshake_ranges_and_rl_readout(closing):
    ptd = inst.ptdaemon([61.2, 61.4, 75.0, 80.0], period_s=0.05)
    closing(ptd)
    meter, readings = sample(
        f"ptdaemon://127.0.0.1:{ptd.port}?volts=300&amps=2&mark=run42&interval=0.2", 0.75
    )
    assert ptd.commands[:5] == ["Hello", "Identify", "SR,V,300", "SR,A,2", "Go,1000,0,run42"]
    assert set(ptd.commands[5:-2]) == {"RL"} and ptd.commands[-2:] == ["Stop", "Uncertainty"]
    # every analyzer sample exactly once, in order, with the analyzer's 50 ms spacing kept
    assert readings.value[:4] == [61.2, 61.4, 75.0, 80.0] and len(readings.value) >= 10
    steps = [b - a for a, b in zip(readings.t_ns, readings.t_ns[1:], strict=False)]
    within_polls = [d for d in steps if abs(d - 50_000_000) < 1_000_000]
    assert len(within_polls) >= len(steps) // 2  # several samples per 200 ms poll, 50 ms apart
    assert all(d > 0 for d in steps) and readings.errors == 0
    info = meter.describe()
    assert info["model"] == "WT310E,C2PH1234,F1.03 (fake)"
    assert (info["tier"], info["quantity"], info["driver"]) == ("lab", "power_avg", "ptdaemon")
    # PTD's own uncertainty figure becomes the declared accuracy
    assert info["accuracy_pct"] == 0.42 and info["accuracy_declared"] is True


def test_ptdaemon_without_rl_falls_back_to_watts(closing):
    ptd = inst.ptdaemon([50.0, -1, "nan", 51.0], rl=False)  # WT310 USB loss gives -1 sentinels; NaN
    closing(ptd)
    _, readings = sample(f"ptdaemon://127.0.0.1:{ptd.port}?interval=0.05", 0.3)
    assert ptd.commands.count("RL") == 1 and "Watts" in ptd.commands
    assert readings.value[:2] == [50.0, -1.0] and math.isnan(readings.value[2])  # kept for cleaning


def test_ptdaemon_refuses_something_else(closing):
    other = inst.LineServer(lambda line: "SSH-2.0-OpenSSH_9.2")
    closing(other)
    meter = open_meter(f"ptdaemon://127.0.0.1:{other.port}")
    with pytest.raises(MeterError, match="is not a PTDaemon"):
        meter.start(Clock.now())


def test_ptdaemon_unreachable_is_a_clear_error(free_port):
    with pytest.raises(MeterError, match=f"cannot connect to 127.0.0.1:{free_port}"):
        open_meter(f"ptdaemon://127.0.0.1:{free_port}").start(Clock.now())


# --- SCPI ----------------------------------------------------------------------------------------


def test_scpi_wt310_configures_and_reads_numeric_items(closing):
    wt = inst.scpi_wt310(["+1.2345E+02", "9.9E+37", "+1.2000E+02"])
    closing(wt)
    # sampled until the instrument was asked a fourth time, so three readings are in (a fixed
    # 0.45 s window gave two on a loaded machine)
    meter = open_meter(f"scpi+tcp://127.0.0.1:{wt.port}?model=wt310&interval=0.1")
    meter.start(Clock.now())
    wait_until(lambda: wt.commands.count(":NUMeric:NORMal:VALue?") >= 4, timeout=20, message="three readings")
    readings = meter.stop()
    assert ":NUMeric:NORMal:ITEM1 P,1" in wt.commands and ":RATE 100MS" in wt.commands
    assert readings.value[0] == 123.45
    assert math.isnan(readings.value[1])  # over-range sentinel recorded as NaN → cleaning counts it
    assert readings.value[2] == 120.0
    info = meter.describe()
    assert info["model"] == "YOKOGAWA WT310E" and info["accuracy_pct"] == 0.15 and info["accuracy_declared"]


def test_scpi_pw3335_header_answers(closing):
    pw = inst.scpi_pw3335(["+0.1150E+3", "+0.1160E+3"])
    closing(pw)
    meter, readings = sample(f"scpi+tcp://127.0.0.1:{pw.port}?model=pw3335&interval=0.05", 0.25)
    assert readings.value[:2] == [115.0, 116.0]
    assert pw.commands[0] == "*IDN?" and set(pw.commands[1:]) == {":MEASure? P"}
    assert meter.describe()["accuracy_declared"] is False  # no datasheet figure used: lab default
    assert meter.describe()["accuracy_pct"] == 1.0


def test_scpi_model_is_required():
    with pytest.raises(MeterError, match="model=wt310|pw3335"):
        open_meter("scpi+tcp://127.0.0.1:5025")


# --- Redfish -------------------------------------------------------------------------------------


def test_redfish_environment_metrics(closing):
    bmc = inst.redfish_environment([1.0, 300.0, 310.5])  # open() probes once
    closing(bmc)
    meter, readings = sample(f"redfish+http://{bmc.netloc}/redfish/v1/Chassis/1?interval=0.05", 0.25)
    assert readings.value[:2] == [300.0, 310.5]
    assert meter.model == "Fake R1" and meter.describe()["tier"] == "bmc"
    assert {p for p, _, _ in bmc.requests} == {
        "/redfish/v1/Chassis/1",
        "/redfish/v1/Chassis/1/EnvironmentMetrics",
    }


def test_redfish_falls_back_to_legacy_power_with_basic_auth(closing):
    bmc = inst.redfish_legacy([250.0])
    closing(bmc)
    meter, readings = sample(
        f"redfish+http://{bmc.netloc}/redfish/v1/Chassis/1?user=monitor&password=pw&interval=0.05", 0.2
    )
    assert readings.value and set(readings.value) == {250.0}
    assert "/redfish/v1/Chassis/1/EnvironmentMetrics" in [p for p, _, _ in bmc.requests]  # tried first
    assert meter.describe()["spec"].endswith("password=***&interval=0.05")  # never uploaded in clear


def test_redfish_wrong_password_says_so(closing):
    bmc = inst.redfish_legacy([250.0])
    closing(bmc)
    meter = open_meter(f"redfish+http://{bmc.netloc}/redfish/v1/Chassis/1?user=monitor&password=bad")
    with pytest.raises(MeterError, match="401, check user= and password="):
        meter.start(Clock.now())


# --- Shelly and Tasmota --------------------------------------------------------------------------


def test_shelly_gen2_rpc(closing):
    plug = inst.shelly_gen2([1.0, 12.5, 13.0])  # open() probes once
    closing(plug)
    meter, readings = sample(f"shelly://{plug.netloc}?interval=0.05", 0.2)
    assert readings.value[:2] == [12.5, 13.0]
    assert meter.model == "Shelly SNPL-00112EU" and meter.describe()["tier"] == "plug"
    info = meter.describe()
    assert (info["accuracy_pct"], info["accuracy_w"], info["accuracy_declared"]) == (2.0, 0.5, False)


def test_shelly_gen1_status(closing):
    plug = inst.shelly_gen1([1.0, 40.0, 41.0])  # open() probes once
    closing(plug)
    meter, readings = sample(f"shelly://{plug.netloc}?interval=0.05", 0.2)
    assert readings.value[:2] == [40.0, 41.0] and meter.model == "Shelly SHPLG-S"
    with pytest.raises(MeterError, match=r"no meters\[3\]"):
        open_meter(f"shelly://{plug.netloc}?channel=3").start(Clock.now())


def test_shelly_energy_counters_in_joules(closing):
    gen2 = inst.shelly_gen2([5.0], wh_per_read=0.5)
    closing(gen2)
    meter, readings = sample(f"shelly://{gen2.netloc}?read=energy&interval=0.05", 0.3)
    assert meter.describe()["quantity"] == "energy_counter"
    steps = [b - a for a, b in zip(readings.value, readings.value[1:], strict=False)]
    assert steps and all(abs(d - 1800.0) < 1e-6 for d in steps)  # 0.5 Wh per read = 1800 J
    gen1 = inst.shelly_gen1([5.0], total_wmin=[100, 100, 101, 103])
    closing(gen1)
    _, readings = sample(f"shelly://{gen1.netloc}?read=energy&interval=0.05", 0.25)
    assert readings.value[:3] == [6000.0, 6060.0, 6180.0]  # watt-minutes × 60 = J
    with pytest.raises(MeterError, match="read must be power or energy"):
        open_meter("shelly://plug?read=volts")


def test_redfish_energy_joules_counter(closing):
    bmc = inst.redfish_environment([300.0], energy_j=[1.0, 1000.0, 1300.0, 1600.0])
    closing(bmc)
    meter, readings = sample(
        f"redfish+http://{bmc.netloc}/redfish/v1/Chassis/1?read=energy&interval=0.05", 0.2
    )
    assert meter.describe()["quantity"] == "energy_counter"
    assert readings.value[:3] == [1000.0, 1300.0, 1600.0]
    legacy = inst.redfish_legacy([250.0])
    closing(legacy)
    with pytest.raises(MeterError, match="no EnvironmentMetrics.EnergyJoules"):
        open_meter(
            f"redfish+http://{legacy.netloc}/redfish/v1/Chassis/1?read=energy&user=monitor&password=pw"
        ).start(Clock.now())


def test_tasmota_status_10(closing):
    plug = inst.tasmota([1.0, 7.0, 7.5])  # open() probes once
    closing(plug)
    meter, readings = sample(f"tasmota://{plug.netloc}?user=admin&password=pw&interval=0.05", 0.2)
    assert readings.value[:2] == [7.0, 7.5] and meter.model == "Tasmota Lab plug"
    path, query, _ = plug.requests[-1]
    assert path == "/cm" and query == {"cmnd": "Status 10", "user": "admin", "password": "pw"}


def test_http_meter_unreachable(free_port):
    with pytest.raises(MeterError, match="Connection refused|connect"):
        open_meter(f"tasmota://127.0.0.1:{free_port}").start(Clock.now())


# --- SNMP ----------------------------------------------------------------------------------------


def test_snmp_pdu_power_with_scale(closing):
    oid = ".1.3.6.1.4.1.318.1.1.26.4.3.1.5.1"  # APC rPDU2 device power, hundredths of kW
    pdu = inst.SnmpAgent(oid, [1, 12, 13])  # open() probes once
    closing(pdu)
    meter, readings = sample(f"snmp://127.0.0.1:{pdu.port}?oid={oid}&scale=10&interval=0.05", 0.25)
    assert readings.value[:2] == [120.0, 130.0] and meter.describe()["tier"] == "pdu"


def test_snmp_wrong_community_times_out_clearly(closing):
    oid = ".1.3.6.1.4.1.318.1.1.26.9.4.3.1.7.5"
    pdu = inst.SnmpAgent(oid, [80])
    closing(pdu)
    meter = open_meter(f"snmp://127.0.0.1:{pdu.port}?oid={oid}&community=wrong&interval=0.5")
    with pytest.raises(MeterError, match="No SNMP response"):
        meter.start(Clock.now())
    with pytest.raises(MeterError, match="numeric OID"):
        open_meter("snmp://pdu?oid=sysDescr")


# --- IPMI ----------------------------------------------------------------------------------------


def test_ipmi_runs_ipmitool_and_keeps_the_password_off_argv(tmp_path, monkeypatch):
    record = inst.fake_ipmitool(tmp_path, watts=314)
    monkeypatch.setenv("PATH", f"{tmp_path}:/usr/bin:/bin")
    meter, readings = sample("ipmi://10.0.0.9:6230?user=admin&password=s3cret&interval=0.1", 0.25)
    assert readings.value and set(readings.value) == {314.0}
    calls = [json.loads(line) for line in record.read_text().splitlines()]
    assert calls[0]["argv"] == [
        "-I",
        "lanplus",
        "-H",
        "10.0.0.9",
        "-p",
        "6230",
        "-U",
        "admin",
        "-E",
        "dcmi",
        "power",
        "reading",
    ]
    assert all("s3cret" not in c["argv"] for c in calls) and calls[0]["password"] == "s3cret"
    assert meter.describe()["tier"] == "bmc"


def test_ipmi_in_band_and_inactive_reading(tmp_path, monkeypatch):
    record = inst.fake_ipmitool(tmp_path, state="deactivated")
    monkeypatch.setenv("PATH", f"{tmp_path}:/usr/bin:/bin")
    with pytest.raises(MeterError, match="not activated"):
        open_meter("ipmi://").start(Clock.now())
    assert json.loads(record.read_text().splitlines()[0])["argv"] == ["dcmi", "power", "reading"]


def test_ipmi_without_ipmitool_says_how_to_get_it(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))  # an empty directory: no ipmitool anywhere
    with pytest.raises(MeterError, match="ipmitool is not installed.*apt-get install ipmitool"):
        open_meter("ipmi://10.0.0.9").start(Clock.now())
