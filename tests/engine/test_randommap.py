"""The random map with mixed block sizes, beside Debian's fio 3.33: randrw with
`bssplit=4k/40:16k/60` over a 4 MiB file, size-bound. fio draws a uniform block, takes the next
free block after it when an earlier I/O covered it, and cuts an I/O short where it runs into
covered blocks; both tools then touch every byte exactly once, and the I/O count and the size mix
(how many 16k I/Os stay whole, how many are cut to 8k or 12k) agree. Each tool draws with its own
generator, so counts are compared as sums over a few seeds."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest

from .conftest import FIO_CLOCK, run_engine

FIO = shutil.which("fio")
SEEDS = (1, 2, 3, 4)


def job(target: Path, seed: int, log: Path) -> list[str]:
    return [
        "--name=m",
        f"--filename={target}",
        "--size=4m",
        "--rw=randrw",
        "--bssplit=4k/40:16k/60",
        f"--randseed={seed}",
        f"--write_lat_log={log}",
        "--output-format=json",
    ]


def sizes(log: Path) -> Counter[int]:
    """I/O sizes from a per-I/O latency log (time, value, direction, block size, ...)."""
    return Counter(int(line.split(",")[3]) for line in log.read_text().splitlines() if line.strip())


def tally(scratch: Path, tool: str, run: Callable[[list[str]], str]) -> tuple[int, Counter[int]]:
    ios, mix = 0, Counter[int]()
    for seed in SEEDS:
        target = scratch / f"{tool}{seed}.dat"
        prefix = scratch / f"{tool}{seed}"
        out = run(job(target, seed, prefix))
        j = json.loads(out[out.index("{") :])["jobs"][0]
        assert j["read"]["io_bytes"] + j["write"]["io_bytes"] == 4 << 20  # every byte once
        n = j["read"]["total_ios"] + j["write"]["total_ios"]
        got = sizes(Path(f"{prefix}_clat.1.log"))
        assert sum(got.values()) == n and set(got) <= {4096, 8192, 12288, 16384}
        ios, mix = ios + n, mix + got
    return ios, mix


def fio_stdout(args: list[str]) -> str:
    assert FIO
    p = subprocess.run([FIO, FIO_CLOCK, *args], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    return p.stdout


@pytest.mark.skipif(FIO is None, reason="Debian's fio is not installed")
def test_bssplit_random_map_counts_and_size_mix_like_fio(engine_bin: Path, scratch: Path) -> None:
    ours, our_mix = tally(scratch, "eng", lambda a: run_engine(engine_bin, *a).stdout)
    theirs, their_mix = tally(scratch, "fio", fio_stdout)
    # ~1,800 I/Os over 4 seeds in both (seed to seed ±5 %); taking any free block instead of the
    # next free one after a covered block cut twice as many I/Os short: 2,240 I/Os, 21 % whole 16k
    assert abs(ours - theirs) / theirs < 0.10, (ours, theirs)
    for bs in (4096, 16384):
        assert abs(our_mix[bs] / ours - their_mix[bs] / theirs) < 0.05, (bs, our_mix, their_mix)


@pytest.mark.skipif(FIO is None, reason="Debian's fio is not installed")
@pytest.mark.parametrize(
    ("split", "unit"),
    [
        ("4k/50:16k/50,64k", 65536),
        pytest.param(
            "4k/40:16k/60,16k/100",
            16384,
            # one clean-clone run (session 14): the engine's mean 3.91 MB in 291 I/Os against fio's
            # 2.85 MB in 216 (the first list agreed): the engine's pass ends later than fio's when
            # the write size equals the reads' largest; open in issue 24, not strict (seeds differ)
            marks=pytest.mark.xfail(strict=False, reason="issue 24: the pass ends later than fio's"),
        ),
    ],
)
def test_directions_of_different_smallest_sizes_like_fio(
    engine_bin: Path, scratch: Path, split: str, unit: int
) -> None:
    """Reads of 4k/16k, writes of one other size: fio draws each direction's block in units of
    its own smallest size and marks its map as if the bits were such units, so a pass ends early
    (on average ~3 of the 4 MiB, ~80 I/Os with the first list), and writes start at multiples of
    their size. Both tools, 8 runs each with seeds drawn anew (randrepeat=0: fio 3.33's offsets
    are the same for randseed=1..6): the mean bytes below 90 % of the region (the engine did
    exactly 4 MiB in ~170 I/Os before), mean I/O counts within 40 %, every write aligned. (The
    second list spun once: no write size fitted the room before the end.)"""
    runs = {"eng": lambda a: run_engine(engine_bin, *a, timeout=20).stdout, "fio": fio_stdout}
    means = {}
    for tool, run in runs.items():
        ios = nbytes = 0
        for k in range(8):
            prefix = scratch / f"{tool}{k}"
            args = [a for a in job(scratch / f"{tool}{k}.dat", 0, prefix) if not a.startswith("--randseed")]
            args += [f"--bssplit={split}", "--randrepeat=0"]  # randseed would fix the seed in both
            out = run([*args, "--log_offset=1"])
            j = json.loads(out[out.index("{") :])["jobs"][0]
            ios += j["read"]["total_ios"] + j["write"]["total_ios"]
            nbytes += j["read"]["io_bytes"] + j["write"]["io_bytes"]
            rows = [line.split(",") for line in Path(f"{prefix}_clat.1.log").read_text().splitlines() if line]
            assert all(int(r[4]) % unit == 0 and int(r[3]) == unit for r in rows if int(r[2]) == 1), tool
        means[tool] = (ios / 8, nbytes / 8)
    (ours, our_bytes), (theirs, their_bytes) = means["eng"], means["fio"]
    assert our_bytes < 0.9 * (4 << 20) and their_bytes < 0.9 * (4 << 20), means
    assert abs(ours - theirs) / theirs < 0.4, means
