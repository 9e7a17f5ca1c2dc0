"""fio's meaning for job scheduling, seeds and reporting, each beside Debian's fio on the same small
job (counts and structure, never timings): sync, randrepeat/randseed, numjobs entries,
group_reporting, stonewall/new_group groupids, wait_for, exitall, startdelay, continue_on_error."""

from __future__ import annotations

import contextlib
import json
import re
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.strace import straced

from .conftest import FIO_CLOCK, fio_jobs_made_once, run_engine
from .filemode import Unavailable, small_tmpfs

FIO = shutil.which("fio")
needs_fio = pytest.mark.skipif(FIO is None, reason="Debian's fio is not installed")


def fio(*args: str, rc: int = 0) -> dict[str, Any]:
    assert FIO is not None
    p = subprocess.run(
        [FIO, FIO_CLOCK, "--output-format=json", *args], capture_output=True, text=True, timeout=120
    )
    assert p.returncode == rc, p.stderr
    return json.loads(p.stdout[p.stdout.index("{") :])


@contextlib.contextmanager
def full_device(where: Path) -> Iterator[str]:
    """A 4 MiB loop device backed by a sparse file on a 1 MiB tmpfs: its writes past the first MiB
    fail with ENOSPC (a run-time I/O error fio does not continue over)."""
    if shutil.which("losetup") is None:
        raise Unavailable("no losetup")
    with small_tmpfs(where) as mnt:
        back = mnt / "back"
        with open(back, "wb") as f:
            f.truncate(4 << 20)
        p = subprocess.run(["losetup", "-f", "--show", str(back)], capture_output=True, text=True, timeout=30)
        if p.returncode != 0:
            raise Unavailable(f"losetup: {p.stderr.strip()}")
        try:
            yield p.stdout.strip()
        finally:
            subprocess.run(["losetup", "-d", p.stdout.strip()], capture_output=True, timeout=30)


