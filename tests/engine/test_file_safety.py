"""File safety options of ADR 0009 §5 (issue 9): beneath=DIR (no symbolic link, no escape, in
every open of the run), create_new, unlink, keep_existing and readonly. Black-box, on the real
engine; the openat() walk that kernels without openat2 get is checked on a test build."""

from __future__ import annotations

import hashlib
import json
import os
import platform
import shutil
import stat
import subprocess
import threading
import time
from pathlib import Path

import pytest

from tests.strace import straced
from tests.waiting import wait_until

from .conftest import Result, run_engine

KiB, MiB = 1024, 1024 * 1024


def sha256(p: Path) -> str:
    return hashlib.sha256(p.read_bytes()).hexdigest()


@pytest.fixture(params=["openat2", "openat-walk"])
def confined(request: pytest.FixtureRequest, engine_bin: Path, engine_noopenat2: Path) -> tuple[Path, str]:
    """The engine binary for each resolver of beneath=DIR, and the resolver it must report."""
    return (engine_bin if request.param == "openat2" else engine_noopenat2), request.param


@pytest.fixture
def tree(scratch: Path) -> tuple[Path, Path]:
    """An allowed directory and, outside it, a canary file a hostile link would point to."""
    allowed = scratch / "allowed"
    (allowed / "sub").mkdir(parents=True)
    canary = scratch / "canary.txt"
    canary.write_bytes(b"canary: must never change\n" * 100)
    return allowed, canary


# ---- keep_existing ----------------------------------------------------------------------------


def test_issue_9_reproduction_read_job_leaves_a_7_byte_file_identical(run, scratch: Path) -> None:
    f = scratch / "notes.txt"
    f.write_bytes(b"hello!\n")
    before = sha256(f)
    r = run(f"--filename={f}", "--rw=randread", "--size=1m", "--keep_existing=1", check=False)
    assert r.rc == 2, r.stderr
    assert r.stderr.startswith("iowatt-engine: keep_existing: ")
    assert "extended by 1048569 bytes" in r.stderr
    assert r.stdout == ""
    assert sha256(f) == before and f.stat().st_size == 7


def test_without_keep_existing_the_layout_still_extends_as_fio_does(run, scratch: Path) -> None:
    f = scratch / "notes.txt"
    f.write_bytes(b"hello!\n")
    run(f"--filename={f}", "--rw=randread", "--size=1m")
    assert f.stat().st_size == MiB and f.read_bytes()[:7] == b"hello!\n"


def test_keep_existing_refuses_to_fill_holes_for_a_read_job(run, scratch: Path) -> None:
    f = scratch / "sparse.dat"
    with f.open("wb") as fh:
        fh.truncate(MiB)  # all hole
    r = run(f"--filename={f}", "--rw=read", "--size=1m", "--keep_existing=1", check=False)
    assert r.rc == 2 and "keep_existing: reading" in r.stderr and "holes" in r.stderr
    assert f.stat().st_blocks == 0, "the holes must not have been filled"


def test_keep_existing_runs_inside_an_existing_file_and_never_grows_it(run, scratch: Path) -> None:
    f = scratch / "data.dat"
    f.write_bytes(os.urandom(2 * MiB))
    before = sha256(f)
    job = run(f"--filename={f}", "--rw=randread", "--size=1m", "--offset=1m", "--keep_existing=1").job
    assert job["read"]["io_bytes"] == MiB
    assert sha256(f) == before
    # a write job inside the file is the host's to allow (the agent adds readonly otherwise)
    job = run(f"--filename={f}", "--rw=randwrite", "--size=1m", "--keep_existing=1").job
    assert job["write"]["io_bytes"] == MiB and f.stat().st_size == 2 * MiB
    assert job["iowatt"]["options"]["keep_existing"] is True
    assert job["iowatt"]["target"]["created"] is False


def test_keep_existing_still_lays_out_a_file_the_engine_creates(run, scratch: Path) -> None:
    f = scratch / "new.dat"
    job = run(f"--filename={f}", "--rw=randread", "--size=1m", "--keep_existing=1").job
    assert job["read"]["io_bytes"] == MiB and f.stat().st_size == MiB
    assert job["iowatt"]["target"]["created"] is True


# ---- create_new, file modes -----------------------------------------------------------------


