"""Black-box invariants of the engine's results on real I/O."""

from __future__ import annotations

import json
import platform
import resource
import shutil
import signal
import subprocess
import time
import zlib
from pathlib import Path

import pytest

from tests.waiting import wait_until

from .conftest import run_engine

PCT_KEYS = [
    "1.000000",
    "5.000000",
    "10.000000",
    "20.000000",
    "30.000000",
    "40.000000",
    "50.000000",
    "60.000000",
    "70.000000",
    "80.000000",
    "90.000000",
    "95.000000",
    "99.000000",
    "99.500000",
    "99.900000",
    "99.950000",
    "99.990000",
]
DIR_KEYS = [
    "io_bytes",
    "io_kbytes",
    "bw_bytes",
    "bw",
    "iops",
    "runtime",
    "total_ios",
    "short_ios",
    "drop_ios",
    "slat_ns",
    "clat_ns",
    "lat_ns",
    "bw_min",
    "bw_max",
    "bw_mean",
    "bw_dev",
    "bw_samples",
    "iops_min",
    "iops_max",
    "iops_mean",
    "iops_stddev",
    "iops_samples",
]
JOB_KEYS = [
    "jobname",
    "groupid",
    "error",
    "job options",
    "read",
    "write",
    "trim",
    "sync",
    "job_runtime",
    "usr_cpu",
    "sys_cpu",
    "ctx",
    "majf",
    "minf",
    "iodepth_level",
    "iodepth_submit",
    "iodepth_complete",
    "latency_ns",
    "latency_us",
    "latency_ms",
    "iowatt",
]


def test_fio_keys_and_units(run, scratch: Path) -> None:
    kids0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    r = run(
        "--output-format=json+",
        "--name=a",
        f"--filename={scratch}/t.dat",
        "--rw=randread",
        "--bs=4k",
        "--size=4m",
        "--runtime=1",
        "--time_based=1",
    )
    doc = r.doc
    for k in (
        "fio version",
        "timestamp",
        "timestamp_ms",
        "time",
        "global options",
        "jobs",
        "disk_util",
        "iowatt",
    ):
        assert k in doc
    assert doc["fio version"].startswith("iowatt-engine-")
    assert doc["iowatt"]["schema"] == "iowatt-engine/1"
    for k in ("host", "target", "system_cpu"):
        assert k in doc["iowatt"]
    for k in ("iowait_pct", "steal_pct", "irq_pct", "softirq_pct", "user_pct", "system_pct"):
        assert k in doc["iowatt"]["system_cpu"]
    job = r.job
    for k in JOB_KEYS:
        assert k in job, k
    rd = job["read"]
    for k in DIR_KEYS:
        assert k in rd, k
    assert list(rd["clat_ns"]["percentile"].keys()) == PCT_KEYS
    assert rd["clat_ns"]["bins"], "json+ carries the histogram"
    assert sum(rd["clat_ns"]["bins"].values()) == rd["clat_ns"]["N"] == rd["total_ios"]
    # units: bw is KiB/s, bw_bytes B/s, runtime ms
    assert abs(rd["bw"] - rd["bw_bytes"] / 1024) <= 1
    assert abs(rd["bw_bytes"] - rd["io_bytes"] / (rd["runtime"] / 1000)) / rd["bw_bytes"] < 0.01
    assert abs(rd["iops"] * rd["runtime"] / 1000 - rd["total_ios"]) / rd["total_ios"] < 0.01
    assert set(job["iodepth_level"]) == {"1", "2", "4", "8", "16", "32", ">=64"}
    assert job["iodepth_level"]["1"] == pytest.approx(100.0)
    assert sum(job["latency_us"].values()) + sum(job["latency_ns"].values()) + sum(
        job["latency_ms"].values()
    ) == pytest.approx(100.0, abs=0.01)
    # usr_cpu/sys_cpu are % of the job's runtime: the CPU time they stand for is the engine's, as
    # the kernel counted it for the process (its start, layout and report add a little), a check
    # load cannot skew (a share of the wall time above 10 % failed at load 10+: 7.6 %)
    kids1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    process_s = (kids1.ru_utime - kids0.ru_utime) + (kids1.ru_stime - kids0.ru_stime)
    job_s = (job["usr_cpu"] + job["sys_cpu"]) / 100 * job["job_runtime"] / 1000
    assert 0.5 * process_s - 0.02 <= job_s <= process_s + 0.02, (job_s, process_s)
    series = job["iowatt"]["series"]
    assert series and set(series[0]) == {
        "t_ns",
        "read_iops",
        "read_bw_bytes",
        "read_clat_p99_ns",
        "write_iops",
        "write_bw_bytes",
        "write_clat_p99_ns",
    }


