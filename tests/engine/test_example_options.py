"""Options fio's own examples use (issue 24, README § fio's examples), each run beside Debian's
fio 3.33 on the same small job: the I/O counts, offsets and errors must agree, never timings."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from .conftest import FIO_CLOCK, run_engine

FIO = shutil.which("fio")
needs_fio = pytest.mark.skipif(FIO is None, reason="Debian's fio is not installed")


def fio_jobs(*args: str, timeout: float = 60) -> list[dict[str, Any]]:
    assert FIO
    p = subprocess.run(
        [FIO, FIO_CLOCK, "--output-format=json", *args], capture_output=True, text=True, timeout=timeout
    )
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout[p.stdout.index("{") :])["jobs"]


def ours_jobs(engine_bin: Path, *args: str) -> list[dict[str, Any]]:
    return json.loads(run_engine(engine_bin, *args).stdout)["jobs"]


def counts(jobs: list[dict[str, Any]]) -> list[tuple[int, int, int, int, int]]:
    return [
        (
            j["error"],
            j["read"]["total_ios"],
            j["read"]["io_bytes"],
            j["write"]["total_ios"],
            j["write"]["io_bytes"],
        )  # noqa: E501
        for j in jobs
    ]


@pytest.fixture
def target(scratch: Path) -> str:
    f = scratch / "t.dat"
    f.write_bytes(b"\x5a" * (1 << 20))
    return str(f)


@needs_fio
def test_ratemin_alias_checks_only_the_directions_that_did_io(engine_bin: Path, target: str) -> None:
    """`ratemin` is fio's alias of rate_min; one value applies to reads and writes, and a read job
    is judged on its reads alone (fio checks the directions with bytes done), so a 3 s read job at
    its rate passes the check made after fio's 2 s settle in both tools."""
    args = ("--name=r", f"--filename={target}", "--rw=read", "--size=96k", "--rate=32k", "--ratemin=16k")
    ours, theirs = ours_jobs(engine_bin, *args), fio_jobs(*args)
    assert counts(ours) == counts(theirs) == [(0, 24, 96 << 10, 0, 0)]
    assert ours[0]["iowatt"]["options"]["rate_min_bytes_per_s"] == {"read": 16 << 10, "write": 16 << 10}


@needs_fio
def test_timeout_alias_is_runtime(engine_bin: Path, target: str) -> None:
    args = ("--name=t", f"--filename={target}", "--rw=randread", "--size=1m", "--time_based")
    args += ("--timeout=200ms",)
    ours, theirs = ours_jobs(engine_bin, *args), fio_jobs(*args)
    assert ours[0]["read"]["total_ios"] > 0 and theirs[0]["read"]["total_ios"] > 0
    assert ours[0]["iowatt"]["options"]["runtime_ns"] == 200_000_000
    assert 150 <= ours[0]["job_runtime"] <= 400 and 150 <= theirs[0]["job_runtime"] <= 400


@needs_fio
def test_threads_is_the_tiobench_profile_no_op(engine_bin: Path, target: str) -> None:
    """fio 3.33 accepts its tiobench profile's `threads` in any job and ignores it there."""
    args = ("--name=n", f"--filename={target}", "--rw=write", "--size=64k", "--threads=8")
    assert counts(ours_jobs(engine_bin, *args)) == counts(fio_jobs(*args)) == [(0, 0, 0, 16, 64 << 10)]
    bad = run_engine(engine_bin, "--name=n", f"--filename={target}", "--threads=x", check=False)
    assert bad.rc == 2 and bad.stderr.startswith("iowatt-engine: threads: ")


