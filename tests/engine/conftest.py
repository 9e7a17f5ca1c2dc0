"""Fixtures for the iowatt-engine black-box tests: the real binary (built with make when
missing), a scratch directory in /dev/shm, scratch file systems (a 1 MiB tmpfs, ext4 on a loop
device: filemode.py, shared with the benches) and a helper that runs a job and parses its JSON."""

from __future__ import annotations

import contextlib
import ctypes
import fcntl
import json
import os
import shutil
import signal
import subprocess
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.services import on_one_cpu

from .filemode import Unavailable, ext4_loop
from .filemode import small_tmpfs as _small_tmpfs

REPO = Path(__file__).resolve().parents[2]
ENGINE_DIR = REPO / "agent" / "engine"
BUILD = ENGINE_DIR / "build"
# First on every command line the tests run Debian's fio with: without a clock source named, each
# fio run spends ~0.07 CPU-s of its start-up (half of a small job's CPU) testing whether the TSC
# is monotonic across every CPU before it picks one. Which clock fio times its I/Os with is no
# part of what any test compares (counts, bytes, offsets, errors, keys, never timings).
# fio 3.33 still calibrates its CPU clock when it parses this option (~65 ms spinning: 50 samples of
# 1.28 ms, whatever source is named; no option or variable skips it), and it stops at the first
# option it refuses: where a test expects fio to refuse the command line, FIO_CLOCK goes last and
# the refusal costs ~0.02 CPU-s instead of ~0.08 (placed after a job's name, fio lists it among
# that job's "job options" instead of the global ones).
FIO_CLOCK = "--clocksource=clock_gettime"


PR_GET_TIMERSLACK, PR_SET_TIMERSLACK = 30, 29
_libc = ctypes.CDLL(None, use_errno=True)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "default_timer_slack: the test's programs start with the default timer slack (50 us)"
    )


@pytest.fixture(autouse=True)
def _precise_sleeps(request: pytest.FixtureRequest) -> Iterator[None]:
    """Each engine test's programs (fio and the engine, started from this thread: a process keeps
    the timer slack it was started with) get a timer slack of 1 ns instead of 50 us. fio measures
    how long a 1 us nanosleep takes when it starts (the longest of ten) and from then on spins,
    instead of sleeping, the last that long of every wait of a rate, a thinktime or a steady-state
    window; with the default slack, on a loaded machine, a paced fio spent about half its time
    spinning (test_pacing 14.8 -> 9.4 CPU-s at load ~10). Sleeps are only more punctual: a sleep is
    still never shorter than asked. `@pytest.mark.default_timer_slack`: not for that test."""
    if request.node.get_closest_marker("default_timer_slack"):
        yield
        return
    before = _libc.prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0)
    _libc.prctl(PR_SET_TIMERSLACK, 1, 0, 0, 0)
    try:
        yield
    finally:
        _libc.prctl(PR_SET_TIMERSLACK, before, 0, 0, 0)


def _make(*targets: str) -> None:
    subprocess.run(["make", "-s", "-C", str(ENGINE_DIR), *targets], check=True, timeout=300)


@pytest.fixture(scope="session")
def engine_bin() -> Path:
    _make("all")
    return BUILD / "iowatt-engine"


@pytest.fixture(scope="session")
def engine_asan() -> Path:
    _make("asan")
    return BUILD / "iowatt-engine-asan"


@pytest.fixture(scope="session")
def engine_noopenat2() -> Path:
    """A sanitizer build compiled with -DIOWATT_NO_OPENAT2: beneath=DIR always takes the
    openat(O_NOFOLLOW) walk that kernels without openat2 (ENOSYS) get."""
    _make("noopenat2")
    return BUILD / "iowatt-engine-noopenat2"


@pytest.fixture(scope="session")
def engine_noasync() -> Path:
    """A build without liburing and libaio (make noasync = make HAVE_LIBURING= HAVE_LIBAIO=)."""
    _make("noasync")
    return BUILD / "iowatt-engine-noasync"


def made_once(name: str, make: Callable[[Path], None]) -> Iterator[Path]:
    """A directory holding what `make(dir)` puts in it (fio's side of a parametrized comparison: its
    JSON, the files it wrote), made once for the whole run: under `pytest -n` the first test process
    to need it makes it under a lock in the run's share directory (tests/conftest.py,
    IOWATT_TEST_SHARE_DIR, removed when the run ends) and the others read it, as xdist spreads a
    module's tests over every process; without one, a directory of the module's own. For a fixture
    to `yield from`; `name` is unique to what `make` makes."""
    share = os.environ.get("IOWATT_TEST_SHARE_DIR", "")
    if not os.path.isdir(share):
        d = Path(tempfile.mkdtemp(prefix="iowatt-engine-test-", dir="/dev/shm"))
        try:
            make(d)
            yield d
        finally:
            shutil.rmtree(d, ignore_errors=True)
        return
    d = Path(share) / f"engine-{name}"
    with open(f"{d}.lock", "w", encoding="ascii") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (d / ".made").exists():  # never made, or a process failed while making it
            shutil.rmtree(d, ignore_errors=True)
            d.mkdir()
            make(d)
            (d / ".made").touch()
    yield d


