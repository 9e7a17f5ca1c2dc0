"""fio's timing, QoS, steady-state and priority options (agent/engine/src/pace.c, steady.c), each
run beside Debian's fio 3.33 on the same small job: what must agree is compared (I/O counts within
a loose factor of what the rate or stall allows, error codes, the JSON keys and shapes of
`steadystate` and the latency-target keys), never timings: the machine is shared and noisy."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.strace import STRACE, straced

from .conftest import FIO_CLOCK, run_engine

FIO = shutil.which("fio")
needs_fio = pytest.mark.skipif(FIO is None, reason="Debian's fio is not installed")
# bound by the clock (rates, think times, a 2 s settle, a 14 s steady-state window): ~70 s of
# mostly waiting across the module, started among the first single tests rather than at the end
# of the run, where a waiting test leaves a core idle (docs/testing.md, Session 18)
pytestmark = pytest.mark.early


def fio_json(*args: str, timeout: float = 60) -> tuple[int, dict[str, Any]]:
    """fio's exit code and JSON (fio prints error lines before the document on stdout)."""
    assert FIO
    p = subprocess.run(
        [FIO, FIO_CLOCK, "--output-format=json", *args], capture_output=True, text=True, timeout=timeout
    )
    out = p.stdout
    return p.returncode, json.loads(out[out.index("{") :])


def both(engine_bin: Path, *args: str, check: bool = True) -> tuple[dict[str, Any], dict[str, Any]]:
    """The first job of the same command line run by iowatt-engine and by fio."""
    ours = run_engine(engine_bin, *args, check=check)
    _, theirs = fio_json(*args)
    return json.loads(ours.stdout)["jobs"][0], theirs["jobs"][0]


@pytest.fixture
def target(scratch: Path) -> str:
    """An 8 MiB file both tools find laid out (neither spends the run creating it)."""
    f = scratch / "t.dat"
    f.write_bytes(b"\xa5" * (8 << 20))
    return str(f)


def base(target: str, runtime: str = "1") -> list[str]:
    return [
        "--name=p",
        f"--filename={target}",
        "--size=8m",
        "--rw=randread",
        "--time_based",
        f"--runtime={runtime}",
    ]


@needs_fio
def test_thinktime_stalls_like_fio(engine_bin: Path, target: str) -> None:
    """thinktime=50ms after every I/O, thinktime_blocks=4 after every fourth, 12 I/Os
    (number_ios): each tool's runtime holds at least as many stalls as it must (a sleep is never
    shorter than asked, so load cannot make this fail) and, with blocks=4, fewer than a stall
    after every I/O would take (350 ms of slack for 3 stalls and 12 reads: load 17-30 made
    counting the I/Os of a 1 s run fail)."""
    sized = [*base(target)[:4], "--number_ios=12", "--runtime=5"]
    one = both(engine_bin, *sized, "--thinktime=50ms")
    four = both(engine_bin, *sized, "--thinktime=50ms", "--thinktime_blocks=4")
    for a, b in zip(one, four, strict=True):
        assert a["read"]["total_ios"] == b["read"]["total_ios"] == 12
        assert a["job_runtime"] >= 11 * 50, a["job_runtime"]
        assert 3 * 50 <= b["job_runtime"] < 10 * 50, b["job_runtime"]
    # a plain number is microseconds, as fio's: 50000 = 50 ms (as seconds the runtime cap of
    # 5 s would end the job after one read, as nanoseconds it would take under 550 ms)
    ours = run_engine(engine_bin, *sized, "--thinktime=50000").job
    assert ours["read"]["total_ios"] == 12 and ours["job_runtime"] >= 11 * 50
    assert ours["iowatt"]["options"]["thinktime_ns"] == 50_000_000