def test_create_new_creates_the_file_0600_even_with_umask_0(engine_bin: Path, scratch: Path) -> None:
    f = scratch / "new.dat"
    old = os.umask(0)
    try:
        job = run_engine(engine_bin, f"--filename={f}", "--rw=write", "--size=1m", "--create_new=1").job
    finally:
        os.umask(old)
    assert job["write"]["io_bytes"] == MiB
    assert stat.S_IMODE(f.stat().st_mode) == 0o600
    assert job["iowatt"]["options"]["create_new"] is True
    assert job["iowatt"]["target"]["created"] is True


def test_files_the_engine_lays_out_are_0600_without_create_new(engine_bin: Path, scratch: Path) -> None:
    f = scratch / "plain.dat"
    old = os.umask(0)
    try:
        run_engine(engine_bin, f"--filename={f}", "--rw=randread", "--size=256k")
    finally:
        os.umask(old)
    assert stat.S_IMODE(f.stat().st_mode) == 0o600


def test_create_new_refuses_an_existing_file(run, scratch: Path) -> None:
    f = scratch / "old.dat"
    f.write_bytes(b"x" * 4096)
    r = run(f"--filename={f}", "--rw=write", "--size=4k", "--create_new=1", check=False)
    assert r.rc == 2 and r.stderr.startswith("iowatt-engine: create_new: ") and "already exists" in r.stderr
    assert f.read_bytes() == b"x" * 4096


def test_create_new_refuses_a_dangling_link_and_creates_nothing_behind_it(run, scratch: Path) -> None:
    link, target = scratch / "link.dat", scratch / "elsewhere.dat"
    link.symlink_to(target)
    r = run(f"--filename={link}", "--rw=write", "--size=4k", "--create_new=1", check=False)
    assert r.rc == 2 and "create_new" in r.stderr
    assert not target.exists() and link.is_symlink()


# ---- unlink -----------------------------------------------------------------------------------


def test_unlink_removes_the_file_the_run_created(run, scratch: Path) -> None:
    f = scratch / "tmp.dat"
    job = run(f"--filename={f}", "--rw=randwrite", "--size=1m", "--create_new=1", "--unlink=1").job
    assert job["write"]["io_bytes"] == MiB and job["iowatt"]["options"]["unlink"] is True
    assert not f.exists()


def test_unlink_never_removes_a_file_the_run_did_not_create(run, scratch: Path) -> None:
    f = scratch / "keep.dat"
    f.write_bytes(os.urandom(MiB))
    before = sha256(f)
    run(f"--filename={f}", "--rw=randread", "--size=1m", "--unlink=1")
    assert f.exists() and sha256(f) == before


def test_unlink_waits_for_the_last_job_using_the_file(run, scratch: Path) -> None:
    f = scratch / "shared.dat"
    common = [f"--filename={f}", "--create_new=1", "--unlink=1", "--size=1m"]
    doc = run(*common, "--name=w", "--rw=write", "--name=r", "--stonewall", "--rw=randread").doc
    assert [j["error"] for j in doc["jobs"]] == [0, 0]
    assert doc["jobs"][1]["read"]["io_bytes"] == MiB
    assert not f.exists()


def test_per_file_options_must_agree_between_jobs(run, scratch: Path) -> None:
    f = scratch / "a.dat"
    r = run(f"--filename={f}", "--size=64k", "--name=a", "--unlink=1", "--name=b", check=False)
    assert r.rc == 2 and r.stderr.startswith("iowatt-engine: unlink: differs")
    assert not f.exists()


# ---- readonly ---------------------------------------------------------------------------------


@pytest.mark.parametrize("rw", ["write", "randwrite", "rw", "randrw"])
def test_readonly_refuses_every_job_that_writes_before_any_io(run, scratch: Path, rw: str) -> None:
    f = scratch / "data.dat"
    f.write_bytes(os.urandom(MiB))
    before = sha256(f)
    r = run(f"--filename={f}", f"--rw={rw}", "--size=1m", "--readonly=1", check=False)
    assert r.rc == 2 and r.stderr.startswith("iowatt-engine: readonly: ") and r.stdout == ""
    assert sha256(f) == before


def test_readonly_refuses_a_read_job_that_needs_a_layout(run, scratch: Path) -> None:
    missing = scratch / "missing.dat"
    r = run(f"--filename={missing}", "--rw=read", "--size=1m", "--readonly", check=False)
    assert r.rc == 2 and "readonly" in r.stderr and not missing.exists()
    short = scratch / "short.dat"
    short.write_bytes(b"abc")
    r = run(f"--filename={short}", "--rw=read", "--size=1m", "--readonly", check=False)
    assert r.rc == 2 and "readonly" in r.stderr and short.read_bytes() == b"abc"


