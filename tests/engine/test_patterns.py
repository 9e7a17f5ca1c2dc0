"""fio's I/O patterns in the engine (agent/engine/src/patterns.c), each beside Debian's fio 3.33 on
the same small job: rw=X:N (holes, backwards strides, a new random offset every N I/Os with
rw_sequencer), bsrange / bs_unaligned, blockalign, zoned / zoned_abs, random_generator,
percentage_random, number_ios. Both run psync on the same pre-filled file (so neither lays it
out) under strace, which records every pread64/pwrite64 on that file: where fio's offsets are
deterministic the sequences must be identical, elsewhere counts, bytes and the pattern's shape."""

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

from tests.strace import STRACE, straced

from .conftest import FIO_CLOCK, run_engine

FIO = shutil.which("fio")
pytestmark = pytest.mark.skipif(not FIO or not STRACE, reason="needs Debian's fio and strace")

MIB = 1 << 20


@pytest.fixture
def data(scratch: Path) -> Path:
    f = scratch / "pattern.dat"
    f.write_bytes(os.urandom(MIB))
    return f


def traced(cmd: list[str], target: Path, out: Path) -> tuple[list[tuple[str, int, int]], dict[str, Any]]:
    """(op, offset, length) of every pread64/pwrite64 on target, and the JSON document."""
    p, lines = straced(
        cmd,
        out.with_suffix(".strace"),
        "-qq",
        "-s",
        "0",
        "-P",
        str(target),
        "-e",
        "trace=pread64,pwrite64",
        timeout=120,
    )
    assert p.returncode == 0, (cmd, p.stderr[-2000:])
    ios = []
    for call in lines:
        if call.startswith(("pread64(", "pwrite64(")):
            args = call[call.index("(") + 1 : call.rindex(")")].split(", ")
            ios.append(("R" if call.startswith("pread") else "W", int(args[-1]), int(args[-2])))
    return ios, json.loads(p.stdout[p.stdout.index("{") :])


def both(
    engine_bin: Path, data: Path, *opts: str
) -> tuple[list[tuple[str, int, int]], dict[str, Any], list[tuple[str, int, int]], dict[str, Any]]:
    common = [f"--filename={data}", "--ioengine=psync", "--name=j", *opts]
    fio_ios, fio_doc = traced(
        [FIO or "fio", FIO_CLOCK, "--thread", "--output-format=json", *common],
        data,
        data.with_name("fio.json"),
    )
    eng_ios, eng_doc = traced([str(engine_bin), *common], data, data.with_name("eng.json"))
    return fio_ios, fio_doc, eng_ios, eng_doc


def totals(doc: dict[str, Any]) -> tuple[int, int, int, int]:
    r = w = rb = wb = 0
    for j in doc["jobs"]:
        r += j["read"]["total_ios"]
        w += j["write"]["total_ios"]
        rb += j["read"]["io_bytes"]
        wb += j["write"]["io_bytes"]
    return r, w, rb, wb


# fio's offsets here do not depend on its random generator: the same sequence, I/O for I/O
SAME_SEQUENCE = [
    ("--rw=read:-8k", "--bs=4k", "--size=64k"),  # fio's examples/backwards-read.fio
    ("--rw=read:-8k", "--bs=4k", "--size=64k", "--offset=16k"),  # fio's rewind with an offset
    ("--rw=read:-8k", "--bs=4k", "--size=64k", "--offset=128k"),
    ("--rw=read:-12k", "--bs=4k", "--size=64k"),
    ("--rw=read:-8k", "--bs=4k", "--size=1m"),
    ("--rw=read:8k", "--bs=4k", "--size=64k"),  # holes: the pass ends at the region's end
    ("--rw=read:8k", "--bs=4k", "--size=64k", "--io_size=128k"),  # ... and starts again for io_size
    ("--rw=read:8k", "--bs=4k", "--size=512k", "--offset=512k"),
    ("--rw=write:112k", "--bs=16k", "--size=1m"),  # the rw=write:112k: wraps at the file's end
    ("--rw=write:100k", "--bs=16k", "--size=1m"),
    ("--rw=write:8k", "--bs=4k", "--size=1m"),  # an I/O ending at the file's end ends the pass
    ("--rw=write:3k", "--bs=4k", "--size=1m"),  # the next would straddle the file's end
    ("--rw=read:8k", "--bs=4k", "--size=64k", "--loops=3"),
    ("--rw=read", "--bs=4k", "--size=64k", "--number_ios=5", "--loops=3"),
    ("--rw=read", "--bs=4k", "--size=64k", "--number_ios=7", "--loops=4"),
    ("--rw=read", "--bs=4k", "--size=64k", "--number_ios=20", "--loops=3"),
    ("--rw=read:8k", "--bs=4k", "--size=64k", "--number_ios=4", "--loops=3"),
    ("--rw=read:-8k", "--bs=4k", "--size=64k", "--number_ios=5", "--loops=5"),
    ("--rw=write", "--bs=4k", "--size=64k", "--number_ios=5", "--io_size=128k"),
    ("--rw=randread", "--percentage_random=0", "--bs=4k", "--size=64k"),
    ("--rw=randwrite", "--percentage_random=0,0", "--bs=4k", "--size=64k", "--offset=64k"),
]


def traced_files(cmd: list[str], out: Path) -> tuple[dict[str, list[tuple[str, int, int]]], dict[str, Any]]:
    """(op, offset, length) of every pread64/pwrite64 per file (strace -y names each call's file),
    and the JSON document."""
    p, lines = straced(
        cmd, out.with_suffix(".strace"), "-qq", "-y", "-s", "0", "-e", "trace=pread64,pwrite64", timeout=120
    )
    assert p.returncode == 0, (cmd, p.stderr[-2000:])
    ios: dict[str, list[tuple[str, int, int]]] = {}
    for call in lines:
        if not call.startswith(("pread64(", "pwrite64(")):
            continue
        path = call[call.index("<") + 1 : call.index(">,")]
        args = call[call.index("(") + 1 : call.rindex(")")].split(", ")
        op = "R" if call.startswith("pread") else "W"
        ios.setdefault(path, []).append((op, int(args[-1]), int(args[-2])))
    return ios, json.loads(p.stdout[p.stdout.index("{") :])


def test_same_offsets_as_fio(engine_bin: Path, scratch: Path) -> None:
    """Every SAME_SEQUENCE case is a job of one command line (each on a file of its own, all at
    once), run once by fio and once by the engine under strace: per case, the same I/Os, I/O for
    I/O, and the same counts and bytes (one traced run per tool instead of one per case)."""
    args = ["--ioengine=psync"]
    files = []
    for k, opts in enumerate(SAME_SEQUENCE):
        f = scratch / f"case{k}.dat"
        f.write_bytes(os.urandom(MIB))
        files.append(str(f))
        args += [f"--name=j{k}", f"--filename={f}", *opts]
    fio_cmd = [FIO or "fio", FIO_CLOCK, "--thread", "--output-format=json", *args]
    fio_ios, fio_doc = traced_files(fio_cmd, scratch / "fio")
    eng_ios, eng_doc = traced_files([str(engine_bin), *args], scratch / "eng")
    fio_jobs = {j["jobname"]: j for j in fio_doc["jobs"]}
    for k, (opts, f) in enumerate(zip(SAME_SEQUENCE, files, strict=True)):
        case = " ".join(opts)
        assert fio_ios.get(f), f"strace saw no I/O of fio's: {case}"
        assert eng_ios.get(f) == fio_ios[f], case
        assert totals({"jobs": [eng_doc["jobs"][k]]}) == totals({"jobs": [fio_jobs[f"j{k}"]]}), case


