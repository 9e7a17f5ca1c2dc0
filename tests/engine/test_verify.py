"""The verify family (agent/engine/src/verify.c, README § Verification), beside Debian's fio on
the same small jobs: both pass a clean write+verify run with the same I/O counts, both detect the
same corruption (bytes flipped in the file between a write-only run and a verify_only run), and
for the types whose on-disk format is fio's (crc32c, md5, meta, pattern) each verifies what the
other wrote."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from .conftest import FIO_CLOCK, Result, made_once, run_engine

BS = 4096
BLOCKS = 16
SIZE = BS * BLOCKS
BAD_BLOCK = 3
BAD_AT = BAD_BLOCK * BS + 1000  # inside the data of block 3, past every header


def fio_bin() -> str:
    f = shutil.which("fio")
    if not f:
        pytest.skip("Debian's fio is not installed")
    return f


def fio(*args: str) -> tuple[int, dict[str, Any] | None, str]:
    # in the file's directory: a failed verify leaves fio's state file (local-j-0-verify.state) in the cwd
    cwd = next(Path(x.split("=", 1)[1]).parent for x in args if x.startswith("--filename="))
    p = subprocess.run(
        [fio_bin(), FIO_CLOCK, "--output-format=json", *args],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=cwd,
    )
    out = p.stdout
    # fio prints "fio: pid=..., err=84/..." before the JSON document when a job fails
    doc = json.loads(out[out.index("{") :]) if "{" in out else None
    return p.returncode, doc, p.stderr


def fio_jobs(where: Path, jobs: dict[str, list[str]]) -> dict[str, dict[str, Any]]:
    """Several independent jobs in one fio run (each `--name=` starts a job; the options after it
    are that job's): fio's start-up (~0.1 CPU-s, clock calibration and dynamic linking) is paid once
    instead of once a job. Returns each job's part of the JSON document by name. A job's number in
    the run changes its random offsets and buffers, not what verifies them: a file fio wrote as the
    Nth job passes a later single-job verify_only run, fio's and the engine's alike (fio 3.33, every
    type, 2026-12-07)."""
    args = [a for name, more in jobs.items() for a in (f"--name={name}", *more)]
    p = subprocess.run(
        [fio_bin(), FIO_CLOCK, "--output-format=json", *args],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=where,
    )
    assert p.returncode == 0, p.stderr
    out = p.stdout
    doc = json.loads(out[out.index("{") :])
    got = {j["jobname"]: j for j in doc["jobs"]}
    assert set(got) == set(jobs), (sorted(got), p.stderr)
    return got


def job_args(path: Path, vtype: str, *extra: str) -> list[str]:
    a = ["--name=j", f"--filename={path}", "--rw=randwrite", f"--bs={BS}", f"--size={SIZE}"]
    if vtype == "pattern":
        a += ["--verify=pattern", "--verify_pattern=0xdeadbeef"]
    elif vtype == "pattern+header":
        a += ["--verify_pattern=0x1234%o"]  # fio: verify_pattern alone = pattern with the header
    else:
        a += [f"--verify={vtype}"]
    return a + list(extra)


def flip(path: Path, at: int, n: int = 2) -> None:
    with open(path, "r+b") as f:
        f.seek(at)
        b = f.read(n)
        f.seek(at)
        f.write(bytes(x ^ 0xFF for x in b))


def verify_obj(r: Result) -> dict[str, Any]:
    return r.job["iowatt"]["verify"]


# the rest of fio's checksums (src/vsum.c), each stored as fio 3.33 stores it
MORE = ["crc64", "crc32", "crc16", "crc7", "sha1", "sha512", "xxhash"]
MORE += ["sha3-224", "sha3-256", "sha3-384", "sha3-512"]
TYPES = ["crc32c", "md5", "sha256", "meta", "pattern", "pattern+header", *MORE]
# fio's sha256 and sha512 fields are not the FIPS 180-4 digests of the data
SAME_FORMAT = ["crc32c", "md5", "meta", "pattern", "pattern+header", *(t for t in MORE if t != "sha512")]


# fio's examples/enospc-pressure.fio: verify_async=4 with libaio (fio's four verify threads)
ASYNC = ("--verify_async=4", "--ioengine=libaio", "--iodepth=8")


@pytest.fixture(scope="module")
def fio_write_verify() -> Iterator[dict[str, dict[str, Any]]]:
    """fio's write+verify job of every type, all in one fio run (each its own job and file: a
    job writes and verifies its own blocks, whatever its number in the run), once for the run."""

    def make(d: Path) -> None:
        spec = {t: job_args(d / t, t)[1:] for t in TYPES}
        spec["async"] = job_args(d / "async", "crc32c", *ASYNC)[1:]
        jobs = fio_jobs(d, spec)
        (d / "jobs.json").write_text(json.dumps(jobs))

    for d in made_once("verify-write-verify", make):
        yield json.loads((d / "jobs.json").read_text())


@pytest.mark.parametrize("vtype", TYPES)
def test_write_verify_passes_beside_fio(
    run, scratch: Path, vtype: str, fio_write_verify: dict[str, dict[str, Any]]
) -> None:
    r = run(*job_args(scratch / "a", vtype))
    fj = fio_write_verify[vtype]
    v = verify_obj(r)
    assert r.job["error"] == 0 and fj["error"] == 0
    # the verify phase's reads are the job's reads, in both tools
    assert r.job["write"]["total_ios"] == fj["write"]["total_ios"] == BLOCKS
    assert r.job["read"]["total_ios"] == fj["read"]["total_ios"] == BLOCKS
    assert v["blocks_verified"] == BLOCKS and v["failed_intervals"] == 0
    assert v["failures"] == []


def test_verify_async_reads_and_verifies_as_fio(
    run, scratch: Path, fio_write_verify: dict[str, dict[str, Any]]
) -> None:
    """verify_async=N: fio hands each read back to one of N verify threads; the engine's job
    threads verify their own reads (README § Verification). What is written, read back, verified
    and counted is the same, and a flipped byte still fails the job (EILSEQ, exit 1)."""
    r = run(*job_args(scratch / "a", "crc32c", *ASYNC))
    fj = fio_write_verify["async"]
    assert r.job["error"] == 0 and fj["error"] == 0
    assert r.job["write"]["total_ios"] == fj["write"]["total_ios"] == BLOCKS
    assert r.job["read"]["total_ios"] == fj["read"]["total_ios"] == BLOCKS
    assert verify_obj(r)["blocks_verified"] == BLOCKS
    flip(scratch / "a", BAD_AT)
    r = run(*job_args(scratch / "a", "crc32c", *ASYNC, "--verify_only=1"), check=False)
    assert r.rc == 1 and r.job["error"] == 84 and verify_obj(r)["failed_intervals"] == 1


@pytest.fixture(scope="module")
def fio_written() -> Iterator[dict[str, Path]]:
    """The file fio writes (do_verify=0) for every type, all in one fio run, once for the run; a
    test copies its own."""

    def make(d: Path) -> None:
        jobs = fio_jobs(d, {t: job_args(d / t, t, "--do_verify=0")[1:] for t in TYPES})
        assert all(j["error"] == 0 for j in jobs.values()), jobs

    for d in made_once("verify-written", make):
        yield {t: d / t for t in TYPES}


@pytest.mark.parametrize("vtype", TYPES)
def test_corruption_detected_beside_fio_and_each_verifies_what_the_other_wrote(
    engine_bin: Path, scratch: Path, vtype: str, fio_written: dict[str, Path]
) -> None:
    """Each tool writes a file (do_verify=0); for the types whose format is fio's each verifies the
    other's file; then bytes are flipped in both and each detects them in its own file (the
    engine's report in full) and, fio's formats, in the other's. One pair of written files serves
    every check (they were two tests writing the same files); fio's is a copy of the one fio wrote
    for this type in the module's single fio run (`fio_written`)."""
    ours, theirs = scratch / "ours", scratch / "theirs"
    run_engine(engine_bin, *job_args(ours, vtype, "--do_verify=0"))
    shutil.copyfile(fio_written[vtype], theirs)
    same = vtype in SAME_FORMAT
    if same:
        rc, _, err = fio(*job_args(ours, vtype, "--verify_only=1"))
        assert rc == 0, err
        r = run_engine(engine_bin, *job_args(theirs, vtype, "--verify_only=1"))
        assert verify_obj(r)["blocks_verified"] == BLOCKS
    for p in (ours, theirs):
        flip(p, BAD_AT)
    r = run_engine(engine_bin, *job_args(ours, vtype, "--verify_only=1"), check=False)
    rc, doc, ferr = fio(*job_args(theirs, vtype, "--verify_only=1"))
    if vtype == "meta":
        # meta checks the header only, in both tools: a data byte flipped passes
        assert r.rc == 0 and rc == 0, (r.stderr, ferr)
        return
    if vtype == "sha512":
        # fio 3.33's own sha512 check passes its block with 2 bytes flipped at byte 1000 (its field is
        # not the FIPS digest of the data, § Verification); the engine's FIPS digest catches them
        assert rc == 0, ferr
    else:
        assert rc != 0 and f"offset {BAD_BLOCK * BS}" in ferr, ferr
        assert doc is not None and doc["jobs"][0]["error"] == 84
    assert r.rc == 1, r.stderr
    assert r.job["error"] == 84  # EILSEQ, as fio
    v = verify_obj(r)
    assert v["failed_intervals"] == 1 and v["blocks_verified"] == BLOCKS
    f = v["failures"][0]
    assert f["offset"] == BAD_BLOCK * BS and f["length"] == BS
    assert f["field"] == {"pattern+header": "pattern"}.get(vtype, vtype)
    assert f["expected"] != f["actual"]
    # the generator regenerates what was written: the exact bytes that changed
    assert f["first_bad_byte_offset"] == BAD_AT and f["bad_bytes"] == 2
    assert f"offset {BAD_BLOCK * BS}" in r.stderr and "verify:" in r.stderr
    assert "84" not in r.stdout.split("{", 1)[0]  # stdout is one JSON document
    if same:  # and each detects the flipped bytes in the other's file
        assert fio(*job_args(ours, vtype, "--verify_only=1"))[0] != 0
        r = run_engine(engine_bin, *job_args(theirs, vtype, "--verify_only=1"), check=False)
        assert r.rc == 1 and verify_obj(r)["failures"][0]["offset"] == BAD_BLOCK * BS