def written_blocks(path: Path, bs: int = 4096) -> list[int]:
    data = path.read_bytes()
    return [i for i in range(len(data) // bs) if any(data[i * bs : (i + 1) * bs])]


@needs_fio
@pytest.mark.parametrize("rw", ["write", "randwrite", "write:4k"])
def test_offset_increment_places_each_clone_like_fio(engine_bin: Path, scratch: Path, rw: str) -> None:
    """Clone k writes [offset + k x offset_increment, + size): the same blocks written, the same
    file length (offset + 2 x 64k + 16k) and the same counts as fio's, also with a pattern."""
    layouts = []
    for tool in ("ours", "fio"):
        f = scratch / f"{tool}.dat"
        args = (
            "--name=oi", f"--filename={f}", f"--rw={rw}", "--bs=4k", "--size=16k", "--offset=8k",
            "--offset_increment=64k", "--numjobs=3",
        )  # fmt: skip
        jobs = ours_jobs(engine_bin, *args) if tool == "ours" else fio_jobs(*args)
        layouts.append((f.stat().st_size, written_blocks(f), sorted(counts(jobs))))
        if tool == "ours":
            assert jobs[0]["iowatt"]["options"]["offset_increment"] == 64 << 10
    assert layouts[0] == layouts[1]
    step = 1 if rw != "write:4k" else 2
    assert layouts[0][0] == (8 + 128 + 16) << 10
    assert layouts[0][1] == [b + 16 * k for k in range(3) for b in range(2, 6, step)]


@needs_fio
def test_offset_increment_without_size_runs_each_clone_to_the_end(engine_bin: Path, target: str) -> None:
    """Without size fio gives clone k the rest of the file from its own start: 1 MiB, 1 MiB - 256k, ..."""
    args = ("--name=oi", f"--filename={target}", "--rw=read", "--bs=64k", "--offset_increment=256k")
    args += ("--numjobs=3",)
    ours, theirs = sorted(counts(ours_jobs(engine_bin, *args))), sorted(counts(fio_jobs(*args)))
    assert ours == theirs == sorted((0, n // (64 << 10), n, 0, 0) for n in (1 << 20, 768 << 10, 512 << 10))
    # a clone that would start at or past the end is a usage error naming the option
    bad = run_engine(engine_bin, *args, "--numjobs=5", check=False)
    assert bad.rc == 2 and bad.stderr.startswith("iowatt-engine: offset_increment: "), bad.stderr


@needs_fio
def test_rate_trim_value_paces_nothing_in_a_job_without_trims(engine_bin: Path, target: str) -> None:
    """fio's examples/exitwhat.fio: `rate=300,300,300` on randrw jobs. The third value is the trims'
    rate; a job that does no trims runs as with `R,W` alone (both tools: 16 I/Os of 4k, paced),
    while a job that trims refuses any rate in the engine (the pacing of trims is not built)."""
    args = ("--name=r", f"--filename={target}", "--rw=randrw", "--size=64k", "--rate=2m,2m,2m")
    ours, theirs = ours_jobs(engine_bin, *args), fio_jobs(*args)
    for jobs in (ours, theirs):
        (j,) = jobs
        assert j["error"] == 0 and j["read"]["total_ios"] + j["write"]["total_ios"] == 16
    assert ours[0]["iowatt"]["options"]["rate_bytes_per_s"] == {"read": 2 << 20, "write": 2 << 20}
    # a value not ended by a comma applies to the directions after it: ",1m" caps writes (and trims)
    r = run_engine(
        engine_bin, "--name=t", f"--filename={target}", "--rw=trim", "--size=64k", "--rate=,,1m", check=False
    )
    assert r.rc == 2 and r.stderr.startswith("iowatt-engine: rate: not implemented for trims")
    r = run_engine(
        engine_bin, "--name=t", f"--filename={target}", "--rw=trim", "--size=64k", "--rate=,1m", check=False
    )
    assert r.rc == 2 and r.stderr.startswith("iowatt-engine: rate: ")


@needs_fio
def test_bsrange_of_one_size_is_that_block_size_as_fio(engine_bin: Path, scratch: Path) -> None:
    """fio's examples/tiobench-example.fio: `bsrange=4k-4k` with numjobs clones each making up its
    own file. A range of one size draws nothing: each clone's 64 KiB is 16 I/Os of 4 KiB in both
    tools, where a real range still needs one file per job in the engine."""
    common = ("--name=t", "--rw=randwrite", "--size=64k", "--numjobs=2", "--bsrange=4k-4k")
    (scratch / "a").mkdir()
    (scratch / "b").mkdir()
    ours = ours_jobs(engine_bin, *common, f"--directory={scratch}/a")
    theirs = fio_jobs(*common, f"--directory={scratch}/b")
    assert counts(ours) == counts(theirs) == [(0, 0, 0, 16, 64 << 10)] * 2
    assert ours[0]["iowatt"]["options"]["bs_write_bytes"] == 4096
    assert ours[0]["iowatt"]["options"]["bsrange"] == []
    r = run_engine(engine_bin, *common[:-1], "--bsrange=4k-8k", f"--directory={scratch}/a", check=False)
    assert r.rc == 2 and r.stderr.startswith(
        "iowatt-engine: bsrange: not implemented for jobs of several files"
    )
