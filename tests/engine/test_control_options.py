"""Options of fio's job files that the engine refused until issue 24's last round (src/control.c,
README § Job options), each beside Debian's fio 3.33 on the same small job: ignore_error,
exit_what, allow_file_create, fill_device, offset_increment=N% with offset_align, verify_backlog
with numjobs > 1 and the per-I/O logs kept as records (log_entries). Counts, errors, offsets and
output keys are compared, never timings."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from .conftest import FIO_CLOCK, run_engine
from .filemode import Unavailable, small_tmpfs
from .test_scheduling import full_device

FIO = shutil.which("fio")
needs_fio = pytest.mark.skipif(FIO is None, reason="Debian's fio is not installed")


def fio_run(*args: str, cwd: Path | None = None, refused: bool = False) -> subprocess.CompletedProcess[str]:
    """fio's run of args; `refused`: a line fio must refuse while parsing it, so FIO_CLOCK comes
    last (fio stops at the refused option before it calibrates its clock: conftest.FIO_CLOCK)."""
    assert FIO is not None
    argv = (
        [FIO, "--output-format=json", *args, FIO_CLOCK]
        if refused
        else [FIO, FIO_CLOCK, "--output-format=json", *args]
    )
    return subprocess.run(argv, capture_output=True, text=True, timeout=120, cwd=cwd)


def doc_of(out: str) -> dict[str, Any]:
    return json.loads(out[out.index("{") :])


def both(engine_bin: Path, scratch: Path, *args: str, rc: int = 0, extra: tuple[str, ...] = ()):
    """The same job through iowatt (with extra) and fio, each in its own directory ({d})."""
    ours, theirs = scratch / "iowatt", scratch / "fio"
    ours.mkdir(exist_ok=True)
    theirs.mkdir(exist_ok=True)
    a = run_engine(engine_bin, *(x.format(d=ours) for x in args), *extra, check=False)
    b = fio_run(*(x.format(d=theirs) for x in args), cwd=theirs)
    assert a.rc == rc, a.stderr
    assert b.returncode == (1 if rc else 0), b.stderr
    return doc_of(a.stdout), doc_of(b.stdout)


# ---- ignore_error --------------------------------------------------------------------------------


IO_ERROR_LINE = re.compile(r"io_u error on file \S+: (.*)$")


@needs_fio
@pytest.mark.parametrize(
    ("value", "continues", "dump"),
    [
        (",ENOSPC", True, "1"),
        (",28", True, "0"),
        ("EIO,EIO:ENOSPC", True, "1"),
        (",EIO", False, "0"),
        ("ENOSPC", False, "1"),
    ],
)
def test_ignore_error_continues_over_the_listed_write_errors_as_fio(
    engine_bin: Path, scratch: Path, value: str, continues: bool, dump: str
) -> None:
    """Writes past the first MiB of the device fail with ENOSPC: listed for writes, the job goes
    on over each (counted in total_err, the job's error is the first one, exit 0); listed only
    for reads, or not listed, ENOSPC ends the job (exit 1), in both tools. error_dump: each error
    is one stderr line in fio's words (the same errors, offsets and lengths in both tools); with
    error_dump=0 only the fatal one."""
    jobs, dumped = [], []
    for side in ("iowatt", "fio"):
        d = scratch / side
        d.mkdir()
        try:
            with full_device(d) as dev:
                args = [
                    "--name=a", f"--filename={dev}", "--rw=write", "--bs=64k", "--size=4m", "--direct=1",
                    f"--ignore_error={value}", f"--error_dump={dump}",
                ]  # fmt: skip
                if side == "iowatt":
                    r = run_engine(engine_bin, *args, "--destructive=1", check=False)
                    rc, out, err = r.rc, r.stdout, r.stderr
                else:
                    p = fio_run(*args, cwd=d)
                    rc, out, err = p.returncode, p.stdout, p.stderr
        except Unavailable as e:
            pytest.skip(str(e))
        assert rc == (0 if continues else 1), (side, err)
        jobs.append(doc_of(out)["jobs"][0])
        dumped.append([m[1] for line in err.splitlines() if (m := IO_ERROR_LINE.search(line))])
    ours, theirs = jobs
    assert ours["error"] == theirs["error"] == 28
    assert dumped[0] == dumped[1], dumped
    if continues and dump == "1":
        assert len(dumped[0]) == ours["total_err"] > 0  # every error, the ones gone on over
    else:
        assert len(dumped[0]) == (0 if continues else 1)  # only the fatal one
    assert all(d.startswith("No space left on device: write offset=") for d in dumped[0]), dumped[0]
    if continues:
        assert ours["write"]["total_ios"] == theirs["write"]["total_ios"] == 64
        assert ours["total_err"] == theirs["total_err"] > 0
        assert ours["first_error"] == theirs["first_error"] == 28
        assert ours["write"]["io_bytes"] == theirs["write"]["io_bytes"]
    else:
        assert 0 < ours["write"]["total_ios"] < 64 and 0 < theirs["write"]["total_ios"] < 64


@needs_fio
def test_ignore_error_values_as_fio(engine_bin: Path, scratch: Path) -> None:
    f = scratch / "t"
    f.write_bytes(b"\0" * 65536)
    base = ["--name=a", f"--filename={f}", "--size=64k", "--ioengine=null"]
    # fio 3.33 knows 34 names (EPERM..ERANGE: not EILSEQ, EDEADLK, ...) and keeps blanks in the
    # tokens (" EIO" is unknown to it: it even aborts); its --parse-only skips this parser, so
    # both run a null job
    good = ["EAGAIN,ENOSPC:122", ",ENOSPC", "EIO", "5:-28", "EPERM:ERANGE", ",,84", "EIO,"]
    bad = ["EFOO", "E", "ENAMETOOLONG", "EDEADLK", ",,EILSEQ", "0", "EIO,EIO,EIO,EIO", " EIO"]
    # fio takes every accepted value in one run, a null job each (each job parses its own; a
    # value fio refused would fail the run, naming it); a refused value needs a run of its own
    each = [x for k, v in enumerate(good) for x in (f"--name=a{k}", *base[1:], f"--ignore_error={v}")]
    p = fio_run(*each)
    assert p.returncode == 0, (good, p.stderr)
    assert len(doc_of(p.stdout)["jobs"]) == len(good)
    accepted = {}
    for v in good:
        accepted[v] = r = run_engine(engine_bin, *base, f"--ignore_error={v}", check=False)
        assert r.rc == 0, (v, r.stderr)
    for v in bad:
        p = fio_run(*base, f"--ignore_error={v}", refused=True)
        assert p.returncode != 0, (v, p.stdout)
        r = run_engine(engine_bin, *base, f"--ignore_error={v}", check=False)
        assert r.rc == 2 and r.stderr.startswith("iowatt-engine: ignore_error: "), (v, r.stderr)
        assert len(r.stderr.strip().splitlines()) == 1 and not r.stdout
    o = accepted["EAGAIN,ENOSPC:122"].job["iowatt"]["options"]
    assert o["ignore_error"] == [[11], [28, 122], []]
    assert o["continue_on_error"] == "io", "a non-empty list turns its type on, as fio"


# ---- exit_what -----------------------------------------------------------------------------------


def exit_what_args(what: str) -> tuple[str, ...]:
    # a ends first (64 KiB) and stops what its exit_what says; b (its own group) would run 20 s;
    # c starts after them (stonewall). a's startdelay lets b reach its ramp (fio's race, see
    # test_scheduling's exitall tests).
    return (
        "--thread",
        "--name=a", "--filename={d}/a", "--size=64k", "--exitall", f"--exit_what={what}",
        "--startdelay=300ms",
        "--name=b", "--filename={d}/b", "--size=1m", "--runtime=20", "--time_based", "--new_group",
        "--name=c", "--filename={d}/c", "--size=64k", "--stonewall",
    )  # fmt: skip


@needs_fio
@pytest.mark.parametrize("what", ["stonewall", "all"])
def test_exit_what_reaches_as_fio(engine_bin: Path, scratch: Path, what: str) -> None:
    a, b = both(engine_bin, scratch, *exit_what_args(what))
    for doc in (a, b):
        jobs = {j["jobname"]: j for j in doc["jobs"]}
        assert jobs["a"]["read"]["total_ios"] == 16
        assert jobs["b"]["job_runtime"] < 20000 / 2, "b (another group) was stopped when a ended"
        c = jobs.get("c", {"read": {"total_ios": 0}})["read"]["total_ios"]
        assert c == (16 if what == "stonewall" else 0), (what, doc["jobs"])
    assert [j["jobname"] for j in a["jobs"]] == [j["jobname"] for j in b["jobs"]]
    assert a["jobs"][0]["iowatt"]["options"]["exit_what"] == what


def test_a_stop_ends_a_rate_wait(engine_bin: Path, scratch: Path) -> None:
    """fio's examples/exitwhat.fio: jobs at rate=300 (bytes/s, 13.6 s per 4 KiB I/O) that
    exit_what stops end at once, not when their wait is over (27.8 s there, fio 9.4 s). Here b
    waits 60 s after its first I/O; a ends 300 ms in and stops it."""
    args = (
        "--name=a", f"--filename={scratch}/a", "--size=64k", "--exitall", "--exit_what=stonewall",
        "--startdelay=300ms",
        "--name=b", f"--filename={scratch}/b", "--size=64k", "--rate=68", "--ioengine=io_uring",
    )  # fmt: skip
    jobs = {j["jobname"]: j for j in run_engine(engine_bin, *args, timeout=50).doc["jobs"]}
    assert jobs["a"]["read"]["total_ios"] == 16
    assert jobs["b"]["read"]["total_ios"] == 1 and jobs["b"]["job_runtime"] < 10000, jobs["b"]["job_runtime"]


def test_exit_what_values(run, scratch: Path) -> None:
    f = f"--filename={scratch}/t"
    job = run(f, "--size=64k", "--ioengine=null").job
    assert job["iowatt"]["options"]["exit_what"] == "group"
    r = run(f, "--size=64k", "--exit_what=everything", check=False)
    assert r.rc == 2 and r.stderr.startswith("iowatt-engine: exit_what: unknown value 'everything'")


# ---- allow_file_create ---------------------------------------------------------------------------


@needs_fio
def test_allow_file_create_0_refuses_a_missing_file_as_fio(engine_bin: Path, scratch: Path) -> None:
    args = ("--name=a", "--filename={d}/missing", "--size=64k", "--rw=write", "--allow_file_create=0")
    ours, theirs = scratch / "iowatt", scratch / "fio"
    for d in (ours, theirs):
        d.mkdir()
    r = run_engine(engine_bin, *(x.format(d=ours) for x in args), check=False)
    p = fio_run(*(x.format(d=theirs) for x in args), cwd=theirs)
    assert r.rc == 2 and r.stderr.startswith("iowatt-engine: allow_file_create: "), r.stderr
    assert p.returncode != 0
    assert not (ours / "missing").exists() and not (theirs / "missing").exists(), "neither created it"
    # an existing file runs the same in both
    for d in (ours, theirs):
        (d / "missing").write_bytes(os.urandom(65536))
    a, b = both(engine_bin, scratch, *args)
    assert a["jobs"][0]["write"]["total_ios"] == b["jobs"][0]["write"]["total_ios"] == 16


# ---- fill_device ---------------------------------------------------------------------------------


@needs_fio
def test_fill_device_writes_a_file_until_enospc_as_fio(engine_bin: Path, scratch: Path) -> None:
    """A 32 MiB tmpfs: both tools write the file until the file system is full, then end the
    job without an error (exit 0); the bytes written are the free space, within a block or two."""
    docs, sizes = [], []
    for side in ("iowatt", "fio"):
        d = scratch / side
        d.mkdir()
        try:
            with small_tmpfs(d, "32m") as mnt:
                args = ["--name=a", f"--filename={mnt}/f", "--rw=write", "--bs=64k", "--fill_device=1"]
                if side == "iowatt":
                    r = run_engine(engine_bin, *args, check=False)
                    rc, out, err = r.rc, r.stdout, r.stderr
                else:
                    p = fio_run(*args, cwd=d)
                    rc, out, err = p.returncode, p.stdout, p.stderr
                sizes.append((mnt / "f").stat().st_size)
        except Unavailable as e:
            pytest.skip(str(e))
        assert rc == 0, (side, err)
        docs.append(doc_of(out)["jobs"][0])
    ours, theirs = docs
    assert ours["error"] == theirs["error"] == 0
    wrote = [ours["write"]["io_bytes"], theirs["write"]["io_bytes"]]
    assert all(30 << 20 <= w <= 32 << 20 for w in wrote), wrote
    assert abs(wrote[0] - wrote[1]) <= 128 << 10, wrote
    assert abs(sizes[0] - sizes[1]) <= 128 << 10 and sizes[0] >= 30 << 20, sizes


def test_fill_device_refusals(run, scratch: Path) -> None:
    f = f"--filename={scratch}/t"
    for extra in (["--rw=randwrite"], ["--rw=read"], ["--rw=write:8k"]):
        r = run(f, "--fill_device=1", *extra, check=False)
        assert r.rc == 2 and r.stderr.startswith("iowatt-engine: fill_device: "), (extra, r.stderr)
    r = run(
        f"--directory={scratch}", "--nrfiles=2", "--rw=write", "--size=64k", "--fill_device=1", check=False
    )
    assert r.rc == 2 and "fill_device" in r.stderr, r.stderr


# ---- offset_increment=N%, offset_align ------------------------------------------------------------


OINC_VECTORS = json.loads(
    (Path(__file__).resolve().parents[2] / "libs/policy/testdata/offset_increment.json").read_text()
)["cases"]


def first_offsets(logdir: Path, n: int) -> list[int]:
    """each clone's first I/O's offset, from its bw log's offset column"""
    out = []
    for k in range(1, n + 1):
        line = (logdir / f"x_bw.{k}.log").read_text().splitlines()[0]
        out.append(int(line.split(",")[4]))
    return out


@needs_fio
@pytest.mark.parametrize("case", OINC_VECTORS, ids=[c["why"][:48] for c in OINC_VECTORS])
def test_offset_increment_places_the_clones_as_fio_and_the_vectors(
    engine_bin: Path, scratch: Path, case: dict[str, Any]
) -> None:
    """The vectors libs/policy reads (its layout of a new file): each clone's first offset and the
    file's size after a rw=read job (laid out before the clones start), in both tools; a size
    increment, N % of the file as fio finds it per clone (clone 0, then the last down to clone 1,
    each after the ones before laid it out), aligned up to offset_align or the smallest block."""
    n = len(case["starts"])
    size = case["file_bytes_after"]
    for side in ("iowatt", "fio"):
        d = scratch / side
        d.mkdir()
        if case["file_bytes"] is not None:
            (d / "data").write_bytes(b"\xa5" * case["file_bytes"])
        opts = [f"--{k}={v}" for k, v in case["options"].items()]
        logs = [f"--write_bw_log={d}/x", "--log_offset=1"]
        args = ["--name=x", f"--filename={d / 'data'}", "--rw=read", *opts, *logs]
        if side == "iowatt":
            doc = run_engine(engine_bin, *args).doc
        else:
            p = fio_run(*args, cwd=d)
            assert p.returncode == 0, p.stderr
            doc = doc_of(p.stdout)
        assert len(doc["jobs"]) == n and all(j["read"]["io_bytes"] > 0 for j in doc["jobs"]), side
        starts = first_offsets(d, n)
        # fio numbers its clones' logs by thread, and its clones' subjob numbers count down (thread
        # 2 is the last clone): the same starts, in another file order
        assert (starts if side == "iowatt" else sorted(starts)) == (
            case["starts"] if side == "iowatt" else sorted(case["starts"])
        ), side
        assert (d / "data").stat().st_size == size, side


def test_offset_increment_percent_values(run, scratch: Path) -> None:
    f = scratch / "t"
    f.write_bytes(b"\0" * (1 << 20))
    base = ["--name=x", f"--filename={f}", "--size=64k", "--numjobs=2", "--ioengine=null"]
    job = run(*base, "--offset_increment=50%").job
    assert job["iowatt"]["options"]["offset_increment"] == 512 << 10, "echoed in bytes of the file"
    for bad in ("0%", "101%", "%", "x%", "-5%"):
        r = run(*base, f"--offset_increment={bad}", check=False)
        assert r.rc == 2 and r.stderr.startswith("iowatt-engine: offset_increment: "), (bad, r.stderr)


# ---- verify_backlog with numjobs > 1 -------------------------------------------------------------


@needs_fio
@pytest.mark.parametrize("group", [[], ["--group_reporting"]])
def test_verify_backlog_with_clones_as_fio(engine_bin: Path, scratch: Path, group: list[str]) -> None:
    # fio's examples/cross-stripe-verify.fio in small: clones apart (offset_increment), a read-back
    # after every few writes
    args = (
        "--name=v", "--filename={d}/f", "--rw=write", "--bs=4k", "--size=256k", "--numjobs=4",
        "--offset_increment=256k", "--verify=crc32c", "--verify_backlog=8", "--verify_backlog_batch=4",
        *group,
    )  # fmt: skip
    a, b = both(engine_bin, scratch, *args)
    shape = [(j["error"], j["write"]["total_ios"], j["read"]["total_ios"]) for j in a["jobs"]]
    assert shape == [(j["error"], j["write"]["total_ios"], j["read"]["total_ios"]) for j in b["jobs"]]
    n = 64 * (4 if group else 1)
    assert shape == [(0, n, n)] * (1 if group else 4)
    for j in a["jobs"]:
        assert j["iowatt"]["verify"]["failed_intervals"] == 0


# ---- per-I/O logs kept as records ----------------------------------------------------------------


def test_per_io_logs_flushed_midway_equal_one_flush(run, scratch: Path) -> None:
    """log_entries=100: the records are formatted and written 41 times during the run; every line
    is there once, in order, in fio's format (the same lines as a run that keeps them all)"""
    data = scratch / "d"
    data.write_bytes(os.urandom(16 << 20))
    out = {}
    for tag, extra in (("few", ["--log_entries=100"]), ("all", [])):
        d = scratch / tag
        d.mkdir()
        args = [
            "--name=x", f"--filename={data}", "--rw=read", "--bs=4k", "--size=16m", "--randseed=3",
            f"--write_lat_log={d}/x", f"--write_bw_log={d}/x", f"--write_iops_log={d}/x", "--log_offset=1",
        ]  # fmt: skip
        run(*args, "--ioengine=io_uring", "--iodepth=4", *extra)
        out[tag] = {p.name: p.read_text().splitlines() for p in sorted(d.iterdir())}
    assert sorted(out["few"]) == sorted(out["all"]) == [
        "x_bw.1.log", "x_clat.1.log", "x_iops.1.log", "x_lat.1.log", "x_slat.1.log",
    ]  # fmt: skip
    for name, lines in out["few"].items():
        assert len(lines) == len(out["all"][name]) == 4096, name
        offs = [int(x.split(", ")[4]) for x in lines]
        assert offs == list(range(0, 16 << 20, 4096)), name  # sequential: every I/O once, in order
        for x in lines:
            f = x.split(", ")
            assert len(f) == 6 and f[2] == "0" and f[3] == "4096" and f[5] == "0", x
        if name == "x_iops.1.log":
            assert all(x.split(", ")[1] == "1" for x in lines)
    # lat = slat + clat, line by line
    for s, c, t in zip(
        out["few"]["x_slat.1.log"], out["few"]["x_clat.1.log"], out["few"]["x_lat.1.log"], strict=True
    ):
        assert int(s.split(", ")[1]) + int(c.split(", ")[1]) == int(t.split(", ")[1])


# ---- create_serialize, steadystate's latency criteria (s11) -----------------------------------------


@needs_fio
def test_create_serialize_1_lays_every_file_out_first_as_fio(engine_bin: Path, scratch: Path) -> None:
    """fio's default create_serialize=1, given: two reading jobs in two start groups, each file laid
    out (the reads find data) before the first job starts, the same counts and file sizes in both
    tools."""
    args = (
        "--create_serialize=1", "--rw=read", "--bs=4k", "--size=64k",
        "--name=a", "--filename={d}/a", "--name=b", "--stonewall", "--filename={d}/b",
    )  # fmt: skip
    ours, theirs = both(engine_bin, scratch, *args)
    assert [j["read"]["io_bytes"] for j in ours["jobs"]] == [j["read"]["io_bytes"] for j in theirs["jobs"]]
    assert [j["read"]["io_bytes"] for j in ours["jobs"]] == [65536, 65536]
    for side in ("iowatt", "fio"):
        assert [(scratch / side / n).stat().st_size for n in "ab"] == [65536, 65536]
    assert ours["jobs"][0]["iowatt"]["options"]["create_serialize"] is True


@needs_fio
def test_create_serialize_0_lays_a_file_out_when_its_group_starts_as_fio(
    engine_bin: Path, scratch: Path
) -> None:
    """create_serialize=0 (fio's examples/surface-scan.fio): the second start group's job reads,
    without a size, the file the first group writes; its file is looked at when its group starts,
    so it reads (and verifies) the 96 KiB written, in both tools. Without a file by then the job
    fails (exit 1, the first group's results printed, one line naming the option) instead of the
    whole run exiting 2. A job of several files refuses 0 (exit 2 naming it)."""
    args = (
        "--bs=4k", "--verify=meta", "--verify_pattern=0xaa555aa5", "--verify_interval=512",
        "--name=w", "--filename={d}/data", "--rw=write", "--size=96k", "--do_verify=0",
        "--name=r", "--stonewall", "--create_serialize=0", "--filename={d}/data", "--rw=read",
        "--do_verify=1",
    )  # fmt: skip
    ours, theirs = both(engine_bin, scratch, *args)
    for doc in (ours, theirs):
        assert [(j["write"]["io_bytes"], j["read"]["io_bytes"], j["error"]) for j in doc["jobs"]] == [
            (98304, 0, 0),
            (0, 98304, 0),
        ]
    r = run_engine(
        engine_bin, "--name=w", f"--filename={scratch}/x", "--rw=write", "--size=8k",
        "--name=r", "--stonewall", "--create_serialize=0", f"--filename={scratch}/missing", "--rw=read",
        check=False,
    )  # fmt: skip
    assert r.rc == 1, r.stderr
    doc = doc_of(r.stdout)
    assert [j["write"]["io_bytes"] for j in doc["jobs"]] == [8192, 0] and doc["jobs"][1]["error"] != 0
    assert "size: required because" in r.stderr
    r = run_engine(
        engine_bin, "--name=m", f"--directory={scratch}", "--nrfiles=2", "--size=8k", "--create_serialize=0",
        check=False,
    )  # fmt: skip
    want = "iowatt-engine: create_serialize: 0 is not implemented for jobs"
    assert r.rc == 2 and r.stderr.startswith(want), r.stderr


@needs_fio
@pytest.mark.parametrize("value", ["lat:5%", "lat_slope:0.1%"])
def test_steadystate_latency_criteria_are_refused_as_newer_than_fio_333(
    engine_bin: Path, scratch: Path, value: str
) -> None:
    """fio 3.33, the engine's reference, has no latency criteria (fio refuses them too), so their
    meaning cannot be checked beside it: the refusal says so."""
    f = scratch / "t"
    f.write_bytes(b"\0" * 65536)
    base = [
        "--name=a",
        f"--filename={f}",
        "--size=64k",
        "--ioengine=null",
        f"--steadystate={value}",
        "--ss_dur=2",
    ]
    r = run_engine(engine_bin, *base, check=False)
    assert r.rc == 2 and r.stderr.startswith("iowatt-engine: steadystate: "), r.stderr
    assert "newer than fio 3.33" in r.stderr and len(r.stderr.strip().splitlines()) == 1
    assert fio_run(*base, refused=True).returncode != 0
