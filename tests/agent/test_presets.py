"""Offline presets: `iowatt-agent presets`, `bench --preset`, best-of-passes summaries."""

import json
import subprocess
import sys
from pathlib import Path

import pytest
from iowatt_agent import presets

REPO = Path(__file__).resolve().parents[2]
ENGINE = REPO / "agent" / "engine" / "build" / "iowatt-engine"


def test_presets_ship_with_the_agent_and_override_per_job() -> None:
    names = set(presets.load())
    assert {
        "crystaldiskmark",
        "diskspd-bs-sweep",
        "kernel-help",
        "threads-latency",
        "seq-rand-table",
    } <= names
    job = presets.job_file("diskspd-bs-sweep", "/x/y.dat", {"runtime": "200ms"})
    assert job["global"]["filename"] == "/x/y.dat" and len(job["jobs"]) == 13
    assert {j["runtime"] for j in job["jobs"]} == {"200ms"}
    with pytest.raises(ValueError, match="unknown preset 'nope'; known: "):
        presets.get("nope")


def test_pass_rows_take_the_best_measured_pass() -> None:
    def job(k: int, mbs: float) -> dict[str, object]:
        return {"jobname": f"SEQ1M_Q8T1-read.p{k}", "read": {"bw_bytes": mbs * 1e6, "iops": mbs}}

    rows = presets.pass_rows(
        "crystaldiskmark", {"jobs": [job(0, 999), job(1, 500), job(2, 520), job(3, 480)]}
    )
    assert rows == [
        {
            "test": "SEQ1M_Q8T1-read",
            "direction": "read",
            "passes": 3,
            "best_bw_bytes": 520e6,
            "best_iops": 520,
            "median_bw_bytes": 500e6,
            "spread_pct": pytest.approx(8.0),
            "best_job": "SEQ1M_Q8T1-read.p2",
        }
    ]
    assert presets.pass_rows("diskspd-bs-sweep", {"jobs": []}) == []


def test_pass_rows_rank_a_write_test_by_its_writes_as_the_server_does() -> None:
    """The direction comes from what moved I/O, not from the test's name (libs/workload's rule,
    the server's too): a write test is ranked by write bandwidth, its IOPS go with that pass."""

    def job(k: int, write_mbs: float) -> dict[str, object]:
        return {
            "jobname": f"RND4K_Q1T1-w.p{k}",
            "read": {"bw_bytes": 0, "iops": 0, "total_ios": 0},
            "write": {"bw_bytes": write_mbs * 1e6, "iops": write_mbs * 2, "total_ios": 100},
        }

    rows = presets.pass_rows(
        "crystaldiskmark", {"jobs": [job(0, 900), job(1, 100), job(2, 300), job(3, 200)]}
    )
    [row] = rows
    assert row["direction"] == "write" and row["best_job"] == "RND4K_Q1T1-w.p2"
    assert (row["best_bw_bytes"], row["best_iops"], row["median_bw_bytes"]) == (300e6, 600, 200e6)


@pytest.mark.skipif(not ENGINE.exists(), reason="the engine is not built: make -C agent/engine")
def test_bench_preset_runs_every_job_with_the_real_engine(tmp_path: Path) -> None:
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "iowatt_agent",
            "bench",
            "--engine",
            str(ENGINE),
            "--target",
            str(tmp_path),
            "--preset",
            "diskspd-bs-sweep",
            "--runtime=200ms",
            "--size=32m",
            "--json",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    bs = [j["iowatt"]["options"]["bs_bytes"] for j in doc["jobs"]]
    assert bs == [4096 * 2**i for i in range(13)]
    assert all(j["read"]["total_ios"] > 0 for j in doc["jobs"])
    bad = subprocess.run(
        [
            sys.executable,
            "-m",
            "iowatt_agent",
            "bench",
            "--engine",
            str(ENGINE),
            "--target",
            str(tmp_path),
            "--preset",
            "nope",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert bad.returncode == 2 and "unknown preset" in bad.stderr