@pytest.mark.parametrize(
    ("rw", "bs"),
    [("read", "4k"), ("write", "8k"), ("randread", "16k"), ("randwrite", "4k"), ("randrw", "4k")],
)
def test_io_bytes_equals_total_ios_times_bs(run, scratch: Path, rw: str, bs: str) -> None:
    job = run("--name=a", f"--filename={scratch}/t.dat", f"--rw={rw}", f"--bs={bs}", "--size=4m").job
    bsb = int(bs[:-1]) * 1024
    total = 0
    for d in ("read", "write"):
        assert job[d]["io_bytes"] == job[d]["total_ios"] * bsb
        assert job[d]["io_kbytes"] == job[d]["io_bytes"] // 1024
        total += job[d]["io_bytes"]
    assert total == 4 * 1024 * 1024, "a non-time-based job does exactly size bytes"
    assert job["error"] == 0


def test_loops_and_rwmix(run, scratch: Path) -> None:
    job = run(
        "--name=a",
        f"--filename={scratch}/t.dat",
        "--rw=randrw",
        "--rwmixread=70",
        "--bs=4k",
        "--size=8m",
        "--loops=3",
    ).job
    r, w = job["read"]["total_ios"], job["write"]["total_ios"]
    assert r + w == 3 * 2048
    assert 0.65 < r / (r + w) < 0.75


def test_percentiles_monotone_and_bounded(run, scratch: Path) -> None:
    job = run(
        "--name=a",
        f"--filename={scratch}/t.dat",
        "--rw=randrw",
        "--bssplit=4k/50:64k/50",
        "--size=8m",
        "--loops=8",  # ~2,000 I/Os, size-bound: a second at full speed added nothing but CPU
    ).job
    for d in ("read", "write"):
        c = job[d]["clat_ns"]
        vals = [c["percentile"][k] for k in PCT_KEYS]
        assert vals == sorted(vals)
        # bucket midpoints are within 1/128 of the true values
        assert vals[0] >= c["min"] * (1 - 1 / 128) - 1
        assert vals[-1] <= c["max"] * (1 + 1 / 128) + 1
        assert c["min"] <= c["mean"] <= c["max"]


def test_numjobs_merge_equals_sum_of_threads(run, scratch: Path) -> None:
    job = run(
        "--output-format=json+",
        "--name=a",
        f"--filename={scratch}/t.dat",
        "--rw=randread",
        "--bs=4k",
        "--size=8m",
        "--numjobs=3",
        "--group_reporting=1",  # size-bound: 2,048 reads in each thread
    ).job
    threads = job["iowatt"]["threads"]
    assert len(threads) == 3
    assert sum(t["read"]["total_ios"] for t in threads) == job["read"]["total_ios"]
    assert sum(t["read"]["io_bytes"] for t in threads) == job["read"]["io_bytes"]
    merged: dict[str, int] = {}
    for t in threads:
        assert t["read"]["total_ios"] > 0, "every thread ran"
        for k, v in t["read"]["clat_bins"].items():
            merged[k] = merged.get(k, 0) + v
    assert merged == job["read"]["clat_ns"]["bins"]


def test_numjobs_fixed_size_each_thread_does_size(run, scratch: Path) -> None:
    job = run(
        "--name=a",
        f"--filename={scratch}/t.dat",
        "--rw=read",
        "--bs=4k",
        "--size=2m",
        "--numjobs=4",
        "--group_reporting",
    ).job
    assert job["read"]["io_bytes"] == 4 * 2 * 1024 * 1024


def test_series_sums_match_totals(run, scratch: Path) -> None:
    job = run(
        "--name=a",
        f"--filename={scratch}/t.dat",
        "--rw=randrw",
        "--bs=4k",
        "--size=8m",
        "--runtime=2500ms",
        "--time_based=1",
        "--numjobs=2",
        "--rate_iops=2000",  # the sums hold at any rate: no need to burn two cores for 2.5 s
    ).job
    series = job["iowatt"]["series"]
    assert len(series) in (2, 3)
    prev = 0
    sums = {"read": 0.0, "write": 0.0}
    for pt in series:
        dt = (pt["t_ns"] - prev) / 1e9
        assert pt["t_ns"] > prev
        prev = pt["t_ns"]
        for d in sums:
            sums[d] += pt[f"{d}_iops"] * dt
            assert pt[f"{d}_clat_p99_ns"] is None or pt[f"{d}_clat_p99_ns"] > 0
    for d in sums:
        assert sums[d] == pytest.approx(job[d]["total_ios"], rel=0.01)
    assert prev / 1e9 == pytest.approx(job["job_runtime"] / 1000, abs=0.01)