def test_mixed_holes_per_direction(engine_bin: Path, data: Path) -> None:
    """rw=rw:4k: each direction keeps its own position (the mix itself is random in both)."""
    fio_ios, _, eng_ios, _ = both(engine_bin, data, "--rw=rw:4k", "--bs=4k", "--size=256k")
    for ios in (fio_ios, eng_ios):
        for op in "RW":
            offs = [o for d, o, _ in ios if d == op]
            assert offs and offs == [i * 8192 for i in range(len(offs))], (op, offs)


def test_random_every_n_identical(engine_bin: Path, data: Path) -> None:
    """rw=randread:4 with rw_sequencer=identical: each random offset 4 times, all 16 I/Os."""
    fio_ios, fio_doc, eng_ios, eng_doc = both(
        engine_bin, data, "--rw=randread:4", "--rw_sequencer=identical", "--bs=4k", "--size=64k"
    )
    for ios in (fio_ios, eng_ios):
        offs = [o for _, o, _ in ios]
        assert len(offs) == 16
        assert all(offs[i] == offs[i - i % 4] for i in range(16)), offs
        assert len(set(offs)) > 1
    assert totals(eng_doc) == totals(fio_doc)


def test_random_every_n_sequential(engine_bin: Path, data: Path) -> None:
    """rw=randread:4: a random offset, then 3 sequential I/Os; at the file's end a random one (both)."""
    fio_ios, _, eng_ios, _ = both(engine_bin, data, "--rw=randread:4", "--bs=4k", "--size=1m")
    for ios in (fio_ios, eng_ios):
        offs = [o for _, o, _ in ios]
        assert 0 < len(offs) <= 256
        follow = [offs[i] == offs[i - 1] + 4096 for i in range(1, len(offs)) if i % 4]
        assert sum(follow) >= len(follow) - 8, offs  # a few runs reach the file's end
        starts = {offs[i] for i in range(0, len(offs), 4)}
        assert len(starts) > len(offs) // 8


def test_percentage_random_half(engine_bin: Path, data: Path) -> None:
    """percentage_random=50: about half the offsets continue the previous I/O (fio: same shape)."""
    fio_ios, _, eng_ios, _ = both(
        engine_bin, data, "--rw=randread", "--percentage_random=50", "--bs=4k", "--size=1m", "--norandommap"
    )
    for ios in (fio_ios, eng_ios):
        offs = [o for _, o, _ in ios]
        seq = sum(offs[i] == offs[i - 1] + 4096 for i in range(1, len(offs)))
        assert len(offs) > 20 and 0.3 < seq / len(offs) < 0.7, (seq, len(offs))


def test_bsrange_sequential(engine_bin: Path, data: Path) -> None:
    fio_ios, fio_doc, eng_ios, eng_doc = both(
        engine_bin, data, "--rw=read", "--bsrange=4k-16k", "--size=1m", "--loops=4"
    )
    sizes = {4096, 8192, 12288, 16384}
    for ios in (fio_ios, eng_ios):
        got = Counter(n for _, _, n in ios)
        assert set(got) == sizes and min(got.values()) > len(ios) / 8, got
        assert sum(n for _, _, n in ios) == 4 * MIB
        offs = [o for _, o, _ in ios]
        assert all(o % 4096 == 0 for o in offs)
    assert abs(len(eng_ios) - len(fio_ios)) < 0.15 * len(fio_ios)
    assert totals(eng_doc)[2] == totals(fio_doc)[2] == 4 * MIB


def test_bsrange_per_direction(engine_bin: Path, data: Path) -> None:
    fio_ios, _, eng_ios, _ = both(engine_bin, data, "--rw=rw", "--bsrange=4k-8k,16k-32k", "--size=1m")
    for ios in (fio_ios, eng_ios):
        assert {n for d, _, n in ios if d == "R"} <= {4096, 8192}
        assert {n for d, _, n in ios if d == "W"} <= {16384, 32768}
    assert abs(len(eng_ios) - len(fio_ios)) < 0.3 * len(fio_ios)


def test_bs_unaligned(engine_bin: Path, data: Path) -> None:
    fio_ios, _, eng_ios, _ = both(
        engine_bin, data, "--rw=read", "--bsrange=1k-4k", "--bs_unaligned=1", "--size=256k"
    )
    for ios in (fio_ios, eng_ios):
        sizes = [n for _, _, n in ios]
        assert all(1024 <= n <= 4096 for n in sizes)
        assert sum(n % 512 != 0 for n in sizes) > len(sizes) / 2
        assert 0.97 * 256 * 1024 < sum(sizes) <= 256 * 1024
        # fio caps MIN + a fraction of MAX at MAX: about a quarter of the I/Os are 4k
        assert 0.1 < sizes.count(4096) / len(sizes) < 0.45
    assert abs(len(eng_ios) - len(fio_ios)) < 0.15 * len(fio_ios)


def test_blockalign(engine_bin: Path, data: Path) -> None:
    fio_ios, fio_doc, eng_ios, eng_doc = both(
        engine_bin, data, "--rw=randread", "--blockalign=512", "--bs=4k", "--size=256k"
    )
    for ios in (fio_ios, eng_ios):
        offs = [o for _, o, _ in ios]
        assert len(offs) == 64 and all(o % 512 == 0 and o + 4096 <= 256 * 1024 for o in offs)
        assert sum(o % 4096 != 0 for o in offs) > 32  # not the 4k grid
    assert totals(eng_doc) == totals(fio_doc)


def test_lfsr_each_block_once_without_a_map(engine_bin: Path, data: Path) -> None:
    fio_ios, fio_doc, eng_ios, eng_doc = both(
        engine_bin,
        data,
        "--rw=randread",
        "--random_generator=lfsr",
        "--norandommap",
        "--bs=4k",
        "--size=256k",
    )
    for ios in (fio_ios, eng_ios):
        offs = [o for _, o, _ in ios]
        assert sorted(offs) == [i * 4096 for i in range(64)]
        assert offs != sorted(offs)
    assert totals(eng_doc) == totals(fio_doc)


def test_tausworthe_norandommap_repeats(engine_bin: Path, data: Path) -> None:
    fio_ios, _, eng_ios, _ = both(
        engine_bin,
        data,
        "--rw=randread",
        "--random_generator=tausworthe64",
        "--norandommap",
        "--bs=4k",
        "--size=256k",
    )
    for ios in (fio_ios, eng_ios):
        assert len(ios) == 64 and len({o for _, o, _ in ios}) < 64


@pytest.mark.parametrize(
    "dist, zones",
    [
        ("zoned:90/10:10/90", [(0.9, 0.1), (0.1, 1.0)]),
        ("zoned:60/10:40/20", [(0.6, 0.1), (0.4, 0.3)]),
        ("zoned_abs:50/16k:50/48k", [(0.5, 16384 / MIB), (0.5, 65536 / MIB)]),
        # fio's examples/rand-zones.fio: a size left out shares the rest (here the last 80 %)
        ("zoned:50/5:30/15:20/", [(0.5, 0.05), (0.3, 0.2), (0.2, 1.0)]),
        ("zoned:50/10:50", [(0.5, 0.1), (0.5, 1.0)]),
    ],
)
def test_zoned(engine_bin: Path, data: Path, dist: str, zones: list[tuple[float, float]]) -> None:
    fio_ios, fio_doc, eng_ios, eng_doc = both(
        engine_bin,
        data,
        "--rw=randread",
        f"--random_distribution={dist}",
        "--bs=4k",
        "--size=1m",
        "--loops=2",
    )
    for ios in (fio_ios, eng_ios):
        assert len(ios) == 512
        lo = 0.0
        for access, hi in zones:
            inside = sum(lo * MIB <= o and o + n <= hi * MIB for _, o, n in ios)
            assert abs(inside / len(ios) - access) < 0.08, (dist, lo, hi, inside)
            lo = hi
    assert totals(eng_doc) == totals(fio_doc)