def test_readonly_reads(run, scratch: Path) -> None:
    f = scratch / "data.dat"
    f.write_bytes(os.urandom(MiB))
    job = run(f"--filename={f}", "--rw=randread", "--size=1m", "--readonly=1").job
    assert job["read"]["io_bytes"] == MiB and job["iowatt"]["options"]["readonly"] is True


# ---- beneath ----------------------------------------------------------------------------------


def test_beneath_creates_and_removes_its_file(confined: tuple[Path, str], tree: tuple[Path, Path]) -> None:
    binary, resolver = confined
    allowed, _ = tree
    f = allowed / "sub" / "iowatt-run.dat"
    args = [f"--filename={f}", f"--beneath={allowed}", "--create_new=1", "--unlink=1"]
    doc = run_engine(binary, *args, "--rw=randwrite", "--size=1m", "--numjobs=2", "--group_reporting").doc
    job = doc["jobs"][0]
    assert job["write"]["io_bytes"] == 2 * MiB
    assert job["iowatt"]["options"]["beneath"] == str(allowed)
    assert doc["iowatt"]["target"]["beneath"] == {"dir": str(allowed), "resolver": resolver}
    assert doc["iowatt"]["target"]["created"] is True
    assert not f.exists() and (allowed / "sub").is_dir()


def test_beneath_relative_filename_is_relative_to_the_directory(
    confined: tuple[Path, str], tree: tuple[Path, Path]
) -> None:
    binary, _ = confined
    allowed, _ = tree
    run_engine(binary, "--filename=sub/./rel.dat", f"--beneath={allowed}", "--rw=write", "--size=64k")
    assert (allowed / "sub" / "rel.dat").stat().st_size == 64 * KiB


def _refused(binary: Path, filename: str, allowed: Path, *extra: str) -> Result:
    r = run_engine(
        binary, f"--filename={filename}", f"--beneath={allowed}", "--size=64k", *extra, check=False
    )
    assert r.rc == 2, r.stderr
    assert r.stderr.startswith("iowatt-engine: beneath: ") or r.stderr.startswith(
        "iowatt-engine: create_new: "
    )
    assert r.stdout == ""
    return r


@pytest.mark.parametrize("rw", ["read", "write"])
def test_beneath_refuses_a_link_as_the_file(
    confined: tuple[Path, str], tree: tuple[Path, Path], rw: str
) -> None:
    binary, _ = confined
    allowed, canary = tree
    before = sha256(canary)
    (allowed / "data.dat").symlink_to(canary)
    r = _refused(binary, str(allowed / "data.dat"), allowed, f"--rw={rw}")
    assert "symbolic link" in r.stderr
    assert sha256(canary) == before


def test_beneath_refuses_a_link_as_a_directory(confined: tuple[Path, str], tree: tuple[Path, Path]) -> None:
    binary, canary = confined[0], tree[1]
    allowed = tree[0]
    outside = canary.parent / "outside"
    outside.mkdir()
    (allowed / "via").symlink_to(outside)
    r = _refused(binary, str(allowed / "via" / "x.dat"), allowed, "--rw=write", "--create_new=1")
    assert "symbolic link" in r.stderr
    assert list(outside.iterdir()) == []
    # a link to a directory inside the allowed one is refused just the same
    (allowed / "inner").symlink_to(allowed / "sub")
    _refused(binary, str(allowed / "inner" / "x.dat"), allowed, "--rw=write")
    assert list((allowed / "sub").iterdir()) == []


@pytest.mark.parametrize("name", ["../canary.txt", "sub/../../canary.txt"])
def test_beneath_refuses_a_dotdot_escape(
    confined: tuple[Path, str], tree: tuple[Path, Path], name: str
) -> None:
    binary, _ = confined
    allowed, canary = tree
    before = sha256(canary)
    for filename in (f"{allowed}/{name}", name):
        r = _refused(binary, filename, allowed, "--rw=write")
        assert "'..'" in r.stderr
    assert sha256(canary) == before


def test_beneath_refuses_a_file_outside_the_directory(engine_bin: Path, tree: tuple[Path, Path]) -> None:
    allowed, canary = tree
    r = _refused(engine_bin, str(canary), allowed, "--rw=read")
    assert "is not beneath" in r.stderr
    # a sibling whose name merely starts with the directory's name is outside too
    (allowed.parent / "allowed2").mkdir()
    r = _refused(engine_bin, f"{allowed}2/x.dat", allowed, "--rw=write")
    assert not (allowed.parent / "allowed2" / "x.dat").exists()