def test_runtime_honoured(run, scratch: Path) -> None:
    """The job measures runtime after its ramp, and stops there. Paced at 1000 I/Os a second (the
    thread sleeps instead of burning a core), the count bounds the span from above in a way load
    cannot skew: a loaded machine runs the thread late, so it does fewer I/Os, never more, while a
    job that ran past its runtime, or measured its ramp, does more. (A bound on job_runtime itself
    failed at load 10+: the thread noticed the deadline 171 ms late.)"""
    t0 = time.monotonic()
    job = run(
        "--name=a",
        f"--filename={scratch}/t.dat",
        "--rw=randread",
        "--size=4m",
        "--runtime=1500ms",
        "--time_based=1",
        "--ramp_time=500ms",
        "--rate_iops=1000",
    ).job
    wall = time.monotonic() - t0
    assert job["job_runtime"] >= 1500
    assert 0 < job["read"]["total_ios"] <= 1500 * 1.05 + 5, job["read"]["total_ios"]
    assert abs(job["read"]["runtime"] - job["job_runtime"]) <= 1  # fio rounds the first up, the second to ms
    assert wall >= 2.0, "ramp + runtime"


@pytest.mark.parametrize("clocksource", ["cpu", "clock_gettime"])
def test_clocksource_agrees_with_the_wall_clock(run, scratch: Path, clocksource: str) -> None:
    """The TSC clock (clocksource=cpu, used when the kernel's clocksource is tsc) and
    CLOCK_MONOTONIC give the same durations; Little's law still holds on per-I/O stamps.

    Both directions are bounded by references that load cannot move: the engine's own span of
    each job fits inside the wall time of the process (a clock running fast fails), and a job of
    thinktime stalls, each a clock_nanosleep of CLOCK_MONOTONIC that is never shorter than asked,
    lasts at least their sum on the engine's clock (a clock running slow fails). (An upper bound
    on job_runtime itself failed at load 17-30: the thread noticed its deadline late.)"""
    t0 = time.monotonic()
    res = run(
        f"--clocksource={clocksource}",
        f"--filename={scratch}/t.dat",
        "--size=4m",
        "--name=a",
        "--rw=randread",
        "--runtime=1s",
        "--time_based=1",
        "--name=stalls",
        "--rw=read",
        "--number_ios=6",
        "--thinktime=100ms",
    )
    wall = time.monotonic() - t0
    clock = res.doc["iowatt"]["clock"]
    assert clock["source"] in (("tsc", "clock_gettime") if clocksource == "cpu" else ("clock_gettime",))
    a, stalls = res.doc["jobs"]
    assert a["iowatt"]["options"]["clocksource"] == clocksource
    assert 1000 <= a["job_runtime"] <= wall * 1000 + 1 and wall >= 1.0
    assert stalls["read"]["total_ios"] == 6
    # at least five stalls of 100 ms after the first five reads, measured on the engine's clock
    assert 500 <= stalls["job_runtime"] <= wall * 1000 + 1, (stalls["job_runtime"], wall)
    rd = a["read"]
    busy = rd["clat_ns"]["mean"] * rd["total_ios"] / 1e9
    # one psync thread: the I/Os' latencies add up to at most the run, plus the last I/O, which
    # may complete after the runtime ran out (on a loaded machine it can be tens of ms)
    span = a["job_runtime"] / 1000 + rd["clat_ns"]["max"] / 1e9
    assert 0.3 < busy <= span, "psync: summed latencies fit inside the run"


def test_runtime_caps_a_sized_job(run, scratch: Path) -> None:
    job = run(
        "--name=a",
        f"--filename={scratch}/t.dat",
        "--rw=randread",
        "--size=4m",
        "--loops=100000",
        "--runtime=1",
        "--rate_iops=2000",  # paced: the job still needs far longer than its runtime
    ).job
    assert 950 <= job["job_runtime"] <= 1100


