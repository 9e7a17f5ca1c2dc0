"""fio's layout and sync options beside Debian's fio 3.33, counted with strace on the target:
create_fsync (fio's default 1: the fsync after a layout that wrote data; an allocation alone is
not fsynced), overwrite (a write job lays its file's data out first), fsync_on_close (the job's
end fsync, and one as each written file is closed) and pre_read (the region read once before the
job; the cache drop skipped). One test runs every case, so the suite pays one setup."""

from __future__ import annotations

import re
import shutil
import subprocess
from collections import Counter
from pathlib import Path

import pytest

from tests.strace import STRACE, straced

from .conftest import FIO_CLOCK

FIO = shutil.which("fio")
pytestmark = pytest.mark.skipif(FIO is None or STRACE is None, reason="needs Debian's fio and strace")

# `strace -ff -y` (tests/strace.py: a call and its result on one line): "pwrite64(5</dev/shm/x/n.0>,
# ""..., 4096, 0) = 4096"
CALL = re.compile(r"^(\w+)\(\d+<([^>]*)>(.*?)\)\s+= (-?\d+)")


def traced(cwd: Path, argv: list[str]) -> tuple[int, Counter[tuple[str, str]], Counter[str]]:
    """exit code; (call, file name) -> calls; file name -> bytes written, for the job's files"""
    p, lines = straced(
        argv, cwd / "strace.txt", "-qq", "-y", "-s", "0", "-e", "signal=none", "-e",
        "trace=read,pread64,write,pwrite64,fsync,fdatasync,fadvise64", timeout=60, cwd=cwd,
    )  # fmt: skip
    calls: Counter[tuple[str, str]] = Counter()
    written: Counter[str] = Counter()
    for line in lines:
        m = CALL.match(line)
        if not m or not Path(m.group(2)).name.startswith("n."):
            continue
        call, name = m.group(1), Path(m.group(2)).name
        if call == "fadvise64":
            call = "dontneed" if "DONTNEED" in m.group(3) else "fadvise"
        calls[call.replace("pread64", "read").replace("pwrite64", "write"), name] += 1
        if call in ("write", "pwrite64"):
            written[name] += int(m.group(4))
    return p.returncode, calls, written


Traced = tuple[int, Counter[tuple[str, str]], Counter[str]]


def both(engine_bin: Path, scratch: Path, *args: str, keep: bool = False) -> list[Traced]:
    """The job in fio and in the engine, each in its own directory (n.0, n.1: the job's files)"""
    res = []
    fio = [FIO or "fio", FIO_CLOCK, "--output-format=json"]
    for tool, argv in (("fio", fio), ("ours", [str(engine_bin)])):
        d = scratch / tool
        d.mkdir(exist_ok=True)
        for f in d.iterdir():
            if not keep:
                f.unlink()
        res.append(traced(d, [*argv, "--name=n", "--filename_format=n.$filenum", *args]))
    return res


def test_layout_and_sync_options_as_fio(engine_bin: Path, scratch: Path) -> None:
    job = ("--bs=4k", "--size=64k")
    # (args, fsyncs of n.0, bytes the layout and the job wrote to n.0)
    cases = [
        (("--rw=read",), 1, 65536),  # create_fsync=1 by default: the layout's data is fsynced
        (("--rw=read", "--create_fsync=0"), 0, 65536),
        (("--rw=write",), 0, 65536),  # nothing laid out (an allocation): no fsync, as fio's
        (("--rw=write", "--overwrite=1"), 1, 2 * 65536),  # the data first, then the job's writes
        (("--rw=write", "--fsync_on_close=1"), 1, 65536),  # the end fsync; the close's is skipped
    ]
    for args, fsyncs, nbytes in cases:
        (frc, fcalls, fw), (orc, ocalls, ow) = both(engine_bin, scratch, *job, *args)
        assert frc == orc == 0, args
        assert fcalls["fsync", "n.0"] == ocalls["fsync", "n.0"] == fsyncs, args
        assert fw["n.0"] == ow["n.0"] == nbytes, args
    # pre_read: the region read twice (before the job, in the job); the cache is not dropped
    # (without it: 16 reads and one POSIX_FADV_DONTNEED, test_options_behaviour's invalidate)
    for rc, calls, _ in both(engine_bin, scratch, *job, "--rw=read", "--pre_read=1", keep=True):
        assert rc == 0 and (calls["read", "n.0"], calls["dontneed", "n.0"]) == (32, 0)
    # several files, openfiles=1: a written file is fsynced as it is closed, the open one at the end
    # (fio 3.33 also opens the closed one again to fsync it: 3 calls, nothing left to write)
    (frc, fcalls, _), (orc, ocalls, _) = both(
        engine_bin, scratch, "--bs=4k", "--size=32k", "--nrfiles=2", "--openfiles=1", "--rw=write",
        "--fsync_on_close=1",
    )  # fmt: skip
    assert frc == orc == 0
    assert (fcalls["fsync", "n.0"], fcalls["fsync", "n.1"]) == (2, 1)
    assert (ocalls["fsync", "n.0"], ocalls["fsync", "n.1"]) == (1, 1)


def test_overwrite_respects_keep_existing_and_pre_read_refuses_direct(
    engine_bin: Path, scratch: Path
) -> None:
    f = scratch / "short.dat"
    f.write_bytes(b"x" * 8192)
    p = subprocess.run(
        [str(engine_bin), "--name=j", f"--filename={f}", "--rw=write", "--bs=4k", "--size=64k",
         "--overwrite=1", "--keep_existing=1"],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert p.returncode == 2 and p.stderr.startswith("iowatt-engine: keep_existing:"), p.stderr
    assert f.read_bytes() == b"x" * 8192
    p = subprocess.run(
        [str(engine_bin), "--name=j", f"--filename={f}", "--rw=read", "--bs=4k", "--size=8k",
         "--pre_read=1", "--direct=1"],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert p.returncode == 2 and p.stderr.startswith("iowatt-engine: pre_read:")
    assert len(p.stderr.splitlines()) == 1
