"""iowatt-engine --postmark/--vdbench ... --parse-only (issue 14 § 1): one JSON object with what the
mode parsed and its `bounds`, nothing touched (a missing DIR is fine, an existing one stays as
found), bad input exits 2 naming the parameter. The bounds are checked against what real runs of
the same parameters then do on tmpfs: bytes written never above `bytes_written_max`; files,
directories and dataset bytes equal to the laid-out set (counted on disk with --keep), with and
without --scale."""

from __future__ import annotations

import json
import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from .conftest import run_engine
from .filemode import listing, on_disk

BOUND_KEYS = {
    "mode",
    "threads",
    "max_block_bytes",
    "bytes_written_max",
    "runtime_s_max",
    "dataset_bytes",
    "files",
    "directories",
}


def mode_doc(
    engine: Path, mode: str, file: Path, directory: Path, *more: str, key: str | None = None
) -> dict[str, Any]:
    """The JSON of `--<mode>=file --directory=directory ...` (or its `key` object)."""
    r = run_engine(engine, f"--{mode}={file}", f"--directory={directory}", *more, timeout=180)
    doc: dict[str, Any] = json.loads(r.stdout)
    return doc[key] if key else doc


def parse_touches_nothing(parse: Callable[[Path], dict[str, Any]], scratch: Path) -> dict[str, Any]:
    """The same document for a missing DIR and an existing one, which stays as found (its entries
    and its own mtime)."""
    missing = scratch / "no" / "such" / "dir"
    doc = parse(missing)
    assert not missing.parent.exists()
    target = scratch / "target"
    target.mkdir()
    (target / "canary").write_bytes(b"x" * 10)
    before, mtime = listing(target), target.stat().st_mtime_ns
    assert parse(target) == doc
    assert listing(target) == before and target.stat().st_mtime_ns == mtime
    return doc


# ---- PostMark ----


def pm_file(where: Path, text: str) -> Path:
    f = where / "pm.txt"
    f.write_text(text + "\nrun\nquit\n")
    return f


def pm_parse(engine: Path, cmd: Path, directory: Path) -> dict[str, Any]:
    return mode_doc(engine, "postmark", cmd, directory, "--parse-only")


def pm_run(engine: Path, cmd: Path, directory: Path, *more: str) -> dict[str, Any]:
    return mode_doc(engine, "postmark", cmd, directory, *more, key="postmark")


def test_postmark_parse_only_touches_nothing(engine_bin: Path, scratch: Path) -> None:
    cmd = pm_file(scratch, "set number 40\nset size 1000 3000\nset subdirectories 3\nset read 4096")
    doc = parse_touches_nothing(lambda d: pm_parse(engine_bin, cmd, d), scratch)
    p = doc["postmark"]["parameters"]
    assert (p["number"], p["size_low_bytes"], p["size_high_bytes"], p["subdirectories"]) == (
        40,
        1000,
        3000,
        3,
    )
    assert (p["transactions"], p["bias_read"], p["bias_create"], p["seed"]) == (
        500,
        5,
        5,
        42,
    )  # PostMark's defaults
    assert doc["postmark"]["given"]["size"] == "1000 3000"
    b = doc["bounds"]
    assert set(b) == BOUND_KEYS
    assert (b["mode"], b["threads"], b["max_block_bytes"], b["runtime_s_max"]) == ("postmark", 1, 4096, None)
    assert (b["files"], b["directories"]) == (40, 3)
    assert b["dataset_bytes"] == 40 * (1000 + 2999) // 2
    # 40 files of at most 2999 B, then 500 transactions of at most one append (<= 2000 B) and one create
    assert b["bytes_written_max"] == 40 * 2999 + 500 * (2000 + 2999)


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("set number x", "postmark: set number: must be a positive integer"),
        ("set bias read 11", "postmark: set bias read: must be an integer from -1"),
        ("set size 10 5", "postmark: set size: high bound 5 is below low bound 10"),
        ("load other", "postmark: load: line 1"),
    ],
)
def test_postmark_parse_only_bad_input_exits_2(
    engine_bin: Path, scratch: Path, line: str, message: str
) -> None:
    cmd = pm_file(scratch, line)
    r = run_engine(
        engine_bin, f"--postmark={cmd}", f"--directory={scratch / 'x'}", "--parse-only", check=False
    )
    assert r.rc == 2 and r.stdout == ""
    assert r.stderr.startswith("iowatt-engine: ") and message in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize(
    "extra",
    [
        "",  # PostMark's biases
        "set bias read 0\nset bias create 10",  # every transaction appends and creates: the worst case
        "set bias read -1\nset bias create 0",  # deletes only
        "set size 2000",  # fixed size: appends write nothing
        "set fsync true\nset buffering false\nset write 100",
    ],
)
def test_postmark_bytes_written_within_the_bound(engine_bin: Path, scratch: Path, extra: str) -> None:
    cmd = pm_file(
        scratch, f"set number 200\nset size 500 6000\nset transactions 1500\nset subdirectories 4\n{extra}"
    )
    bounds = pm_parse(engine_bin, cmd, scratch / "run")["bounds"]
    (scratch / "run").mkdir()
    run = pm_run(engine_bin, cmd, scratch / "run")
    assert run["transactions"] > 0
    assert 0 < run["bytes_written"] <= bounds["bytes_written_max"]
    assert bounds["max_block_bytes"] == max(
        run["parameters"]["read_block_bytes"], run["parameters"]["write_block_bytes"]
    )


