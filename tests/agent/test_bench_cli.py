from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from iowatt_agent import cli
from iowatt_agent.cli import parse_engine_args
from typer.testing import CliRunner

runner = CliRunner()
REPO = Path(__file__).resolve().parents[2]
REAL_ENGINE = REPO / "agent" / "engine" / "build" / "iowatt-engine"


def bench(fake_engine: Path, target: Path, *args: str):
    return runner.invoke(cli.app, ["bench", "--engine", str(fake_engine), "--target", str(target), *args])


def test_bench_json_prints_only_the_engine_document(fake_engine, tmp_path):
    record = tmp_path / "rec.json"
    result = bench(
        fake_engine,
        tmp_path,
        "--json",
        "--rw",
        "randwrite",
        "--bs",
        "16k",
        "--iodepth",
        "4",
        f"--fake_record={record}",
        "--fake_duration_s=0.2",
        "--fsync",
        "8",
        "--time_based",
    )
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert doc["fio version"] == "iowatt-engine-fake"
    job = json.loads(record.read_text())["job"]
    assert job["jobs"][0] == {
        "name": "bench",
        "rw": "randwrite",
        "bs": "16k",
        "size": "64m",
        "runtime": "5",
        "iodepth": "4",
        "fake_record": str(record),
        "fake_duration_s": "0.2",
        "fsync": "8",
        "time_based": "1",
    }
    # directory target: a temporary data file that is gone afterwards
    assert job["global"]["filename"].startswith(str(tmp_path / "iowatt-bench-"))
    assert not Path(job["global"]["filename"]).exists()


def test_bench_table_has_units(fake_engine, tmp_path):
    result = bench(fake_engine, tmp_path, "--fake_duration_s=0.2")
    assert result.exit_code == 0, result.output
    for text in (
        "IOPS",
        "MB/s",
        "MiB/s",
        "p99",
        "1,000",
        "12.3 µs",
        "11.3 µs",
        "50.2 µs",
        "4.1",
        "3.9",
        "1.5/2.5",
    ):
        assert text in result.stdout, text


def test_bench_engine_usage_error_exits_2_with_its_message(fake_engine, tmp_path):
    result = bench(fake_engine, tmp_path, "--fake_mode=usage")
    assert result.exit_code == 2
    assert "--bs: invalid value" in result.stderr


def test_bench_engine_failure_exits_1(fake_engine, tmp_path):
    result = bench(fake_engine, tmp_path, "--fake_mode=fail", "--fake_duration_s=0.1")
    assert result.exit_code == 1
    assert "No space left on device" in result.stderr


def test_bench_refuses_filename_and_missing_engine(fake_engine, tmp_path):
    result = bench(fake_engine, tmp_path, "--filename=/etc/passwd")
    assert result.exit_code == 2 and "set by the agent from --target" in result.stderr
    result = runner.invoke(cli.app, ["bench", "--engine", str(tmp_path / "none"), "--target", str(tmp_path)])
    assert result.exit_code == 2 and "not an executable file" in result.stderr


def test_parse_engine_args():
    assert parse_engine_args(["--a=1", "--b", "2", "--c", "--d-e=x"]) == {
        "a": "1",
        "b": "2",
        "c": "1",
        "d_e": "x",
    }
    with pytest.raises(ValueError, match="--name=value"):
        parse_engine_args(["stray"])


@pytest.mark.skipif(
    not os.access(REAL_ENGINE, os.X_OK),
    reason=f"the real engine is not built yet ({REAL_ENGINE}); run `make -C agent/engine`",
)
def test_bench_json_with_the_real_engine(tmp_path):
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "iowatt_agent",
            "bench",
            "--engine",
            str(REAL_ENGINE),
            "--target",
            str(tmp_path),
            "--rw",
            "randread",
            "--bs",
            "4k",
            "--size",
            "4m",
            "--runtime",
            "1",
            "--json",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    [job] = doc["jobs"]
    read = job["read"]
    for key in ("io_bytes", "bw_bytes", "iops", "runtime", "total_ios"):
        assert key in read, key
    for key in ("min", "max", "mean", "stddev", "percentile"):
        assert key in read["clat_ns"], key
    assert "usr_cpu" in job and "sys_cpu" in job
    assert read["total_ios"] > 0 and read["io_bytes"] == read["total_ios"] * 4096
    assert list(tmp_path.iterdir()) == []  # bench data file removed


