"""The libFuzzer targets (agent/engine/fuzz/): built once with clang, ASan and UBSan; every
committed corpus input and every minimized crash input replayed as a regression; then a short
coverage-guided run of each target into a scratch corpus: the committed corpus, then
FUZZ_TEST_RUNS (default 2000) mutated inputs (a count, not a time budget: the same work on a
quiet or a loaded machine; FUZZ_TEST_SECONDS=N fuzzes N seconds instead). Any sanitizer report,
crash, leak or timeout fails the test with libFuzzer's output. `make fuzz` runs the long version
(agent/engine/fuzz/run.sh)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from .conftest import BUILD, ENGINE_DIR

FUZZ = ENGINE_DIR / "fuzz"
TARGETS = ("argv", "jobfile", "ini", "vdbench", "postmark", "heapbtree", "cmdprio")
RUNS = int(os.environ.get("FUZZ_TEST_RUNS", "2000"))
SECONDS = int(os.environ.get("FUZZ_TEST_SECONDS", "0"))


@pytest.fixture(scope="session")
def fuzzers() -> Path:
    if not shutil.which("clang"):
        pytest.fail("clang is missing: scripts/install-system-deps.sh installs clang and libclang-rt-14-dev")
    p = subprocess.run(
        ["make", "-s", "-C", str(ENGINE_DIR), "fuzzers"], capture_output=True, text=True, timeout=1200
    )
    assert p.returncode == 0, p.stdout + p.stderr
    return BUILD


def fuzz(binary: Path, *args: str, timeout: float) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "ASAN_OPTIONS": "detect_leaks=1:abort_on_error=0",
        "UBSAN_OPTIONS": "print_stacktrace=1",
    }
    return subprocess.run(
        [str(binary), *args], capture_output=True, text=True, timeout=timeout, env=env, cwd=binary.parent
    )


def inputs(kind: str, target: str) -> list[Path]:
    d = FUZZ / kind / target
    return sorted(p for p in d.iterdir() if p.is_file()) if d.is_dir() else []


@pytest.mark.parametrize("target", TARGETS)
def test_corpus_and_crashes_replay(fuzzers: Path, target: str) -> None:
    """Every committed input runs once: the corpus (coverage found so far) and the inputs that
    once crashed a parser (fuzz/crashes/<target>: the vdbench ones are issue 22's High 3)."""
    files = inputs("corpus", target) + inputs("crashes", target)
    assert inputs("corpus", target), f"fuzz/corpus/{target} is empty: python3 agent/engine/fuzz/seeds.py"
    for at in range(0, len(files), 200):  # libFuzzer runs each file given on the command line once
        chunk = files[at : at + 200]
        r = fuzz(
            fuzzers / f"fuzz-{target}", "-timeout=10", "-rss_limit_mb=2048", *map(str, chunk), timeout=600
        )
        assert r.returncode == 0, r.stderr[-6000:]
        assert "ERROR:" not in r.stderr and "runtime error" not in r.stderr, r.stderr[-6000:]


@pytest.mark.parametrize("target", TARGETS)
def test_short_fuzz_run(fuzzers: Path, target: str, tmp_path: Path) -> None:
    work = tmp_path / "corpus"
    work.mkdir()
    seeds = len(inputs("corpus", target))
    # libFuzzer's -runs counts the corpus inputs it executes first
    budget = f"-max_total_time={SECONDS}" if SECONDS else f"-runs={seeds + RUNS}"
    r = fuzz(
        fuzzers / f"fuzz-{target}",
        budget,
        "-timeout=10",
        "-rss_limit_mb=2048",
        "-max_len=4096",
        f"-dict={FUZZ / 'dict' / (target + '.dict')}",
        f"-artifact_prefix={tmp_path}/",
        "-print_final_stats=1",
        str(work),
        str(FUZZ / "corpus" / target),
        timeout=SECONDS + 600,
    )
    artifacts = [p.name for p in tmp_path.iterdir() if p.name != "corpus"]
    assert r.returncode == 0 and not artifacts, f"{target}: {artifacts}\n{r.stderr[-6000:]}"
    executed = re.search(r"stat::number_of_executed_units: (\d+)", r.stderr)
    assert executed, r.stderr[-2000:]
    # every committed input, then the mutations
    assert int(executed.group(1)) >= seeds + (0 if SECONDS else RUNS), r.stderr[-2000:]