def test_meta_detects_a_header_corruption_beside_fio(
    run, scratch: Path, fio_written: dict[str, Path]
) -> None:
    ours, theirs = scratch / "ours", scratch / "theirs"
    run(*job_args(ours, "meta", "--do_verify=0"))
    shutil.copyfile(fio_written["meta"], theirs)
    for p in (ours, theirs):
        flip(p, BAD_BLOCK * BS + 16, 1)  # the header's offset field
    r = run(*job_args(ours, "meta", "--verify_only=1"), check=False)
    rc, _, ferr = fio(*job_args(theirs, "meta", "--verify_only=1"))
    assert rc != 0 and "bad header offset" in ferr
    assert r.rc == 1
    f = verify_obj(r)["failures"][0]
    assert f["field"] == "offset" and f["offset"] == BAD_BLOCK * BS and f["expected"] == str(BAD_BLOCK * BS)


PATTERNS = ["0xdeadbeef", "0xAB", "255", "1234567", "-12", '"abc"', "%o", "0x0102030405060708090a"]


def pattern_args(pattern: str) -> list[str]:
    return ["--rw=write", f"--bs={BS}", "--size=16k", "--verify=pattern", f"--verify_pattern={pattern}"]


@pytest.fixture(scope="module")
def fio_pattern_files() -> Iterator[dict[str, Path]]:
    """What fio writes for each pattern, all in one fio run, once for the run: a sequential write
    of a pattern without a header is the same bytes whatever the job's number in the run."""

    def make(d: Path) -> None:
        files = {
            f"p{i}": [*pattern_args(p), f"--filename={d / f'p{i}'}", "--do_verify=0"]
            for i, p in enumerate(PATTERNS)
        }
        jobs = fio_jobs(d, files)
        assert all(j["error"] == 0 for j in jobs.values()), jobs

    for d in made_once("verify-patterns", make):
        yield {p: d / f"p{i}" for i, p in enumerate(PATTERNS)}


