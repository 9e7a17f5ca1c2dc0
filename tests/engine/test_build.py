"""The C unit tests, the sanitizer build running real jobs, and a build without liburing /
libaio (those ioengines then exit 77)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from .conftest import ENGINE_DIR, run_engine, skip_if_unsupported


def test_c_unit_tests() -> None:
    p = subprocess.run(
        ["make", "-s", "-C", str(ENGINE_DIR), "check"], capture_output=True, text=True, timeout=300
    )
    assert p.returncode == 0, p.stdout + p.stderr
    assert " 0 failures" in p.stdout


@pytest.mark.parametrize(
    "args",
    [
        ["--rw=randrw", "--bssplit=4k/50:64k/50", "--numjobs=2", "--fsync=8", "--ramp_time=100ms"],
        ["--rw=randread", "--ioengine=io_uring", "--iodepth=8", "--rate_iops=2000", "--direct=1"],
        ["--rw=write", "--ioengine=libaio", "--iodepth=4", "--buffer_compress_percentage=30", "--direct=1"],
        ["--rw=randread", "--random_distribution=zipf:1.2", "--ioengine=null", "--norandommap=1"],
    ],
    ids=["psync-mix", "io_uring-rate", "libaio-write", "null-zipf"],
)
def test_asan_build_runs_clean(engine_asan: Path, scratch: Path, args: list[str]) -> None:
    r = run_engine(
        engine_asan,
        "--output-format=json+",
        "--progress=jsonl",
        "--name=a",
        f"--filename={scratch}/t.dat",
        "--size=4m",
        "--runtime=300ms",
        "--time_based=1",
        *args,
        check=False,
    )
    skip_if_unsupported(r)  # io_uring-rate and libaio-write on a host without them
    assert r.rc == 0, r.stderr
    assert "Sanitizer" not in r.stderr and "runtime error" not in r.stderr, r.stderr
    assert r.job["error"] == 0


def test_build_without_async_libraries(engine_noasync: Path, scratch: Path) -> None:
    """Without liburing and libaio the engine builds and those ioengines exit 77, and a test that
    needs one is skipped with the engine's reason. The binary is `make noasync` (built once by
    make test-builds); the README's override `make HAVE_LIBURING= HAVE_LIBAIO=` must drop both
    from the real build's command the same way (checked with make -n)."""
    dry = subprocess.run(
        [
            "make",
            "-n",
            "-B",
            "-C",
            str(ENGINE_DIR),
            "BUILD=/nonexistent-dry-run",
            "HAVE_LIBURING=",
            "HAVE_LIBAIO=",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert dry.returncode == 0, dry.stderr
    link = next(line for line in dry.stdout.splitlines() if "-o /nonexistent-dry-run/iowatt-engine" in line)
    for flag in ("-DHAVE_LIBURING", "-DHAVE_LIBAIO", "-luring", "-laio"):
        assert flag not in link.split(), link
    binary = engine_noasync
    for engine in ("io_uring", "libaio"):
        r = run_engine(
            binary, f"--filename={scratch}/t.dat", "--size=1m", f"--ioengine={engine}", check=False
        )
        assert r.rc == 77, r.stderr
        assert "ioengine:" in r.stderr and "not built in" in r.stderr
        # a test that needs this ioengine is skipped with the engine's reason, not failed
        with pytest.raises(pytest.skip.Exception, match=f"engine exit 77 here: .*{engine} is not built in"):
            run_engine(binary, f"--filename={scratch}/t.dat", "--size=1m", f"--ioengine={engine}")
    assert run_engine(binary, f"--filename={scratch}/t.dat", "--size=1m").job["read"]["io_bytes"] == 1 << 20
