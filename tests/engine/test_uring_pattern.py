"""io_uring's submit and reap pattern, beside Debian's fio 3.33 under strace: both submit each
I/O without waiting (io_uring_enter(n, 0, GETEVENTS)), reap what the completion ring holds and
enter the kernel to wait (io_uring_enter(0, min, GETEVENTS)) only when it holds too few; so every
call that submits waits for nothing, and there is about one call per I/O."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from tests.strace import STRACE, straced

from .conftest import FIO_CLOCK

FIO = shutil.which("fio")
ENTER = re.compile(r"io_uring_enter\(\d+, (\d+), (\d+),")
IOS = 2000


def enters(cmd: list[str], out: Path) -> list[tuple[int, int]]:
    """(to_submit, min_complete) of each io_uring_enter the command makes."""
    p, lines = straced(cmd, out, "-qq", "-e", "trace=io_uring_enter", timeout=60)
    if p.returncode == 77:
        pytest.skip("io_uring is not built in or not allowed here")
    assert p.returncode == 0, p.stderr
    return [(int(m[1]), int(m[2])) for m in ENTER.finditer("\n".join(lines))]


@pytest.mark.skipif(FIO is None or STRACE is None, reason="needs Debian's fio and strace")
def test_io_uring_submits_without_waiting_as_fio(engine_bin: Path, scratch: Path) -> None:
    target = scratch / "u.dat"
    target.write_bytes(b"\x5a" * (8 << 20))
    job = [
        "--name=u",
        f"--filename={target}",
        "--size=8m",
        "--rw=randread",
        "--bs=4k",
        "--ioengine=io_uring",
        "--iodepth=8",
        f"--number_ios={IOS}",
        "--output-format=json",
    ]
    assert FIO
    for calls in (
        enters([str(engine_bin), *job], scratch / "e.st"),
        enters([FIO, FIO_CLOCK, *job], scratch / "f.st"),
    ):
        submits = [c for c in calls if c[0] > 0]
        assert sum(n for n, _ in submits) == IOS
        assert submits and all(wait == 0 for _, wait in submits), calls[:20]
        assert len(calls) <= 1.2 * IOS
