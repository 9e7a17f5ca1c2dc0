"""Target layout (holes filled, free space, interrupted layout), validation of every job before
the first I/O, the byte budget after ramp_time, the random map with mixed block sizes, fio's
size suffixes and a few fio-compatibility details of the JSON and the command line."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import time
import zlib
from pathlib import Path

import pytest

from tests.waiting import wait_until

from .conftest import have_root, run_engine

KiB, MiB = 1024, 1024 * 1024


def test_ramp_time_without_time_based_does_the_whole_size_after_the_ramp(run, scratch: Path) -> None:
    job = run(
        "--name=r",
        f"--filename={scratch}/t.dat",
        "--rw=randread",
        "--bs=4k",
        "--size=8m",
        "--ramp_time=200ms",
    ).job
    # the ramp (which alone could read the 8 MiB many times) does not eat the budget
    assert job["read"]["io_bytes"] == 8 * MiB
    assert job["read"]["total_ios"] == 2048


@pytest.mark.parametrize("engine", ["psync", "io_uring"])
def test_mixed_block_sizes_cover_the_region_exactly_once(run, scratch: Path, engine: str) -> None:
    job = run(
        "--name=m",
        f"--filename={scratch}/t.dat",
        "--rw=randread",
        "--size=1m",
        "--bssplit=4k/50:64k/50",
        f"--ioengine={engine}",
        "--iodepth=4",
    ).job
    rd = job["read"]
    assert rd["io_bytes"] == 1 * MiB  # overlapping I/Os would add up to more
    assert 1 * MiB // (64 * KiB) < rd["total_ios"] < 1 * MiB // (4 * KiB)


def test_sparse_file_is_filled_before_reads_and_existing_data_kept(run, scratch: Path) -> None:
    path = scratch / "sparse.dat"
    head = os.urandom(64 * KiB)
    with path.open("wb") as f:
        f.write(head)
        f.truncate(8 * MiB)
    assert path.stat().st_blocks * 512 < 1 * MiB
    run("--name=s", f"--filename={path}", "--rw=read", "--bs=64k", "--size=8m")
    assert path.stat().st_blocks * 512 >= 8 * MiB  # no holes left
    data = path.read_bytes()
    assert data[: 64 * KiB] == head  # existing data is never rewritten
    tail = data[4 * MiB : 4 * MiB + 64 * KiB]
    assert tail != bytes(len(tail)) and len(zlib.compress(tail)) > 0.95 * len(tail)


def test_write_job_does_not_fill_holes(run, scratch: Path) -> None:
    path = scratch / "sparse.dat"
    with path.open("wb") as f:
        f.truncate(8 * MiB)
    run("--name=w", f"--filename={path}", "--rw=write", "--bs=1m", "--size=1m", "--offset=7m")
    assert path.stat().st_blocks * 512 < 2 * MiB


def test_offset_beyond_largest_file_offset_is_a_usage_error(run, scratch: Path) -> None:
    r = run(
        "--name=o", f"--filename={scratch}/x.dat", "--offset=18446744073709551615", "--size=1m", check=False
    )
    assert r.rc == 2 and "offset" in r.stderr and r.stdout == ""
    assert not (scratch / "x.dat").exists()


def test_layout_larger_than_free_space_is_refused_before_writing(run, scratch: Path) -> None:
    free = shutil.disk_usage(scratch).free
    r = run("--name=o", f"--filename={scratch}/huge.dat", f"--size={free * 2}", check=False)
    assert r.rc == 2 and r.stderr.startswith("iowatt-engine: size: ") and "free" in r.stderr
    assert not (scratch / "huge.dat").exists()


@pytest.mark.skipif(not have_root() or shutil.which("chattr") is None, reason="needs root and chattr")
def test_unwritable_target_of_a_later_job_fails_before_the_first_io(engine_bin: Path, scratch: Path) -> None:
    ro = scratch / "ro.dat"
    ro.write_bytes(os.urandom(1 * MiB))
    if subprocess.run(["chattr", "+i", str(ro)], capture_output=True).returncode:
        pytest.skip("this file system has no immutable flag")
    try:
        t0 = time.monotonic()
        r = run_engine(
            engine_bin,
            "--name=a",
            f"--filename={scratch}/a.dat",
            "--size=1m",
            "--runtime=3",
            "--time_based=1",
            "--name=b",
            f"--filename={ro}",
            "--rw=write",
            "--size=1m",
            "--stonewall=1",
            check=False,
        )
        took = time.monotonic() - t0
    finally:
        subprocess.run(["chattr", "-i", str(ro)], capture_output=True)
    assert r.rc == 2 and "filename" in r.stderr and "ro.dat" in r.stderr
    assert took < 2.5  # job a (3 s) never started
    assert not (scratch / "a.dat").exists()


def test_interrupted_layout_removes_the_file_it_created(engine_bin: Path, disk_scratch: Path) -> None:
    path = disk_scratch / "big.dat"
    p = subprocess.Popen(
        [str(engine_bin), "--name=i", f"--filename={path}", "--rw=read", "--size=8g"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    # the layout has begun: the file exists and has blocks written
    wait_until(lambda: path.stat().st_blocks > 0, timeout=30, ignore=(FileNotFoundError,))
    t0 = time.monotonic()
    p.send_signal(signal.SIGTERM)
    out, err = p.communicate(timeout=30)
    assert time.monotonic() - t0 < 5, "the layout must stop at once, without syncing what it wrote"
    assert not path.exists()
    assert p.returncode == 0, err  # an interrupted run, not a failure
    doc = json.loads(out)
    assert doc["iowatt"]["interrupted"] is True


def test_compression_turns_refill_on_and_data_compresses_as_asked(run, scratch: Path) -> None:
    path = scratch / "c.dat"
    job = run(
        "--name=c",
        f"--filename={path}",
        "--rw=write",
        "--bs=64k",
        "--size=4m",
        "--buffer_compress_percentage=50",
        "--refill_buffers=0",
    ).job
    assert job["iowatt"]["options"]["refill_buffers"] is True
    data = path.read_bytes()
    ratio = len(zlib.compress(data, 6)) / len(data)
    assert 0.40 < ratio < 0.65, ratio  # 50 % zeros per 512 bytes; repeated blocks would give ~0


@pytest.mark.parametrize(
    ("kb_base", "size", "expect"),
    [
        (None, "1m", 1 * MiB),
        (None, "1MB", 1 * MiB),
        (None, "1MiB", 999_424),  # fio's default reads MiB as 10^6 (rounded down to bs)
        ("1000", "1MiB", 1 * MiB),
        ("1000", "1m", 999_424),
    ],
)
def test_size_suffixes_as_fio(run, scratch: Path, kb_base: str | None, size: str, expect: int) -> None:
    extra = [f"--kb_base={kb_base}"] if kb_base else []
    job = run(*extra, "--name=k", f"--filename={scratch}/t.dat", "--bs=4096", f"--size={size}").job
    assert job["read"]["io_bytes"] == expect


def test_kb_base_bad_value(run, scratch: Path) -> None:
    r = run("--kb_base=512", "--name=k", f"--filename={scratch}/t.dat", "--size=1m", check=False)
    assert r.rc == 2 and "kb_base" in r.stderr


def test_job_options_and_latency_keys_as_fio(run, scratch: Path) -> None:
    doc = run("--size=1m", "--name=a", f"--filename={scratch}/t.dat", "--iodepth=1").doc
    job = doc["jobs"][0]
    assert list(job["job options"]) == ["name", "filename", "iodepth"]
    assert job["job options"]["name"] == "a"
    assert doc["global options"] == {"size": "1m"}
    assert (job["latency_depth"], job["latency_target"], job["latency_window"]) == (1, 0, 0)
    assert job["latency_percentile"] == 100.0


def test_argv_is_left_as_given(engine_bin: Path, scratch: Path) -> None:
    p = subprocess.Popen(
        [
            str(engine_bin),
            "--name=argvcheck",
            f"--filename={scratch}/t.dat",
            "--size=1m",
            "--runtime=1",
            "--time_based=1",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        # the options have been parsed and the run has begun: its worker thread exists
        wait_until(
            lambda: len(list(Path(f"/proc/{p.pid}/task").iterdir())) >= 2, timeout=30, ignore=(OSError,)
        )
        cmdline = Path(f"/proc/{p.pid}/cmdline").read_bytes().split(b"\0")
    finally:
        p.wait(timeout=10)
    assert b"--name=argvcheck" in cmdline


@pytest.mark.parametrize(
    ("rw", "io_size", "expect"), [("randread", "4m", 4 * MiB), ("read", "32m", 32 * MiB)]
)
def test_io_size_sets_the_bytes_inside_the_region(
    run, scratch: Path, rw: str, io_size: str, expect: int
) -> None:
    job = run(
        "--name=i", f"--filename={scratch}/t.dat", f"--rw={rw}", "--size=16m", f"--io_size={io_size}"
    ).job
    assert job["read"]["io_bytes"] == expect
    assert job["iowatt"]["options"]["io_size_bytes"] == expect
    assert job["iowatt"]["options"]["size_bytes"] == 16 * MiB


def test_io_size_smaller_than_bs_is_a_usage_error(run, scratch: Path) -> None:
    r = run("--name=i", f"--filename={scratch}/t.dat", "--size=1m", "--bs=64k", "--io_size=4k", check=False)
    assert r.rc == 2 and "io_size" in r.stderr


@pytest.mark.default_timer_slack  # the engine's main thread keeps what it was started with
def test_rate_iops_workers_run_with_1ns_timer_slack(engine_bin: Path, scratch: Path) -> None:
    """Open-loop latency counts from the intended start, so the worker's own wake-up delay is in
    it: the worker asks for 1 ns timer slack instead of the default 50 us."""
    p = subprocess.Popen(
        [
            str(engine_bin),
            "--name=r",
            f"--filename={scratch}/t.dat",
            "--size=4m",
            "--rate_iops=200",
            "--runtime=1500ms",
            "--time_based=1",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    slacks: set[int] = set()

    def worker_slack_seen() -> bool:
        for t in Path(f"/proc/{p.pid}/task").glob("*"):
            with contextlib.suppress(OSError, ValueError):  # a thread may just have exited
                # per thread only as /proc/<tid>/ (the task/ directories lack the file)
                slacks.add(int(Path(f"/proc/{t.name}/timerslack_ns").read_text()))
        return 1 in slacks

    try:  # within the 1.5 s run
        wait_until(worker_slack_seen, timeout=1.2, interval=0.05, message=lambda: f"slacks seen: {slacks}")
    finally:
        p.wait(timeout=10)
    assert 1 in slacks, slacks  # the worker thread
    assert 50_000 in slacks  # the main thread keeps the default


@pytest.mark.skipif(shutil.which("strace") is None, reason="strace is not installed")
@pytest.mark.parametrize(("engine", "syscall"), [("io_uring", "io_uring_setup"), ("libaio", "io_setup")])
def test_engine_unavailable_on_this_kernel_exits_77(
    engine_bin: Path, scratch: Path, engine: str, syscall: str
) -> None:
    """A kernel without the ioengine's system call (simulated: strace makes it fail with ENOSYS)."""
    p = subprocess.run(
        [
            "strace",
            "-f",
            "-qq",
            "-o",
            "/dev/null",
            f"--inject={syscall}:error=ENOSYS",
            str(engine_bin),
            "--name=u",
            f"--filename={scratch}/t.dat",
            "--size=1m",
            f"--ioengine={engine}",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    if p.returncode == 77 and "is not built in" in p.stderr:  # this build has no such ioengine at all
        pytest.skip(f"engine exit 77 here: {p.stderr.strip()}")
    assert p.returncode == 77, p.stderr
    assert p.stderr.startswith(f"iowatt-engine: ioengine: {engine} is not available on this kernel")
    assert p.stdout == "" and not (scratch / "t.dat").exists()
