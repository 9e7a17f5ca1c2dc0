"""`iowatt-agent bench --preset heap-btree --records N --target DIR --json` (issue 15) with the real
engine: the ten fractions × heap/B-tree × insert/point query, the issue's fields, nothing left in
the target; the human table; bad options exit 2 naming the option."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from iowatt_agent import cli
from iowatt_agent.heap_btree import (
    FRACTIONS,
    HeapBtreeUsage,
    default_records,
    engine_command,
    parse_options,
)
from typer.testing import CliRunner

runner = CliRunner()
REPO = Path(__file__).resolve().parents[2]
ENGINE_DIR = REPO / "agent" / "engine"
ISSUE_FIELDS = {
    "structure",
    "operation",
    "cache_fraction",
    "ops_per_s",
    "device_reads",
    "device_writes",
    "hit_ratio",
}


@pytest.fixture(scope="module")
def engine() -> Path:
    subprocess.run(["make", "-s", "-C", str(ENGINE_DIR), "all"], check=True, timeout=300)
    return ENGINE_DIR / "build" / "iowatt-engine"


@pytest.fixture
def target(tmp_path: Path) -> Path:
    d = tmp_path / "target"
    d.mkdir()
    return d


def bench(engine: Path, target: Path, *args: str):
    return runner.invoke(
        cli.app, ["bench", "--engine", str(engine), "--target", str(target), "--preset", "heap-btree", *args]
    )


def test_json_has_the_ten_fractions_and_the_issue_fields(engine: Path, target: Path) -> None:
    result = bench(engine, target, "--records", "3000", "--queries=500", "--heap-queries", "10", "--json")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    rows = doc["heap_btree"]
    assert len(rows) == 10 * 2 * 2
    assert sorted({r["cache_fraction"] for r in rows}) == pytest.approx(list(FRACTIONS))
    assert {(r["structure"], r["operation"]) for r in rows} == {
        ("heap", "insert"),
        ("heap", "point_query"),
        ("btree", "insert"),
        ("btree", "point_query"),
    }
    for r in rows:
        assert r.keys() >= ISSUE_FIELDS
        assert r["ops_per_s"] > 0
        assert (
            r["ops"]
            == {"insert": 3000, "point_query": 500 if r["structure"] == "btree" else 10}[r["operation"]]
        )
    full = [r for r in rows if r["cache_fraction"] == 1.0]
    assert all(r["device_reads"] == 0 and r["hit_ratio"] == 1.0 for r in full)
    assert doc["heap_btree_run"]["records"] == 3000
    assert doc["heap_btree_run"]["beneath"] == str(target.resolve())
    assert list(target.iterdir()) == []


def test_table_layout(engine: Path, target: Path) -> None:
    result = bench(engine, target, "--records=2000", "--queries=200", "--heap-queries=5")
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert "Table 3" in out and "2,000 records (given)" in out
    for title in ("Heap insert", "Heap point query", "B-tree insert", "B-tree point query"):
        assert title in out
    assert "10 %" in out and "100 %" in out and "100/10 %" in out  # the ratio row
    assert list(target.iterdir()) == []


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (("--records", "0"), "--records must be"),
        (("--records", "many"), "--records must be"),
        (("--records",), "--records needs a value"),
        (("--records=10", "--rows=4"), "--rows does not apply"),
        (("--records=10", "--queries=-3"), "--queries"),
        (("--records=10", "--structure=hash"), "--structure must be"),
        (("--records=10", "--check=2"), "--check"),
        (("--records=10", "--cache-fraction=2"), "cache-fraction"),  # the engine's own check
    ],
)
def test_bad_options_exit_2(engine: Path, target: Path, args: tuple[str, ...], words: str) -> None:
    result = bench(engine, target, *args)
    assert result.exit_code == 2, result.output
    assert words in result.output
    assert list(target.iterdir()) == []


def test_needs_a_directory(engine: Path, tmp_path: Path) -> None:
    f = tmp_path / "file"
    f.write_bytes(b"x")
    result = bench(engine, f, "--records=10")
    assert result.exit_code == 2 and "needs an existing directory" in result.output
    assert f.read_bytes() == b"x"


def test_engine_arguments(tmp_path: Path) -> None:
    opts = parse_options(["--records", "500", "--check", "--randseed=9"], str(tmp_path))
    argv = engine_command(Path("/e"), opts)
    assert argv[:4] == ["/e", "--heap-btree", f"--directory={tmp_path}", f"--beneath={tmp_path}"]
    assert "--records=500" in argv and "--check" in argv and "--randseed=9" in argv
    assert "--cache-fraction=0.1,0.2,0.3,0.4,0.5,0.6,0.7,0.8,0.9,1.0" in argv
    opts = parse_options(["--cache-fraction", "0.5", "--structure", "btree"], str(tmp_path))
    assert not opts.records_given
    argv = engine_command(Path("/e"), opts)
    assert "--cache-fraction=0.5" in argv and "--structure=btree" in argv
    assert sum(a.startswith("--cache-fraction") for a in argv) == 1
    with pytest.raises(HeapBtreeUsage, match="--heap-queries"):
        parse_options(["--heap-queries", "x"], str(tmp_path))


def test_default_records_scaled_to_memory() -> None:
    assert default_records(64 << 30) == 1_000_000  # the preset's N on a big host (the seed: 50 M)
    small = default_records(512 << 20)
    assert 1000 <= small < 1_000_000
    # at fraction 1 the pool (about 2.1 x the heap's pages) stays within an eighth of the memory
    assert small * 8192 / 204 * 2.1 <= (512 << 20) / 8
    assert default_records(0) == 1_000_000


def test_meter_not_supported_yet(engine: Path, target: Path) -> None:
    result = bench(engine, target, "--records=10", "--meter", "command:echo 5")
    assert result.exit_code == 2 and "--meter is not supported" in result.output


def test_interrupt_stops_the_engine_and_removes_its_files(engine: Path, target: Path) -> None:
    p = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "iowatt_agent",
            "bench",
            "--engine",
            str(engine),
            "--target",
            str(target),
            "--preset",
            "heap-btree",
            "--records",
            "1000000",
            "--structure",
            "heap",
            "--heap-queries",
            "1000000",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 60
    while not any(target.iterdir()) and time.monotonic() < deadline and p.poll() is None:
        time.sleep(0.05)
    assert any(target.iterdir()), "the engine's file appeared"
    p.send_signal(signal.SIGINT)
    _, stderr = p.communicate(timeout=60)
    assert p.returncode == 130, stderr
    assert "interrupted" in stderr
    assert list(target.iterdir()) == []