@pytest.mark.parametrize("pattern", PATTERNS)
def test_verify_pattern_bytes_are_fios(
    run, scratch: Path, pattern: str, fio_pattern_files: dict[str, Path]
) -> None:
    a = scratch / "a"
    run("--name=j", *pattern_args(pattern), f"--filename={a}", "--do_verify=0")
    assert a.read_bytes() == fio_pattern_files[pattern].read_bytes()


def test_verify_pattern_text_is_refused_when_bad(run, scratch: Path) -> None:
    for bad in ["0x", '"abc', "zz", "99999999999", "%o" * 9, "0x" + "ab" * 600]:
        r = run(
            "--name=j",
            f"--filename={scratch / 'f'}",
            "--rw=write",
            "--size=16k",
            f"--verify_pattern={bad}",
            check=False,
        )
        assert r.rc == 2 and r.stderr.startswith("iowatt-engine: verify_pattern:"), (bad, r.stderr)
        assert not (scratch / "f").exists()


@pytest.mark.parametrize(
    "extra",
    [
        ["--ioengine=libaio", "--iodepth=8"],
        ["--ioengine=io_uring", "--iodepth=16"],
        ["--numjobs=2", "--group_reporting"],
        ["--rw=randrw", "--ioengine=io_uring", "--iodepth=4"],
        ["--rw=write", "--verify_interval=1024", "--verify_offset=512"],
        ["--bssplit=4k/50:16k/50"],
        ["--norandommap"],
        ["--norandommap", "--ioengine=libaio", "--iodepth=8"],
        ["--loops=2", "--direct=1"],
        ["--verify_backlog=4", "--verify_backlog_batch=2"],
        ["--verify_backlog=3", "--ioengine=io_uring", "--iodepth=8"],
    ],
    ids=lambda e: " ".join(e),
)
def test_verify_variants_pass_and_read_back_every_write(run, scratch: Path, extra: list[str]) -> None:
    r = run(*job_args(scratch / "f", "crc32c", *extra, "--size=256k"))
    v = verify_obj(r)
    nj = 2 if "--numjobs=2" in extra else 1
    assert v["failed_intervals"] == 0 and r.job["error"] == 0
    assert v["blocks_written"] == r.job["write"]["total_ios"] > 0
    if "--norandommap" in extra:  # each block written is read back once, as fio (below)
        assert 0 < v["blocks_verified"] == r.job["read"]["total_ios"] < v["blocks_written"]
    else:
        assert v["blocks_verified"] == v["blocks_written"]
    if "randrw" not in " ".join(extra) and "--norandommap" not in extra:
        assert r.job["read"]["total_ios"] == r.job["write"]["total_ios"]
    if "--verify_interval=1024" in extra:
        assert v["intervals_verified"] == 4 * v["blocks_verified"]
    once = not any(x in " ".join(extra) for x in ("--loops=2", "--norandommap", "bssplit"))
    if nj == 1 and once:
        assert v["numberio_checked"]