def test_new_target_is_filled_with_incompressible_data(run, scratch: Path) -> None:
    target = scratch / "t.dat"
    run("--name=a", f"--filename={target}", "--rw=randread", "--size=2m", "--offset=1m")
    data = target.read_bytes()
    assert len(data) == 3 * 1024 * 1024
    assert len(zlib.compress(data[: 1 << 20], 6)) > 0.99 * (1 << 20)
    assert data.count(b"\0" * 4096) == 0, "no holes or zero blocks"


def test_write_buffers_incompressible_and_unique(run, scratch: Path) -> None:
    target = scratch / "t.dat"
    target.write_bytes(b"\0" * (1 << 20))
    run("--name=a", f"--filename={target}", "--rw=write", "--bs=4k", "--size=1m")
    data = target.read_bytes()
    assert len(zlib.compress(data, 6)) > 0.99 * len(data)
    blocks = {data[i : i + 4096] for i in range(0, len(data), 4096)}
    assert len(blocks) == 256, "every written block differs (dedupe-proof)"


def test_refill_buffers_0_still_incompressible_and_unique(run, scratch: Path) -> None:
    """refill_buffers=0 (fio's default: content set once, a fresh stamp per 512-byte sector) keeps
    every written block incompressible on its own and distinct (dedupe-proof); like fio's default
    it does not defeat a compressor whose window spans several blocks."""
    target = scratch / "t.dat"
    target.write_bytes(b"\0" * (1 << 20))
    job = run(
        "--name=a", f"--filename={target}", "--rw=randwrite", "--bs=4k", "--size=1m", "--refill_buffers=0"
    ).job
    assert job["iowatt"]["options"]["refill_buffers"] is False
    data = target.read_bytes()
    blocks = [data[i : i + 4096] for i in range(0, len(data), 4096)]
    assert all(len(zlib.compress(b, 6)) > 4096 for b in blocks)
    assert len(set(blocks)) == 256


@pytest.mark.skipif(shutil.which("fio") is None, reason="needs Debian's fio")
def test_scramble_buffers_0_writes_the_buffers_as_they_are_as_fio(engine_bin: Path, scratch: Path) -> None:
    """with refill_buffers=0 (fio's default), scramble_buffers (fio's default 1) stamps each write;
    0 writes each buffer as it was filled: as many distinct blocks as buffers (iodepth), in both"""
    job = ("--name=a", "--rw=write", "--bs=4k", "--size=256k", "--refill_buffers=0")
    for extra, distinct in (
        ((), 64),
        (("--scramble_buffers=0",), 1),
        (("--scramble_buffers=0", "--iodepth=4", "--ioengine=libaio"), 4),
    ):
        for tool in (["fio", "--output-format=json"], [str(engine_bin)]):
            target = scratch / "t.dat"
            subprocess.run([*tool, *job, f"--filename={target}", *extra], capture_output=True, check=True)
            data = target.read_bytes()
            assert len({data[i : i + 4096] for i in range(0, len(data), 4096)}) == distinct, (tool[0], extra)
            target.unlink()


def test_zero_buffers_and_compress_percentage(run, scratch: Path) -> None:
    target = scratch / "t.dat"
    run("--name=a", f"--filename={target}", "--rw=write", "--bs=64k", "--size=1m", "--zero_buffers=1")
    assert target.read_bytes() == b"\0" * (1 << 20)
    run(
        "--name=a",
        f"--filename={target}",
        "--rw=write",
        "--bs=64k",
        "--size=1m",
        "--buffer_compress_percentage=50",
    )
    ratio = len(zlib.compress(target.read_bytes(), 6)) / (1 << 20)
    assert 0.4 < ratio < 0.65


def test_never_touches_bytes_outside_region_of_a_file(run, scratch: Path) -> None:
    target = scratch / "t.dat"
    canary = bytes([0xA5]) * (1 << 20)
    target.write_bytes(canary * 6)
    run(
        "--name=a",
        f"--filename={target}",
        "--rw=randwrite",
        "--bssplit=4k/40:12k/30:64k/30",
        "--size=2m",
        "--offset=2m",
        "--loops=50",  # every block of the region 50 times per thread, the edges included
        "--numjobs=2",
        "--name=b",
        f"--filename={target}",
        "--rw=write",
        "--bs=48k",
        "--size=2m",
        "--offset=2m",
        "--loops=2",
    )
    data = target.read_bytes()
    assert len(data) == 6 << 20
    assert data[: 2 << 20] == canary * 2
    assert data[4 << 20 :] == canary * 2
    assert data[2 << 20 : 4 << 20] != canary * 2