def test_postmark_worst_case_bound_is_tight(engine_bin: Path, scratch: Path) -> None:
    """With every transaction appending to and creating a file the run writes most of the bound
    (appends stop at the high size, so not all of it)."""
    cmd = pm_file(
        scratch,
        "set number 100\nset size 100 20000\nset transactions 400\nset bias read 0\nset bias create 10",
    )
    bounds = pm_parse(engine_bin, cmd, scratch)["bounds"]
    run = pm_run(engine_bin, cmd, scratch)
    assert bounds["bytes_written_max"] / 4 < run["bytes_written"] <= bounds["bytes_written_max"]


def test_postmark_files_directories_and_dataset_equal_the_run(engine_bin: Path, scratch: Path) -> None:
    """Transactions that do nothing (both biases -1), --keep: what is left is the initial set."""
    cmd = pm_file(
        scratch,
        "set number 500\nset size 1000 9000\nset subdirectories 6\nset bias read -1\nset bias create -1",
    )
    bounds = pm_parse(engine_bin, cmd, scratch / "run")["bounds"]
    (scratch / "run").mkdir()
    run = pm_run(engine_bin, cmd, scratch / "run", "--keep")
    files, dirs, size = on_disk(scratch / "run")
    assert (files, dirs) == (bounds["files"], bounds["directories"]) == (500, 6)
    assert size == run["bytes_written"] <= bounds["bytes_written_max"]
    # dataset_bytes is the expectation (number x mean size): 500 uniform draws are within 10 %
    assert abs(size - bounds["dataset_bytes"]) < 0.1 * bounds["dataset_bytes"]


# ---- vdbench file sets ----


def vdb_file(where: Path, text: str) -> Path:
    f = where / "params.vdb"
    f.write_text(text)
    return f


def vdb_parse(engine: Path, pf: Path, directory: Path, *more: str) -> dict[str, Any]:
    return mode_doc(engine, "vdbench", pf, directory, *more, "--parse-only")


def vdb_run(engine: Path, pf: Path, directory: Path, *more: str) -> dict[str, Any]:
    return mode_doc(engine, "vdbench", pf, directory, *more, key="fileset")


def written(fs: dict[str, Any]) -> int:
    """Every byte the run wrote: format, then every interval (warm-up ones too)."""
    return int(fs["format"]["bytes_written"]) + sum(int(iv["write_bytes"]) for iv in fs["intervals"])


MIXED = """\
fsd=fsd1,anchor=/x,depth=2,width=3,files=4,size=(8k,50,24k,50)
fwd=fwd1,fsd=fsd1,rdpct=70,xfersize=(4k,50,8k,50),fileio=random,threads=3
rd=rd1,fwd=fwd1,format=yes,elapsed=20,interval=1,maxdata=600k
"""


