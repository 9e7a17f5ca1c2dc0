"""iowatt_policy: fio values, the model's validation and every rule of check_run (ADR 0009 §3)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from iowatt_policy import (
    ALLOWED_OPTIONS,
    RULES,
    Limits,
    MeterInfo,
    Policy,
    PolicyError,
    ReportedPolicy,
    Target,
    Violation,
    check_run,
    check_target_on_host,
    parse_bool,
    parse_bs,
    parse_bssplit_sizes,
    parse_size,
    parse_time_ns,
    parse_u64,
)

DEV = "/dev/disk/by-id/nvme-Example_SSD_S123"


def policy(**limits: Any) -> ReportedPolicy:
    return ReportedPolicy(
        targets=(
            Target.directory("/data/bench"),
            Target.file("/data/ro.img"),
            Target.file("/data/rw.img", allow_write=True),
            Target.device(DEV),
            Target.device(DEV + "-2", destructive=True),
        ),
        meters=(MeterInfo("wall", "shelly", "plug"), MeterInfo("bmc", "ipmi", "bmc")),
        default_meter="wall",
        limits=Limits(**limits),
    )


def job(**options: Any) -> dict[str, Any]:
    base: dict[str, Any] = {"name": "j", "rw": "randread", "bs": "4096", "size": "67108864", "stonewall": "1"}
    base.update(options)
    return {"global": {}, "jobs": [base]}


def check(
    target: str = "/data/bench",
    engine_job: dict[str, Any] | None = None,
    meter: str | None = None,
    destructive: bool = False,
    pol: ReportedPolicy | None = None,
) -> list[Violation]:
    return check_run(
        pol or policy(),
        target_path=target,
        engine_job=engine_job or job(),
        meter=meter,
        destructive=destructive,
    )


def rules(violations: list[Violation]) -> list[str]:
    return [v.rule for v in violations]


# --- fio values ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "kb_base", "expected"),
    [
        ("4096", 1024, 4096),
        ("4k", 1024, 4096),
        ("4K", 1024, 4096),
        ("4kb", 1024, 4096),
        ("4KiB", 1024, 4000),  # fio's compatibility mode reads IEC-looking suffixes as powers of 10
        ("4KiB", 1000, 4096),
        ("4k", 1000, 4000),
        ("1m", 1024, 1 << 20),
        ("2g", 1024, 2 << 30),
        ("1t", 1024, 1 << 40),
        ("1p", 1024, 1 << 50),
        ("10b", 1024, 10),
        ("0x1000", 1024, 4096),
        ("010k", 1024, 8 * 1024),  # octal, as strtoull(base 0)
        ("0", 1024, 0),
    ],
)
def test_parse_size_reads_what_the_engine_reads(text: str, kb_base: int, expected: int) -> None:
    assert parse_size(text, kb_base) == expected


@pytest.mark.parametrize(
    "text", ["", "k", "-1", "4x", "4kbb", "4bk", "08", "0x", "1e3", " 4k", "18446744073709551616"]
)
def test_parse_size_refuses_what_the_engine_refuses(text: str) -> None:
    with pytest.raises(ValueError):
        parse_size(text)


def test_parse_size_overflow_after_suffix() -> None:
    with pytest.raises(ValueError, match="out of range"):
        parse_size("99999999p")


@pytest.mark.parametrize(
    ("text", "ns"),
    [
        ("5", 5_000_000_000),
        ("5000ms", 5_000_000_000),
        ("2m", 120_000_000_000),
        ("1h", 3_600_000_000_000),
        ("1d", 86_400_000_000_000),
        ("250us", 250_000),
        ("7ns", 7),
        ("1.5", 1_500_000_000),
        ("1e3", 1_000_000_000_000),
        ("3SEC", 3_000_000_000),
    ],
)
def test_parse_time(text: str, ns: int) -> None:
    assert parse_time_ns(text) == ns


@pytest.mark.parametrize("text", ["", "s", "5x", "-5", "0x10", "1e400", "1_0"])
def test_parse_time_refuses(text: str) -> None:
    with pytest.raises(ValueError):
        parse_time_ns(text)


def test_counts_bools_bs_bssplit() -> None:
    assert parse_u64("16") == 16
    for bad in ("", "1.5", "0x10", "-1", "1k"):
        with pytest.raises(ValueError):
            parse_u64(bad)
    assert parse_bool("on") is True and parse_bool("0") is False
    with pytest.raises(ValueError):
        parse_bool("2")
    assert parse_bs("4k") == (4096, 4096)
    assert parse_bs("4k,1m") == (4096, 1 << 20)
    assert parse_bs("8k,") == (8192, 8192)
    with pytest.raises(ValueError):
        parse_bs("0")
    assert parse_bssplit_sizes("4k/10:64k/50:32k/40") == [4096, 65536, 32768]
    assert parse_bssplit_sizes("4k:1m,128k") == [4096, 1 << 20, 128 << 10]


# --- the model -------------------------------------------------------------------------------------


def test_policy_round_trips_and_reports_no_secret_fields() -> None:
    pol = Policy(targets=(Target.directory("/data/bench"), Target.device(DEV, destructive=True)))
    assert Policy.from_dict(pol.to_dict()) == pol
    reported = ReportedPolicy.from_policy(
        pol, meters=[MeterInfo("wall", "shelly", "plug")], default_meter="wall"
    )
    doc = reported.to_dict()
    assert ReportedPolicy.from_dict(doc) == reported
    assert doc["meters"] == [{"name": "wall", "driver": "shelly", "tier": "plug"}]
    assert doc["targets"][1] == {
        "path": DEV,
        "kind": "device",
        "writable": True,
        "destructive": True,
        "model": None,
        "serial_sha256": None,
        "size_bytes": None,
    }
    assert set(doc["limits"]) == {
        "max_threads",
        "max_iodepth",
        "max_bs_bytes",
        "max_bytes_written",
        "max_runtime_s",
        "max_memory_bytes",
        "max_files",
    }
    assert doc["limits"]["max_memory_bytes"] == doc["limits"]["max_files"] == "auto"
    assert doc["targets"][0]["free_inodes"] is None and doc["mem_total_bytes"] is None


def test_a_meters_idle_baseline_round_trips_and_is_a_number_of_seconds() -> None:
    """issue 25: the agent reports each meter's idle baseline (the New-run page's estimate)."""
    reported = ReportedPolicy(meters=(MeterInfo("wall", "shelly", "plug", idle_s=12.5),))
    doc = reported.to_dict()
    assert doc["meters"] == [{"name": "wall", "driver": "shelly", "tier": "plug", "idle_s": 12.5}]
    assert ReportedPolicy.from_dict(doc) == reported
    assert MeterInfo.from_dict({"name": "w", "driver": "d", "tier": "t", "idle_s": 0}).idle_s == 0.0
    for bad in (-1, True, "30", float("nan"), float("inf"), 2e9):
        with pytest.raises(PolicyError, match=r"meters\.0\.idle_s"):
            MeterInfo.from_dict({"name": "w", "driver": "d", "tier": "t", "idle_s": bad})


@pytest.mark.parametrize(
    ("doc", "field"),
    [
        ({"targets": [{"path": "data", "kind": "directory"}]}, "targets.0.path"),
        ({"targets": [{"path": "/data/../etc", "kind": "directory"}]}, "targets.0.path"),
        ({"targets": [{"path": "/data/", "kind": "directory"}]}, "targets.0.path"),
        ({"targets": [{"path": "/dev/sda", "kind": "device"}]}, "targets.0.path"),
        ({"targets": [{"path": "/x", "kind": "socket"}]}, "targets.0.kind"),
        ({"targets": [{"path": "/x", "kind": "file", "destructive": True}]}, "targets.0.destructive"),
        (
            {"targets": [{"path": "/x", "kind": "directory"}, {"path": "/x", "kind": "directory"}]},
            "targets.1.path",
        ),
        ({"limits": {"max_threads": 0}}, "limits.max_threads"),
        ({"limits": {"max_threads": True}}, "limits.max_threads"),
        ({"limits": {"max_runtime_s": float("nan")}}, "limits.max_runtime_s"),
        ({"limits": {"max_cpu": 1}}, "limits.max_cpu"),
        ({"limits": {"max_threads": 2**31 + 1}}, "limits.max_threads"),
        ({"limits": {"max_bytes_written": 2**63}}, "limits.max_bytes_written"),
        ({"limits": {"max_runtime_s": 1e10}}, "limits.max_runtime_s"),
        ({"targets": [{"path": f"/d{i}", "kind": "directory"} for i in range(201)]}, "targets"),
        ({"version": 7}, "version"),
        ({"targets": "nope"}, "targets"),
    ],
)
def test_policy_file_errors_name_the_field(doc: dict[str, Any], field: str) -> None:
    with pytest.raises(PolicyError) as info:
        Policy.from_dict(doc)
    assert info.value.field == field


def test_reported_policy_errors() -> None:
    with pytest.raises(PolicyError) as info:
        ReportedPolicy.from_dict({"meters": [{"name": "a:b", "driver": "x", "tier": "lab"}]})
    assert info.value.field == "meters.0.name"
    with pytest.raises(PolicyError) as info:
        ReportedPolicy.from_dict({"meters": [], "default_meter": "wall"})
    assert info.value.field == "default_meter"


def test_policy_add_is_idempotent_and_replaces() -> None:
    pol = Policy().with_target(Target.file("/f")).with_target(Target.directory("/d"))
    pol = pol.with_target(Target.file("/f", allow_write=True))
    assert pol.targets == (Target.file("/f", allow_write=True), Target.directory("/d"))  # in its place
    pol = pol.without_target("/d")
    assert pol.without_target("/f").targets == ()
    full = Policy(targets=tuple(Target.directory(f"/d{i}") for i in range(200)))
    with pytest.raises(PolicyError, match="at most 200"):
        full.with_target(Target.directory("/one-more"))
    assert full.with_target(Target.directory("/d7")) == full  # replacing is fine


def test_limits_default_allow_every_preset() -> None:
    import dataclasses
    import json

    presets = json.loads((Path(__file__).parents[2] / "agent/src/iowatt_agent/presets.json").read_text())
    # a preset that starts a DBMS (the InnoDB flushing matrix) also needs the host's consent, which
    # is not a limit: without it, that is the only thing refused
    consented = dataclasses.replace(policy(), allowed_dbms=("mariadb", "postgresql"))
    for name, preset in presets.items():
        found = check_run(
            consented,
            target_path="/data/bench",
            engine_job=preset["engine_job"],
            meter=None,
            destructive=False,
        )
        assert found == [], (name, found)
        without = check_run(
            policy(),
            target_path="/data/bench",
            engine_job=preset["engine_job"],
            meter=None,
            destructive=False,
        )
        assert {v.rule for v in without} <= {"dbms.not_allowed"}, (name, without)


# --- targets -----------------------------------------------------------------------------------------


def test_allowed_run_passes() -> None:
    assert check() == []
    assert check("/data/ro.img") == []
    assert check("/data/rw.img", job(rw="randwrite")) == []
    assert check(DEV) == []  # reading a device needs no key
    assert check(DEV + "-2", job(rw="write"), destructive=True) == []


@pytest.mark.parametrize("path", ["/etc/passwd", "/data/bench/sub", "/data", "/dev/sda"])
def test_unlisted_path(path: str) -> None:
    [v] = check(path)
    assert (v.rule, v.field) == ("target.not_allowed", "target_path")
    assert "iowatt-agent targets add" in v.fix
    assert "host policy refused this run [target.not_allowed]" in v.reason()
    assert "iowatt-agent targets add" in v.reason()


def test_fix_for_a_path_inside_an_allowed_directory_names_the_directory() -> None:
    [v] = check("/data/bench/sub")
    assert v.fix.startswith("give the allowed directory /data/bench itself")
    assert v.fix.endswith("iowatt-agent targets add /data/bench/sub")


@pytest.mark.parametrize("path", ["/dev/shm/iowatt", "/dev/shm"])
def test_fix_for_ram_directories_is_not_a_device(path: str) -> None:
    [v] = check(path)
    assert v.fix.startswith(f"iowatt-agent targets add {path} (a directory)")
    assert "--device" not in v.fix


def test_fix_for_a_raw_device_asks_for_its_stable_name() -> None:
    [v] = check("/dev/sda")
    assert v.fix.startswith("iowatt-agent targets add --device /dev/disk/by-id/")


@pytest.mark.parametrize(
    "path",
    [
        "/data/bench/../../etc/passwd",
        "/data/bench/.",
        "//data/bench",
        "/data/bench/",
        "data/bench",
        "/data/bench\x00",
    ],
)
def test_traversal_and_unnormalised_paths(path: str) -> None:
    [v] = check(path)
    assert v.rule == "target.not_allowed"


def test_write_on_read_only_file() -> None:
    [v] = check("/data/ro.img", job(rw="randrw"))
    assert (v.rule, v.field) == ("file.read_only", "workload.jobs.0.rw")
    assert v.fix == "iowatt-agent targets add --file /data/ro.img --allow-write"


def test_unknown_rw_counts_as_writing() -> None:
    assert rules(check("/data/ro.img", job(rw="scribble"))) == ["file.read_only"]


def test_a_trim_is_refused_on_a_file_target_even_a_writable_one() -> None:
    # trims discard data: only on a raw device the host marked destructive (ADR 0030)
    assert rules(check("/data/ro.img", job(rw="trim"))) == ["target.kind", "file.read_only"]


def test_write_mode_from_global_names_the_global_field() -> None:
    engine_job = {"global": {"readwrite": "write"}, "jobs": [{"name": "a", "size": "1m"}]}
    [v] = check("/data/ro.img", engine_job)
    assert v.field == "workload.global.rw"


def test_device_two_keys() -> None:
    [v] = check(DEV, job(rw="write"))
    assert (v.rule, v.field) == ("device.not_destructive", "workload.jobs.0.rw")
    assert v.fix == f"iowatt-agent targets add --device {DEV} --destructive"
    [v] = check(DEV, job(), destructive=True)
    assert (v.rule, v.field) == ("device.not_destructive", "destructive")
    [v] = check(DEV + "-2", job(rw="randwrite"))
    assert (v.rule, v.field) == ("run.destructive_not_confirmed", "destructive")
    assert not v.fix_on_host


def test_destructive_on_a_directory() -> None:
    [v] = check("/data/bench", destructive=True)
    assert (v.rule, v.field) == ("target.kind", "destructive")


# --- meters --------------------------------------------------------------------------------------------


def test_meters() -> None:
    assert check(meter=None) == [] and check(meter="") == [] and check(meter="bmc") == []
    [v] = check(meter="command:/usr/bin/id")
    assert (v.rule, v.field) == ("meter.spec_from_server", "meter")
    assert "/usr/bin/id" not in v.reason()  # a spec is never echoed (it may hold a password)
    [v] = check(meter="ipmi://admin:secret@10.0.0.1")
    assert "secret" not in v.reason()
    [v] = check(meter="lab")
    assert (v.rule, v.fix) == ("meter.unknown", "iowatt-agent meters set lab SPEC")
    [v] = check(meter="bad name!")
    assert v.rule == "meter.unknown" and "bad name" not in v.message


# --- options ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "option",
    [
        "filename",
        "directory",
        "beneath",
        "create_new",
        "unlink",
        "keep_existing",
        "readonly",
        "destructive",
        "exec_prerun",
        "ioscheduler",
    ],
)
def test_options_not_allowed(option: str) -> None:
    [v] = check(engine_job=job(**{option: "1"}))
    assert (v.rule, v.field) == ("option.not_allowed", f"workload.jobs.0.{option}")
    engine_job = job()
    engine_job["global"] = {option: "/etc"}
    [v] = check(engine_job=engine_job)
    assert v.field == f"workload.global.{option}"


def test_option_values_and_shapes() -> None:
    assert rules(check(engine_job=job(bs=[4096]))) == ["option.not_allowed"]
    assert rules(check(engine_job=job(bs={"x": 1}))) == ["option.not_allowed"]
    assert rules(check(engine_job={"global": {}, "jobs": []})) == ["option.not_allowed"]
    assert rules(check(engine_job={"jobs": [{"rw": "read"}], "exec": "x"})) == ["option.not_allowed"]
    assert check(engine_job=job(bs=4096, size=1 << 20, direct=True, runtime=1.5)) == []
    # + dbms.not_allowed (issue 15), limit.memory and limit.files (issue 22)
    assert "filename" not in ALLOWED_OPTIONS and len(RULES) == 17


# --- limits ----------------------------------------------------------------------------------------------


def test_threads_per_job_and_per_group() -> None:
    [v] = check(engine_job=job(numjobs="65"))
    assert (v.rule, v.field) == ("limit.threads", "workload.jobs.0.numjobs")
    assert v.fix == "iowatt-agent targets limits --max-threads 65"
    together = {
        "global": {"numjobs": "8"},
        "jobs": [{"name": "a", "rw": "read", "size": "1m"}, {"name": "b", "rw": "read", "size": "1m"}],
    }
    [v] = check(engine_job=together, pol=policy(max_threads=10))
    assert v.rule == "limit.threads" and "16 threads" in v.message and v.field == "workload.global.numjobs"
    together["jobs"][1]["stonewall"] = "1"
    assert check(engine_job=together, pol=policy(max_threads=10)) == []
    assert check(engine_job=job(numjobs="1000"), pol=policy(max_threads=None)) == []
    [v] = check(engine_job=job(numjobs="lots"))
    assert v.rule == "limit.threads" and "cannot check" in v.message


def test_iodepth() -> None:
    [v] = check(engine_job=job(iodepth="257"))
    assert (v.rule, v.field, v.fix) == (
        "limit.iodepth",
        "workload.jobs.0.iodepth",
        "iowatt-agent targets limits --max-iodepth 257",
    )


def test_block_size_with_suffixes_bs_pairs_and_bssplit() -> None:
    pol = policy(max_bs_bytes=1 << 20)
    assert check(engine_job=job(bs="1m"), pol=pol) == []
    [v] = check(engine_job=job(bs="1025k"), pol=pol)
    assert (v.rule, v.field) == ("limit.block_size", "workload.jobs.0.bs_bytes")
    assert rules(check(engine_job=job(bs="4k,2m"), pol=pol)) == ["limit.block_size"]
    [v] = check(engine_job=job(bssplit="4k/50:4m/50"), pol=pol)
    assert v.field == "workload.jobs.0.bssplit"
    # kb_base applies to sizes given after it: 1024KiB under kb_base=1024 is 1024000 bytes
    assert check(engine_job=job(bs="1024KiB"), pol=pol) == []
    ordered = {"global": {"kb_base": "1000"}, "jobs": [{"name": "a", "size": "1g", "bs": "1025KiB"}]}
    assert rules(check(engine_job=ordered, pol=pol)) == ["limit.block_size"]
    ordered["global"] = {}
    ordered["jobs"][0]["kb_base"] = "1000"  # after bs: too late for it
    assert check(engine_job=ordered, pol=pol) == []


def test_runtime_sums_stonewall_groups() -> None:
    jobs = {
        "global": {},
        "jobs": [
            {"name": "a", "rw": "read", "size": "1m", "runtime": "60", "time_based": "1"},
            {"name": "b", "rw": "read", "size": "1m", "runtime": "60", "time_based": "1"},  # with a
            {"name": "c", "rw": "read", "size": "1m", "runtime": "30", "ramp_time": "30", "stonewall": "1"},
        ],
    }
    assert check(engine_job=jobs, pol=policy(max_runtime_s=120)) == []
    [v] = check(engine_job=jobs, pol=policy(max_runtime_s=119))
    assert (v.rule, v.field) == ("limit.runtime", "workload.jobs.2.runtime_s")
    assert v.fix == "iowatt-agent targets limits --max-runtime 120"
    assert rules(check(engine_job=job(runtime="2h"), pol=policy(max_runtime_s=3600))) == ["limit.runtime"]


def test_bytes_written() -> None:
    pol = policy(max_bytes_written=1 << 30)
    # a read job in a directory target still lays out its data file
    assert check(engine_job=job(size="1g"), pol=pol) == []
    [v] = check(engine_job=job(size="2g"), pol=pol)
    assert v.rule == "limit.bytes_written" and "laying out" in v.message
    # numjobs x loops x io_size
    write = job(rw="randwrite", size="64m", io_size="256m", numjobs="4", loops="2")
    [v] = check("/data/rw.img", write, pol=pol)
    assert (v.rule, v.field) == ("limit.bytes_written", "workload.jobs.0.io_size_bytes")
    assert f"up to {4 * 2 * 256 << 20} bytes" in v.message
    # time based: unbounded unless rate-limited
    timed = job(rw="write", runtime="10", time_based="1")
    [v] = check("/data/rw.img", timed, pol=pol)
    assert (v.rule, v.field) == ("limit.bytes_written", "workload.jobs.0.time_based")
    assert v.fix == "iowatt-agent targets limits --max-bytes-written none"
    assert (
        check("/data/rw.img", job(rw="write", runtime="10", time_based="1", rate_iops="100"), pol=pol) == []
    )
    # a device's size bounds a job without size
    sized = ReportedPolicy(
        targets=(Target(DEV, "device", True, True, size_bytes=1 << 31),),
        limits=Limits(max_bytes_written=1 << 30),
    )
    no_size = {"global": {}, "jobs": [{"name": "a", "rw": "write"}]}
    [v] = check_run(sized, target_path=DEV, engine_job=no_size, meter=None, destructive=True)
    assert v.rule == "limit.bytes_written" and str(1 << 31) in v.message
    assert check(engine_job=job(rw="write", size="1g"), pol=policy()) == []  # default: no limit


def test_violations_come_together_in_order() -> None:
    found = check("/data/ro.img", job(rw="write", filename="/etc/passwd", numjobs="100"), meter="command:id")
    assert rules(found) == ["file.read_only", "meter.spec_from_server", "option.not_allowed", "limit.threads"]
    assert all(v.to_dict().keys() == {"rule", "field", "message", "fix"} for v in found)


# --- on the host -------------------------------------------------------------------------------------


def test_check_target_on_host(tmp_path: Path) -> None:
    d = tmp_path / "dir"
    d.mkdir()
    f = tmp_path / "file"
    f.write_text("x")
    assert check_target_on_host(Target.directory(str(d))) == (str(d), [])
    assert check_target_on_host(Target.file(str(f))) == (str(f), [])
    link = tmp_path / "link"
    link.symlink_to(d)
    path, [v] = check_target_on_host(Target.directory(str(link)))
    assert path is None and v.rule == "target.symlink"
    via = tmp_path / "via"
    via.symlink_to(tmp_path)
    _, [v] = check_target_on_host(Target.file(str(via / "file")))
    assert v.rule == "target.symlink"
    _, [v] = check_target_on_host(Target.directory(str(f)))
    assert v.rule == "target.kind"
    _, [v] = check_target_on_host(Target.file(str(tmp_path / "gone")))
    assert v.rule == "target.kind"
    # a by-id link that points at something other than a block device
    byid = Target.device("/dev/disk/by-id/does-not-exist-iowatt")
    _, [v] = check_target_on_host(byid)
    assert v.rule == "target.kind"


def test_check_target_on_host_resolves_a_real_device_link() -> None:
    links = Path("/dev/disk/by-id")
    entries = sorted(links.iterdir()) if links.is_dir() else []
    if not entries:
        pytest.skip("no /dev/disk/by-id links on this machine")
    path, found = check_target_on_host(Target.device(str(entries[0])))
    assert found == [] and path == os.path.realpath(entries[0])
