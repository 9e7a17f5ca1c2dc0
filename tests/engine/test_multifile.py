"""Multi-file jobs (agent/engine/src/multifile.c): fio's directory, filename=a:b, nrfiles,
filesize, openfiles, file_service_type, filename_format, create_on_open, create_only,
file_append, fallocate, unlink. Each option runs beside Debian's fio on the same small job in a
scratch directory: the same file names, sizes, count and I/O count per file (fio's per-file
counts from its write_iolog); then the safety rules for every file of the set (beneath, links,
'..', unlink only of what the run created, cleanup after SIGINT)."""

from __future__ import annotations

import collections
import json
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from tests.waiting import wait_until

from .conftest import FIO_CLOCK, Result, run_engine

KiB = 1024
FIO = shutil.which("fio")
needs_fio = pytest.mark.skipif(FIO is None, reason="Debian's fio is not installed")


def listing(d: Path) -> dict[str, tuple[int, bool]]:
    """name (relative to d) -> (size, has blocks)"""
    out = {}
    for p in sorted(d.rglob("*")):
        if p.is_file():
            st = p.stat()
            out[str(p.relative_to(d))] = (st.st_size, st.st_blocks > 0)
    return out


def run_fio(workdir: Path, *args: str) -> tuple[dict[str, Any], dict[str, list[int]]]:
    """fio on the job; its JSON and, per file (relative to workdir), [reads, writes] from its iolog"""
    log = workdir.parent / f"{workdir.name}.iolog"
    p = subprocess.run(
        [FIO or "fio", FIO_CLOCK, *args, "--output-format=json", f"--write_iolog={log}"],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=workdir,
    )
    assert p.returncode == 0, p.stderr
    counts: dict[str, list[int]] = collections.defaultdict(lambda: [0, 0])
    for line in log.read_text().splitlines()[1:]:
        parts = line.split()
        # "[time] file action [offset length]"; fio 3.33 writes a time stamp first
        if parts and parts[0].isdigit():
            parts = parts[1:]
        if len(parts) >= 2 and parts[1] in ("read", "write"):
            counts[os.path.relpath(parts[0], workdir)][parts[1] == "write"] += 1
    log.unlink()
    return json.loads(p.stdout[p.stdout.index("{") :]), dict(counts)


def ours(
    engine_bin: Path, workdir: Path, *args: str, check: bool = True
) -> tuple[Result, dict[str, list[int]]]:
    p = subprocess.run([str(engine_bin), *args], capture_output=True, text=True, timeout=60, cwd=workdir)
    r = Result(p.returncode, p.stdout, p.stderr)
    if check:
        assert p.returncode == 0, p.stderr
    counts: dict[str, list[int]] = {}
    if r.rc == 0:
        for job in r.doc["jobs"]:
            for f in job["iowatt"].get("files", []):
                name = f["filename"]
                c = counts.setdefault(
                    os.path.relpath(name, workdir) if name.startswith("/") else name, [0, 0]
                )
                c[0] += f["read_ios"]
                c[1] += f["write_ios"]
    return r, counts


def side_by_side(engine_bin: Path, scratch: Path, *args: str) -> tuple[Any, ...]:
    """The job in two fresh directories (fio's and ours): listings and per-file counts of each"""
    a, b = scratch / "fio", scratch / "ours"
    a.mkdir()
    b.mkdir()
    fdoc, fcounts = run_fio(a, *[x.replace("@DIR@", str(a)) for x in args])
    r, ocounts = ours(engine_bin, b, *[x.replace("@DIR@", str(b)) for x in args])
    return listing(a), fcounts, fdoc, listing(b), ocounts, r


# ---- beside fio ----------------------------------------------------------------------------


@needs_fio
@pytest.mark.parametrize("rw", ["write", "read", "randread"])
def test_default_names_sizes_and_counts_match_fio(engine_bin: Path, scratch: Path, rw: str) -> None:
    fl, fc, fdoc, ol, oc, r = side_by_side(
        engine_bin, scratch, "--name=j", f"--rw={rw}", "--bs=4k", "--size=64k", "--nrfiles=3", "--numjobs=2",
        "--directory=@DIR@",
    )  # fmt: skip
    assert list(ol) == ["j.0.0", "j.0.1", "j.0.2", "j.1.0", "j.1.1", "j.1.2"]
    assert ol == fl  # names, sizes (64k / 3 = 21845 each) and allocation
    assert oc == fc and all(sum(c) == 5 for c in oc.values())  # whole 4k blocks of 21845 bytes
    d = 1 if rw == "write" else 0
    key = "write" if d else "read"
    # one jobs[] entry per clone, as fio's (no group_reporting)
    ours_n, fio_n = ([j[key]["total_ios"] for j in doc["jobs"]] for doc in (r.doc, fdoc))
    assert ours_n == fio_n == [15, 15] and sum(c[d] for c in fc.values()) == 30