def test_beneath_refuses_a_block_device(engine_bin: Path) -> None:
    dev = next((e.path for e in os.scandir("/dev") if stat.S_ISBLK(os.stat(e.path).st_mode)), None)
    if dev is None:
        pytest.skip("no block device node in /dev")
    r = _refused(engine_bin, dev, Path("/dev"), "--rw=read")
    assert "block device" in r.stderr


def test_beneath_refuses_a_missing_directory(engine_bin: Path, scratch: Path) -> None:
    r = run_engine(
        engine_bin, f"--filename={scratch}/nope/x", f"--beneath={scratch}/nope", "--size=4k", check=False
    )
    assert r.rc == 2 and r.stderr.startswith("iowatt-engine: beneath: cannot open directory")


# ---- a link swapped in during the run -------------------------------------------------------


def _swap_later(path: Path, canary: Path, delay: float) -> threading.Thread:
    """Once the engine has created the data file, and `delay` seconds into its run, move the
    file away and put a link to the canary in its place."""

    def swap() -> None:
        wait_until(path.exists, timeout=30, message=f"the engine creates {path}")
        time.sleep(delay)  # the behaviour under test: the swap lands in the middle of the run
        path.rename(path.with_name(path.name + ".moved"))
        path.symlink_to(canary)

    t = threading.Thread(target=swap, daemon=True)
    t.start()
    return t


def test_link_swapped_in_during_a_run_is_never_followed(
    confined: tuple[Path, str], tree: tuple[Path, Path]
) -> None:
    binary, _ = confined
    allowed, canary = tree
    before = sha256(canary)
    f = allowed / "iowatt-run.dat"
    t = _swap_later(f, canary, 1.0)
    r = run_engine(
        binary,
        f"--filename={f}",
        f"--beneath={allowed}",
        "--create_new=1",
        "--unlink=1",
        "--rw=randwrite",
        "--bs=4k",
        "--size=1m",
        "--numjobs=2",
        "--time_based",
        "--runtime=3",
        "--rate_iops=2000",  # paced: the swap lands mid-run all the same, without two cores busy 3 s
        "--end_fsync=1",
        timeout=60,
        check=False,
    )
    t.join()
    assert sha256(canary) == before
    # detected: the job fails (exit 1, JSON printed) and unlink leaves the link alone
    assert r.rc == 1, r.stderr
    job = r.doc["jobs"][0]
    assert job["write"]["io_bytes"] > 0
    assert "replaced by a symbolic link" in job["iowatt"]["error_message"]
    assert "unlink:" in r.stderr
    assert f.is_symlink() and os.readlink(f) == str(canary)
    assert (allowed / "iowatt-run.dat.moved").stat().st_size == MiB


def test_later_jobs_never_open_a_link_swapped_in_between_jobs(
    confined: tuple[Path, str], tree: tuple[Path, Path]
) -> None:
    binary, _ = confined
    allowed, canary = tree
    before = sha256(canary)
    f = allowed / "iowatt-run.dat"
    t = _swap_later(f, canary, 0.8)
    r = run_engine(
        binary,
        f"--filename={f}",
        f"--beneath={allowed}",
        "--create_new=1",
        "--size=1m",
        "--time_based",
        "--runtime=2",
        "--rate_iops=2000",  # paced: the swap lands between the jobs all the same
        "--name=first",
        "--rw=randread",
        "--name=second",
        "--stonewall",
        "--rw=randwrite",
        timeout=60,
        check=False,
    )
    t.join()
    assert sha256(canary) == before
    assert r.rc == 1, r.stderr
    first, second = r.doc["jobs"]
    assert first["error"] != 0 and second["error"] != 0
    assert "symbolic link" in second["iowatt"]["error_message"]
    assert second["write"]["io_bytes"] == 0


def test_unlink_leaves_a_file_swapped_in_during_the_run(engine_bin: Path, tree: tuple[Path, Path]) -> None:
    allowed, _ = tree
    f = allowed / "iowatt-run.dat"

    def swap() -> None:
        wait_until(f.exists, timeout=30, message=f"the engine creates {f}")
        time.sleep(0.8)  # the behaviour under test: the swap lands in the middle of the 2 s run
        f.rename(allowed / "moved.dat")
        f.write_bytes(b"someone else's file")

    t = threading.Thread(target=swap, daemon=True)
    t.start()
    r = run_engine(
        engine_bin,
        f"--filename={f}",
        f"--beneath={allowed}",
        "--create_new=1",
        "--unlink=1",
        "--rw=randwrite",
        "--size=1m",
        "--time_based",
        "--runtime=2",
        "--rate_iops=2000",  # paced: the swap lands mid-run all the same
        check=False,
    )
    t.join()
    assert r.rc == 1
    assert "replaced by another file" in r.doc["jobs"][0]["iowatt"]["error_message"]
    assert f.read_bytes() == b"someone else's file"