def both(engine_bin: Path, scratch: Path, *args: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """The same job through iowatt and fio, each on its own files ({d} in args = its directory)."""
    ours, theirs = scratch / "iowatt", scratch / "fio"
    ours.mkdir()
    theirs.mkdir()
    a = run_engine(engine_bin, *(x.format(d=ours) for x in args)).doc
    b = fio(*(x.format(d=theirs) for x in args))
    return a, b


def shape(doc: dict[str, Any]) -> list[tuple[str, int, int, int]]:
    return [
        (j["jobname"], j["groupid"], j["read"]["total_ios"], j["write"]["total_ios"]) for j in doc["jobs"]
    ]


# ---- sync -----------------------------------------------------------------------------------------


@needs_fio
@pytest.mark.skipif(shutil.which("strace") is None, reason="strace is not installed")
@pytest.mark.parametrize(("value", "flag"), [("1", "O_SYNC"), ("sync", "O_SYNC"), ("dsync", "O_DSYNC")])
def test_sync_opens_as_fio(engine_bin: Path, scratch: Path, value: str, flag: str) -> None:
    def opens(cmd: list[str], path: Path) -> set[str]:
        p, lines = straced(cmd, scratch / "strace.txt", "-e", "trace=openat", timeout=60)
        assert p.returncode == 0, p.stderr
        flags = set()
        for line in lines:
            if f'"{path}"' in line and "O_RDWR" in line:
                flags |= set(re.findall(r"O_[A-Z]+", line))
        return flags

    job = ["--name=j", "--rw=write", "--size=64k", f"--sync={value}"]
    ours = opens([str(engine_bin), *job, f"--filename={scratch}/a"], scratch / "a")
    theirs = opens(
        [FIO or "fio", FIO_CLOCK, "--output-format=json", *job, f"--filename={scratch}/b"], scratch / "b"
    )
    assert flag in ours and flag in theirs
    other = {"O_SYNC": "O_DSYNC", "O_DSYNC": "O_SYNC"}[flag]
    assert other not in ours and other not in theirs


def test_sync_echo(run, scratch: Path) -> None:
    for value, echo in [("1", "sync"), ("sync", "sync"), ("dsync", "dsync"), ("0", "none")]:
        job = run(f"--filename={scratch}/t", "--rw=write", "--size=64k", f"--sync={value}").job
        assert job["iowatt"]["options"]["sync"] == echo


# ---- randrepeat / randseed ----------------------------------------------------------------------


def test_randrepeat_draws_a_new_seed_and_says_which(run, scratch: Path) -> None:
    base = [f"--filename={scratch}/t", "--rw=randread", "--size=256k", "--ioengine=null"]
    fixed = {run(*base).job["iowatt"]["options"]["randseed"] for _ in range(2)}
    assert len(fixed) == 1, "randrepeat=1 (default): the same seed every run"
    drawn = [run(*base, "--randrepeat=0").job["iowatt"]["options"] for _ in range(3)]
    assert all(o["randrepeat"] is False for o in drawn)
    seeds = {o["randseed"] for o in drawn}
    assert len(seeds) == 3 and not seeds & fixed, "randrepeat=0: a new seed per run"
    # as fio: a given randseed decides, whatever randrepeat says
    assert run(*base, "--randrepeat=0", "--randseed=42").job["iowatt"]["options"]["randseed"] == 42


@needs_fio
def test_randrepeat_0_runs_beside_fio(engine_bin: Path, scratch: Path) -> None:
    args = ("--name=r", "--filename={d}/t", "--rw=randread", "--size=256k", "--randrepeat=0")
    a, b = both(engine_bin, scratch, *args)
    assert shape(a) == shape(b) == [("r", 0, 64, 0)]


# ---- numjobs and group_reporting ---------------------------------------------------------------


@needs_fio
def test_numjobs_reports_each_clone_as_fio(engine_bin: Path, scratch: Path) -> None:
    args = (
        "--name=a", "--filename={d}/a", "--size=256k", "--rw=randread", "--numjobs=3",
        "--name=b", "--filename={d}/b", "--size=128k", "--rw=write", "--new_group",
    )  # fmt: skip
    a, b = both(engine_bin, scratch, *args)
    assert shape(a) == shape(b) == [("a", 0, 64, 0)] * 3 + [("b", 1, 0, 32)]
    for ours in a["jobs"]:
        assert ours["iowatt"]["members"] == 1
        assert ours["job options"]["name"] == ours["jobname"]


@needs_fio
def test_group_reporting_sums_as_fio(engine_bin: Path, scratch: Path) -> None:
    args = (
        "--group_reporting",
        "--name=a", "--filename={d}/a", "--size=256k", "--rw=randread", "--numjobs=2",
        "--name=b", "--filename={d}/b", "--size=128k", "--rw=read",
        "--name=c", "--filename={d}/c", "--size=64k", "--rw=write", "--stonewall",
    )  # fmt: skip
    a, b = both(engine_bin, scratch, *args)
    assert shape(a) == shape(b) == [("a", 0, 2 * 64 + 32, 0), ("c", 1, 0, 16)]
    for doc in (a, b):
        first = doc["jobs"][0]
        assert first["job options"]["name"] == "b", "fio: the options of the group's last job"
        assert first["read"]["io_bytes"] == (2 * 256 + 128) * 1024
    assert a["jobs"][0]["iowatt"]["members"] == 3


@needs_fio
def test_group_reporting_runtime_and_cpu_per_thread_as_fio(engine_bin: Path, scratch: Path) -> None:
    """fio: job_runtime is the sum of the clones' runtimes and usr/sys_cpu are over that sum (a
    per-thread average), while a direction's runtime is the longest clone's."""
    args = (
        "--group_reporting", "--name=a", "--filename={d}/a", "--size=1m", "--rw=randread",
        "--numjobs=2", "--runtime=300ms", "--time_based",
    )  # fmt: skip
    a, b = both(engine_bin, scratch, *args)
    for doc in (a, b):
        (job,) = doc["jobs"]
        assert job["job_runtime"] >= 2 * 300 - 10, job["job_runtime"]
        assert 300 - 10 <= job["read"]["runtime"] < job["job_runtime"]
        assert job["usr_cpu"] + job["sys_cpu"] <= 100 * 1.15  # two busy threads: not 200 %


# ---- groups, stonewall, new_group, wait_for, exitall, startdelay ------------------------------


@needs_fio
def test_stonewall_and_new_group_groupids_as_fio(engine_bin: Path, scratch: Path) -> None:
    args = (
        "--name=a", "--filename={d}/a", "--size=64k", "--new_group",  # first job: no new group
        "--name=b", "--filename={d}/b", "--size=64k", "--new_group",
        "--name=c", "--filename={d}/c", "--size=64k", "--stonewall",
        "--name=d", "--filename={d}/d", "--size=64k",
        "--name=e", "--filename={d}/e", "--size=64k", "--stonewall", "--new_group",
    )  # fmt: skip
    a, b = both(engine_bin, scratch, *args)
    assert [j["groupid"] for j in a["jobs"]] == [j["groupid"] for j in b["jobs"]] == [0, 1, 2, 2, 3]
    assert shape(a) == shape(b)


def test_jobs_of_a_group_start_together_after_every_layout(run, scratch: Path) -> None:
    """Every file is laid out before the first job starts: a time-based job beside a job whose
    file is large is not running while that file is written (its series starts with I/O)."""
    doc = run(
        "--name=a", f"--filename={scratch}/a", "--size=64k", "--runtime=300ms", "--time_based",
        "--name=b", f"--filename={scratch}/b", "--size=64m", "--rw=read", "--io_size=64k",
    ).doc  # fmt: skip
    a, b = doc["jobs"]
    assert (scratch / "b").stat().st_size == 64 << 20
    assert a["read"]["total_ios"] > 0 and b["read"]["total_ios"] == 16


@needs_fio
def test_wait_for_as_fio(engine_bin: Path, scratch: Path) -> None:
    args = (
        "--name=a", "--filename={d}/a", "--size=64k",
        "--name=b", "--filename={d}/b", "--size=128k", "--wait_for=a",
        "--name=c", "--filename={d}/c", "--size=64k", "--rw=write",
    )  # fmt: skip
    a, b = both(engine_bin, scratch, *args)
    assert shape(a) == shape(b) == [("a", 0, 16, 0), ("b", 0, 32, 0), ("c", 0, 0, 16)]
    assert a["jobs"][1]["iowatt"]["options"]["wait_for"] == "a"


def test_wait_for_unknown_or_later_job_exits_2(run, scratch: Path) -> None:
    f = f"--filename={scratch}/t"
    for args in (
        ["--name=a", f, "--size=64k", "--wait_for=zz"],
        ["--name=a", f, "--size=64k", "--wait_for=b", "--name=b", f, "--size=64k"],
    ):
        r = run(*args, check=False)
        assert r.rc == 2 and "iowatt-engine: wait_for: job 'a' waits for" in r.stderr, r.stderr
        assert r.stdout == ""


@needs_fio
def test_exitall_stops_the_group_as_fio(engine_bin: Path, scratch: Path) -> None:
    # fio races here: a job that exitall stops before it reached its ramp gets SIGTERM (with
    # --thread too: the signal goes to fio's process), and fio's handler terminates every job and
    # exits 128, so under load fio skipped c (0 I/Os, then exit 128 in CI). a's startdelay lets b
    # reach its ramp first, where fio only sets the flag, as iowatt does: the documented meaning,
    # the group of the job that ended.
    args = (
        "--thread",
        "--name=a", "--filename={d}/a", "--size=64k", "--exitall", "--startdelay=500ms",
        "--name=b", "--filename={d}/b", "--size=1m", "--runtime=20", "--time_based",
        "--name=c", "--filename={d}/c", "--size=64k", "--stonewall",
    )  # fmt: skip
    a, b = both(engine_bin, scratch, *args)
    for doc in (a, b):
        ja, jb, jc = doc["jobs"]
        assert ja["read"]["total_ios"] == 16 and jc["read"]["total_ios"] == 16, "the next group still runs"
        assert jb["job_runtime"] < 20000 / 2, "b was stopped when a ended, long before its runtime"
    assert a["jobs"][0]["iowatt"]["options"]["exitall"] is True


@needs_fio
def test_exitall_is_run_wide_as_fio(engine_bin: Path, scratch: Path) -> None:
    """fio's exitall is one switch for the run: b, without exitall, ends and stops a, which has it
    (b's startdelay: a reaches its ramp first, see the test above)."""
    args = (
        "--thread",
        "--name=a", "--filename={d}/a", "--size=1m", "--runtime=20", "--time_based", "--exitall",
        "--name=b", "--filename={d}/b", "--size=64k", "--startdelay=500ms",
    )  # fmt: skip
    for doc in both(engine_bin, scratch, *args):
        ja, jb = doc["jobs"]
        assert jb["read"]["total_ios"] == 16
        assert ja["job_runtime"] < 20000 / 2, "a was stopped when b ended, long before its runtime"


@needs_fio
def test_startdelay_range_per_clone_as_fio(engine_bin: Path, scratch: Path) -> None:
    args = ("--name=a", "--filename={d}/a", "--size=64k", "--numjobs=2", "--startdelay=50ms-150ms")
    a, b = both(engine_bin, scratch, *args)
    assert shape(a) == shape(b) == [("a", 0, 16, 0)] * 2
    delays = []
    for job in a["jobs"]:
        o = job["iowatt"]["options"]
        assert (o["startdelay_ns"], o["startdelay_high_ns"]) == (50_000_000, 150_000_000)
        assert 50_000_000 <= job["iowatt"]["startdelay_ns"] <= 150_000_000
        delays.append(job["iowatt"]["startdelay_ns"])
    again = run_engine(engine_bin, *(x.format(d=scratch / "iowatt") for x in args)).doc
    assert [j["iowatt"]["startdelay_ns"] for j in again["jobs"]] == delays, "drawn from the job's randseed"


def test_startdelay_values(run, scratch: Path) -> None:
    f = f"--filename={scratch}/t"
    job = run(f, "--size=64k", "--startdelay=20ms", "--ioengine=null").job
    assert job["iowatt"]["options"]["startdelay_ns"] == 20_000_000
    assert job["iowatt"]["options"]["startdelay_high_ns"] is None
    assert job["iowatt"]["startdelay_ns"] == 20_000_000
    for bad in ("2-1", "x", "1-", "2d"):
        r = run(f, "--size=64k", f"--startdelay={bad}", check=False)
        assert r.rc == 2 and "iowatt-engine: startdelay:" in r.stderr, (bad, r.stderr)


# ---- continue_on_error, exitall_on_error --------------------------------------------------------


CONTINUE_ON_ERROR = ["none", "read", "write", "io", "verify", "all", "0", "1"]


@pytest.fixture(scope="module")
def fio_continue_on_error() -> Iterator[dict[str, dict[str, Any]]]:
    """fio's job for every continue_on_error value, all in one fio run, once for the run (a job of
    its own each, on its own file: fio's start-up paid once instead of eight times)."""

    def jobs(d: Path) -> dict[str, list[str]]:
        return {
            f"a{i}": [f"--filename={d}/a{i}", "--size=64k", f"--continue_on_error={value}"]
            for i, value in enumerate(CONTINUE_ON_ERROR)
        }

    for done in fio_jobs_made_once("scheduling-continue-on-error", jobs, lambda args, _: fio(*args)):
        yield {value: done[f"a{i}"] for i, value in enumerate(CONTINUE_ON_ERROR)}


@needs_fio
@pytest.mark.parametrize("value", CONTINUE_ON_ERROR)
def test_continue_on_error_keys_as_fio(
    engine_bin: Path, scratch: Path, value: str, fio_continue_on_error: dict[str, dict[str, Any]]
) -> None:
    args = ("--name=a", f"--filename={scratch}/a", "--size=64k", f"--continue_on_error={value}")
    ours, theirs = run_engine(engine_bin, *args).job, fio_continue_on_error[value]
    set_ = value not in ("none", "0")
    assert ("total_err" in ours) == ("total_err" in theirs) == set_
    if set_:
        assert (
            (ours["total_err"], ours["first_error"]) == (theirs["total_err"], theirs["first_error"]) == (0, 0)
        )
        keys = list(ours)
        assert keys.index("total_err") == keys.index("latency_ms") + 1, "fio's place for them"
    echo = {"0": "none", "1": "all"}.get(value, value)
    assert ours["iowatt"]["options"]["continue_on_error"] == echo


def test_continue_on_error_and_exitall_on_error_values(run, scratch: Path) -> None:
    f = f"--filename={scratch}/t"
    r = run(f, "--size=64k", "--continue_on_error=sometimes", check=False)
    assert r.rc == 2 and "iowatt-engine: continue_on_error: unknown value 'sometimes'" in r.stderr
    job = run(f, "--size=64k", "--exitall_on_error", "--ioengine=null").job
    assert job["iowatt"]["options"]["exitall_on_error"] is True and job["error"] == 0


@needs_fio
def test_exitall_on_error_stops_the_running_jobs_as_fio(engine_bin: Path, scratch: Path) -> None:
    """A job's write fails (ENOSPC on a full device): with exitall_on_error the job beside it is
    stopped long before its runtime; as fio 3.33, the next start group still runs; the failed
    write is counted in total_ios (fio counts what it issued), not in io_bytes."""
    docs = []
    for side in ("iowatt", "fio"):
        d = scratch / side
        d.mkdir()
        try:
            with full_device(d) as dev:
                args = [
                    "--name=a", f"--filename={dev}", "--rw=write", "--bs=64k", "--size=4m", "--direct=1",
                    "--exitall_on_error",
                    "--name=b", f"--filename={d}/b", "--size=1m", "--runtime=20", "--time_based",
                    "--name=c", f"--filename={d}/c", "--size=64k", "--stonewall",
                ]  # fmt: skip
                if side == "fio":
                    docs.append(fio(*args, rc=1))
                else:
                    r = run_engine(engine_bin, "--destructive=1", *args, check=False)
                    assert r.rc == 1, r.stderr
                    docs.append(r.doc)
        except Unavailable as e:
            pytest.skip(str(e))
    for side, doc in zip(("iowatt", "fio"), docs, strict=True):
        a, b, c = doc["jobs"]
        # which program broke the rule, and what its job c did (a clean-clone run once saw c with
        # 0 I/Os in one of the two documents, at load ~7; not reproduced since)
        seen = f"{side}: c = { ({k: c.get(k) for k in ('error', 'job_runtime', 'read')}) }"
        assert a["error"] == 28 and a["write"]["io_bytes"] == 1 << 20 and a["write"]["total_ios"] == 17, side
        assert b["error"] == 0 and b["job_runtime"] < 20000 / 2, f"{side}: b was stopped when a failed"
        # fio 3.33 marks every job terminated, not-started ones too (fio_terminate_threads with
        # TERMINATE_ALL): whether its next group still runs depends on timing (two clean-clone runs
        # saw fio's c do no I/O, at load ~7). The engine's next group always runs.
        ios = (16,) if side == "iowatt" else (0, 16)
        assert c["error"] == 0 and c["read"]["total_ios"] in ios, f"the next group still runs; {seen}"
    assert docs[0]["jobs"][0]["write"]["clat_ns"]["N"] == 16


@needs_fio
def test_continue_on_error_goes_on_over_eio_only_as_fio(engine_bin: Path, scratch: Path) -> None:
    """ENOSPC is not one of fio's non-fatal errors (EIO, EILSEQ): continue_on_error=write still
    ends the job at the first failed write; as fio, total_err and first_error count it all the same."""
    docs = []
    for side in ("iowatt", "fio"):
        d = scratch / side
        d.mkdir()
        try:
            with full_device(d) as dev:
                args = [
                    "--name=a", f"--filename={dev}", "--rw=write", "--bs=64k", "--size=4m", "--direct=1",
                    "--continue_on_error=write",
                ]  # fmt: skip
                if side == "fio":
                    docs.append(fio(*args, rc=1))
                else:
                    r = run_engine(engine_bin, "--destructive=1", *args, check=False)
                    assert r.rc == 1, r.stderr
                    docs.append(r.doc)
        except Unavailable as e:
            pytest.skip(str(e))
    for doc in docs:
        (a,) = doc["jobs"]
        assert (a["error"], a["total_err"], a["first_error"]) == (28, 1, 28)
        assert (a["write"]["total_ios"], a["write"]["io_bytes"]) == (17, 1 << 20)