@pytest.mark.parametrize("engine", ["psync", "io_uring"])
def test_corruption_found_with_numjobs_and_async(run, scratch: Path, engine: str) -> None:
    f = scratch / "f"
    args = job_args(f, "crc32c", f"--ioengine={engine}", "--iodepth=8", "--numjobs=2", "--group_reporting")
    run(*args, "--do_verify=0")
    flip(f, BAD_AT)
    r = run(*args, "--verify_only=1", check=False)
    assert r.rc == 1
    fails = verify_obj(r)["failures"]
    assert len(fails) == 2 and {x["thread"] for x in fails} == {0, 1}  # each clone reads everything
    assert all(x["offset"] == BAD_BLOCK * BS for x in fails)


def test_verify_fatal_stops_at_the_first_failure(run, scratch: Path) -> None:
    f = scratch / "f"
    args = job_args(f, "md5", "--rw=write")
    run(*args, "--do_verify=0")
    flip(f, BAD_AT)
    flip(f, 9 * BS + 500)
    r = run(*args, "--verify_only=1", check=False)
    assert r.rc == 1 and verify_obj(r)["failed_intervals"] == 2
    assert [x["offset"] for x in verify_obj(r)["failures"]] == [BAD_BLOCK * BS, 9 * BS]
    r = run(*args, "--verify_only=1", "--verify_fatal=1", check=False)
    v = verify_obj(r)
    assert r.rc == 1 and v["failed_intervals"] == 1 and v["blocks_verified"] == BAD_BLOCK + 1