def test_vdbench_parse_only_touches_nothing(engine_bin: Path, scratch: Path) -> None:
    pf = vdb_file(scratch, MIXED)
    doc = parse_touches_nothing(lambda d: vdb_parse(engine_bin, pf, d), scratch)
    assert doc["fsd"][0]["total_files"] == 36 and doc["fwd"][0]["threads"] == 3  # what it parsed
    b = doc["bounds"]
    assert set(b) == BOUND_KEYS
    assert (b["mode"], b["threads"], b["max_block_bytes"], b["runtime_s_max"]) == ("vdbench", 3, 8192, 20.0)
    assert (b["files"], b["directories"]) == (36, 3 + 9)
    assert b["dataset_bytes"] == doc["fsd"][0]["total_bytes"]
    # format writes the set once, then reads + writes stop at maxdata
    assert b["bytes_written_max"] == b["dataset_bytes"] + 600 * 1024


def test_vdbench_parse_only_bad_input_exits_2(engine_bin: Path, scratch: Path) -> None:
    pf = vdb_file(scratch, MIXED.replace("rdpct=70", "rdpct=101"))
    r = run_engine(engine_bin, f"--vdbench={pf}", f"--directory={scratch}", "--parse-only", check=False)
    assert r.rc == 2 and r.stdout == ""
    assert r.stderr.startswith("iowatt-engine: rdpct: ") and len(r.stderr.strip().splitlines()) == 1
    pf = vdb_file(scratch, MIXED)
    r = run_engine(engine_bin, f"--vdbench={pf}", "--scale=0", "--parse-only", check=False)
    assert r.rc == 2 and "scale" in r.stderr


@pytest.mark.parametrize("scale", ["1", "0.5", "3"])
def test_vdbench_bounds_equal_the_run(engine_bin: Path, scratch: Path, scale: str) -> None:
    pf = vdb_file(scratch, MIXED)
    run_dir = scratch / "run"
    doc = vdb_parse(engine_bin, pf, run_dir, f"--scale={scale}", "--elapsed=2")
    b = doc["bounds"]
    assert b["runtime_s_max"] == 2.0  # --elapsed overrides rd's (scaled) elapsed
    run_dir.mkdir()
    fs = vdb_run(engine_bin, pf, run_dir, f"--scale={scale}", "--elapsed=2", "--keep")
    files, dirs, size = on_disk(run_dir)
    assert (files, dirs, size) == (b["files"], b["directories"], b["dataset_bytes"])
    fsd = fs["fsd"][0]
    assert (fsd["total_files"], fsd["total_directories"], fsd["total_bytes"]) == (files, dirs, size)
    assert (
        fs["format"]["files_created"] == b["files"]
        and fs["format"]["directories_created"] == b["directories"]
    )
    assert 0 < written(fs) <= b["bytes_written_max"]
    assert fs["elapsed_ns"] / 1e9 <= b["runtime_s_max"] + 1  # + the last operation's finish
    assert b["files"] == {"1": 36, "0.5": 18, "3": 108}[scale]  # files per leaf directory x the scale


def test_vdbench_scaled_runtime(engine_bin: Path, scratch: Path) -> None:
    pf = vdb_file(scratch, MIXED.replace("elapsed=20", "elapsed=100,warmup=10"))
    assert (
        vdb_parse(engine_bin, pf, scratch)["bounds"]["runtime_s_max"] == 100.0
    )  # warm-up is part of elapsed
    assert vdb_parse(engine_bin, pf, scratch, "--scale=0.25")["bounds"]["runtime_s_max"] == 25.0


@pytest.mark.parametrize(
    ("fwds", "bounded"),
    [
        ("fwd=w,fsd=a,operation=write,xfersize=4k", False),  # time-based writes, no maxdata
        ("fwd=r,fsd=a,operation=read,xfersize=4k", True),  # format only
        ("fwd=c,fsd=a,operation=create,xfersize=4k", True),  # each absent file at most once
        (
            "fwd=c,fsd=a,operation=create,xfersize=4k\nfwd=d,fsd=a,operation=delete",
            False,
        ),  # recreated forever
        ("fwd=g,fsd=a,operation=getattr", True),
    ],
)
def test_vdbench_time_based_writes_are_unbounded(
    engine_bin: Path, scratch: Path, fwds: str, bounded: bool
) -> None:
    names = ",".join(line.split(",")[0].split("=")[1] for line in fwds.splitlines())
    fsd = "fsd=a,anchor=/x,depth=1,width=2,files=5,size=16k"
    text = f"{fsd}\n{fwds}\nrd=r,fwd=({names}),format=restart,elapsed=1\n"
    pf = vdb_file(scratch, text)
    b = vdb_parse(engine_bin, pf, scratch / "run")["bounds"]
    if not bounded:
        assert b["bytes_written_max"] is None
        return
    assert b["bytes_written_max"] == b["dataset_bytes"] == 10 * 16384
    (scratch / "run").mkdir()
    assert written(vdb_run(engine_bin, pf, scratch / "run")) <= b["bytes_written_max"]


