"""io_uring specifics: the nowait fact the engine reports, force_async, the CPU of the
io-wq kernel workers that serve each ring (outside usr_cpu/sys_cpu, as in fio), and where the
bounded wait (ADR 0052) never polls."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest


def _kernel_nowait(path: Path) -> bool:
    """What the kernel says: preadv2(RWF_NOWAIT) fails with EOPNOTSUPP on a descriptor that
    cannot take non-blocking attempts (io_uring then punts every request to io-wq)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.preadv(fd, [bytearray(4096)], 0, os.RWF_NOWAIT)
    except OSError as e:
        return e.errno != errno.EOPNOTSUPP
    finally:
        os.close(fd)
    return True


def _job(run, path: Path, *extra: str) -> dict:
    return run(
        "--name=u",
        f"--filename={path}",
        "--rw=randread",
        "--size=8m",
        "--ioengine=io_uring",
        "--iodepth=8",
        "--runtime=300ms",
        "--time_based=1",
        *extra,
    ).job


@pytest.mark.parametrize("where", ["scratch", "disk_scratch"], ids=["tmpfs", "disk-fs"])
def test_target_nowait_matches_the_kernel(run, request: pytest.FixtureRequest, where: str) -> None:
    d: Path = request.getfixturevalue(where)
    path = d / "t.dat"
    job = _job(run, path)
    facts = job["iowatt"]["io_uring"]
    assert facts["target_nowait"] is _kernel_nowait(path)
    assert facts["force_async_every"] == 0 and job["iowatt"]["options"]["force_async"] == 0
    assert facts["registered_ring_fd"] is True
    assert 0 <= facts["wait_poll_hits"] <= facts["wait_polls"]
    assert (facts["wait_poll_cpu_ns"] > 0) is (facts["wait_polls"] > 0)


def test_the_bounded_wait_never_polls_at_depth_1_or_in_a_paced_job(run, scratch: Path) -> None:
    """ADR 0052: a QD1 job and a paced one sleep for their completions as fio's do; their
    figures (latency at depth 1, the schedule's sleeps) are the sleeping thread's."""
    for extra in (("--iodepth=1",), ("--iodepth=8", "--rate_iops=20000")):
        args = ["--name=u", f"--filename={scratch}/t.dat", "--rw=randread", "--size=8m"]
        args.append("--ioengine=io_uring")
        job = run(*args, "--number_ios=400", *extra).job
        facts = job["iowatt"]["io_uring"]
        assert (facts["wait_polls"], facts["wait_poll_hits"], facts["wait_poll_cpu_ns"]) == (0, 0, 0), extra
        assert job["read"]["total_ios"] == 400


def test_force_async_sends_every_request_to_io_wq_and_its_cpu_is_reported(run, disk_scratch: Path) -> None:
    path = disk_scratch / "t.dat"
    job = _job(run, path, "--force_async=1", "--numjobs=2")
    facts = job["iowatt"]["io_uring"]
    assert facts["force_async_every"] == 1 and job["iowatt"]["options"]["force_async"] == 1
    secs = job["iowatt"]["runtime_ns"] / 1e9
    # every read ran in an iou-wrk-<tid> thread of one of the two workers: their CPU is counted,
    # and it cannot exceed all CPUs for the whole run
    assert 0 < facts["kernel_worker_cpu_ns"] <= os.cpu_count() * secs * 1e9 * 1.05
    assert facts["kernel_worker_cpu"] == pytest.approx(
        100 * facts["kernel_worker_cpu_ns"] / 1e9 / secs, rel=0.01
    )
    assert job["read"]["total_ios"] > 0


def test_kernel_worker_cpu_only_for_io_uring(run, scratch: Path) -> None:
    job = run(
        "--name=p",
        f"--filename={scratch}/t.dat",
        "--rw=randread",
        "--size=4m",
        "--runtime=200ms",
        "--time_based=1",
    ).job
    assert "io_uring" not in job["iowatt"]


def test_force_async_bad_value(run, scratch: Path) -> None:
    r = run(
        "--name=p", f"--filename={scratch}/t.dat", "--ioengine=io_uring", "--force_async=lots", check=False
    )
    assert r.rc == 2 and "force_async" in r.stderr
