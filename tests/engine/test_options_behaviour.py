"""What the engine's options do, observed from outside: the system calls it makes (strace) and the
counts it reports. Offsets are not in the JSON, so the tests that need them read them from
strace's pread64/pwrite64 lines; each job works on a file created here at its exact size, so the
engine's pre-fill issues no writes of its own."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from collections import Counter
from pathlib import Path

import pytest

from tests.strace import STRACE, straced

from .conftest import FIO_CLOCK, run_engine

KiB = 1024
MiB = 1024 * KiB

needs_strace = pytest.mark.skipif(STRACE is None, reason="strace is not installed")

# lines of `strace -ff -y` (the fd followed by its path): pread64(3</dev/shm/t.dat>, ""..., 4096, 8192) = 4096
IO_LINE = re.compile(r"^p(read|write)64\(\d+<(.*)>, .*, (\d+), (\d+)\)\s+= (-?\d+)")
FADVISE_LINE = re.compile(r"^fadvise64\(\d+<(.*)>, \d+, \d+, (POSIX_FADV_\w+)\)")


def _target(d: Path, size: int) -> Path:
    p = d / "t.dat"
    with p.open("wb") as f:
        f.write(os.urandom(size))
    return p


def _strace(engine_bin: Path, out: Path, target: Path, *args: str) -> list[str]:
    """The engine's system calls on `target`, from `strace -ff -y` (one file per thread: no
    interleaved or `unfinished` lines; -y names each fd's file, which leaves out the dynamic
    loader's preads of shared libraries)."""
    p, lines = straced(
        [str(engine_bin), f"--filename={target}", *args],
        out / "trace",
        *("-qq", "-y", "-s", "0", "-e", "signal=none"),
        *("-e", "trace=pread64,pwrite64,fadvise64,fsync,fdatasync"),
        timeout=60,
    )
    assert p.returncode == 0, p.stderr
    return [ln for ln in lines if f"<{target.resolve()}>" in ln.split(",", 1)[0]]


def _offsets(lines: list[str], bs: int) -> list[int]:
    """Offsets of the job's I/Os, in issue order (one worker thread: one trace file)."""
    offs = []
    for ln in lines:
        m = IO_LINE.match(ln)
        if m:
            assert int(m.group(3)) == bs and int(m.group(5)) == bs, ln
            offs.append(int(m.group(4)))
    return offs


@needs_strace
def test_randseed_repeats_the_offset_sequence(engine_bin: Path, scratch: Path, tmp_path: Path) -> None:
    size, bs = 1 * MiB, 4 * KiB
    tgt = _target(scratch, size)

    def offsets(seed: int, tag: str) -> list[int]:
        d = tmp_path / tag
        d.mkdir()
        args = ["--name=a", "--rw=randread", "--bs=4k", f"--size={size}", f"--randseed={seed}"]
        return _offsets(_strace(engine_bin, d, tgt, *args), bs)

    a, again, b = offsets(7, "a"), offsets(7, "again"), offsets(8, "b")
    blocks = list(range(0, size, bs))
    # the random map: each block exactly once per pass, in a seed-dependent order
    assert sorted(a) == sorted(b) == blocks
    assert a != blocks, "a random job issued its offsets in sequential order"
    assert a == again
    assert a != b