def test_fsync_counts_sync_ios(run, scratch: Path) -> None:
    job = run(
        "--name=a", f"--filename={scratch}/t.dat", "--rw=write", "--bs=4k", "--size=1m", "--fsync=32"
    ).job
    assert job["sync"]["total_ios"] == 256 // 32
    assert job["sync"]["lat_ns"]["N"] == 8
    job = run(
        "--name=a",
        f"--filename={scratch}/t.dat",
        "--rw=write",
        "--bs=4k",
        "--size=1m",
        "--end_fsync=1",
        "--sync=dsync",
    ).job
    assert job["sync"]["total_ios"] == 1
    assert job["iowatt"]["options"]["sync"] == "dsync"


@pytest.mark.parametrize("engine", ["io_uring", "libaio"])
def test_littles_law_on_async_engines(run, disk_scratch: Path, engine: str) -> None:
    qd, nj = 8, 2
    job = run(
        "--name=a",
        f"--filename={disk_scratch}/t.dat",
        "--rw=randread",
        "--bs=4k",
        "--size=32m",
        "--direct=1",
        f"--ioengine={engine}",
        f"--iodepth={qd}",
        f"--numjobs={nj}",
        "--group_reporting=1",
        "--runtime=1",
        "--time_based=1",
    ).job
    rd = job["read"]
    in_flight = rd["lat_ns"]["mean"] / 1e9 * rd["iops"]
    # Little's law: at most qd x numjobs in flight; below that only by the engine's own time between
    # reaping an I/O and submitting the next, which grows when the 2-core host is busy (CI)
    assert 0.75 * qd * nj <= in_flight <= 1.10 * qd * nj, (in_flight, job["iodepth_level"])
    assert rd["slat_ns"]["N"] == rd["total_ios"] and rd["lat_ns"]["mean"] >= rd["clat_ns"]["mean"]
    assert job["iodepth_level"]["8"] > 50
    lat, clat = rd["lat_ns"]["percentile"], rd["clat_ns"]["percentile"]
    assert list(lat.values()) == sorted(lat.values())
    assert lat["50.000000"] >= clat["50.000000"]


@pytest.mark.parametrize("engine", ["io_uring", "libaio"])
def test_iodepth_batch_submit(run, scratch: Path, engine: str) -> None:
    """Default 1 (fio's): every I/O goes to the kernel as soon as it is prepared; 0 submits the
    whole refill at once."""
    common = [
        "--name=a",
        f"--filename={scratch}/t.dat",
        "--rw=randread",
        "--size=8m",
        "--ioengine=" + engine,
        "--iodepth=16",
        "--runtime=300ms",
        "--time_based=1",
    ]
    one = run(*common).job
    assert one["iowatt"]["options"]["iodepth_batch_submit"] == 1
    assert one["iodepth_submit"]["4"] == pytest.approx(100.0)
    whole = run(*common, "--iodepth_batch_submit=0").job
    assert whole["iowatt"]["options"]["iodepth_batch_submit"] == 0
    assert whole["read"]["total_ios"] > 0


def test_psync_lat_equals_clat(run, scratch: Path) -> None:
    rd = run("--name=a", f"--filename={scratch}/t.dat", "--rw=randread", "--size=2m").job["read"]
    assert rd["lat_ns"]["mean"] == rd["clat_ns"]["mean"] and rd["slat_ns"]["N"] == 0


def test_random_distributions_run(run, scratch: Path) -> None:
    for dist in ("zipf:1.2", "pareto:0.9", "normal:10"):
        job = run(
            "--name=a",
            f"--filename={scratch}/t.dat",
            "--rw=randread",
            "--size=4m",
            f"--random_distribution={dist}",
            "--runtime=300ms",
            "--time_based=1",
        ).job
        assert (
            job["read"]["total_ios"] > 0
            and job["iowatt"]["options"]["random_distribution"] == dist.split(":")[0]
        )