@needs_fio
def test_thinktime_spin_burns_cpu_and_iotime_cycles(engine_bin: Path, target: str) -> None:
    # fio 3.33 itself never finishes a job with thinktime_spin here (a 1 s job still runs after
    # 60 s, even with spin < thinktime), so the spin is checked on the engine alone
    spin = run_engine(engine_bin, *base(target), "--thinktime=5ms", "--thinktime_spin=5ms").job
    rest = run_engine(engine_bin, *base(target), "--thinktime=5ms").job
    # (CPU shares, not times: a spinning thread on this shared machine gets what the scheduler
    # gives it, so only the ratio to the sleeping run is asserted)
    assert spin["usr_cpu"] > 3 * rest["usr_cpu"] and spin["usr_cpu"] > 2, (spin["usr_cpu"], rest["usr_cpu"])
    assert spin["iowatt"]["options"]["thinktime_spin_ns"] == 5_000_000
    # thinktime_iotime: a stall after each iotime of I/O; given without thinktime_blocks, the
    # block count does not trigger (10 s: no stall in a 1 s job, which a stall after every I/O
    # would hold to 5 I/Os; paced, as the count is all it shows); 1 ms: stalls of 200 ms after every
    # few hundred I/Os, seen in each tool's own per-I/O log as gaps of 200 ms or more (fio's first
    # stall comes later than the engine's, ~200 ms in; a sleep is never shorter than asked, so load
    # cannot hide a stall, where comparing the I/O counts of two runs failed at load 10+)
    never = both(engine_bin, *base(target), "--rate_iops=2000", "--thinktime=200ms", "--thinktime_iotime=10s")
    assert all(n["read"]["total_ios"] > 50 for n in never), [n["read"] for n in never]
    often = [*base(target), "--thinktime=200ms", "--thinktime_iotime=1ms"]
    logs = Path(target).parent
    run_engine(engine_bin, *often, f"--write_lat_log={logs}/ours")
    rc, _ = fio_json(*often, f"--write_lat_log={logs}/fio")
    assert rc == 0
    for tool in ("ours", "fio"):
        stamps = [int(line.split(",")[0]) for line in (logs / f"{tool}_clat.1.log").read_text().splitlines()]
        stalls = sum(1 for a, b in zip(stamps, stamps[1:], strict=False) if b - a >= 200)
        assert stalls >= 2, (tool, stalls, len(stamps))


@needs_fio
def test_thinktime_blocks_type_issue_with_async_engine(engine_bin: Path, target: str) -> None:
    args = [*base(target), "--ioengine=libaio", "--iodepth=4", "--thinktime=20ms", "--thinktime_blocks=8"]
    for kind in ("complete", "issue"):
        ours, theirs = both(engine_bin, *args, f"--thinktime_blocks_type={kind}")
        for j in (ours, theirs):
            # 1 s / 20 ms = 50 stalls of 8 I/Os
            assert 150 <= j["read"]["total_ios"] <= 8 * 51, (kind, j["read"]["total_ios"])


@needs_fio
def test_rate_bytes_per_direction_like_fio(engine_bin: Path, target: str) -> None:
    """rate in bytes/s (fio: 257 I/Os of 4 KiB at 1 MiB/s over 1 s); R,W limits each direction,
    ",W" writes only (reads then run unthrottled: fio's rate_ddir switches to them)."""
    for j in both(engine_bin, *base(target), "--rate=1m"):
        assert 200 <= j["read"]["total_ios"] <= 270
    ours, theirs = both(engine_bin, *base(target), "--rw=randrw", "--rate=1m,256k")
    for j in (ours, theirs):
        assert 200 <= j["read"]["total_ios"] <= 270 and 45 <= j["write"]["total_ios"] <= 70
    assert ours["iowatt"]["options"]["rate_bytes_per_s"] == {"read": 1 << 20, "write": 256 << 10}
    assert ours["iowatt"]["load_model"] == "open"
    for j in both(engine_bin, *base(target), "--rw=randrw", "--rate=,256k"):
        assert 45 <= j["write"]["total_ios"] <= 70 and j["read"]["total_ios"] > 2000


@needs_fio
def test_rate_iops_read_write_forms(engine_bin: Path, target: str) -> None:
    """One value caps each direction (fio: 100 reads and 100 writes); R,W separately."""
    for j in both(engine_bin, *base(target), "--rw=randrw", "--rate_iops=100"):
        assert 80 <= j["read"]["total_ios"] <= 102 and 80 <= j["write"]["total_ios"] <= 102
    for j in both(engine_bin, *base(target), "--rw=randrw", "--rate_iops=100,40"):
        assert 80 <= j["read"]["total_ios"] <= 102 and 30 <= j["write"]["total_ios"] <= 42
    opts = run_engine(engine_bin, *base(target), "--rw=randrw", "--rate_iops=100,40").job["iowatt"]["options"]
    assert (opts["rate_iops"], opts["rate_iops_read"], opts["rate_iops_write"]) == (None, 100, 40)