def test_verify_dump_beneath(run, scratch: Path) -> None:
    d = scratch / "d"
    d.mkdir()
    args = [
        "--name=j",
        "--filename=t",
        f"--beneath={d}",
        "--rw=write",
        f"--bs={BS}",
        f"--size={64 * BS}",
        "--verify=crc32c",
    ]
    run(*args, "--do_verify=0")
    for blk in range(0, 64, 2):  # 32 bad blocks: the dumps stop at 16 files
        flip(d / "t", blk * BS + 100)
    r = run(*args, "--verify_only=1", "--verify_dump=1", check=False)
    assert r.rc == 1 and verify_obj(r)["failed_intervals"] == 32
    dumps = verify_obj(r)["dumps"]
    assert len(dumps) == 16
    assert sorted(p.name for p in d.iterdir() if p.name != "t") == sorted(dumps)
    got = (d / f"t.{2 * BS}.received").read_bytes()
    want = (d / f"t.{2 * BS}.expected").read_bytes()
    assert len(got) == len(want) == BS and sum(x != y for x, y in zip(got, want, strict=True)) == 2
    assert (d / f"t.{2 * BS}.received").stat().st_mode & 0o777 == 0o600
    # existing dumps are never overwritten (O_EXCL), nor followed
    (d / f"t.{0}.received").unlink()
    (d / f"t.{0}.received").symlink_to(scratch / "elsewhere")
    r = run(*args, "--verify_only=1", "--verify_dump=1", check=False)
    assert r.rc == 1 and not (scratch / "elsewhere").exists()
    assert "verify_dump" in r.stderr


# fio reads back each block written once, its latest write, where writes may land on a block
# written before in the phase without a random map: (writes, reads) of 16 4k writes over 64k
LATEST_ONLY = {
    "back8k": (["--rw=write:-8k"], (16, 15)),
    "back4k": (["--rw=write:-4k"], (16, 1)),
    "back12k": (["--rw=write:-12k", "--ioengine=libaio", "--iodepth=4"], (16, 8)),
}


def test_backwards_holes_read_back_each_block_once_as_fio(run, scratch: Path) -> None:
    """fio's verify list without a random map is a tree by offset that drops an overlapped write:
    rw=write:-8k writes 16 blocks, one of them twice, and reads back 15 (README § Verification)"""
    d = scratch / "fio"
    d.mkdir()
    common = [f"--bs={BS}", f"--size={SIZE}", "--verify=crc32c"]
    theirs = fio_jobs(d, {k: [f"--filename={d / k}", *common, *v[0]] for k, v in LATEST_ONLY.items()})
    for name, (extra, (writes, reads)) in LATEST_ONLY.items():
        r = run("--name=j", f"--filename={scratch / name}", *common, *extra)
        for j in (r.job, theirs[name]):
            assert (j["error"], j["write"]["total_ios"], j["read"]["total_ios"]) == (0, writes, reads), name
        assert verify_obj(r)["blocks_verified"] == reads and verify_obj(r)["failed_intervals"] == 0


IO_PASSES = {
    "write": ["--rw=write"],
    "randwrite": [],
    "backlog": ["--verify_backlog=4"],
}


def test_io_size_beyond_size_runs_fio_passes(run, scratch: Path) -> None:
    """fio 3.33's job loop with verify and io_size > size: a pass writes size bytes, reads them back,
    and another pass starts while the job's bytes, the reads' included, are short of io_size by a
    block or more: 320k over 64k is 3 passes, 48 writes and 48 reads (one write phase of io_size
    would be 80 and 80), in both tools, also with verify_backlog. With norandommap fio's pass is
    io_size (80 random writes) and each block hit is read back once (the 16 blocks, or one fewer
    when a draw misses one: random in both tools)"""
    d = scratch / "fio"
    d.mkdir()
    jobs = {**IO_PASSES, "norandommap": ["--norandommap"]}
    theirs = fio_jobs(d, {k: job_args(d / k, "crc32c", "--io_size=320k", *v)[1:] for k, v in jobs.items()})
    for name, extra in jobs.items():
        r = run(*job_args(scratch / name, "crc32c", "--io_size=320k", *extra))
        v = verify_obj(r)
        assert v["failed_intervals"] == 0 and v["blocks_verified"] == r.job["read"]["total_ios"]
        for j in (r.job, theirs[name]):
            counts = (j["error"], j["write"]["total_ios"], j["read"]["total_ios"])
            if name == "norandommap":
                assert counts[:2] == (0, 80) and BLOCKS - 3 <= counts[2] <= BLOCKS, counts
            else:
                assert counts == (0, 48, 48), name