@needs_fio
def test_filename_list_is_shared_by_the_clones(engine_bin: Path, scratch: Path) -> None:
    fl, fc, _, ol, oc, _ = side_by_side(
        engine_bin, scratch, "--name=j", "--rw=write", "--bs=4k", "--size=32k", "--numjobs=2",
        "--filename=@DIR@/a:@DIR@/b", "--fallocate=none",
    )  # fmt: skip
    assert ol == fl == {"a": (16 * KiB, True), "b": (16 * KiB, True)}
    assert oc == fc == {"a": [0, 8], "b": [0, 8]}


@needs_fio
def test_directory_list_spreads_the_clones(engine_bin: Path, scratch: Path) -> None:
    for side in ("fio", "ours"):
        for d in ("d1", "d2"):
            (scratch / side / d).mkdir(parents=True)
    a, b = scratch / "fio", scratch / "ours"
    args = ["--name=j", "--rw=write", "--bs=4k", "--size=8k", "--numjobs=3", "--nrfiles=2"]
    run_fio(a, *args, f"--directory={a}/d1:{a}/d2")
    ours(engine_bin, b, *args, f"--directory={b}/d1:{b}/d2")
    assert listing(b) == listing(a)
    assert set(listing(b)) == {"d1/j.0.0", "d1/j.0.1", "d2/j.1.0", "d2/j.1.1", "d1/j.2.0", "d1/j.2.1"}


@needs_fio
def test_filesize_fixed_with_a_smaller_size_budget(engine_bin: Path, scratch: Path) -> None:
    fl, fc, _, ol, oc, r = side_by_side(
        engine_bin, scratch, "--name=j", "--rw=write",
        "--bs=4k", "--filesize=8k", "--size=12k", "--nrfiles=3",
        "--directory=@DIR@", "--fallocate=none",
    )  # fmt: skip
    assert ol == fl and oc == fc
    assert r.job["write"]["io_bytes"] == 12 * KiB
    assert r.job["iowatt"]["options"]["filesize_low_bytes"] == 8 * KiB