def test_rate_iops_open_loop(run, scratch: Path) -> None:
    job = run(
        "--name=a",
        f"--filename={scratch}/t.dat",
        "--rw=randread",
        "--size=4m",
        "--rate_iops=500",
        "--runtime=2",
        "--time_based=1",
        "--ioengine=io_uring",
        "--iodepth=4",
    ).job
    assert job["read"]["iops"] == pytest.approx(500, rel=0.05)
    ext = job["iowatt"]
    assert ext["load_model"] == "open" and ext["target_rate_iops"] == 500
    assert ext["sched_lat_ns"]["N"] == job["read"]["total_ios"]
    # latency from the intended start includes the completion latency
    assert ext["sched_lat_ns"]["mean"] >= job["read"]["clat_ns"]["mean"]
    # 500/s is far below what tmpfs does, so most I/Os start on time; on a machine loaded by
    # other processes the engine's thread is descheduled now and then (20 % late seen at load 14),
    # so the line is drawn where the overload test below starts: under half late
    assert ext["late_starts"] < job["read"]["total_ios"] // 2


def test_rate_iops_overload_counts_late_starts(run, scratch: Path) -> None:
    """Asked for far more than one psync thread can issue (100 M IOPS from tmpfs), the
    open loop falls behind: most I/Os start late and the latency from the intended start grows
    with the backlog (coordinated omission is not hidden)."""
    job = run(
        "--name=a",
        f"--filename={scratch}/t.dat",
        "--rw=randread",
        "--size=4m",
        "--rate_iops=100000000",
        "--runtime=500ms",
        "--time_based=1",
    ).job
    ext = job["iowatt"]
    assert ext["late_starts"] > job["read"]["total_ios"] // 2
    assert (
        ext["sched_lat_ns"]["percentile"]["99.000000"]
        > 10 * job["read"]["clat_ns"]["percentile"]["99.000000"]
    )