@pytest.mark.parametrize(
    ("extra", "named"),
    [
        (["--verify=crc8"], "verify: unknown type 'crc8'"),
        (["--verify=sha3"], "verify: unknown type 'sha3'"),
        # fio's job loop of a mixed job: not implemented
        (["--verify=crc32c", "--io_size=128k", "--rw=randrw"], "io_size: 131072 is larger than size"),
        (["--verify=crc32c", "--verify_state_load=1"], "verify_state_load:"),
        (["--verify=crc32c", "--verify_state_save=1"], "verify_state_save:"),
        (["--verify=pattern"], "verify: pattern needs verify_pattern"),
        (["--verify=crc32c", "--verify_only=1", "--time_based", "--runtime=1"], "verify_only:"),
        (["--verify=crc32c", "--verify_interval=3000"], "verify_interval:"),
        (["--verify=crc32c", "--verify_offset=4090"], "verify_offset:"),
        (["--verify=md5", "--bs=32"], "bs:"),
        (["--verify=crc32c", "--norandommap", "--bssplit=4k/50:8k/50"], "norandommap:"),
        (["--verify=crc32c", "--zero_buffers"], "zero_buffers:"),
        (["--verify_only=1"], "verify_only:"),
    ],
)
def test_refusals_exit_2_naming_the_option(run, scratch: Path, extra: list[str], named: str) -> None:
    r = run("--name=j", f"--filename={scratch / 'f'}", "--rw=randwrite", "--size=64k", *extra, check=False)
    assert r.rc == 2, r.stderr
    assert r.stderr.startswith(f"iowatt-engine: {named}"), r.stderr
    assert len(r.stderr.strip().splitlines()) == 1
    assert not (scratch / "f").exists()


def test_read_job_verifies_what_it_reads(run, scratch: Path) -> None:
    f = scratch / "f"
    run(*job_args(f, "sha256", "--rw=write", "--do_verify=0"))
    r = run("--name=j", f"--filename={f}", "--rw=randread", f"--bs={BS}", f"--size={SIZE}", "--verify=sha256")
    assert verify_obj(r)["blocks_verified"] == BLOCKS == r.job["read"]["total_ios"]
    assert r.job["write"]["total_ios"] == 0
    flip(f, BAD_AT)
    r = run(
        "--name=j",
        f"--filename={f}",
        "--rw=read",
        f"--bs={BS}",
        f"--size={SIZE}",
        "--verify=sha256",
        check=False,
    )
    assert r.rc == 1 and verify_obj(r)["failures"][0]["field"] == "sha256"


def test_verify_only_cannot_tell_an_older_valid_block(run, scratch: Path) -> None:
    """A block of an earlier run at the right place (a lost write) is self-consistent: like fio,
    verify_only has no record of this run's seeds and numberio and accepts it. A write+verify run
    checks both (numberio_checked; tests/unit.c puts a stale block before the check)."""
    f, old = scratch / "f", scratch / "old"
    args = job_args(f, "crc32c", "--rw=write", "--do_verify=0")
    run(*args)
    shutil.copy(f, old)
    run(*args)  # every block rewritten; now put one block of the first run back
    with open(f, "r+b") as out, open(old, "rb") as src:
        src.seek(5 * BS)
        out.seek(5 * BS)
        out.write(src.read(BS))
    assert f.read_bytes()[5 * BS : 6 * BS] == old.read_bytes()[5 * BS : 6 * BS]
    r = run(*job_args(f, "crc32c", "--rw=write", "--verify_only=1"))
    assert verify_obj(r)["numberio_checked"] is False and verify_obj(r)["failed_intervals"] == 0