@needs_fio
def test_filesize_range_gives_whole_blocks_inside_the_range(engine_bin: Path, scratch: Path) -> None:
    fl, fc, _, ol, oc, r = side_by_side(
        engine_bin, scratch, "--name=j", "--rw=read", "--bs=4k", "--filesize=8k-40k", "--nrfiles=8",
        "--directory=@DIR@",
    )  # fmt: skip
    assert set(ol) == set(fl) and len(ol) == 8
    for lst, counts in ((fl, fc), (ol, oc)):
        for name, (size, _) in lst.items():
            assert 8 * KiB <= size < 40 * KiB and size % (4 * KiB) == 0
            assert counts[name] == [size // (4 * KiB), 0]  # every block of every file read once
    assert len({s for s, _ in ol.values()}) > 1, "a range gives files of different sizes"


def test_filesize_range_takes_fios_separators(engine_bin: Path, scratch: Path) -> None:
    """fio's parser splits a range at ',', ':' or '-' (filesize=32k,64k is 32k-64k: fio 3.33 lays
    out the same sizes for the three); "8k," is 8k"""
    got = {}
    for value in ("8k-40k", "8k,40k", "8k:40k", "8k,"):
        d = scratch / str(len(got))
        d.mkdir()
        ours(engine_bin, d, "--name=j", "--rw=write", "--bs=4k", f"--filesize={value}", "--nrfiles=6",
             "--create_only=1")  # fmt: skip
        got[value] = listing(d)
    assert got["8k-40k"] == got["8k,40k"] == got["8k:40k"] != got["8k,"]
    assert {size for size, _ in got["8k,"].values()} == {8 * KiB}


@needs_fio
@pytest.mark.parametrize("mode", ["none", "native", "posix", "keep", "truncate", "0", "1"])
def test_fallocate_modes_lay_files_out_as_fio(engine_bin: Path, scratch: Path, mode: str) -> None:
    # 3 files of 10 KiB, 4 KiB writes: the data covers 8 KiB; what is left is the allocation's
    fl, fc, _, ol, oc, _ = side_by_side(
        engine_bin, scratch, "--name=j", "--rw=write", "--bs=4k", "--filesize=10k", "--nrfiles=3",
        "--directory=@DIR@", f"--fallocate={mode}",
    )  # fmt: skip
    assert ol == fl and oc == fc
    sizes = {s for s, _ in ol.values()}
    assert sizes == ({8 * KiB} if mode in ("none", "0", "keep") else {10 * KiB})


@needs_fio
@pytest.mark.parametrize("fst", ["roundrobin", "sequential", "random", "random:4", "roundrobin:3"])
def test_file_service_type_serves_each_file_its_share(engine_bin: Path, scratch: Path, fst: str) -> None:
    fl, fc, _, ol, oc, _ = side_by_side(
        engine_bin, scratch, "--name=j", "--rw=randread", "--bs=4k", "--filesize=16k-64k", "--nrfiles=5",
        "--directory=@DIR@", f"--file_service_type={fst}", "--randseed=7",
    )  # fmt: skip
    # as fio: a file whose share of the pass is done is skipped, so each file gets all its blocks
    for lst, counts in ((fl, fc), (ol, oc)):
        assert {n: counts[n][0] for n in lst} == {n: s // (4 * KiB) for n, (s, _) in lst.items()}


@needs_fio
@pytest.mark.parametrize("fst", ["zipf", "pareto:0.3", "normal", "gauss:20"])
def test_distributed_file_service_ignores_shares_as_fio(engine_bin: Path, scratch: Path, fst: str) -> None:
    fl, fc, _, ol, oc, _ = side_by_side(
        engine_bin, scratch, "--name=j", "--rw=randread", "--bs=4k", "--filesize=16k-64k", "--nrfiles=5",
        "--directory=@DIR@", f"--file_service_type={fst}", "--randseed=7",
    )  # fmt: skip
    # fio serves the file the distribution draws, past its share; the job ends at the byte budget
    for lst, counts in ((fl, fc), (ol, oc)):
        total = sum(s // (4 * KiB) for s, _ in lst.values())
        reads = [c[0] for c in counts.values()]
        assert sum(reads) == total and max(reads) >= 0.3 * total, (fst, reads)


@needs_fio
@pytest.mark.parametrize("fst", ["zipf:1.6", "pareto:0.1"])
def test_skewed_file_service_prefers_hot_files_as_fio_does(engine_bin: Path, scratch: Path, fst: str) -> None:
    _, fc, _, _, oc, _ = side_by_side(
        engine_bin, scratch, "--name=j", "--rw=randread", "--bs=4k", "--filesize=1m", "--nrfiles=8",
        "--io_size=512k", "--directory=@DIR@", f"--file_service_type={fst}",
    )  # fmt: skip
    for counts in (fc, oc):
        reads = sorted((c[0] for c in counts.values()), reverse=True)
        assert sum(reads) == 128
        assert reads[0] >= 128 // 8 * 2, (fst, reads)  # the hottest file: at least twice a fair share
    ftop, otop = max(c[0] for c in fc.values()), max(c[0] for c in oc.values())
    assert 0.4 < otop / ftop < 2.5  # the same order


@needs_fio
@pytest.mark.parametrize("engine", ["psync", "libaio", "io_uring"])
def test_openfiles_limits_open_files_and_every_file_is_served(
    engine_bin: Path, scratch: Path, engine: str
) -> None:
    if engine == "libaio" and not Path("/usr/include/libaio.h").exists():
        pytest.skip("no libaio")
    fl, fc, _, ol, oc, r = side_by_side(
        engine_bin, scratch, "--name=j", "--rw=read", "--bs=4k", "--size=64k", "--nrfiles=4", "--openfiles=1",
        "--directory=@DIR@", f"--ioengine={engine}", "--iodepth=4",
    )  # fmt: skip
    if r.rc == 77:
        pytest.skip(r.stderr)
    assert ol == fl and oc == fc == {f"j.0.{i}": [4, 0] for i in range(4)}
    assert r.job["iowatt"]["options"]["openfiles"] == 1


@needs_fio
def test_filename_format_keywords(engine_bin: Path, scratch: Path) -> None:
    fl, _, _, ol, _, _ = side_by_side(
        engine_bin, scratch, "--name=job", "--rw=write",
        "--bs=4k", "--filesize=4k", "--nrfiles=2", "--numjobs=2",
        "--directory=@DIR@", "--filename_format=f-$jobname.$filenum.$jobnum$clientuid.dat",
    )  # fmt: skip
    assert ol == fl and set(ol) == {"f-job.0.0.dat", "f-job.1.0.dat", "f-job.0.1.dat", "f-job.1.1.dat"}


@needs_fio
def test_create_on_open_writes_without_layout(engine_bin: Path, scratch: Path) -> None:
    fl, fc, _, ol, oc, r = side_by_side(
        engine_bin, scratch, "--name=j", "--rw=write", "--bs=4k", "--filesize=10k", "--nrfiles=2",
        "--directory=@DIR@", "--create_on_open=1",
    )  # fmt: skip
    assert ol == fl == {"j.0.0": (8 * KiB, True), "j.0.1": (8 * KiB, True)}  # no fallocate to 10k
    assert oc == fc
    assert all(f["created"] for f in r.job["iowatt"]["files"])


@needs_fio
def test_create_on_open_reads_what_the_writes_left_as_fio(engine_bin: Path, scratch: Path) -> None:
    """fio 3.33: no layout, the region is still size bytes: a read past what the writes have made so
    far is short (0 bytes at the end), counted with its bytes, no error (libaio); enospc-pressure's
    verifier job. Which direction each I/O takes is a random draw of each tool's own"""
    got = {}
    for side in ("fio", "ours"):
        d = scratch / side
        d.mkdir()
        args = ["--name=j", "--rw=randrw", "--bs=4k", "--filesize=256k", "--filename=f", "--create_on_open=1",
                "--ioengine=libaio", "--iodepth=16", f"--directory={d}", "--output-format=json"]  # fmt: skip
        cmd = [FIO or "fio", FIO_CLOCK, *args] if side == "fio" else [str(engine_bin), *args]
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=60, cwd=d)
        job = json.loads(p.stdout[p.stdout.index("{") :])["jobs"][0]
        rd, wr = job["read"], job["write"]
        got[side] = (p.returncode, job["error"], rd["total_ios"] + wr["total_ios"])
        assert wr["io_bytes"] == 4 * KiB * wr["total_ios"], side
        assert 0 < rd["io_bytes"] < 4 * KiB * rd["total_ios"], side  # short reads, in both tools
        assert set(listing(d)) == {"f"}
    assert got["ours"] == got["fio"] == (0, 0, 64)


# (ioengine, iodepth): the expected exit codes (fio's, the engine's) and per job (name, error, read
# I/Os, read bytes, short reads, writes), the same in both tools
SHORT_READS = {
    ("psync", 1): ((2, 1), [("w", 0, 0, 0, 0, 1), ("r", 5, 4, 8 * KiB, 1, 0), ("empty", 5, 1, 0, 0, 0)]),
    ("libaio", 1): ((0, 0), [("w", 0, 0, 0, 0, 1), ("r", 0, 5, 8 * KiB, 1, 0), ("empty", 0, 16, 0, 0, 0)]),
    ("io_uring", 4): ((0, 0), [("w", 0, 0, 0, 0, 1), ("r", 0, 4, 8 * KiB, 1, 0), ("empty", 0, 16, 0, 0, 0)]),
}


@needs_fio
@pytest.mark.parametrize(("engine", "depth"), list(SHORT_READS))
def test_create_on_open_short_reads_as_fio(engine_bin: Path, scratch: Path, engine: str, depth: int) -> None:
    """A 10 KiB file read in 4 KiB blocks by a create_on_open job (reads 4k, 4k, 2k short) and a file
    it creates empty. fio's sync engines (io_queue_event): the short read's rest goes again at 10
    KiB, gets 0 bytes and fails with EIO ("full resid"): 4 I/Os, 8 KiB (the short one's bytes are
    not counted), error 5; the empty file's first read fails the same way. Its async engines
    (io_completed): the rest is requeued and issued before any new I/O while the job's bytes last
    (depth 1: 5 I/Os; depth 4: all 16 KiB was issued, so the rest is dropped: 4), a read of 0 bytes
    completes without an error (16 of the empty file). fio's exit status counts the failed jobs"""
    job = """[w]
ioengine=psync
filename={d}/x
rw=write
size=10k
bs=10k

[r]
stonewall
ioengine={e}
iodepth={q}
filename={d}/x
create_on_open=1
rw=read
size=16k
bs=4k

[empty]
stonewall
ioengine={e}
iodepth={q}
directory={d}
create_on_open=1
rw=read
size=64k
bs=4k
"""
    rcs, want = SHORT_READS[(engine, depth)]
    for side, rc in zip(("fio", "ours"), rcs, strict=True):
        d = scratch / side
        d.mkdir()
        (scratch / f"{side}.fio").write_text(job.format(d=d, e=engine, q=depth))
        exe = [FIO or "fio", FIO_CLOCK] if side == "fio" else [str(engine_bin)]
        p = subprocess.run([*exe, "--output-format=json", str(scratch / f"{side}.fio")], capture_output=True,
                           text=True, timeout=60, cwd=d)  # fmt: skip
        assert p.returncode == rc, (side, p.stderr)
        jobs = json.loads(p.stdout[p.stdout.index("{") :])["jobs"]
        got = [(j["jobname"], j["error"], j["read"]["total_ios"], j["read"]["io_bytes"],
                j["read"]["short_ios"], j["write"]["total_ios"]) for j in jobs]  # fmt: skip
        assert got == want, side
        assert listing(d) == {"x": (10 * KiB, True), "empty.0.0": (0, False)}, side


@needs_fio
@pytest.mark.parametrize("rw", ["trim", "randtrim", "trimwrite", "randtrimwrite"])
def test_trims_in_a_multi_file_job_fail_on_files_as_fio(engine_bin: Path, scratch: Path, rw: str) -> None:
    """fio 3.33 trims a file with BLKDISCARD: ENOTTY (25) at the first trim ends the job, exit 1;
    the files laid out first (enospc-pressure.fio's trim job is multi-file by its global filesize)"""
    got = {}
    for side in ("fio", "ours"):
        d = scratch / side
        d.mkdir()
        args = ["--name=j", f"--rw={rw}", "--bs=4k", "--filesize=16k", "--nrfiles=2", "--ioengine=libaio",
                "--iodepth=4", f"--directory={d}", "--output-format=json"]  # fmt: skip
        cmd = [FIO or "fio", FIO_CLOCK, *args] if side == "fio" else [str(engine_bin), *args]
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=60, cwd=d)
        job = json.loads(p.stdout[p.stdout.index("{") :])["jobs"][0]
        trims, writes = job["trim"]["total_ios"], job["write"]["total_ios"]
        got[side] = (p.returncode, job["error"], trims, writes, listing(d))
        if side == "ours":
            assert [(f["trim_ios"], f["write_ios"]) for f in job["iowatt"]["files"]] == [(0, 0), (0, 0)]
    assert got["ours"] == got["fio"]
    assert got["ours"][:4] == (1, 25, 1, 0) and set(got["ours"][4]) == {"j.0.0", "j.0.1"}


@needs_fio
@pytest.mark.parametrize("rw", ["trimwrite", "randtrimwrite"])
def test_trimwrite_in_a_multi_file_job_as_fio(engine_bin: Path, scratch: Path, rw: str) -> None:
    """fio 3.33 keeps per file whether its last trim was written: round robin over 2 files, trim A,
    trim B, write A, write B, ... (the same pwrite64/BLKDISCARD sequence under strace, measured
    2026-12-07). Trims of a file fail (ENOTTY), so the job goes on only with ignore_error: each
    block of each file trimmed (0 bytes, an error each) and written once"""
    fl, fc, fdoc, ol, oc, r = side_by_side(
        engine_bin, scratch, "--name=j", f"--rw={rw}", "--bs=4k", "--filesize=16k", "--nrfiles=2",
        "--directory=@DIR@", "--ignore_error=,ENOTTY",
    )  # fmt: skip
    assert ol == fl == {"j.0.0": (16 * KiB, True), "j.0.1": (16 * KiB, True)}
    assert oc == fc == {"j.0.0": [0, 4], "j.0.1": [0, 4]}
    for job in (fdoc["jobs"][0], r.job):
        trim, write = job["trim"], job["write"]
        assert (job["error"], job["total_err"], trim["total_ios"], trim["io_bytes"]) == (25, 8, 8, 0)
        assert (write["total_ios"], write["io_bytes"]) == (8, 32 * KiB)


@needs_fio
def test_create_only_lays_out_and_does_no_io(engine_bin: Path, scratch: Path) -> None:
    fl, fc, _, ol, oc, r = side_by_side(
        engine_bin, scratch, "--name=j", "--rw=read", "--bs=4k", "--filesize=8k", "--nrfiles=2",
        "--directory=@DIR@", "--create_only=1",
    )  # fmt: skip
    assert ol == fl == {"j.0.0": (8 * KiB, True), "j.0.1": (8 * KiB, True)}
    assert not fc and oc == {"j.0.0": [0, 0], "j.0.1": [0, 0]}
    assert r.job["read"]["total_ios"] == 0


@needs_fio
def test_file_append_writes_after_the_end(engine_bin: Path, scratch: Path) -> None:
    for side in ("fio", "ours"):
        (scratch / side).mkdir()
        (scratch / side / "f").write_bytes(b"x" * 8 * KiB)
    a, b = scratch / "fio", scratch / "ours"
    run_fio(a, "--name=j", "--rw=write", "--bs=4k", "--size=8k", f"--filename={a}/f", "--file_append=1")
    r, oc = ours(
        engine_bin,
        b,
        "--name=j",
        "--rw=write",
        "--bs=4k",
        "--size=8k",
        f"--filename={b}/f",
        "--file_append=1",
    )
    assert listing(b) == listing(a) == {"f": (16 * KiB, True)}
    assert (b / "f").read_bytes()[: 8 * KiB] == b"x" * 8 * KiB
    assert r.job["iowatt"]["files"][0]["offset_bytes"] == 8 * KiB and oc == {"f": [0, 2]}


def test_a_fio_job_file_without_filename_runs_in_its_directory(engine_bin: Path, scratch: Path) -> None:
    r, oc = ours(engine_bin, scratch, "--name=seq", "--rw=write", "--bs=64k", "--size=256k")
    assert listing(scratch) == {"seq.0.0": (256 * KiB, True)} and oc == {"seq.0.0": [0, 4]}


# ---- limits and refusals ----------------------------------------------------------------------


def test_limits_name_the_file_count(engine_bin: Path, scratch: Path) -> None:
    lim = json.loads(run_engine(engine_bin, "--limits").stdout)
    assert lim["block"]["max_files"] == 4096
    assert lim["block"]["options"]["nrfiles"]["max"] == 4096
    r, _ = ours(
        engine_bin, scratch, "--name=j", "--filesize=4k", "--nrfiles=4096", "--numjobs=2", check=False
    )
    assert r.rc == 2 and r.stderr.startswith("iowatt-engine: nrfiles: ") and "4096" in r.stderr
    assert listing(scratch) == {}


@pytest.mark.parametrize(
    ("arg", "message"),
    [
        ("--lockfile=exclusive", "lockfile: 'exclusive' is not supported"),
        ("--unlink_each_loop=1", "unlink_each_loop: not supported"),
        ("--file_service_type=zipf:1", "file_service_type: zipf theta"),
        ("--file_service_type=bogus", "file_service_type: unknown type"),
        ("--filesize=8k-4k", "filesize: must be greater than 0 and LOW <= HIGH"),
        ("--filesize=8k,16k,32k", "filesize: invalid size or range"),
        ("--fallocate=maybe", "fallocate: unknown mode 'maybe'"),
        ("--rw=trimwrite:8k", "rw: not implemented for jobs of several files"),
    ],
)
def test_refusals_exit_2_naming_the_option(engine_bin: Path, scratch: Path, arg: str, message: str) -> None:
    r, _ = ours(engine_bin, scratch, "--name=j", "--filesize=8k", arg, check=False)
    assert r.rc == 2 and message in r.stderr and r.stdout == ""
    assert listing(scratch) == {}


# ---- safety rules for every file of the set ------------------------------------------------------


def test_beneath_confines_every_file_and_directory(engine_bin: Path, scratch: Path) -> None:
    root = scratch / "root"
    (root / "d").mkdir(parents=True)
    outside = scratch / "outside"
    outside.mkdir()
    (root / "link").symlink_to(outside)
    base = ["--name=j", "--rw=write", "--filesize=4k", "--nrfiles=2", f"--beneath={root}"]
    cases = [
        ([f"--directory={outside}"], "not beneath"),
        ([f"--directory={root}/link"], "symbolic link"),
        ([f"--directory={root}/d", "--filename_format=../../outside/$filenum"], ".."),
        ([f"--filename={root}/d/a:{outside}/b"], "not beneath"),
        ([f"--directory={root}/d:{outside}", "--numjobs=2"], "not beneath"),
    ]
    for extra, needle in cases:
        r, _ = ours(engine_bin, scratch, *base, *extra, check=False)
        assert r.rc == 2 and needle in r.stderr and r.stdout == "", (extra, r.stderr)
    assert listing(outside) == {} and listing(root / "d") == {}
    # relative names resolve beneath ROOT, every one of them
    r, _ = ours(engine_bin, scratch, *base, "--directory=d", "--numjobs=2")
    assert set(listing(root / "d")) == {"j.0.0", "j.0.1", "j.1.0", "j.1.1"}
    assert r.job["iowatt"]["target"]["beneath"]["dir"] == str(root)


def test_unlink_removes_only_the_files_the_run_created(engine_bin: Path, scratch: Path) -> None:
    (scratch / "j.0.1").write_bytes(b"mine" * 2048)  # 8 KiB: kept
    r, _ = ours(engine_bin, scratch, "--name=j", "--rw=read", "--filesize=8k", "--nrfiles=3", "--unlink=1")
    assert [f["created"] for f in r.job["iowatt"]["files"]] == [True, False, True]
    assert listing(scratch) == {"j.0.1": (8 * KiB, True)}
    assert (scratch / "j.0.1").read_bytes() == b"mine" * 2048


def test_create_new_holds_for_every_file(engine_bin: Path, scratch: Path) -> None:
    (scratch / "j.0.2").write_bytes(b"x")
    r, _ = ours(
        engine_bin,
        scratch,
        "--name=j",
        "--rw=write",
        "--filesize=8k",
        "--nrfiles=3",
        "--create_new=1",
        check=False,
    )
    assert r.rc == 2 and "create_new: " in r.stderr and "j.0.2" in r.stderr
    assert listing(scratch) == {"j.0.2": (1, True)}


def test_sigint_removes_every_file_the_run_created(engine_bin: Path, scratch: Path) -> None:
    p = subprocess.Popen(
        [str(engine_bin), "--name=j", "--rw=randwrite", "--filesize=64k", "--nrfiles=4", "--numjobs=2",
         "--time_based", "--runtime=30", "--unlink=1", f"--directory={scratch}"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    wait_until(lambda: len(listing(scratch)) == 8, timeout=30)
    time.sleep(0.3)
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=30)
    assert p.returncode == 0, err
    assert json.loads(out)["iowatt"]["interrupted"] is True
    assert listing(scratch) == {}


@needs_fio
@pytest.mark.parametrize(
    "args",
    [
        ("--rw=write", "--nrfiles=2"),  # read back by file, then offset (fio's tree)
        ("--rw=randwrite", "--nrfiles=3", "--openfiles=1"),  # in write order (fio's list), reopened
        ("--rw=randrw", "--filename=a:b", "--ioengine=libaio", "--iodepth=4"),
    ],
)
def test_verify_reads_back_each_file_of_a_clone_as_fio(
    engine_bin: Path, scratch: Path, args: tuple[str, ...]
) -> None:
    """verify in a job of several files per clone: each file's writes read back and checked, the
    per-file counts fio's write_iolog gives (fio's verify_state file stays in its directory)"""
    fl, fc, fdoc, ol, oc, r = side_by_side(
        engine_bin, scratch, "--name=j", "--bs=4k", "--filesize=16k", "--verify=crc32c",
        "--directory=@DIR@", "--randrepeat=0", *args,
    )  # fmt: skip
    assert {k: v for k, v in fl.items() if not k.endswith(".state")} == ol
    v = r.doc["jobs"][0]["iowatt"]["verify"]
    assert v["failed_intervals"] == 0 and v["blocks_verified"] == v["blocks_written"] > 0
    if "--rw=randrw" in args:  # the mix's draws differ: every write of each file is read back
        w = {k: c[1] for k, c in oc.items()}
        assert sum(w.values()) == v["blocks_written"] and r.doc["jobs"][0]["error"] == 0
        return
    assert oc == fc and all(c[0] == c[1] == 4 for c in oc.values())
    assert r.doc["jobs"][0]["read"]["total_ios"] == fdoc["jobs"][0]["read"]["total_ios"]


@needs_fio
def test_verify_failure_names_the_file_of_several_as_fio(engine_bin: Path, scratch: Path) -> None:
    """fio writes two files with verify headers, a byte of the second is flipped: both tools' read
    with verify fail on that file's block, with the same checksums; ours names the file"""
    job = ("--name=j", "--bs=4k", "--nrfiles=2", "--filesize=16k", "--verify=crc32c")
    p = subprocess.run([FIO or "fio", *job, "--rw=write", "--do_verify=0"], capture_output=True, cwd=scratch)
    assert p.returncode == 0, p.stderr
    b = bytearray((scratch / "j.0.1").read_bytes())
    b[8192 + 1000] ^= 0xFF
    (scratch / "j.0.1").write_bytes(b)
    f = subprocess.run([FIO or "fio", *job, "--rw=read"], capture_output=True, text=True, cwd=scratch)
    assert f.returncode == 1 and "verify failed at file j.0.1 offset 8192" in f.stderr
    r, _ = ours(engine_bin, scratch, *job, "--rw=read", check=False)
    files = r.doc["jobs"][0]["iowatt"]["files"]
    assert r.rc == 1 and {f["filename"]: f["read_ios"] for f in files} == {"j.0.0": 4, "j.0.1": 4}
    (fail,) = r.doc["jobs"][0]["iowatt"]["verify"]["failures"]
    assert (fail["file"], fail["offset"], fail["field"]) == ("j.0.1", 8192, "crc32c")
    assert fail["expected"] in f.stderr and fail["actual"] in f.stderr
    assert "crc32c mismatch in j.0.1 at offset 8192" in r.stderr and r.doc["jobs"][0]["error"] == 84


def test_verify_with_several_files_refuses_what_the_log_does_not_replay(
    engine_bin: Path, scratch: Path
) -> None:
    refused = (("--verify_only=1", "verify_only"), ("--loops=2", "loops"), ("--file_append=1", "verify"))
    for extra, opt in refused:
        r, _ = ours(
            engine_bin, scratch, "--name=j", "--rw=write", "--verify=md5", "--nrfiles=2", "--filesize=8k",
            extra, check=False,
        )  # fmt: skip
        assert r.rc == 2 and r.stderr.startswith(f"iowatt-engine: {opt}: ") and listing(scratch) == {}
    # norandommap: a block written twice is read back once, as its latest write (fio's tree)
    r, oc = ours(
        engine_bin, scratch, "--name=j", "--rw=randwrite", "--norandommap", "--verify=md5", "--nrfiles=2",
        "--filesize=16k", "--unlink=1",
    )  # fmt: skip
    assert all(c[1] == 4 and 1 <= c[0] <= 4 for c in oc.values()) and sum(c[0] for c in oc.values()) < 8
    assert r.doc["jobs"][0]["iowatt"]["verify"]["failed_intervals"] == 0
    # one file per clone (a generated name) verifies as a single filename does
    r, oc = ours(
        engine_bin, scratch, "--name=j", "--rw=write", "--verify=md5", "--filesize=64k", "--numjobs=2"
    )
    assert oc == {"j.0.0": [16, 16], "j.1.0": [16, 16]}


def test_an_empty_directory_clears_one_given_before(engine_bin: Path, scratch: Path) -> None:
    # the agent points a job file's job at its target with filename and takes its directory back
    r, _ = ours(
        engine_bin, scratch, "--directory=/nonexistent",
        "--name=j", "--directory=", f"--filename={scratch}/t",
        "--size=8k",
    )  # fmt: skip
    assert r.job["iowatt"]["options"]["directory"] is None
    assert r.job["iowatt"]["target"]["path"] == f"{scratch}/t"