def test_number_ios_per_thread(engine_bin: Path, data: Path) -> None:
    _, fio_doc, eng_ios, eng_doc = both(
        engine_bin, data, "--rw=randread", "--bs=4k", "--size=64k", "--number_ios=5", "--numjobs=2"
    )
    assert totals(fio_doc)[0] == totals(eng_doc)[0] == 10
    assert len(eng_ios) == 10


def test_number_ios_ignored_when_time_based(run: Any, data: Path) -> None:
    """fio 3.33 runs a time_based job for its runtime whatever number_ios says; so does the engine."""
    r = run(
        f"--filename={data}",
        "--name=j",
        "--rw=read",
        "--bs=4k",
        "--size=64k",
        "--number_ios=5",
        "--time_based",
        "--runtime=200ms",
    )
    assert r.job["read"]["total_ios"] > 5


def test_echo(run: Any, data: Path) -> None:
    r = run(
        f"--filename={data}",
        "--name=j",
        "--rw=randrw:4",
        "--rw_sequencer=identical",
        "--bsrange=4k-8k,8k-16k",
        "--blockalign=4k",
        "--random_distribution=zoned:60/10:40/90",
        "--random_generator=lfsr",
        "--percentage_random=90,80",
        "--number_ios=8",
        "--size=256k",
    )
    o = r.job["iowatt"]["options"]
    assert o["rw"] == "randrw" and o["rw_skip_bytes"] is None and o["rw_random_every"] == 4
    assert o["rw_sequencer"] == "identical" and o["random_generator"] == "lfsr"
    assert o["bsrange"] == [
        {"ddir": "read", "min_bytes": 4096, "max_bytes": 8192},
        {"ddir": "write", "min_bytes": 8192, "max_bytes": 16384},
    ]
    assert o["blockalign_bytes"] == [4096, 4096] and o["percentage_random"] == [90, 80]
    assert o["random_distribution"] == "zoned" and o["random_distribution_zones"] == [
        {"access_percent": 60, "size_percent": 10},
        {"access_percent": 40, "size_percent": 90},
    ]
    assert o["number_ios"] == 8 and r.job["job options"]["rw"] == "randrw:4"
    assert sum(r.job[d]["total_ios"] for d in ("read", "write")) == 8
    r = run(f"--filename={data}", "--name=j", "--rw=read:-8k", "--size=64k")
    assert r.job["iowatt"]["options"]["rw_skip_bytes"] == -8192


@pytest.mark.parametrize(
    "opt, why",
    [
        ("--rw=randread:0", "a random mode takes ':N'"),
        ("--rw=randread:8k", "a random mode takes ':N'"),
        ("--rw=read:abc", "a sequential mode takes ':SIZE'"),
        ("--rw=reed:8k", "unknown mode"),
        ("--random_distribution=zoned:60/10:30/20", "access percentages add up to 90, not 100"),
        ("--random_distribution=zoned:50/60:50/60", "zone size percentages add up to more than 100"),
        ("--random_distribution=zoned:50/50:50/50,90/10:10/90", "per-direction zone lists"),
        ("--random_distribution=zoned_abs:50/16k:50/64k", "zoned_abs sizes add up to"),
        ("--random_distribution=zoned:50/50::50/50", "access percentages add up to 50"),  # "" ends the list
        ("--random_distribution=zoned_abs:50/16k:50", "each zone is ACCESS%/SIZE"),
        ("--bsrange=8k-4k", "minimum larger than maximum"),
        ("--bsrange=4k", "a range is MIN-MAX"),
        ("--bsrange=4k-8k,4k-8k,4k-8k", "third (trim) value"),
        ("--blockalign=0", "must be 1..1 GiB"),
        ("--percentage_random=101", "must be 0..100"),
        ("--random_generator=mt", "must be tausworthe, lfsr or tausworthe64"),
        ("--rw_sequencer=random", "must be sequential or identical"),
    ],
)
def test_refusals(engine_bin: Path, data: Path, opt: str, why: str) -> None:
    r = run_engine(engine_bin, f"--filename={data}", "--name=j", "--size=64k", opt, check=False)
    name = opt[2:].split("=")[0]
    assert r.rc == 2 and r.stdout == "", r.stderr
    assert r.stderr.startswith(f"iowatt-engine: {name}: ") and why in r.stderr, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1


def test_bs_unaligned_refused_with_direct(engine_bin: Path, data: Path) -> None:
    r = run_engine(
        engine_bin,
        f"--filename={data}",
        "--name=j",
        "--bsrange=1k-4k",
        "--bs_unaligned",
        "--direct=1",
        check=False,
    )
    assert r.rc == 2 and r.stderr.startswith("iowatt-engine: bs_unaligned: ")