# ---- the ENOSYS fallback, seen from the system calls ----------------------------------------


@pytest.mark.skipif(shutil.which("strace") is None, reason="needs strace")
def test_resolvers_seen_through_strace(
    engine_bin: Path, engine_noopenat2: Path, tree: tuple[Path, Path]
) -> None:
    allowed, _ = tree
    env = {**os.environ, "ASAN_OPTIONS": "detect_leaks=0"}  # LeakSanitizer cannot run under ptrace

    def trace(binary: Path, name: str) -> list[str]:
        args = [f"--filename={allowed}/sub/{name}", f"--beneath={allowed}", "--create_new=1", "--unlink=1"]
        p, lines = straced(
            [str(binary), *args, "--rw=write", "--size=64k"],
            allowed.parent / f"{name}.strace",
            "-qq",
            "-e",
            "trace=open,openat,openat2,unlinkat",
            timeout=120,
            env=env,
        )
        assert p.returncode == 0, p.stderr
        json.loads(p.stdout)
        return [line for line in lines if name in line or '"sub"' in line]

    calls = trace(engine_bin, "a.dat")
    assert calls and all("openat2(" in c or "unlinkat(" in c for c in calls), calls
    assert all("RESOLVE_BENEATH" in c and "RESOLVE_NO_SYMLINKS" in c for c in calls if "openat2(" in c)
    assert any("O_CREAT|O_EXCL" in c and "0600" in c for c in calls)

    calls = trace(engine_noopenat2, "b.dat")
    assert calls and not any("openat2(" in c for c in calls), calls
    assert all("O_NOFOLLOW" in c for c in calls if "openat(" in c)
    assert any("openat(" in c and '"sub"' in c and "O_DIRECTORY" in c for c in calls)
    assert any("unlinkat(" in c and '"b.dat"' in c for c in calls)
    assert not (allowed / "sub" / "b.dat").exists()


# the production binary under a seccomp filter that answers openat2 with ENOSYS, as an old kernel
# (or a container runtime's filter) would: it must switch to the walk at run time
_ENOSYS_LAUNCHER = r"""
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>
int main(int argc, char **argv)
{
    struct sock_filter f[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_openat2, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct sock_fprog prog = { sizeof(f) / sizeof(f[0]), f };
    if (argc < 2 || prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
        return 126;
    if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog))
        return 126;
    execv(argv[1], argv + 1);
    return 127;
}
"""


@pytest.fixture(scope="module")
def enosys_launcher(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if platform.machine() != "x86_64" or shutil.which("cc") is None:
        pytest.skip("the seccomp launcher is written for x86_64 and needs cc")
    d = tmp_path_factory.mktemp("enosys")
    (d / "launcher.c").write_text(_ENOSYS_LAUNCHER)
    subprocess.run(["cc", "-O1", "-o", str(d / "launcher"), str(d / "launcher.c")], check=True, timeout=120)
    return d / "launcher"


def test_enosys_from_the_kernel_switches_to_the_walk(
    enosys_launcher: Path, engine_bin: Path, tree: tuple[Path, Path]
) -> None:
    allowed, canary = tree
    before = sha256(canary)
    f = allowed / "sub" / "x.dat"
    base = [str(enosys_launcher), str(engine_bin), f"--beneath={allowed}"]
    p = subprocess.run(
        [*base, f"--filename={f}", "--create_new=1", "--unlink=1", "--rw=randwrite", "--size=1m"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    assert doc["iowatt"]["target"]["beneath"]["resolver"] == "openat-walk"
    assert doc["jobs"][0]["write"]["io_bytes"] == MiB and not f.exists()
    (allowed / "sub" / "evil.dat").symlink_to(canary)
    for name in ("sub/evil.dat", "../canary.txt"):
        p = subprocess.run(
            [*base, f"--filename={name}", "--rw=write", "--size=4k"],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert p.returncode == 2 and p.stderr.startswith("iowatt-engine: beneath: "), p.stderr
    assert sha256(canary) == before