def test_fdatasync_every_n_writes(run, scratch: Path) -> None:
    for n, calls in ((32, 256 // 32), (100, 256 // 100)):  # 256 writes; no sync for a partial tail
        job = run(
            "--name=a",
            f"--filename={scratch}/t.dat",
            "--rw=write",
            "--bs=4k",
            "--size=1m",
            f"--fdatasync={n}",
        ).job
        assert job["write"]["total_ios"] == 256
        assert job["sync"]["total_ios"] == calls, n
        assert job["sync"]["lat_ns"]["N"] == calls
        assert job["iowatt"]["options"]["fdatasync"] == n


@needs_strace
def test_fdatasync_calls_fdatasync_not_fsync(engine_bin: Path, scratch: Path, tmp_path: Path) -> None:
    tgt = _target(scratch, 1 * MiB)
    lines = _strace(
        engine_bin,
        tmp_path,
        tgt,
        "--name=a",
        "--rw=write",
        "--bs=4k",
        "--size=1m",
        "--fdatasync=32",
    )
    calls = Counter(ln.split("(", 1)[0] for ln in lines)
    assert calls["fdatasync"] == 8 and calls["fsync"] == 0, calls


@needs_strace
@pytest.mark.parametrize(
    ("rw", "hint", "advice"),
    [
        ("randread", "1", "POSIX_FADV_RANDOM"),  # fio's default: the hint follows the pattern
        ("read", "1", "POSIX_FADV_SEQUENTIAL"),
        ("randread", "0", None),  # no hint: the kernel's default readahead
        ("read", "random", "POSIX_FADV_RANDOM"),  # readahead off for a sequential job
        ("randread", "sequential", "POSIX_FADV_SEQUENTIAL"),
        ("randread", "normal", "POSIX_FADV_NORMAL"),
    ],
)
def test_fadvise_hint(
    engine_bin: Path, scratch: Path, tmp_path: Path, rw: str, hint: str, advice: str | None
) -> None:
    tgt = _target(scratch, 1 * MiB)
    lines = _strace(
        engine_bin,
        tmp_path,
        tgt,
        "--name=a",
        f"--rw={rw}",
        "--bs=4k",
        "--size=1m",
        f"--fadvise_hint={hint}",
    )
    advices = [m.group(2) for ln in lines if (m := FADVISE_LINE.match(ln))]
    # invalidate=1 (the default) drops the region first: POSIX_FADV_DONTNEED, not a readahead hint
    hints = [a for a in advices if a != "POSIX_FADV_DONTNEED"]
    assert "POSIX_FADV_DONTNEED" in advices
    assert hints == ([advice] if advice else []), advices


@needs_strace
@pytest.mark.parametrize(("dist", "low", "high"), [("zipf:1.2", 0.70, 1.0), ("random", 0.0, 0.20)])
def test_random_distribution_skews_offsets(
    engine_bin: Path, scratch: Path, tmp_path: Path, dist: str, low: float, high: float
) -> None:
    size, bs = 16 * MiB, 4 * KiB
    tgt = _target(scratch, size)
    offs = _offsets(
        _strace(
            engine_bin,
            tmp_path,
            tgt,
            "--name=a",
            "--rw=randread",
            "--bs=4k",
            f"--size={size}",
            f"--random_distribution={dist}",
        ),
        bs,
    )
    assert len(offs) == size // bs and all(0 <= o < size and o % bs == 0 for o in offs)
    counts = sorted(Counter(offs).values(), reverse=True)
    hot = sum(counts[: (size // bs) // 10])  # I/Os on the hottest 10 % of the blocks
    assert low < hot / len(offs) <= high, (dist, hot / len(offs), counts[:5])


def test_rwmixread_80(run, scratch: Path) -> None:
    job = run(
        "--name=a", f"--filename={scratch}/t.dat", "--rw=randrw", "--rwmixread=80", "--bs=4k", "--size=16m"
    ).job
    r, w = job["read"]["total_ios"], job["write"]["total_ios"]
    assert r + w == 4096
    assert 0.75 <= r / (r + w) <= 0.85, r / (r + w)


@pytest.mark.parametrize("rw", ["read", "randread", "write"])
def test_loops_multiply_the_bytes(run, scratch: Path, rw: str) -> None:
    size = 1 * MiB
    job = run(
        "--name=a", f"--filename={scratch}/t.dat", f"--rw={rw}", "--bs=4k", f"--size={size}", "--loops=3"
    ).job
    d = job["write" if rw == "write" else "read"]
    assert d["io_bytes"] == 3 * size and d["total_ios"] == 3 * size // 4096
    assert job["iowatt"]["options"]["loops"] == 3


@pytest.mark.skipif(
    shutil.which("fio") is None or shutil.which("fincore") is None, reason="needs fio and fincore"
)
def test_invalidate_drops_the_cache_before_a_direct_job_as_fio(engine_bin: Path, loop_ext4: Path) -> None:
    """fio's invalidate=1 (the default) drops the file's page cache before a direct=1 job too (an
    O_DIRECT I/O on a file with cached pages takes the kernel's slower path until they go): the
    engine does the same, and keeps them with invalidate=0. On ext4 (tmpfs pages are the storage)."""
    target = loop_ext4 / "inv.dat"
    with target.open("wb") as f:
        f.write(os.urandom(4 * MiB))
        os.fsync(f.fileno())  # clean pages: DONTNEED leaves dirty ones
    job = [f"--filename={target}", "--name=d", "--size=4m", "--io_size=16k", "--rw=randread", "--direct=1"]

    def resident_after(*cmd: str) -> int:
        target.read_bytes()  # the whole file in the page cache
        subprocess.run(cmd, capture_output=True, check=True, timeout=60)
        out = subprocess.run(
            ["fincore", "-bn", "-o", "RES", str(target)], capture_output=True, text=True, check=True
        )
        return int(out.stdout.split()[0])

    assert resident_after("fio", FIO_CLOCK, *job) == 0
    assert resident_after(str(engine_bin), *job) == 0
    assert resident_after(str(engine_bin), *job, "--invalidate=0") == 4 * MiB
    assert resident_after("fio", FIO_CLOCK, *job, "--invalidate=0") == 4 * MiB


@pytest.mark.skipif(shutil.which("fio") is None, reason="needs fio")
def test_iodepth_batch_complete_reaps_as_fio(engine_bin: Path, scratch: Path) -> None:
    """fio's iodepth_batch_complete_min/_max (defaults 1 and the minimum): a full queue waits for
    min completions and takes at most max, so by default one completion, then one new I/O. Seen in
    iodepth_complete (completions per reap): on tmpfs every I/O is done by the time of the wait,
    so taking them all (what the engine did before: fio's max=iodepth) puts reaps in '16'."""
    _target(scratch, 8 * MiB)
    job = [
        f"--filename={scratch}/t.dat",
        "--name=q",
        "--size=8m",
        "--io_size=2m",
        "--rw=randread",
        "--iodepth=16",
    ]

    def reaps(tool: list[str], *extra: str) -> dict[str, float]:
        out = subprocess.run(
            [*tool, *job, *extra], capture_output=True, text=True, check=True, timeout=60
        ).stdout
        j = json.loads(out[out.index("{") :])["jobs"][0]
        assert j["read"]["total_ios"] == 512
        return j["iodepth_complete"]

    for tool in ([str(engine_bin)], ["fio", FIO_CLOCK, "--output-format=json"]):
        for eng in ("io_uring", "libaio"):
            assert reaps(tool, f"--ioengine={eng}")["4"] >= 99, (tool, eng)  # one (1-4) at a time
        assert reaps(tool, "--ioengine=libaio", "--iodepth_batch_complete_max=16")["16"] >= 90, tool
        c = reaps(tool, "--ioengine=libaio", "--iodepth_batch_complete=4", "--iodepth_batch_complete_max=8")
        assert c["8"] >= 90, (tool, c)  # at least 4, at most 8: all 8 there
    opts = run_engine(engine_bin, *job, "--ioengine=libaio", "--iodepth_batch_complete_min=4").job["iowatt"][
        "options"
    ]
    assert (opts["iodepth_batch_complete_min"], opts["iodepth_batch_complete_max"]) == (4, 4)
    r = run_engine(engine_bin, *job, "--iodepth_batch_complete_min=0", check=False)
    assert r.rc == 2 and r.stderr.startswith("iowatt-engine: iodepth_batch_complete_min:")