def test_progress_jsonl_on_stderr(engine_bin: Path, scratch: Path) -> None:
    r = run_engine(
        engine_bin,
        "--progress=jsonl",
        "--name=p",
        f"--filename={scratch}/t.dat",
        "--rw=randread",
        "--size=4m",
        "--runtime=2500ms",
        "--time_based=1",
        "--rate_iops=1000",  # the lines are per second: no need to burn a core for 2.5 s
    )
    lines = [json.loads(x) for x in r.stderr.strip().splitlines()]
    assert len(lines) >= 2
    for ev in lines:
        assert ev["event"] == "progress" and ev["job"] == "p" and ev["job_index"] == 0
        assert ev["planned_ns"] == 2_500_000_000 and 0 <= ev["percent"] <= 100
        for k in ("elapsed_ns", "read_iops", "read_bw_bytes", "write_iops", "write_bw_bytes"):
            assert k in ev
    assert lines[-1]["read_iops"] > 0
    json.loads(r.stdout)


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_signal_stops_cleanly_and_prints_json(engine_bin: Path, scratch: Path, sig: signal.Signals) -> None:
    p = subprocess.Popen(
        [
            str(engine_bin),
            "--name=a",
            f"--filename={scratch}/t.dat",
            "--rw=randread",
            "--size=4m",
            "--runtime=60",
            "--time_based=1",
            "--numjobs=2",
            "--rate_iops=1000",  # a stop mid-run at any rate: no need to burn two cores
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    # the run has begun when both workers exist (main thread + 2), then it runs 1 s before the
    # signal: that second is the behaviour under test (a stop mid-run, job_runtime > 500 ms below)
    wait_until(lambda: len(list(Path(f"/proc/{p.pid}/task").iterdir())) >= 3, timeout=30, ignore=(OSError,))
    time.sleep(1.0)
    p.send_signal(sig)
    out, _ = p.communicate(timeout=10)
    assert p.returncode == 0
    doc = json.loads(out)
    assert doc["iowatt"]["interrupted"] is True and doc["iowatt"]["signal"] == sig.name
    assert 500 < doc["jobs"][0]["job_runtime"] < 5000
    assert doc["jobs"][0]["read"]["total_ios"] > 0


# clock_nanosleep's system call number: a worker in a rate or thinktime wait sleeps in it
NANOSLEEP = {"x86_64": 230, "aarch64": 115}.get(platform.machine())


def sleeping_worker(pid: int) -> bool:
    for task in Path(f"/proc/{pid}/task").iterdir():
        if task.name != str(pid) and (task / "syscall").read_text().split()[0] == str(NANOSLEEP):
            return True
    return False


@pytest.mark.skipif(NANOSLEEP is None, reason="clock_nanosleep's number for this architecture is not listed")
@pytest.mark.parametrize(
    "wait",
    [
        ["--ioengine=io_uring", "--iodepth=4", "--rate=68"],  # a 4 KiB read every 60 s
        ["--ioengine=psync", "--thinktime=60s"],  # 60 s after every read
    ],
    ids=["rate", "thinktime"],
)
def test_a_signal_ends_a_long_wait_at_once(engine_bin: Path, scratch: Path, wait: list[str]) -> None:
    """A worker in a 60 s rate or thinktime wait stops within a slice (50 ms) of SIGTERM: the signal
    reaches the main thread, the worker sees the flag when its slice ends (it slept through the
    whole wait before; a rate of 300 B/s kept fio's exitwhat.fio running 13.6 s per job)."""
    p = subprocess.Popen(
        [str(engine_bin), "--name=a", f"--filename={scratch}/t.dat", "--rw=read", "--size=64k", *wait],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        wait_until(lambda: sleeping_worker(p.pid), timeout=30, ignore=(OSError, IndexError))
        t0 = time.monotonic()
        p.send_signal(signal.SIGTERM)
        out, err = p.communicate(timeout=50)
        took = time.monotonic() - t0
    finally:
        p.kill()
    if p.returncode == 77:
        pytest.skip(err)
    assert p.returncode == 0, err
    assert took < 10, f"{took:.1f} s to stop (the wait was 60 s)"
    doc = json.loads(out)
    assert doc["iowatt"]["interrupted"] is True and doc["jobs"][0]["read"]["total_ios"] == 1


def test_parallel_jobs_without_stonewall(run, scratch: Path) -> None:
    """Jobs without stonewall run at the same time, as in fio: each job's I/Os, stamped with the
    epoch (log_unix_epoch), span the other's, an order a loaded machine cannot change (a bound on
    the wall time failed under load; paced at 500 I/Os a second, no core is burnt either)."""
    job = ["--rw=randread", "--size=2m", "--runtime=1", "--time_based=1", "--rate_iops=500"]
    doc = run(
        "--log_unix_epoch=1",
        "--name=a", f"--filename={scratch}/a.dat", f"--write_lat_log={scratch}/a", *job,
        "--name=b", f"--filename={scratch}/b.dat", f"--write_lat_log={scratch}/b", *job,
    ).doc  # fmt: skip
    assert [j["groupid"] for j in doc["jobs"]] == [0, 0]
    spans = []
    for name in "ab":
        lines = (scratch / f"{name}_clat.1.log").read_text().splitlines()
        stamps = [int(line.split(",")[0]) for line in lines]
        assert len(stamps) > 100
        spans.append((min(stamps), max(stamps)))
    (a0, a1), (b0, b1) = spans
    assert a0 < b1 and b0 < a1, spans  # run one after the other, one would end before the other began


@pytest.mark.parametrize(("invalidate", "cached"), [("1", False), ("0", True)])
def test_invalidate_drops_the_page_cache(run, disk_scratch: Path, invalidate: str, cached: bool) -> None:
    import shutil as _sh

    if _sh.which("fincore") is None:
        pytest.skip("fincore (util-linux) not installed")
    target = disk_scratch / "t.dat"
    run(f"--filename={target}", "--size=8m", "--rw=read", "--bs=1m")
    target.read_bytes()  # now fully in the page cache
    # the null engine does no I/O, so only the invalidate step can change residency
    run(f"--filename={target}", "--size=8m", "--rw=randread", "--ioengine=null", f"--invalidate={invalidate}")
    out = subprocess.run(
        ["fincore", "-bn", "-o", "RES", str(target)], capture_output=True, text=True, check=True
    )
    resident = int(out.stdout.split()[0])
    assert (resident == 8 << 20) if cached else (resident < 1 << 20), resident


def test_disk_util_and_target_facts_for_a_disk_file(run, disk_scratch: Path) -> None:
    doc = run(
        f"--filename={disk_scratch}/t.dat",
        "--size=8m",
        "--rw=randread",
        "--direct=1",
        "--runtime=300ms",
        "--time_based=1",
    ).doc
    dev = doc["iowatt"]["target"]["device"]
    assert dev is not None and dev["logical_block_size"] >= 512 and dev["scheduler"]
    assert doc["iowatt"]["target"]["fs"]["type"]
    util = [d for d in doc["disk_util"] if d["name"] == dev["name"]]
    assert util and util[0]["read_ios"] >= doc["jobs"][0]["read"]["total_ios"] * 0.9
