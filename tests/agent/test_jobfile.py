"""fio job files on the host (issue 24, ADR 0029): `iowatt-agent bench FILE.fio` runs a job file's
jobs on a local target (its filename and directory replaced by the target); the runner's JSON form
of a parse is refused when the engine reads it back differently; the job file is found among
bench's arguments. The real engine reads the job files; a recording wrapper around it
(tests/jobfile_engine.py) shows how the runner called it."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from iowatt_agent import cli
from iowatt_agent.bench import split_jobfile
from iowatt_agent.filework import FileJobRefused
from iowatt_agent.kinds.jobfile import JobfileRunner
from typer.testing import CliRunner

from tests.jobfile_engine import REAL_ENGINE, calls, write_recording_engine

pytestmark = pytest.mark.skipif(not os.access(REAL_ENGINE, os.X_OK), reason="the real engine is not built")


@pytest.fixture
def engine() -> Path:
    return REAL_ENGINE


def _bench(engine: Path, *args: str) -> Any:
    return CliRunner().invoke(cli.app, ["bench", "--engine", str(engine), *args])


def test_bench_runs_a_job_file_on_the_target_never_its_filename(engine: Path, tmp_path: Path) -> None:
    target = tmp_path / "target"
    target.mkdir()
    canary = tmp_path / "canary.bin"
    canary.write_bytes(b"keep me\n")
    job = tmp_path / "two.fio"
    job.write_text(
        "; two groups\n[global]\nbs=4k\nsize=256k\n"
        f"filename={canary}\n\n[writer]\nrw=write\n\n[reader]\nstonewall=1\nrw=read\n"
    )
    result = _bench(engine, str(job), "--target", str(target), "--json")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert [j["jobname"] for j in doc["jobs"]] == ["writer", "reader"]
    assert doc["jobs"][0]["write"]["io_bytes"] == 256 * 1024
    assert doc["jobs"][1]["read"]["io_bytes"] == 256 * 1024
    assert canary.read_bytes() == b"keep me\n"  # replaced by the target, never followed
    assert list(target.iterdir()) == []  # the data file removed afterwards


def test_bench_of_a_job_file_takes_no_other_job_options(engine: Path, tmp_path: Path) -> None:
    job = tmp_path / "a.fio"
    job.write_text("[a]\nrw=read\nsize=64k\n")
    result = _bench(engine, "--target", str(tmp_path), str(job), "--bs=8k")
    assert result.exit_code == 2 and "a job file runs as written" in result.output
    result = _bench(engine, "--target", str(tmp_path), str(tmp_path / "missing.fio"))
    assert result.exit_code == 2 and "missing.fio" in result.output
    bad = tmp_path / "bad.fio"
    bad.write_text("[a]\nrw=read\nbogus=1\n")
    result = _bench(engine, "--target", str(tmp_path), str(bad))
    assert result.exit_code == 2 and "bogus" in result.output, result.output


def test_the_job_file_is_found_among_benchs_arguments() -> None:
    assert split_jobfile(["job.fio"]) == (Path("job.fio"), [])
    assert split_jobfile(["--bs=4k", "job.fio", "--x"]) == (Path("job.fio"), ["--bs=4k", "--x"])
    assert split_jobfile(["--fsync", "8"]) == (None, ["--fsync", "8"])  # a bare option's value
    assert split_jobfile(["--fsync", "8", "job.fio"]) == (Path("job.fio"), ["--fsync", "8"])


def test_a_json_form_the_engine_reads_differently_is_refused(
    engine: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    runner = JobfileRunner()
    text_file = tmp_path / "jobs" / "r.jobfile"
    parse = runner.parse(engine, "[a]\nrw=read\nsize=64k\n[b]\nstonewall=1\nrw=write\n", text_file=text_file)
    assert not text_file.exists()  # the text is not kept
    job = runner.checked_job(engine, parse, text_file=text_file)
    assert job == {
        "global": {},
        "jobs": [{"name": "a", "rw": "read", "size": "64k"}, {"name": "b", "stonewall": "1", "rw": "write"}],
    }
    original = runner.parse

    def regrouped(*args: Any, **kwargs: Any) -> dict[str, Any]:
        doc = original(*args, **kwargs)
        doc["jobs"][1]["group"] = 0  # as if the JSON form lost the stonewall
        return doc

    monkeypatch.setattr(runner, "parse", regrouped)
    with pytest.raises(FileJobRefused, match="reads the job file's JSON form differently"):
        runner.checked_job(engine, parse, text_file=text_file)


def test_a_server_job_file_is_parsed_untrusted_in_an_empty_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    engine = write_recording_engine(tmp_path / "engine")
    monkeypatch.setenv("IOWATT_AGENT_SECRET", "s3cret")
    runner = JobfileRunner()
    with pytest.raises(FileJobRefused, match=r"^line 2: size: \$\{IOWATT_AGENT_SECRET\}"):
        runner.parse(engine, "[a]\nsize=${IOWATT_AGENT_SECRET}\n", text_file=tmp_path / "j" / "x.jobfile")
    (call,) = calls(engine)
    assert call["argv"][0] == "--untrusted" and "s3cret" not in json.dumps(call["env"])