@needs_fio
def test_rate_process_poisson(engine_bin: Path, target: str) -> None:
    for j in both(engine_bin, *base(target), "--rate_iops=400", "--rate_process=poisson"):
        assert 250 <= j["read"]["total_ios"] <= 550
    ours = run_engine(engine_bin, *base(target), "--rate_iops=400", "--rate_process=poisson").job["iowatt"]
    assert ours["rate_process"] == "poisson" and ours["target_rate_iops"] == 400


@needs_fio
def test_rate_min_fails_the_job_as_fio(engine_bin: Path, target: str) -> None:
    """fio checks rate_min (with a rate set) after a 2 s settle, once per rate_cycle: a job below
    it ends with EIO (without rate/rate_iops: the test below). The jobs stall 1 ms after each
    I/O (thinktime: a few MB/s, far below every minimum here, without burning a core for the 2 s
    settle as a tmpfs read at full speed did)."""
    slow = "--thinktime=1ms"
    args = [*base(target, "3"), slow, "--rate=100g", "--rate_min=50g", "--rate_cycle=200"]
    r = run_engine(engine_bin, *args, check=False)
    assert r.rc == 1 and "rate_min=53687091200B/s not met" in r.stderr
    rc, theirs = fio_json(*args)
    assert rc == 1
    assert r.doc["jobs"][0]["error"] == theirs["jobs"][0]["error"] == 5
    assert r.doc["jobs"][0]["job_runtime"] < 3000
    iops_args = [
        *base(target, "3"),
        slow,
        "--rate_iops=1000000000",
        "--rate_iops_min=500000000",
        "--rate_cycle=200",
    ]
    r = run_engine(engine_bin, *iops_args, check=False)
    assert r.rc == 1 and r.doc["jobs"][0]["error"] == 5 and "rate_iops_min=500000000 not met" in r.stderr
    # a minimum above the cap can never be met: fio refuses the job, the engine exits 2
    r = run_engine(engine_bin, *base(target), "--rate=1m", "--rate_min=2m", check=False)
    assert r.rc == 2 and r.stderr.startswith("iowatt-engine: rate_min:")
    assert FIO
    p = subprocess.run(
        [FIO, FIO_CLOCK, *base(target), "--rate=1m", "--rate_min=2m"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert p.returncode != 0 and "minimum rate exceeds rate" in p.stderr


@needs_fio
def test_rate_min_without_a_rate_ends_the_job_as_fio(engine_bin: Path, target: str) -> None:
    """fio 3.33 checks rate_min and rate_iops_min with no rate or rate_iops set too: after the
    2 s settle, the first rate_cycle (200 ms here) below the minimum ends the job with EIO; a
    write minimum on a read job judges nothing (the job runs its 3 s). The six runs go side by
    side (each sleeps 1 ms after every I/O: little CPU, ~3 s of wall time in all)."""
    assert FIO
    common = [*base(target, "3"), "--thinktime=1ms", "--rate_cycle=200"]
    cases = {"bytes": "--rate_min=50g", "iops": "--rate_iops_min=1000000", "write only": "--rate_min=,50g"}
    procs: dict[tuple[str, str], subprocess.Popen[str]] = {}
    for case, opt in cases.items():
        procs[(case, "engine")] = subprocess.Popen(
            [str(engine_bin), *common, opt], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        procs[(case, "fio")] = subprocess.Popen(
            [FIO, FIO_CLOCK, "--output-format=json", *common, opt],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
    jobs: dict[tuple[str, str], dict[str, Any]] = {}
    errs: dict[tuple[str, str], str] = {}
    for key, p in procs.items():
        out, errs[key] = p.communicate(timeout=60)
        jobs[key] = json.loads(out[out.index("{") :])["jobs"][0]
    for case in ("bytes", "iops"):
        for tool in ("engine", "fio"):
            j = jobs[(case, tool)]
            # (the first check after the settle fails: well before the 3 s runtime)
            assert j["error"] == 5 and j["read"]["total_ios"] > 0 and j["job_runtime"] < 2900, (
                case,
                tool,
                j["job_runtime"],
            )
    assert "rate_min=53687091200B/s not met" in errs[("bytes", "engine")]
    assert "rate_iops_min=1000000 not met" in errs[("iops", "engine")]
    for tool in ("engine", "fio"):
        j = jobs[("write only", tool)]
        assert j["error"] == 0 and j["job_runtime"] >= 2900, (tool, j["job_runtime"])


@needs_fio
def test_flow_weights_share_like_fio(engine_bin: Path, target: str) -> None:
    # (thinktime: each job at most ~2000 I/Os a second, so the share is the flow counter's, not
    # how much CPU a loaded machine gives each thread, and neither job burns a core)
    args = [
        "--size=8m", "--rw=randread", "--time_based", "--runtime=1", "--thinktime=500us",
        "--name=a", f"--filename={target}", "--flow=3",
        "--name=b", f"--filename={target}", "--flow=1",
    ]  # fmt: skip
    ours = json.loads(run_engine(engine_bin, *args).stdout)["jobs"]
    _, theirs = fio_json(*args)
    # (without flow control the two run 1:1; the weights are summed before the jobs start and
    # kept when one ends, as fio's, so neither a late start nor an early end moves the share)
    for tool, jobs in (("engine", ours), ("fio", theirs["jobs"])):
        a, b = (j["read"]["total_ios"] for j in jobs)
        assert 2.0 <= a / b <= 4.5, (tool, a, b)
    # flow_sleep: held back jobs sleep instead of retrying at once; the ratio holds
    for jobs in (
        json.loads(run_engine(engine_bin, *args, "--flow_sleep=100").stdout)["jobs"],
        fio_json(*args, "--flow_sleep=100")[1]["jobs"],
    ):
        a, b = (j["read"]["total_ios"] for j in jobs)
        assert 2.0 <= a / b <= 4.5, (a, b)


@needs_fio
def test_latency_target_search_and_keys(engine_bin: Path, target: str) -> None:
    """A target every depth meets (50 ms on tmpfs): fio's search doubles 1, 2, 4, 8, runs one more
    window at 8 with fresh statistics and ends the job there -- the report covers that window."""
    args = [
        *base(target, "5"), "--ioengine=libaio", "--iodepth=8", "--latency_target=50ms",
        "--latency_window=100ms", "--latency_percentile=99",
    ]  # fmt: skip
    ours, theirs = both(engine_bin, *args)
    keys = ("latency_depth", "latency_target", "latency_percentile", "latency_window")
    assert (
        {k: ours[k] for k in keys}
        == {k: theirs[k] for k in keys}
        == {
            "latency_depth": 8,
            "latency_target": 50_000_000,  # ns
            "latency_percentile": 99.0,
            "latency_window": 100_000,  # us
        }
    )
    for j in (ours, theirs):
        assert j["job_runtime"] < 2000 and j["read"]["total_ios"] > 0  # not the 5 s runtime
    # without latency_target: the keys say so, as fio's (depth = iodepth, target 0)
    ours, theirs = both(engine_bin, *base(target, "100ms"), "--ioengine=libaio", "--iodepth=4")
    assert {k: ours[k] for k in keys} == {k: theirs[k] for k in keys}


@needs_fio
def test_latency_target_unmet_at_depth_one_is_etimedout(engine_bin: Path, target: str) -> None:
    args = [*base(target), "--latency_target=1ns", "--latency_window=100ms"]
    r = run_engine(engine_bin, *args, check=False)
    rc, theirs = fio_json(*args)
    assert r.rc == 1 and rc != 0
    assert r.doc["jobs"][0]["error"] == theirs["jobs"][0]["error"] == 110


@needs_fio
def test_max_latency_is_etimedout(engine_bin: Path, target: str) -> None:
    args = [*base(target), "--max_latency=1"]  # 1 us: the first page-cache miss takes longer
    r = run_engine(engine_bin, *args, check=False)
    rc, theirs = fio_json(*args)
    assert r.rc == 1 and rc != 0
    assert r.doc["jobs"][0]["error"] == theirs["jobs"][0]["error"] == 110
    assert "max latency exceeded" in r.doc["jobs"][0]["iowatt"]["error_message"]
    for j in both(engine_bin, *base(target), "--rate_iops=2000", "--max_latency=10s"):
        assert j["error"] == 0


def _shape(v: Any) -> Any:
    if isinstance(v, dict):
        return {k: _shape(x) for k, x in v.items()}
    if isinstance(v, list):
        return [len(v), *{type(x).__name__ for x in v}]
    return type(v).__name__


@needs_fio
def test_steadystate_object_as_fio(engine_bin: Path, target: str) -> None:
    """The same keys, types and array lengths as fio 3.33's `steadystate`; a window that never
    fills (ss_dur 5 s, runtime 2 s) is padded with zeros and not attained, in both. The jobs are
    capped at 500 I/Os a second (the object's shape does not depend on the rate; a tmpfs read at
    full speed burnt a core per tool for all 14 s, and at 2000 I/Os a second the reads were still
    about half of fio's CPU here)."""
    capped = "--rate_iops=500"
    ours, theirs = both(engine_bin, *base(target, "2"), capped, "--ss=iops:0%", "--ss_dur=5")
    assert _shape(ours["steadystate"]) == _shape(theirs["steadystate"])
    for j in (ours, theirs):
        ss = j["steadystate"]
        assert ss["ss"] == "iops:0.000000%" and ss["duration"] == 5 and ss["attained"] == 0
        assert ss["criterion"] == "0.000000%"
        assert ss["data"]["iops"][-1] == 0 and ss["data"]["bw"][-1] == 0 and len(ss["data"]["iops"]) == 5
        assert ss["data"]["iops"][0] > 0
    # a slope criterion that a steady tmpfs read meets: the job stops before its runtime
    ours, theirs = both(engine_bin, *base(target, "8"), capped, "--steadystate=iops_slope:60%", "--ss_dur=2")
    assert _shape(ours["steadystate"]) == _shape(theirs["steadystate"])
    for j in (ours, theirs):
        ss = j["steadystate"]
        assert ss["ss"] == "iops_slope:60.000000%" and ss["duration"] == 2
        if ss["attained"]:
            assert j["job_runtime"] < 8000
            assert float(ss["criterion"].rstrip("%")) <= 60
        assert ss["data"]["iops_mean"] == sum(ss["data"]["iops"]) // 2
    # an absolute limit prints without %; ss_ramp delays the first sample; no ss_dur, no object
    ours, theirs = both(engine_bin, *base(target, "3"), capped, "--ss=bw:1", "--ss_dur=2", "--ss_ramp=1")
    assert _shape(ours["steadystate"]) == _shape(theirs["steadystate"])
    assert not ours["steadystate"]["criterion"].endswith("%")
    ours, theirs = both(engine_bin, *base(target), capped)
    assert "steadystate" not in ours and "steadystate" not in theirs


@needs_fio
def test_prio_prioclass_nice_set_as_fio(engine_bin: Path, target: str, scratch: Path) -> None:
    if not STRACE:
        pytest.skip("strace not installed")

    def calls(*cmd: str) -> list[str]:
        # (--seccomp-bpf: the tracee stops only at the two calls traced, not at each of its I/Os)
        p, lines = straced(
            list(cmd), scratch / "trace", "--seccomp-bpf", "-e", "trace=ioprio_set,setpriority", timeout=60
        )
        assert p.returncode == 0, p.stderr
        return sorted(
            line.split(" = ")[0]
            for line in lines
            if "ioprio_set(" in line or ("setpriority(" in line and f", {os.nice(0)})" not in line)
        )

    args = [*base(target, "100ms"), "--prio=3", "--nice=5"]
    assert FIO
    assert (
        calls(str(engine_bin), *args)
        == calls(FIO, FIO_CLOCK, "--output-format=json", *args)
        == [
            "ioprio_set(IOPRIO_WHO_PROCESS, 0, IOPRIO_PRIO_VALUE(IOPRIO_CLASS_BE, 3))",
            # fio's nice(N) adds N to the current value (it calls nice(0) too: filtered out above)
            f"setpriority(PRIO_PROCESS, 0, {os.nice(0) + 5})",
        ]
    )
    args = [*base(target, "100ms"), "--prioclass=3"]
    assert calls(str(engine_bin), *args) == calls(FIO, FIO_CLOCK, "--output-format=json", *args)


@needs_fio
@pytest.mark.parametrize(
    "switch",
    ["gtod_reduce", "disable_lat", "disable_clat", "disable_slat", "disable_bw_measurement"],
)
def test_measurement_switches_zero_what_fio_zeroes(engine_bin: Path, target: str, switch: str) -> None:
    # size-bound: 256 reads of the file's first MiB measure whatever each switch leaves on
    sized = ["--name=p", f"--filename={target}", "--size=1m", "--rw=randread"]
    ours, theirs = both(engine_bin, *sized, "--ioengine=libaio", "--iodepth=2", f"--{switch}=1")

    def measured(j: dict[str, Any]) -> dict[str, bool]:
        r = j["read"]
        return {k: r[k]["N"] > 0 for k in ("slat_ns", "clat_ns", "lat_ns")} | {
            "buckets": sum(j["latency_us"].values()) + sum(j["latency_ns"].values()) > 0
        }

    assert measured(ours) == measured(theirs)


def test_refused_options_exit_2_naming_them(engine_bin: Path, target: str) -> None:
    for bad, name in [
        ("--io_submit_mode=pool", "io_submit_mode"),  # offload is implemented (test_submit_dedupe.py)
        ("--cmdprio_percentage=10", "cmdprio_percentage"),
        ("--cmdprio_class=1", "cmdprio_class"),
        ("--cmdprio=1", "cmdprio"),
        ("--cmdprio_bssplit=4k/10", "cmdprio_bssplit"),
        ("--rate=1m,1m,1m", None),  # the trim value paces nothing in a job without trims, as fio's
        ("--flow_watermark=10", "flow_watermark"),  # not an option of fio 3.33 either
        ("--ss=iops_slope:1%", None),  # accepted alone (detection is off without ss_dur)
        ("--ss=bogus:1", "ss"),
        ("--nice=-21", "nice"),
        ("--prioclass=4", "prioclass"),
        ("--latency_percentile=100.5", "latency_percentile"),
        ("--thinktime_blocks_type=sometimes", "thinktime_blocks_type"),
    ]:
        r = run_engine(engine_bin, *base(target, "50ms"), bad, check=False)
        if name is None:
            assert r.rc == 0, r.stderr
            continue
        assert r.rc == 2 and r.stdout == "", (bad, r.rc, r.stderr)
        assert r.stderr.startswith(f"iowatt-engine: {name}:") and r.stderr.count("\n") == 1, r.stderr
    r = run_engine(engine_bin, *base(target), "--ss=iops_slope:1%", "--ss_dur=1", check=False)
    assert r.rc == 2 and "steadystate_duration" in r.stderr


def test_io_submit_mode_inline_runs(run, target: str) -> None:
    job = run(*base(target, "100ms"), "--io_submit_mode=inline").job
    assert job["read"]["total_ios"] > 0 and job["iowatt"]["options"]["io_submit_mode"] == "inline"


def test_async_rate_and_thinktime_under_asan(engine_asan: Path, target: str) -> None:
    """The held-back request of the async loop (pace_gate) under the sanitizers: rate, thinktime,
    flow and the latency search at once on io_uring."""
    r = run_engine(
        engine_asan,
        *base(target),
        "--ioengine=io_uring",
        "--iodepth=8",
        "--rw=randrw",
        "--rate_iops=2000,500",
        "--thinktime=2ms",
        "--thinktime_blocks=16",
        "--flow=2",
        "--latency_target=100ms",
        "--latency_window=100ms",
        "--ss=iops:50%",
        "--ss_dur=2",
    )
    job = r.job
    assert job["read"]["total_ios"] > 0 and job["error"] == 0
