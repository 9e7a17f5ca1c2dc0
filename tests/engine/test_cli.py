"""Bad input: exit 2 with one stderr line naming the option; nothing is written."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from .conftest import run_engine

BAD = [
    (["--bs=abc"], "bs: invalid size 'abc'"),
    (["--bs=0"], "bs:"),
    (["--bs=4q"], "bs: invalid size"),
    (["--bs=2m", "--size=1m"], "bs:"),
    (["--iodepth=0"], "iodepth:"),
    (["--runtime=-5"], "runtime:"),
    (["--rw=sideways"], "rw:"),
    (["--frobnicate=1"], "frobnicate: unknown option"),
    (["--ioengine=posixaio2"], "ioengine:"),
    (["--numjobs=0"], "numjobs:"),
    (["--rwmixread=150"], "rwmixread:"),
    (["--bssplit=4k/60:8k/60"], "bssplit:"),
    (["--random_distribution=zipf:1"], "random_distribution:"),
    (["--direct=1", "--offset=100"], "offset:"),
    (["--direct=1", "--bs=1000"], "bs:"),
    (["--time_based=1"], "time_based:"),
    (["--size"], "size: missing value"),
    (["--output-format=xml"], "output-format:"),
    (["--clocksource=sundial"], "clocksource:"),
    (["--iodepth_batch_submit=x"], "iodepth_batch_submit:"),
    (["--refill_buffers=maybe"], "refill_buffers:"),
]


@pytest.mark.parametrize(("args", "needle"), BAD, ids=[" ".join(a) for a, _ in BAD])
def test_bad_option_exits_2_naming_it(engine_bin: Path, scratch: Path, args: list[str], needle: str) -> None:
    target = scratch / "t.dat"
    r = run_engine(engine_bin, "--name=j", f"--filename={target}", "--size=1m", *args, check=False)
    assert r.rc == 2, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    assert lines[0].startswith("iowatt-engine: ")
    assert needle in lines[0]
    assert r.stdout == ""
    assert not target.exists(), "a rejected job must not create its target"


def test_missing_directory(engine_bin: Path, scratch: Path) -> None:
    r = run_engine(engine_bin, f"--filename={scratch}/no/such/dir/f", "--size=1m", check=False)
    assert r.rc == 2
    assert "filename:" in r.stderr and "does not exist" in r.stderr


def test_missing_file_without_size(engine_bin: Path, scratch: Path) -> None:
    r = run_engine(engine_bin, f"--filename={scratch}/f", check=False)
    assert r.rc == 2 and "size:" in r.stderr


def test_readonly_target_dir(engine_bin: Path) -> None:
    # /proc is never writable, even for root
    r = run_engine(engine_bin, "--filename=/proc/iowatt-test", "--size=1m", check=False)
    assert r.rc == 2 and "filename:" in r.stderr


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("not json", "not json: outside of a [section]"),  # not '{': fio's INI format (test_jobfile.py)
        ("{not json", "not valid JSON"),
        ('{"jobs": [{"rw": "read",}]}', "not valid JSON"),
        ('{"jobs": []}', "non-empty"),
        ('{"jobs": [{"bs": "4k"}], "extra": 1}', "unknown top-level key"),
        ('{"jobs": [{"blocksize2": "4k"}]}', "blocksize2: unknown option"),
        ('{"jobs": [{"bs": [4096]}]}', "bs: value must be"),
    ],
)
def test_bad_job_file(engine_bin: Path, scratch: Path, text: str, needle: str) -> None:
    jf = scratch / "job.json"
    jf.write_text(text)
    r = run_engine(engine_bin, f"--filename={scratch}/f", "--size=1m", str(jf), check=False)
    assert r.rc == 2, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1
    assert needle in r.stderr


def test_version_and_help(engine_bin: Path) -> None:
    r = run_engine(engine_bin, "--version")
    assert r.stdout.startswith("iowatt-engine-")
    r = run_engine(engine_bin, "--help")
    assert "usage" in r.stdout


def test_job_file_with_global_and_stonewall(engine_bin: Path, scratch: Path) -> None:
    jf = scratch / "job.json"
    jf.write_text(
        json.dumps(
            {
                "global": {"filename": str(scratch / "t.dat"), "size": "2m", "bs": 4096, "stonewall": True},
                "jobs": [{"name": "w", "rw": "write"}, {"name": "r", "rw": "randread", "bs": "8k"}],
            }
        )
    )
    doc = run_engine(engine_bin, "--output-format=json+", str(jf)).doc
    names = [j["jobname"] for j in doc["jobs"]]
    assert names == ["w", "r"]
    assert [j["groupid"] for j in doc["jobs"]] == [0, 1]
    w, r = doc["jobs"]
    assert w["write"]["io_bytes"] == 2 * 1024 * 1024 and w["write"]["total_ios"] == 512
    assert r["read"]["io_bytes"] == 2 * 1024 * 1024 and r["read"]["total_ios"] == 256
    assert doc["global options"]["bs"] == "4096"
    assert r["job options"]["bs"] == "8k"
    assert r["iowatt"]["options"]["bs_read_bytes"] == 8192


def test_cli_options_override_job_file(engine_bin: Path, scratch: Path) -> None:
    jf = scratch / "job.json"
    jf.write_text(
        json.dumps({"jobs": [{"name": "a", "rw": "read", "size": "1m", "filename": "/nonexistent/x"}]})
    )
    doc = run_engine(engine_bin, f"--filename={scratch}/t.dat", str(jf)).doc
    assert doc["jobs"][0]["iowatt"]["options"]["filename"] == f"{scratch}/t.dat"