def test_vdbench_copy_target_bound(engine_bin: Path, scratch: Path) -> None:
    """A copy writes source-sized files into free names of the target set: at most once each."""
    text = """\
fsd=src,anchor=/x,depth=1,width=2,files=3,size=(4k,50,12k,50)
fsd=dst,anchor=/y,depth=1,width=2,files=4,size=1k
fwd=cp,fsd=(src,dst),operation=copy,xfersize=4k
rd=r,fwd=cp,format=yes,elapsed=1
"""
    pf = vdb_file(scratch, text)
    doc = vdb_parse(engine_bin, pf, scratch / "run")
    b = doc["bounds"]
    src_bytes = doc["fsd"][0]["total_bytes"]
    assert b["files"] == 6 + 8 and b["directories"] == 2 + 2
    # the source set once, then each of the target's 8 names at most once, at the largest source size
    assert src_bytes + 8 * 4096 <= b["bytes_written_max"] <= src_bytes + 8 * 12288
    (scratch / "run").mkdir()
    fs = vdb_run(engine_bin, pf, scratch / "run")
    assert src_bytes < written(fs) <= b["bytes_written_max"]


def test_vdbench_parse_only_describes_a_set_too_large_to_run(engine_bin: Path, scratch: Path) -> None:
    """Nothing per file is allocated: the seed's small set at --scale=1000 (1.6 billion files)
    answers at once; a total beyond 2^64 bytes exits 2 naming `size`."""
    text = (
        "fsd=a,anchor=/x,depth=1,width=64,files=25600,size=16k\n"
        "fwd=w,fsd=a,rdpct=90,xfersize=1k,fileio=random,threads=64\n"
        "rd=r,fwd=w,format=yes,elapsed=10h,interval=30\n"
    )
    pf = vdb_file(scratch, text)
    t0 = time.monotonic()
    b = vdb_parse(engine_bin, pf, scratch / "x", "--scale=1000")["bounds"]
    assert time.monotonic() - t0 < 30  # allocating per file would take minutes (or the OOM killer)
    assert b["files"] == 64 * 25_600_000 and b["directories"] == 64
    assert b["dataset_bytes"] == b["files"] * 16_384_000  # 16k x 1000, a whole number of 1k transfers
    assert b["bytes_written_max"] is None  # 10 % writes without maxdata
    assert b["runtime_s_max"] == 36_000_000.0

    # a size distribution over more than 2^24 files: files x the mean, not 1.6 billion draws
    pf = vdb_file(scratch, text.replace("size=16k", "size=(8k,50,16k,50)"))
    b = vdb_parse(engine_bin, pf, scratch / "x", "--scale=1000")["bounds"]
    assert b["dataset_bytes"] == b["files"] * (8_192_000 + 16_384_000) // 2

    pf = vdb_file(scratch, text.replace("files=25600,size=16k", "files=1000000000,size=1t"))
    r = run_engine(engine_bin, f"--vdbench={pf}", "--parse-only", check=False)
    assert r.rc == 2 and r.stdout == "" and r.stderr.startswith("iowatt-engine: size: ")


def test_vdbench_parse_only_distribution_sizes_equal_the_run(engine_bin: Path, scratch: Path) -> None:
    """Sizes drawn from a distribution: parse-only sums the very draws the run makes."""
    text = (
        "fsd=a,anchor=/x,depth=1,width=4,files=50,size=(1k,30,3k,30,9k,40)\n"
        "fwd=r,fsd=a,operation=read,xfersize=1k\n"
        "rd=r,fwd=r,format=yes,elapsed=1\n"
    )
    pf = vdb_file(scratch, text)
    for seed in ("1", "77"):
        b = vdb_parse(engine_bin, pf, scratch / "run", f"--randseed={seed}")["bounds"]
        (scratch / "run").mkdir()
        vdb_run(engine_bin, pf, scratch / "run", f"--randseed={seed}", "--keep")
        assert on_disk(scratch / "run") == (200, 4, b["dataset_bytes"])
        shutil.rmtree(scratch / "run")