def test_fio_refuses_what_we_refuse_for_zones(data: Path) -> None:
    """The zone checks are fio 3.33's own: it refuses the same lists."""
    for dist in (
        "zoned:60/10:30/20",
        "zoned:50/60:50/60",
        "zoned:50/50:50/50,90/10:10/90",
        "zoned:50/50::50/50",
    ):
        p = subprocess.run(
            [
                FIO or "fio",
                f"--filename={data}",
                "--name=j",
                "--rw=randread",
                "--size=64k",
                f"--random_distribution={dist}",
                "--output-format=json",
                FIO_CLOCK,  # last: fio refuses the line before it calibrates its clock (conftest)
            ],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert "failed parsing random_distribution" in p.stdout + p.stderr, dist


def test_verify_replays_patterns(run: Any, data: Path) -> None:
    """verify's read-back replays the pattern's own generator (its state is part of the cursor);
    backwards holes read back each block once instead (test_verify.py, beside fio)"""
    for opts in (
        ("--rw=write:112k", "--bs=16k", "--size=1m"),
        ("--rw=randwrite", "--bsrange=4k-16k", "--size=256k"),
        ("--rw=randwrite", "--random_distribution=zoned:80/20:20/80", "--size=256k"),
    ):
        r = run(f"--filename={data}", "--name=j", "--verify=crc32c", *opts)
        v = r.job["iowatt"]["verify"]
        assert r.rc == 0 and v["failed_intervals"] == 0 and v["blocks_verified"] == v["blocks_written"] > 0, (
            opts
        )
        assert r.job["read"]["total_ios"] == r.job["write"]["total_ios"]


def test_verify_reads_each_pass_of_a_hole_pattern_back_as_fio(
    engine_bin: Path, data: Path, scratch: Path
) -> None:
    """fio's job loop with verify and rw=write:N (examples/cross-stripe-verify.fio): a pass ends at
    the file's end and is read back, and another follows while the job's bytes, the read-backs'
    included, are short of io_size (else size) by a block. From 120k in a 1 MiB file a pass is 7
    writes of 16k: io_size=1m (with verify_backlog=1) gives 5 passes, 35 writes and 35 reads, and
    no io_size (loops=2) 4 passes, 28 and 28, in both tools, every block verified."""
    docs = []
    for side in ("fio", "ours"):
        a, b = scratch / f"{side}-a", scratch / f"{side}-b"
        shutil.copyfile(data, a)
        shutil.copyfile(data, b)
        args = ["--bs=16k", "--rw=write:112k", "--offset=120k", "--verify=crc32c"]
        args += ["--name=a", f"--filename={a}", "--io_size=1m", "--verify_backlog=1"]
        args += ["--name=b", f"--filename={b}", "--loops=2"]
        if side == "fio":
            fio = [FIO or "fio", FIO_CLOCK, "--output-format=json", *args]
            # in the scratch directory: fio leaves local-a-0-verify.state there, not in the checkout
            p = subprocess.run(fio, capture_output=True, text=True, timeout=60, cwd=scratch)
            assert p.returncode == 0, p.stderr
            docs.append(json.loads(p.stdout[p.stdout.index("{") :]))
        else:
            r = run_engine(engine_bin, *args)
            docs.append(r.doc)
            assert [j["iowatt"]["verify"]["blocks_verified"] for j in r.doc["jobs"]] == [35, 28]
    for doc in docs:
        assert [(j["write"]["total_ios"], j["read"]["total_ios"], j["error"]) for j in doc["jobs"]] == [
            (35, 35, 0),
            (28, 28, 0),
        ]


@pytest.mark.parametrize("opt", ["--blockalign=512", "--rw=write:-2k", "--rw=write:3k"])
def test_verify_refuses_overlapping_patterns(engine_bin: Path, data: Path, opt: str) -> None:
    rw = [] if opt.startswith("--rw") else ["--rw=randwrite"]
    r = run_engine(
        engine_bin, f"--filename={data}", "--name=j", "--verify=crc32c", "--size=64k", *rw, opt, check=False
    )
    assert r.rc == 2 and r.stderr.startswith("iowatt-engine: verify: ") and "overlap" in r.stderr, r.stderr


def test_patterns_refused_with_several_files(engine_bin: Path, data: Path) -> None:
    other = data.with_name("other.dat")
    other.write_bytes(os.urandom(MIB))
    for opt, name in (
        ("--rw=read:8k", "rw"),
        ("--bsrange=4k-8k", "bsrange"),
        ("--random_distribution=zoned:50/50:50/50", "random_distribution"),
    ):
        r = run_engine(
            engine_bin,
            f"--filename={data}:{other}",
            "--name=j",
            "--size=64k",
            "--rw=randread",
            opt,
            check=False,
        )
        assert r.rc == 2 and r.stderr.startswith(
            f"iowatt-engine: {name}: not implemented for jobs of several"
        ), r.stderr


# ---- trims (rw=trim, randtrim, trimwrite, randtrimwrite): BLKDISCARD on a loop device ----

CANARY = b"\xa5" * 4096
LOOP_MIB = 4


@pytest.fixture
def loopdev(scratch: Path) -> Iterator[tuple[str, Path]]:
    """A 4 MiB loop device over a file in /dev/shm (discard punches holes there: reads see zeros),
    filled with a canary pattern; removed after the test."""
    if os.geteuid() != 0 or not shutil.which("losetup"):
        pytest.skip("loop devices need root and losetup")
    backing = scratch / "loop.img"
    backing.write_bytes(CANARY * (LOOP_MIB * 256))
    p = subprocess.run(["losetup", "-f", "--show", str(backing)], capture_output=True, text=True, timeout=30)
    if p.returncode != 0:
        pytest.skip(f"losetup unavailable: {p.stderr.strip()}")
    dev = p.stdout.strip()
    try:
        yield dev, backing
    finally:
        subprocess.run(["losetup", "-d", dev], capture_output=True, timeout=30)


def discards(cmd: list[str], dev: str, out: Path) -> tuple[list[tuple[str, int, int]], dict[str, Any]]:
    """(op, offset, length) of every BLKDISCARD and pwrite64 on dev, and the JSON document. Run in
    out's directory: fio leaves its verify state file (local-j-0-verify.state) in the working one."""
    p, lines = straced(
        cmd, out.with_suffix(".strace"), "-qq", "-s", "0", "-P", dev, "-e", "trace=ioctl,pwrite64",
        timeout=120, cwd=out.parent,
    )  # fmt: skip
    assert p.returncode == 0, (cmd, p.stderr[-2000:])
    ios = []
    for call in lines:
        if call.startswith("ioctl(") and "BLKDISCARD, [" in call:
            a, b = call[call.index("[") + 1 : call.index("]")].split(", ")
            ios.append(("T", int(a), int(b)))
        elif call.startswith("pwrite64("):
            args = call[call.index("(") + 1 : call.rindex(")")].split(", ")
            ios.append(("W", int(args[-1]), int(args[-2])))
    return ios, json.loads(p.stdout[p.stdout.index("{") :])


TRIMS = [
    ("--rw=trim", "--bs=4k", "--size=64k"),
    ("--rw=trim:8k", "--bs=4k", "--size=64k"),
    ("--rw=trim:-8k", "--bs=4k", "--size=64k", "--offset=1m"),
    ("--rw=trim", "--bs=4k", "--size=64k", "--number_ios=6"),
    ("--rw=trimwrite", "--bs=4k", "--size=64k"),
    ("--rw=trimwrite", "--bs=4k", "--size=64k", "--io_size=32k"),
    ("--rw=trimwrite", "--bs=4k,8k", "--size=64k"),  # trims take the write size, as fio
    ("--rw=trimwrite", "--bs=4k", "--size=64k", "--number_ios=6"),
    # fio doubles number_ios as each pass starts: 18, 18 and 36 pairs (72), each pass from the start
    ("--rw=trimwrite", "--bs=4k", "--size=1m", "--number_ios=6", "--loops=3"),
    # the asynchronous engines trim as fio's (FIO_ASYNCIO_SYNC_TRIM): the staged I/Os submitted,
    # then one synchronous BLKDISCARD (their writes are io_submit/io_uring_enter: not traced)
    ("--rw=trimwrite", "--bs=4k", "--size=64k", "--ioengine=libaio", "--iodepth=4"),
    ("--rw=trim:8k", "--bs=4k", "--size=64k", "--ioengine=io_uring", "--iodepth=4"),
]


@pytest.mark.parametrize("opts", TRIMS, ids=[" ".join(o) for o in TRIMS])
def test_trims_same_as_fio(engine_bin: Path, loopdev: tuple[str, Path], opts: tuple[str, ...]) -> None:
    dev, _ = loopdev
    common = [f"--filename={dev}", "--ioengine=psync", "--name=j", *opts]
    fio_ios, fio_doc = discards(
        [FIO or "fio", FIO_CLOCK, "--thread", "--output-format=json", *common], dev, dev_out(loopdev, "f")
    )
    eng_ios, eng_doc = discards([str(engine_bin), "--destructive=1", *common], dev, dev_out(loopdev, "e"))
    assert fio_ios and eng_ios == fio_ios
    for key in ("total_ios", "io_bytes"):
        for d in ("read", "write", "trim"):
            assert eng_doc["jobs"][0][d][key] == fio_doc["jobs"][0][d][key], (d, key)


def dev_out(loopdev: tuple[str, Path], name: str) -> Path:
    return loopdev[1].with_name(name + ".json")


@pytest.mark.parametrize("rw", ["randtrim", "randtrimwrite"])
def test_random_trims_each_block_once(engine_bin: Path, loopdev: tuple[str, Path], rw: str) -> None:
    dev, _ = loopdev
    common = [f"--filename={dev}", "--ioengine=psync", "--name=j", f"--rw={rw}", "--bs=4k", "--size=256k"]
    fio_ios, fio_doc = discards(
        [FIO or "fio", FIO_CLOCK, "--thread", "--output-format=json", *common], dev, dev_out(loopdev, "f")
    )
    eng_ios, eng_doc = discards([str(engine_bin), "--destructive=1", *common], dev, dev_out(loopdev, "e"))
    for ios in (fio_ios, eng_ios):
        trims = [o for op, o, _ in ios if op == "T"]
        assert sorted(trims) == [i * 4096 for i in range(64)] and trims != sorted(trims)
        if rw == "randtrimwrite":  # each trim followed by the write of the same block
            assert [(op, o) for op, o, _ in ios] == [x for o in trims for x in (("T", o), ("W", o))]
    assert eng_doc["jobs"][0]["trim"]["total_ios"] == fio_doc["jobs"][0]["trim"]["total_ios"] == 64
    t = eng_doc["jobs"][0]["trim"]
    assert t["io_bytes"] == 256 * 1024 and t["clat_ns"]["N"] == 64 and t["iops"] > 0


def test_randtrimwrite_mixed_sizes_draw_as_fio(engine_bin: Path, loopdev: tuple[str, Path]) -> None:
    """bs=4k,8k: the trims take the writes' 8k and draw in 8k units from the 4k random map, so
    the pass ends where fio's does (a drawn block whose next free bit lies past the region): how
    many pairs is random in both (1 MiB: mean ~93 of 128 in 30 runs of each), each an 8k-aligned
    8k trim of a block not trimmed before, then its write. The engine drew 4k-aligned offsets and
    cut trims to 4k until 2026-12-07."""
    dev, _ = loopdev
    common = [f"--filename={dev}", "--ioengine=psync", "--name=j", "--rw=randtrimwrite", "--bs=4k,8k",
              "--size=256k"]  # fmt: skip
    fio_ios, _ = discards(
        [FIO or "fio", FIO_CLOCK, "--thread", "--output-format=json", *common], dev, dev_out(loopdev, "f")
    )
    eng_ios, eng_doc = discards([str(engine_bin), "--destructive=1", *common], dev, dev_out(loopdev, "e"))
    for ios in (fio_ios, eng_ios):
        trims = [(o, n) for op, o, n in ios if op == "T"]
        assert trims and all(o % 8192 == 0 and n == 8192 for o, n in trims)
        assert len({o for o, _ in trims}) == len(trims) and max(o for o, _ in trims) < 256 * 1024
        assert ios == [x for o, n in trims for x in (("T", o, n), ("W", o, n))]
    assert eng_doc["jobs"][0]["trim"]["total_ios"] == len(eng_ios) // 2


@pytest.mark.parametrize("rw", ["trimwrite", "randtrimwrite"])
def test_trimwrite_io_size_passes_as_fio(engine_bin: Path, loopdev: tuple[str, Path], rw: str) -> None:
    """io_size larger than size: fio's passes each trim and write the region once, and another
    follows while the trims' and writes' bytes together are short of io_size (keep_running): 64k
    with io_size=256k is two passes, 32 pairs, in both (the engine did 64 until 2026-12-07)."""
    dev, _ = loopdev
    common = [f"--filename={dev}", "--ioengine=psync", "--name=j", f"--rw={rw}", "--bs=4k", "--size=64k",
              "--io_size=256k"]  # fmt: skip
    fio_ios, fio_doc = discards(
        [FIO or "fio", FIO_CLOCK, "--thread", "--output-format=json", *common], dev, dev_out(loopdev, "f")
    )
    eng_ios, eng_doc = discards([str(engine_bin), "--destructive=1", *common], dev, dev_out(loopdev, "e"))
    for ios, doc in ((fio_ios, fio_doc), (eng_ios, eng_doc)):
        assert doc["jobs"][0]["trim"]["total_ios"] == doc["jobs"][0]["write"]["total_ios"] == 32
        trims = [o for op, o, _ in ios if op == "T"]
        for half in (trims[:16], trims[16:]):  # each pass trims every block once
            assert sorted(half) == [i * 4096 for i in range(16)]
    if rw == "trimwrite":
        assert eng_ios == fio_ios


@pytest.mark.parametrize("rw", ["trim", "randtrim", "trimwrite", "randtrimwrite", "trim:8k"])
def test_trim_canary(engine_bin: Path, loopdev: tuple[str, Path], rw: str) -> None:
    """Every trim stays inside [offset, offset+size): the canary around the region survives; inside
    it the trimmed blocks read back as zeros (discard punched the backing file) or, for trimwrite,
    as the data written after them."""
    dev, backing = loopdev
    off, size = 1 << 20, 1 << 20
    r = run_engine(
        engine_bin,
        f"--filename={dev}",
        "--destructive=1",
        "--name=j",
        f"--rw={rw}",
        "--bs=16k",
        f"--offset={off}",
        f"--size={size}",
        "--direct=1",
    )
    assert r.job["trim"]["total_ios"] > 0 and r.job["error"] == 0
    data = backing.read_bytes()
    assert data[:off] == CANARY * (off // 4096)
    assert data[off + size :] == CANARY * ((len(data) - off - size) // 4096)
    region = data[off : off + size]
    if rw == "trim:8k":  # 16k trimmed, 8k skipped: exactly those ranges are zeros
        want = bytearray(CANARY * (size // 4096))
        for start in range(0, size - 16384 + 1, 24576):
            want[start : start + 16384] = bytes(16384)
        assert region == bytes(want)
    elif "write" in rw:
        assert CANARY not in region and bytes(4096) not in region
    else:
        assert region == bytes(size)


def test_trims_of_a_file_fail_with_enotty_as_fio(engine_bin: Path, data: Path) -> None:
    """fio 3.33 sends BLKDISCARD to a regular file too (examples/enospc-pressure.fio's punch_hole job,
    libaio): ENOTTY, the job's error 25 after one trim (counted, no bytes), exit 1, in both tools;
    a trim error is a write error to continue_on_error and ignore_error, so listing ENOTTY there
    lets both go on over each of the 16 trims (exit 0, the job's error still the first one, as fio's).
    The file is left as it was."""
    before = data.read_bytes()
    going_on = ("--continue_on_error=write", "--ignore_error=,ENOTTY")
    for extra, rc, ios in (((), 1, 1), (going_on, 0, 16)):
        args = [f"--filename={data}", "--name=j", "--rw=randtrim", "--bs=4k", "--size=64k"]
        args += ["--ioengine=libaio", *extra]
        fio = [FIO or "fio", FIO_CLOCK, "--output-format=json", *args]
        f = subprocess.run(fio, capture_output=True, text=True, timeout=60)
        r = run_engine(engine_bin, *args, check=False)
        assert (r.rc, f.returncode) == (rc, rc), (r.stderr, f.stderr)
        for doc in (r.doc, json.loads(f.stdout[f.stdout.index("{") :])):
            j = doc["jobs"][0]
            # fio's job error is the first error, also when it was ignored (exit 0)
            assert (j["trim"]["total_ios"], j["trim"]["io_bytes"], j["error"]) == (ios, 0, 25)
    assert data.read_bytes() == before


def test_number_ios_skips_failed_trims_as_fio(engine_bin: Path, scratch: Path) -> None:
    """fio's number_ios counts the I/Os that did not fail (io_blocks): trimwrite on a file with
    ENOTTY ignored counts its writes only, 12 pairs for number_ios=6, and with loops=2 two whole
    passes of 16 (trimwrite's count per pass): in both tools (the engine did 6 and 24 before); in a
    job of several files the same rule over its files."""
    for loops, pairs in ((1, 12), (2, 32)):
        args = ["--name=j", "--rw=trimwrite", "--bs=4k", "--size=64k", "--number_ios=6", f"--loops={loops}",
                "--ignore_error=,ENOTTY"]  # fmt: skip
        fio = [FIO or "fio", FIO_CLOCK, "--output-format=json", f"--filename={scratch / 'f.dat'}", *args]
        f = subprocess.run(fio, capture_output=True, text=True, timeout=60)
        r = run_engine(engine_bin, f"--filename={scratch / 'e.dat'}", *args, check=False)
        for doc in (r.doc, json.loads(f.stdout[f.stdout.index("{") :])):
            j = doc["jobs"][0]
            assert (j["trim"]["total_ios"], j["write"]["total_ios"], j["error"]) == (pairs, pairs, 25), loops
    # two files of 64k, the same rule over the job's files, every pass from each file's start: loops
    # 2 is 24 pairs, then 24; loops 3 reaches the files' ends, 3 x 32 (the engine kept 24 and 36)
    for loops, pairs in ((2, 48), (3, 96)):
        args = ["--name=j", "--rw=trimwrite", "--bs=4k", "--size=128k", "--nrfiles=2", "--number_ios=6",
                f"--loops={loops}", "--ignore_error=,ENOTTY"]  # fmt: skip
        for d in ("f", "e"):
            (scratch / d).mkdir(exist_ok=True)
        fio = [FIO or "fio", FIO_CLOCK, "--output-format=json", f"--directory={scratch / 'f'}", *args]
        f = subprocess.run(fio, capture_output=True, text=True, timeout=60)
        r = run_engine(engine_bin, f"--directory={scratch / 'e'}", *args, check=False)
        for doc in (r.doc, json.loads(f.stdout[f.stdout.index("{") :])):
            j = doc["jobs"][0]
            assert (j["trim"]["total_ios"], j["write"]["total_ios"], j["error"]) == (pairs, pairs, 25), loops


def test_trim_refusals(engine_bin: Path, data: Path, loopdev: tuple[str, Path]) -> None:
    dev, _ = loopdev
    r = run_engine(engine_bin, f"--filename={dev}", "--name=j", "--rw=randtrim", "--size=64k", check=False)
    assert r.rc == 2 and r.stderr.startswith("iowatt-engine: destructive: "), r.stderr
    r = run_engine(
        engine_bin, f"--filename={dev}", "--name=j", "--rw=trim", "--readonly", "--destructive=1", check=False
    )
    assert r.rc == 2 and r.stderr.startswith("iowatt-engine: readonly: "), r.stderr
    r = run_engine(
        engine_bin,
        f"--filename={dev}",
        "--name=j",
        "--rw=trim",
        "--verify=crc32c",
        "--destructive=1",
        check=False,
    )
    assert r.rc == 2 and r.stderr.startswith("iowatt-engine: verify: a trim job writes nothing"), r.stderr
    r = run_engine(
        engine_bin,
        f"--filename={dev}",
        "--name=j",
        "--rw=trimwrite",
        "--ioengine=libaio",
        "--io_submit_mode=offload",
        "--destructive=1",
        check=False,
    )
    want = "iowatt-engine: io_submit_mode: offload with libaio in a job that trims"
    assert r.rc == 2 and r.stderr.startswith(want), r.stderr


# ---- patterns and trims with the other families: job files, group reporting, logs, output ----


def test_job_file_same_offsets_as_fio(engine_bin: Path, data: Path, scratch: Path) -> None:
    """A job file with patterns runs as fio runs it (both under strace), and --parse-only,
    --untrusted and --showjob keep the pattern's text."""
    jf = scratch / "patterns.fio"
    jf.write_text(
        f"[global]\nfilename={data}\nioengine=psync\nbs=4k\n"
        "[back]\nrw=read:-8k\nsize=64k\n"
        "[holes]\nstonewall\nrw=write:12k\nsize=128k\nnumber_ios=6\nloops=2\n"
    )
    fio_ios, fio_doc = traced(
        [FIO or "fio", FIO_CLOCK, "--thread", "--output-format=json", str(jf)], data, scratch / "f.json"
    )
    eng_ios, eng_doc = traced([str(engine_bin), str(jf)], data, scratch / "e.json")
    assert fio_ios and eng_ios == fio_ios
    assert totals(eng_doc) == totals(fio_doc) == (16, 12, 65536, 49152)
    for flags in (["--parse-only"], ["--untrusted", "--parse-only"]):
        r = run_engine(engine_bin, *flags, str(jf))
        jobs = {j["name"]: j["options"] for j in r.doc["jobs"]}
        assert jobs["back"]["rw"] == "read:-8k" and jobs["holes"]["number_ios"] == "6", r.stdout
    ini = run_engine(engine_bin, "--showjob", str(jf)).stdout
    assert "rw=read:-8k\n" in ini and "rw=write:12k\n" in ini
    again = scratch / "again.fio"
    again.write_text(ini)
    a = [j["options"] for j in run_engine(engine_bin, "--parse-only", str(again)).doc["jobs"]]
    assert a == [j["options"] for j in r.doc["jobs"]]


def test_job_file_patterns_refused_with_several_files(engine_bin: Path, scratch: Path) -> None:
    jf = scratch / "mf.fio"
    jf.write_text(f"[mf]\ndirectory={scratch}\nnrfiles=2\nsize=64k\nrw=read:8k\n")
    r = run_engine(engine_bin, str(jf), check=False)
    assert r.rc == 2 and r.stdout == "" and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert r.stderr.startswith(f"iowatt-engine: {jf}:1: rw: not implemented for jobs of several files"), (
        r.stderr
    )


def test_group_reporting_with_patterns(engine_bin: Path, data: Path) -> None:
    """numjobs clones with number_ios and a hole pattern: one entry with the clones' sums, as fio."""
    opts = ("--rw=read:4k", "--bs=4k", "--size=256k", "--number_ios=5", "--numjobs=2", "--group_reporting")
    fio_ios, fio_doc, eng_ios, eng_doc = both(engine_bin, data, *opts)
    assert len(fio_doc["jobs"]) == len(eng_doc["jobs"]) == 1
    assert totals(eng_doc) == totals(fio_doc) == (10, 0, 40960, 0)
    assert sorted(eng_ios) == sorted(fio_ios)  # each clone: 0, 8k, 16k, 24k, 32k
    assert eng_doc["jobs"][0]["iowatt"]["members"] == 2


def test_lat_log_offsets_follow_the_pattern(engine_bin: Path, data: Path, scratch: Path) -> None:
    """write_lat_log with log_offset: the logged offsets are the pattern's, line for line fio's."""
    common = [
        f"--filename={data}",
        "--ioengine=psync",
        "--name=j",
        "--rw=read:-8k",
        "--bs=4k",
        "--size=64k",
        "--log_offset=1",
    ]
    subprocess.run(
        [FIO or "fio", FIO_CLOCK, "--thread", *common, f"--write_lat_log={scratch}/fio"],
        capture_output=True,
        check=True,
        timeout=60,
    )
    run_engine(engine_bin, *common, f"--write_lat_log={scratch}/eng")
    for kind in ("clat", "lat"):
        fio_rows = [line.split(", ")[2:] for line in (scratch / f"fio_{kind}.1.log").read_text().splitlines()]
        eng_rows = [line.split(", ")[2:] for line in (scratch / f"eng_{kind}.1.log").read_text().splitlines()]
        assert len(eng_rows) == 16 and eng_rows == fio_rows, kind


@pytest.mark.early  # bound by the clock: rate-paced jobs, ~4 s of waiting (docs/testing.md, Session 18)
def test_rates_steer_the_mix_of_a_pattern(engine_bin: Path, data: Path) -> None:
    """rate_iops=R,W on a mixed job with a pattern: the direction behind its rate goes next (fio's
    rate_ddir), so reads and writes come out near 4:1 in both tools. Rates low enough for a loaded
    machine under strace to keep (400,100 was not kept at load 14); without rate_ddir the writes'
    schedule holds the reads back too and the ratio is near 1."""
    opts = ("--rw=randrw:2", "--bs=4k", "--size=1m", "--rate_iops=40,10", "--time_based", "--runtime=2")
    _, fio_doc, _, eng_doc = both(engine_bin, data, *opts)
    for name, doc in (("fio", fio_doc), ("iowatt", eng_doc)):
        r, w, _, _ = totals(doc)
        assert w > 0 and 3.0 < r / w < 5.5, (name, r, w)


def test_trims_group_reporting_and_outputs(engine_bin: Path, loopdev: tuple[str, Path]) -> None:
    """Trims with numjobs and group_reporting: one entry with the clones' trims; the terse line's
    trim fields and the normal text's trim line as fio's."""
    dev, _ = loopdev
    common = [
        f"--filename={dev}",
        "--ioengine=psync",
        "--name=j",
        "--rw=randtrim",
        "--bs=4k",
        "--size=256k",
        "--numjobs=2",
        "--group_reporting",
    ]
    _, fio_doc = discards(
        [FIO or "fio", FIO_CLOCK, "--thread", "--output-format=json", *common], dev, dev_out(loopdev, "f")
    )
    _, eng_doc = discards([str(engine_bin), "--destructive=1", *common], dev, dev_out(loopdev, "e"))
    assert len(eng_doc["jobs"]) == len(fio_doc["jobs"]) == 1
    for key in ("total_ios", "io_bytes"):
        want = {"total_ios": 128, "io_bytes": 524288}[key]
        assert eng_doc["jobs"][0]["trim"][key] == fio_doc["jobs"][0]["trim"][key] == want
    outs = {}
    for name, cmd in (
        ("fio", [FIO or "fio", FIO_CLOCK, "--thread"]),
        ("eng", [str(engine_bin), "--destructive=1"]),
    ):
        terse = (
            subprocess.run(
                [*cmd, *common, "--output-format=terse", "--terse-version=4"],
                capture_output=True,
                text=True,
                check=True,
                timeout=60,
            )
            .stdout.splitlines()[0]
            .split(";")
        )
        normal = subprocess.run(
            [*cmd, *common, "--output-format=normal"], capture_output=True, text=True, check=True, timeout=60
        ).stdout
        outs[name] = (terse, normal)
    (ft, fn), (et, en) = outs["fio"], outs["eng"]
    assert len(et) == len(ft)
    # terse v4: field 88 is the trim KiB, 92.. its slat; the read and write blocks are all zeros
    assert et[87] == ft[87] == "512" and et[5:10] == ft[5:10] == ["0"] * 5
    for text in (fn, en):
        assert "  trim: IOPS=" in text and "(512KiB/" in text and "   TRIM: bw=" in text
        assert "issued rwts: total=0,0,128,0" in text


@pytest.mark.parametrize(
    "opt",
    [
        "--rate=1m",
        "--rate_iops=100",
        "--rate_iops=,100",
        "--max_latency=1s",
        "--latency_target=10ms",
        "--steadystate=iops:5%",
    ],
)
def test_trims_refuse_what_counts_per_direction(
    engine_bin: Path, loopdev: tuple[str, Path], opt: str
) -> None:
    """fio applies these to trims too (a rate's single value paces trims); the engine's pacing
    and steady state know reads and writes only, so a trim job refuses them."""
    dev, _ = loopdev
    extra = ["--ss_dur=2s"] if opt.startswith("--steadystate") else []
    r = run_engine(
        engine_bin,
        f"--filename={dev}",
        "--destructive=1",
        "--name=j",
        "--rw=trimwrite",
        "--size=64k",
        opt,
        *extra,
        check=False,
    )
    name = opt[2:].split("=")[0]
    assert r.rc == 2 and r.stdout == "" and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert r.stderr.startswith(f"iowatt-engine: {name}: not implemented for trims (rw=trimwrite)"), r.stderr


def test_job_file_without_filename_uses_fios_one_file(engine_bin: Path, scratch: Path) -> None:
    """No filename, one clone, one file (fio's examples/rand-zones.fio): fio's generated name under
    directory ($jobname.0.0), the same offsets as fio for a backwards read, the zones' shares for
    zoned:50/5:30/15:20/ (a size left out shares the rest)."""
    target = scratch / "back.0.0"
    target.write_bytes(os.urandom(MIB))
    jf = scratch / "nofile.fio"
    jf.write_text(f"[back]\ndirectory={scratch}\nioengine=psync\nbs=4k\nsize=64k\nrw=read:-8k\n")
    fio_ios, fio_doc = traced(
        [FIO or "fio", FIO_CLOCK, "--thread", "--output-format=json", str(jf)], target, scratch / "f.json"
    )
    eng_ios, eng_doc = traced([str(engine_bin), str(jf)], target, scratch / "e.json")
    assert fio_ios and eng_ios == fio_ios and totals(eng_doc) == totals(fio_doc) == (16, 0, 65536, 0)
    assert eng_doc["jobs"][0]["iowatt"]["options"]["filename"] == str(target)
    zones = scratch / "zones.0.0"
    zones.write_bytes(os.urandom(MIB))
    jf.write_text(
        f"[zones]\ndirectory={scratch}\nioengine=psync\nbs=4k\nsize=1m\nrw=randread\nnorandommap\n"
        "random_distribution=zoned:50/5:30/15:20/\n"
    )
    fio_ios, fio_doc = traced(
        [FIO or "fio", FIO_CLOCK, "--thread", "--output-format=json", str(jf)], zones, scratch / "f.json"
    )
    eng_ios, eng_doc = traced([str(engine_bin), str(jf)], zones, scratch / "e.json")
    assert totals(eng_doc) == totals(fio_doc) == (256, 0, MIB, 0)
    for ios in (fio_ios, eng_ios):
        lo = 0.0
        for access, hi in ((0.5, 0.05), (0.3, 0.2), (0.2, 1.0)):
            inside = sum(lo * MIB <= o and o + n <= hi * MIB for _, o, n in ios)
            assert abs(inside / len(ios) - access) < 0.1, (lo, hi, inside)
            lo = hi
    assert sorted(p.name for p in scratch.glob("*.0.0")) == ["back.0.0", "zones.0.0"]  # no other file made


def test_patterns_refused_for_clones_with_their_own_files(engine_bin: Path, scratch: Path) -> None:
    opts = ("--name=j", "--rw=read:8k", "--size=64k", "--numjobs=2")
    r = run_engine(engine_bin, f"--directory={scratch}", *opts, check=False)
    assert r.rc == 2 and r.stderr.startswith(
        "iowatt-engine: rw: not implemented for jobs of several files"
    ), r.stderr
    assert list(scratch.iterdir()) == []


@pytest.mark.parametrize("rw", ["trimwrite", "trim:8k"])
def test_trims_logged_as_fio(engine_bin: Path, loopdev: tuple[str, Path], rw: str) -> None:
    """write_lat_log and write_iops_log with log_offset list the trims as fio does: direction 2,
    the trim's size and offset, line for line fio's (each trim of trimwrite before its write)."""
    dev, backing = loopdev
    common = [f"--filename={dev}", "--ioengine=psync", "--name=j", f"--rw={rw}", "--bs=4k", "--size=64k",
              "--log_offset=1"]  # fmt: skip
    logs = backing.parent
    fio_logs = [f"--write_lat_log={logs}/fio", f"--write_iops_log={logs}/fio"]
    subprocess.run(
        [FIO or "fio", FIO_CLOCK, "--thread", *common, *fio_logs], capture_output=True, check=True, timeout=60
    )
    run_engine(
        engine_bin, "--destructive=1", *common, f"--write_lat_log={logs}/eng", f"--write_iops_log={logs}/eng"
    )
    for kind in ("clat", "lat", "iops"):
        fio_rows = [line.split(", ")[2:] for line in (logs / f"fio_{kind}.1.log").read_text().splitlines()]
        eng_rows = [line.split(", ")[2:] for line in (logs / f"eng_{kind}.1.log").read_text().splitlines()]
        assert eng_rows == fio_rows, kind
        assert sum(r[0] == "2" for r in eng_rows) == (16 if rw == "trimwrite" else 6), kind


@pytest.mark.parametrize("rw", ["trimwrite", "randtrimwrite"])
def test_trimwrite_verifies_its_writes_as_fio(engine_bin: Path, loopdev: tuple[str, Path], rw: str) -> None:
    """verify after trimwrite reads back every block written after its trim: the same read, write
    and trim counts as fio, and no verify failure."""
    dev, _ = loopdev
    common = [f"--filename={dev}", "--ioengine=psync", "--name=j", f"--rw={rw}", "--bs=4k", "--size=256k",
              "--verify=crc32c"]  # fmt: skip
    _, fio_doc = discards(
        [FIO or "fio", FIO_CLOCK, "--thread", "--output-format=json", *common], dev, dev_out(loopdev, "f")
    )
    _, eng_doc = discards([str(engine_bin), "--destructive=1", *common], dev, dev_out(loopdev, "e"))
    for d in ("read", "write", "trim"):
        assert eng_doc["jobs"][0][d]["total_ios"] == fio_doc["jobs"][0][d]["total_ios"] == 64, d
    v = eng_doc["jobs"][0]["iowatt"]["verify"]
    assert v["failed_intervals"] == 0 and v["blocks_verified"] == 64 and eng_doc["jobs"][0]["error"] == 0


def test_trimwrite_number_ios_loops_verify_as_fio(engine_bin: Path, loopdev: tuple[str, Path]) -> None:
    """With verify, fio counts each pass's read-back among number_ios's I/Os: 18 pairs and 18 reads,
    9 and 9, then 31 pairs and one trim (the count reached between a trim and its write) and 31 reads:
    58 reads, 58 writes, 59 trims in both, each write read back once."""
    dev, _ = loopdev
    common = [f"--filename={dev}", "--ioengine=psync", "--name=j", "--rw=trimwrite", "--bs=4k", "--size=1m",
              "--number_ios=6", "--loops=3", "--verify=crc32c"]  # fmt: skip
    _, fio_doc = discards(
        [FIO or "fio", FIO_CLOCK, "--thread", "--output-format=json", *common], dev, dev_out(loopdev, "f")
    )
    _, eng_doc = discards([str(engine_bin), "--destructive=1", *common], dev, dev_out(loopdev, "e"))
    want = {"read": 58, "write": 58, "trim": 59}
    for d, n in want.items():
        assert eng_doc["jobs"][0][d]["total_ios"] == fio_doc["jobs"][0][d]["total_ios"] == n, d
    v = eng_doc["jobs"][0]["iowatt"]["verify"]
    assert v["failed_intervals"] == 0 and v["blocks_verified"] == 58 and eng_doc["jobs"][0]["error"] == 0


def test_verify_reads_count_as_fio(engine_bin: Path, loopdev: tuple[str, Path]) -> None:
    """fio counts every I/O of the job towards number_ios, verify_backlog's reads too
    (exceeds_number_ios: io_blocks), and the read-back's bytes towards io_size (keep_running:
    io_bytes): the same read, write and trim counts in both, each write read back once. The engine
    counted 10 writes, 72 pairs and refused trimwrite's io_size with verify until 2026-12-07."""
    dev, backing = loopdev
    cases = {
        ("--rw=write", "--size=256k", "--number_ios=10", "--verify_backlog=4"): (6, 6, 0),
        ("--rw=trimwrite", "--size=1m", "--number_ios=6", "--loops=3", "--verify_backlog=4"): (48, 48, 48),
        ("--rw=trimwrite", "--size=64k", "--io_size=400k"): (48, 48, 48),
        ("--rw=randtrimwrite", "--size=64k", "--io_size=256k"): (32, 32, 32),
    }
    for opts, want in cases.items():
        common = [f"--filename={dev}", "--ioengine=psync", "--name=j", "--bs=4k", "--verify=crc32c", *opts]
        f = subprocess.run(
            [FIO or "fio", FIO_CLOCK, "--thread", "--output-format=json", *common],
            capture_output=True, text=True, timeout=60, cwd=backing.parent,
        )  # fmt: skip
        r = run_engine(engine_bin, "--destructive=1", *common)
        for doc in (json.loads(f.stdout[f.stdout.index("{") :]), r.doc):
            j = doc["jobs"][0]
            assert (j["read"]["total_ios"], j["write"]["total_ios"], j["trim"]["total_ios"], j["error"]) == (
                *want,
                0,
            ), opts
        v = r.doc["jobs"][0]["iowatt"]["verify"]
        assert (v["blocks_verified"], v["failed_intervals"]) == (want[0], 0), opts


def test_buffered_trimwrite_loops_as_fio(engine_bin: Path, loopdev: tuple[str, Path]) -> None:
    """A buffered trimwrite's second loop trims blocks whose written pages are still dirty in the
    device's cache: the kernel drops them for fio (no claim: it claims the device for the trim) and
    for the engine (the trim goes through its exclusive claim), where a trim through another
    descriptor failed with EBUSY. Same trims and writes, same verify reads, same bytes on the device."""
    dev, backing = loopdev
    common = [f"--filename={dev}", "--ioengine=psync", "--name=j", "--rw=trimwrite", "--bs=4k", "--size=64k",
              "--loops=2", "--verify=pattern", "--verify_pattern=0x5aa5"]  # fmt: skip
    fio_ios, fio_doc = discards(
        [FIO or "fio", FIO_CLOCK, "--thread", "--output-format=json", *common], dev, dev_out(loopdev, "f")
    )
    fio_data = backing.read_bytes()
    backing.write_bytes(CANARY * (LOOP_MIB * 256))
    eng_ios, eng_doc = discards([str(engine_bin), "--destructive=1", *common], dev, dev_out(loopdev, "e"))
    assert len(fio_ios) == 64 and eng_ios == fio_ios
    for d in ("read", "write", "trim"):
        assert eng_doc["jobs"][0][d]["total_ios"] == fio_doc["jobs"][0][d]["total_ios"] == 32, d
    assert eng_doc["jobs"][0]["error"] == 0
    data = backing.read_bytes()
    assert data == fio_data and data[:65536] == b"\x5a\xa5" * 32768 and data[65536:] == CANARY * 1008