@pytest.mark.skipif(not os.access(REAL_ENGINE, os.X_OK), reason="the real engine is not built yet")
def test_bench_real_engine_bad_option_exits_2(tmp_path):
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "iowatt_agent",
            "bench",
            "--engine",
            str(REAL_ENGINE),
            "--target",
            str(tmp_path),
            "--bs",
            "0",
            "--runtime",
            "1",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2, proc.stderr
    assert "bs" in proc.stderr


def test_table_cpu_shows_io_uring_kernel_workers_beside_usr_sys():
    from iowatt_agent.cli import _dir_rows

    def job(ext: dict) -> dict:
        return {
            "jobname": "j",
            "usr_cpu": 21.1,
            "sys_cpu": 70.6,
            "read": {"total_ios": 10, "io_bytes": 40960, "iops": 5.0, "bw_bytes": 20480},
            "iowatt": ext,
        }

    [uring] = _dir_rows({"jobs": [job({"io_uring": {"kernel_worker_cpu": 94.5, "target_nowait": False}})]})
    [psync] = _dir_rows({"jobs": [job({})]})
    assert uring[-1] == "21/71 +94 io-wq"
    assert psync[-1] == "21/71"


def test_bench_passes_the_same_safe_target_options_as_a_server_run(fake_engine, tmp_path):
    record = tmp_path / "rec.json"
    target = tmp_path / "dir"
    target.mkdir()
    assert bench(fake_engine, target, f"--fake_record={record}", "--fake_duration_s=0.1").exit_code == 0
    glob = json.loads(record.read_text())["job"]["global"]
    assert glob["beneath"] == str(target) and glob["create_new"] == "1" and glob["unlink"] == "1"
    f = tmp_path / "disk.img"
    f.write_bytes(b"x" * 8192)
    assert bench(fake_engine, f, f"--fake_record={record}", "--fake_duration_s=0.1").exit_code == 0
    glob = json.loads(record.read_text())["job"]["global"]
    assert glob == {"filename": str(f), "beneath": str(tmp_path), "keep_existing": "1"}  # local: writable
    for option in ("--beneath=/", "--keep_existing=0", "--readonly=0", "--unlink=0", "--create_new=0"):
        result = bench(fake_engine, target, option)
        assert result.exit_code == 2 and "set by the agent from --target" in result.stderr, option
    missing = bench(fake_engine, tmp_path / "new.dat")
    assert missing.exit_code == 2 and "No such file" in missing.stderr


def test_bench_meter_by_name_from_the_hosts_meters(fake_engine, tmp_path, monkeypatch):
    from tests.agent.fakes import set_meters
    from tests.agent.meters import instruments as inst

    prog = inst.write_program(tmp_path / "meter", "print(42)\n")
    state = tmp_path / "state"
    set_meters(state, {"wall": f"command:{prog}"}, default="wall")
    monkeypatch.setenv("IOWATT_AGENT_STATE_DIR", str(state))
    result = bench(fake_engine, tmp_path, "--meter", "wall", "--idle", "0", "--json", "--fake_duration_s=0.3")
    assert result.exit_code == 0, result.output
    meter = json.loads(result.stdout)["power"]["meter"]
    assert meter["name"] == "wall" and meter["driver"] == "command"
    unknown = bench(fake_engine, tmp_path, "--meter", "lab")  # neither a name here nor a spec
    assert unknown.exit_code == 2 and "unknown meter scheme 'lab'" in unknown.stderr


@pytest.mark.skipif(not os.access(REAL_ENGINE, os.X_OK), reason="the real engine is not built")
def test_bench_read_job_on_a_seven_byte_file_leaves_it_identical(tmp_path):
    """Issue 9's second reproduction, locally: the engine refuses to extend a file it did not create."""
    seven = tmp_path / "seven.txt"
    seven.write_bytes(b"iowatt\n")
    result = bench(REAL_ENGINE, seven, "--rw", "randread", "--size", "1m", "--runtime", "1")
    assert result.exit_code == 2 and "keep_existing" in result.stderr
    assert seven.read_bytes() == b"iowatt\n"