def kill_matching(matches: Callable[[bytes], bool]) -> None:
    """SIGKILL every process whose command line (NUL-separated, as in /proc) `matches`: a hung
    fio's job processes, which it starts in sessions of their own."""
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            with contextlib.suppress(OSError):
                if matches((proc / "cmdline").read_bytes()):
                    os.kill(int(proc.name), signal.SIGKILL)


def run_bounded(
    argv: list[str],
    *,
    timeout: float,
    tries: int,
    stop: Callable[[subprocess.Popen[str]], None],
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
) -> subprocess.CompletedProcess[str] | None:
    """argv (fio) in a session of its own, `timeout` seconds a try, at most `tries` tries; a try that
    does not end is ended by `stop(proc)` (its process group is killed after it) and tried again.
    None when every try hung. The output goes to files, not pipes: a job process left behind held a
    pipe open, and reading it to its end waited for that process for ever (a test hung for minutes,
    2026-12-07)."""
    for _ in range(tries):
        with (
            tempfile.TemporaryFile("w+", errors="replace") as out,
            tempfile.TemporaryFile("w+", errors="replace") as err,
        ):
            proc = subprocess.Popen(argv, cwd=cwd, env=env, stdout=out, stderr=err, start_new_session=True)
            try:
                proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                stop(proc)
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGKILL)  # before the leader is reaped: still its group
                proc.wait()
                continue
            out.seek(0)
            err.seek(0)
            return subprocess.CompletedProcess(argv, proc.returncode, out.read(), err.read())
    return None


def fio_jobs_made_once(
    name: str, jobs: Callable[[Path], dict[str, list[str]]], run: Callable[[list[str], Path], dict[str, Any]]
) -> Iterator[dict[str, dict[str, Any]]]:
    """Several independent jobs (`jobs(dir)`: each job's name and options, its files in dir) as one
    fio run, `run(args, dir)` (the module's fio), made once for the whole run (`made_once`): fio's
    start-up paid once instead of once a job. Each job's part of fio's JSON document, by name."""

    def make(d: Path) -> None:
        args = [a for job, more in jobs(d).items() for a in (f"--name={job}", *more)]
        (d / "doc.json").write_text(json.dumps(run(args, d)))

    for d in made_once(name, make):
        yield {j["jobname"]: j for j in json.loads((d / "doc.json").read_text())["jobs"]}


@pytest.fixture
def scratch() -> Iterator[Path]:
    d = Path(tempfile.mkdtemp(prefix="iowatt-engine-test-", dir="/dev/shm"))
    try:
        yield d
    finally:
        shutil.rmtree(d, ignore_errors=True)


@pytest.fixture
def small_tmpfs(scratch: Path) -> Iterator[Path]:
    """A 1 MiB tmpfs in scratch: runs out of space after a few hundred KiB."""
    try:
        with _small_tmpfs(scratch) as mnt:
            yield mnt
    except Unavailable as e:
        pytest.skip(str(e))


@pytest.fixture(scope="module")
def loop_ext4(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """ext4 on a 96 MiB loop device backed by /dev/shm, mounted for the module."""
    try:
        with ext4_loop(tmp_path_factory.mktemp("loop", numbered=True), 96) as mnt:
            yield mnt
    except Unavailable as e:
        pytest.skip(str(e))


@pytest.fixture
def disk_scratch() -> Iterator[Path]:
    """A directory on the machine's real file system (for O_DIRECT on a real block device)."""
    d = Path(tempfile.mkdtemp(prefix="iowatt-engine-test-", dir="/var/tmp"))
    try:
        yield d
    finally:
        shutil.rmtree(d, ignore_errors=True)


@dataclass
class Result:
    rc: int
    stdout: str
    stderr: str

    @property
    def doc(self) -> dict[str, Any]:
        return json.loads(self.stdout)

    @property
    def job(self) -> dict[str, Any]:
        return self.doc["jobs"][0]


def skip_if_unsupported(r: Result) -> None:
    """Exit 77 with the engine's `ioengine: X is not available on this kernel` (or `not built
    in`): this host cannot run the test (io_uring disabled by sysctl or seccomp, an old kernel, a
    build without liburing), so it is skipped with the engine's reason — never failed, never passed."""
    if r.rc == 77 and "ioengine:" in r.stderr:
        pytest.skip(f"engine exit 77 here: {r.stderr.strip()}")


def run_engine(
    binary: Path, *args: str, timeout: float = 60, check: bool = True, one_cpu: bool = False
) -> Result:
    """Run the engine; with `check` a non-zero exit fails the test, except the exit 77 of an
    ioengine this host lacks, which skips it (tests that expect 77 pass check=False). `one_cpu`:
    on one CPU (tests/services.py `on_one_cpu`), for a many-threaded run flat out for a set time
    whose speed the test does not read."""
    cmd = [str(binary), *args]
    p = subprocess.run(on_one_cpu(cmd) if one_cpu else cmd, capture_output=True, text=True, timeout=timeout)
    r = Result(p.returncode, p.stdout, p.stderr)
    if check:
        skip_if_unsupported(r)
        if p.returncode != 0:
            raise AssertionError(f"engine exited {p.returncode}: {p.stderr}")
    return r


@pytest.fixture
def run(engine_bin: Path):
    def _run(*args: str, **kw: Any) -> Result:
        return run_engine(engine_bin, *args, **kw)

    return _run


def have_root() -> bool:
    return os.geteuid() == 0
