"""io_submit_mode=offload, fio's dedupe options, numa_cpu_nodes / numa_mem_policy and log_prio
(agent/engine/src/offload.c, dedupe.c, numa.c, logs.c), each beside Debian's fio 3.33 on the same
small job: what must agree is compared (I/O counts and bytes, the duplicate fraction of what was
written counted in distinct 4 KiB blocks, log columns), never timings."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from .conftest import FIO_CLOCK, fio_jobs_made_once, kill_matching, made_once, run_bounded

FIO = shutil.which("fio")
needs_fio = pytest.mark.skipif(FIO is None, reason="Debian's fio is not installed")


def fio_json(*args: str, cwd: Path | None = None, timeout: float = 120, retries: int = 0) -> dict[str, Any]:
    """Debian's fio on the same job. `retries`: fio 3.33's offloaded submission hangs at times, its
    job process waiting forever on a futex (1 run in 10 of the 2 MiB psync job alone here,
    2026-12-07). Those tests give fio a short `timeout` (their jobs take well under a second) and
    several tries, and kill a hung fio: its process group, and its job processes, which fio starts
    in sessions of their own (conftest's `run_bounded`)."""
    assert FIO
    argv = [FIO, FIO_CLOCK, "--output-format=json", *args]
    want = "\0".join(argv).encode() + b"\0"  # its job processes: forks, the same command line
    done = run_bounded(
        argv, timeout=timeout, tries=retries + 1, cwd=cwd, stop=lambda _: kill_matching(want.__eq__)
    )
    if done is None:
        raise subprocess.TimeoutExpired(argv, timeout)
    assert done.returncode == 0, done.stdout + done.stderr
    doc: dict[str, Any] = json.loads(done.stdout[done.stdout.index("{") :])
    return doc


# a hung fio (above) is given up on after this, and tried again up to this many times
OFFLOAD_TIMEOUT_S, OFFLOAD_RETRIES = 10, 4


def ours(engine: Path, *args: str, cwd: Path | None = None) -> dict[str, Any]:
    p = subprocess.run([str(engine), *args], capture_output=True, text=True, timeout=120, cwd=cwd)
    if p.returncode == 77:
        pytest.skip(p.stderr.strip())
    assert p.returncode == 0, p.stderr
    doc: dict[str, Any] = json.loads(p.stdout)
    return doc


def refused(engine: Path, *args: str) -> str:
    p = subprocess.run([str(engine), *args], capture_output=True, text=True, timeout=60)
    assert p.returncode == 2, (p.returncode, p.stdout[:200], p.stderr)
    assert len(p.stderr.strip().splitlines()) == 1, p.stderr
    return p.stderr


@pytest.fixture
def target(scratch: Path) -> Path:
    f = scratch / "t.dat"
    f.write_bytes(os.urandom(4 << 20))
    return f


# --- io_submit_mode=offload --------------------------------------------------------------------------


@needs_fio
@pytest.mark.parametrize("rw", ["randread", "write"])
def test_offload_does_the_jobs_io_as_fio(engine_bin: Path, target: Path, rw: str) -> None:
    """psync with iodepth=4 offloaded: fio's pool of 4 submitters; the same I/Os and bytes."""
    args = [
        "--name=o",
        f"--filename={target}",
        "--size=2m",
        f"--rw={rw}",
        "--bs=4k",
        "--ioengine=psync",
        "--iodepth=4",
        "--io_submit_mode=offload",
    ]
    a = ours(engine_bin, *args)["jobs"][0]
    b = fio_json(*args, timeout=OFFLOAD_TIMEOUT_S, retries=OFFLOAD_RETRIES)["jobs"][0]
    d = "read" if rw == "randread" else "write"
    assert a[d]["total_ios"] == b[d]["total_ios"] == 512
    assert a[d]["io_bytes"] == b[d]["io_bytes"] == 2 << 20
    assert a["error"] == b["error"] == 0
    assert a["iowatt"]["options"]["io_submit_mode"] == "offload"
    # the job's output keys are fio's
    assert set(b) <= set(a), sorted(set(b) - set(a))
    assert set(b[d]) <= set(a[d]), sorted(set(b[d]) - set(a[d]))


def test_offload_keeps_iodepth_ios_in_flight_with_psync(engine_bin: Path, target: Path) -> None:
    """inline psync is depth 1; offloaded, the pool of iodepth threads keeps more than one in
    flight (the I/O depth distribution shows it: what the offload is for)."""
    base = [
        "--name=o",
        f"--filename={target}",
        "--size=4m",
        "--rw=randread",
        "--bs=4k",
        "--ioengine=psync",
        "--iodepth=8",
    ]
    inline = ours(engine_bin, *base)["jobs"][0]
    off = ours(engine_bin, *base, "--io_submit_mode=offload")["jobs"][0]
    assert inline["iodepth_level"]["1"] == 100.0
    assert off["iodepth_level"]["1"] < 100.0, off["iodepth_level"]
    assert off["read"]["total_ios"] == inline["read"]["total_ios"] == 1024


@needs_fio
def test_offload_with_libaio_and_a_rate_as_fio(engine_bin: Path, target: Path) -> None:
    """fio's fixed-rate-submission example, capped: libaio offloaded at rate_iops=200 for 1 s."""
    args = [
        "--name=r",
        f"--filename={target}",
        "--size=4m",
        "--rw=read",
        "--ioengine=libaio",
        "--iodepth=4",
        "--io_submit_mode=offload",
        "--rate_iops=200",
        "--time_based",
        "--runtime=1",
    ]
    a = ours(engine_bin, *args)["jobs"][0]
    b = fio_json(*args, timeout=OFFLOAD_TIMEOUT_S, retries=OFFLOAD_RETRIES)["jobs"][0]
    for j in (a, b):
        assert 150 <= j["read"]["total_ios"] <= 202, j["read"]["total_ios"]


def test_offload_refuses_io_uring_as_fio(engine_bin: Path, target: Path) -> None:
    """fio 3.33: "io_uring: can't be used with offloaded submit. Use a sync engine"."""
    err = refused(
        engine_bin,
        "--name=o",
        f"--filename={target}",
        "--size=1m",
        "--ioengine=io_uring",
        "--io_submit_mode=offload",
    )
    assert "io_submit_mode:" in err and "io_uring" in err


def test_offload_thread_bound(engine_bin: Path, target: Path) -> None:
    err = refused(
        engine_bin,
        "--name=o",
        f"--filename={target}",
        "--size=1m",
        "--iodepth=4096",
        "--numjobs=2",
        "--io_submit_mode=offload",
    )
    assert "io_submit_mode:" in err and "8192 submission threads" in err
    assert "must be inline or offload" in refused(
        engine_bin, "--name=o", f"--filename={target}", "--io_submit_mode=pool"
    )


# --- dedupe --------------------------------------------------------------------------------------------


def blocks(*files: Path) -> list[bytes]:
    out = []
    for f in files:
        data = f.read_bytes()
        out += [data[i : i + 4096] for i in range(0, len(data), 4096)]
    return out


def dup_fraction(bl: list[bytes]) -> float:
    return 1 - len(set(bl)) / len(bl)


def write_both(
    engine: Path, scratch: Path, *opts: str, jobs: tuple[str, ...] = ("d",)
) -> tuple[list[Path], list[Path]]:
    """The same write job(s) by each tool into files of its own; the files each wrote."""
    res = []
    for tool in ("ours", "fio"):
        files = [scratch / f"{tool}-{j}.dat" for j in jobs]
        args: list[str] = ["--rw=write", "--bs=4k", "--size=4m", *opts]
        for j, f in zip(jobs, files, strict=True):
            args += [f"--name={j}", f"--filename={f}"]
        if tool == "ours":
            ours(engine, *args)
        else:
            fio_json(*args, timeout=OFFLOAD_TIMEOUT_S, retries=OFFLOAD_RETRIES)
        res.append(files)
    return res[0], res[1]


@needs_fio
@pytest.mark.parametrize(
    "opts,expect",
    [
        (("--dedupe_percentage=50",), 0.5),
        (("--dedupe_percentage=25",), 0.25),
        (("--dedupe_percentage=50", "--dedupe_mode=working_set", "--dedupe_working_set_percentage=10"), 0.5),
        (("--dedupe_percentage=100",), 1 - 1 / 1024),
        ((), 0.0),
    ],
)
def test_dedupe_writes_fios_duplicate_fraction(
    engine_bin: Path, scratch: Path, opts: tuple[str, ...], expect: float
) -> None:
    a, b = write_both(engine_bin, scratch, *opts)
    fa, fb = dup_fraction(blocks(*a)), dup_fraction(blocks(*b))
    assert abs(fa - expect) < 0.06 and abs(fb - expect) < 0.06, (fa, fb, expect)
    assert abs(fa - fb) < 0.06, (fa, fb)


@needs_fio
def test_working_set_draws_from_the_first_unique_blocks(engine_bin: Path, scratch: Path) -> None:
    """working_set 5 % of 4 MiB = 51 blocks: every duplicate is one of them, so the most repeated
    blocks are few; repeat mode's duplicates are spread over the whole run."""
    ws, _ = write_both(engine_bin, scratch, "--dedupe_percentage=60", "--dedupe_mode=working_set")
    counts = Counter(blocks(*ws))
    repeated = [c for c in counts.values() if c > 1]
    assert len(repeated) <= 51 and sum(repeated) > 0.55 * 1024, (len(repeated), sum(repeated))


@needs_fio
@pytest.mark.parametrize("glob", ["0", "1"])
def test_dedupe_global_shares_blocks_between_jobs(engine_bin: Path, scratch: Path, glob: str) -> None:
    """fio's dedupe-global example, capped: two jobs, working_set 50 %, 50 % duplicates: with
    dedupe_global each job writes blocks of the other's; without, none."""
    opts = (
        "--dedupe_percentage=50",
        "--dedupe_mode=working_set",
        "--dedupe_working_set_percentage=50",
        f"--dedupe_global={glob}",
    )
    a, b = write_both(engine_bin, scratch, *opts, jobs=("a", "b"))
    for files in (a, b):
        x, y = set(blocks(files[0])), set(blocks(files[1]))
        shared = len(x & y)
        assert (shared > 50) if glob == "1" else (shared == 0), (files, shared)
        assert abs(dup_fraction(blocks(*files)) - 0.5) < 0.08


@needs_fio
def test_dedupe_keeps_buffer_compress_percentage(engine_bin: Path, scratch: Path) -> None:
    """fio: duplicate or not, a buffer follows the compression settings: half of every block is
    zeros with buffer_compress_percentage=50, and the duplicate fraction holds."""
    a, b = write_both(engine_bin, scratch, "--dedupe_percentage=50", "--buffer_compress_percentage=50")
    for files in (a, b):
        bl = blocks(*files)
        zeros = sum(blk.count(0) for blk in bl) / (len(bl) * 4096)
        assert 0.45 < zeros < 0.56, zeros
        assert abs(dup_fraction(bl) - 0.5) < 0.06


def test_dedupe_refusals(engine_bin: Path, target: Path) -> None:
    base = ["--name=d", f"--filename={target}", "--rw=write", "--size=1m"]
    assert "dedupe_percentage:" in refused(engine_bin, *base, "--dedupe_percentage=50", "--zero_buffers")
    assert "dedupe_percentage:" in refused(engine_bin, *base, "--dedupe_percentage=50", "--verify=crc32c")
    nosize = ["--name=d", f"--filename={target}", "--rw=write"]
    assert "needs size" in refused(engine_bin, *nosize, "--dedupe_percentage=50", "--dedupe_mode=working_set")
    assert "smaller than one block" in refused(
        engine_bin,
        *base,
        "--bs=1m",
        "--dedupe_percentage=50",
        "--dedupe_mode=working_set",
        "--dedupe_working_set_percentage=1",
    )
    assert "repeat or working_set" in refused(engine_bin, *base, "--dedupe_mode=ws")
    assert "must be 0..100" in refused(engine_bin, *base, "--dedupe_percentage=101")


# --- NUMA ----------------------------------------------------------------------------------------------


def online_nodes() -> list[int]:
    try:
        text = Path("/sys/devices/system/node/online").read_text().strip()
    except OSError:
        return [0]
    out: list[int] = []
    for part in text.split(","):
        lo, _, hi = part.partition("-")
        out += range(int(lo), int(hi or lo) + 1)
    return out


NUMA_POLICIES = ["bind:0", "interleave:0", "prefer:0", "local", "default"]


def numa_job(target: Path, policy: str) -> list[str]:
    return [
        f"--filename={target}",
        "--size=1m",
        "--rw=randread",
        "--numa_cpu_nodes=0",
        f"--numa_mem_policy={policy}",
    ]


@pytest.fixture(scope="module")
def fio_numa_jobs() -> Iterator[dict[str, dict[str, Any]]]:
    """fio's job of every memory policy on node 0, all in one fio run, once for the run (a job and
    a file each; the NUMA options are a job's own): fio's start-up paid once instead of five times."""

    def jobs(d: Path) -> dict[str, list[str]]:
        return {f"n{n}": numa_job(d / f"t{n}", policy) for n, policy in enumerate(NUMA_POLICIES)}

    for done in fio_jobs_made_once("dedupe-numa", jobs, lambda args, d: fio_json(*args, cwd=d)):
        yield {policy: done[f"n{n}"] for n, policy in enumerate(NUMA_POLICIES)}


@needs_fio
@pytest.mark.parametrize("policy", NUMA_POLICIES)
def test_numa_node_0_runs_as_fio(
    engine_bin: Path, target: Path, policy: str, fio_numa_jobs: dict[str, dict[str, Any]]
) -> None:
    a, b = ours(engine_bin, "--name=n", *numa_job(target, policy))["jobs"][0], fio_numa_jobs[policy]
    assert a["read"]["total_ios"] == b["read"]["total_ios"] == 256
    assert a["iowatt"]["options"]["numa_cpu_nodes"] == "0"
    assert a["iowatt"]["options"]["numa_mem_policy"] == policy


def test_a_missing_node_is_exit_2_naming_the_option(engine_bin: Path, target: Path) -> None:
    missing = max(online_nodes()) + 1
    base = ["--name=n", f"--filename={target}", "--size=1m"]
    err = refused(engine_bin, *base, f"--numa_cpu_nodes={missing}")
    assert "numa_cpu_nodes:" in err and f"node {missing}" in err
    err = refused(engine_bin, *base, f"--numa_mem_policy=bind:0,{missing}")
    assert "numa_mem_policy:" in err
    # the syntax (the server's --parse-only checks only this: it parses for other hosts)
    assert "numa_mem_policy:" in refused(engine_bin, *base, "--numa_mem_policy=prefer:0-1")
    assert "numa_mem_policy:" in refused(engine_bin, *base, "--numa_mem_policy=bind")
    assert "numa_mem_policy:" in refused(engine_bin, *base, "--numa_mem_policy=local:0")
    assert "numa_cpu_nodes:" in refused(engine_bin, *base, "--numa_cpu_nodes=0-")
    assert "numa_cpu_nodes:" in refused(engine_bin, *base, "--numa_cpu_nodes=1024")
    p = subprocess.run(
        [str(engine_bin), "--parse-only", *base, f"--numa_cpu_nodes={missing}"],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert p.returncode == 0, p.stderr


# --- log_prio ------------------------------------------------------------------------------------------


def last_columns(path: Path) -> set[str]:
    return {line.rsplit(",", 1)[1].strip() for line in path.read_text().splitlines() if line.strip()}


REALTIME = ("--prioclass=1", "--prio=2")  # realtime I/O priority: root only
LOG_PRIOS: list[tuple[str, ...]] = [
    (),
    ("--prio=7",),
    ("--prioclass=3",),
    ("--prioclass=2", "--prio=3"),
    REALTIME,
]


def log_prio_job(target: Path, prefix: str, lp: str, prio: tuple[str, ...]) -> list[str]:
    return [
        "--filename=" + str(target),
        "--size=64k",
        "--rw=read",
        f"--write_lat_log={prefix}",
        f"--log_prio={lp}",
        *prio,
    ]


@pytest.fixture(scope="module")
def fio_prio_logs() -> Iterator[dict[tuple[tuple[str, ...], str], Path]]:
    """fio's completion latency log of every priority case with log_prio 0 and 1, all in one fio
    run, once for the run: a job each, on a file of its own, its log under a prefix of its own (fio
    names a job's log after its number in the run: PREFIX_clat.N.log). fio's start-up paid once
    instead of ten times."""
    cases = [(prio, lp) for prio in LOG_PRIOS if prio != REALTIME or os.geteuid() == 0 for lp in ("0", "1")]

    def make(d: Path) -> None:
        args = []
        for n, (prio, lp) in enumerate(cases, start=1):
            (d / f"t{n}").write_bytes(b"\0" * 65536)
            args += [f"--name=l{n}", *log_prio_job(d / f"t{n}", str(d / f"p{n}"), lp, prio)]
        fio_json(*args, cwd=d)

    for d in made_once("dedupe-log-prio", make):
        yield {case: d / f"p{n}_clat.{n}.log" for n, case in enumerate(cases, start=1)}


@needs_fio
@pytest.mark.parametrize(
    "prio,expect_plain,expect_prio",
    [
        (LOG_PRIOS[0], "0", "0x0000"),
        (LOG_PRIOS[1], "0", "0x4007"),
        (LOG_PRIOS[2], "0", "0x6000"),
        (LOG_PRIOS[3], "0", "0x4003"),
        pytest.param(
            REALTIME,
            "1",
            "0x2002",
            marks=pytest.mark.skipif(os.geteuid() != 0, reason="realtime I/O priority needs root"),
        ),
    ],
)
def test_log_prio_columns_as_fio(
    engine_bin: Path,
    target: Path,
    scratch: Path,
    prio: tuple[str, ...],
    expect_plain: str,
    expect_prio: str,
    fio_prio_logs: dict[tuple[tuple[str, ...], str], Path],
) -> None:
    for tool in ("ours", "fio"):
        for lp in ("0", "1"):
            if tool == "ours":
                d = scratch / f"{tool}-{lp}"
                d.mkdir()
                ours(engine_bin, "--name=l", *log_prio_job(target, "p", lp, prio), cwd=d)
                log = d / "p_clat.1.log"
            else:
                log = fio_prio_logs[prio, lp]
            cols = last_columns(log)
            assert cols == {expect_prio if lp == "1" else expect_plain}, (tool, lp, cols)
