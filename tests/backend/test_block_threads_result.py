"""A block job with numjobs > 1 is one result, as the platform shows a job: the server asks the
engine for fio's group_reporting (without it fio, and the engine, report each clone as its own
jobs[] entry, and compare would keep one clone's numbers), and the stored runtime is the engine's
wall time of the group, not fio's job_runtime (the clones' sum)."""

from __future__ import annotations

import json
import subprocess
import tempfile
import uuid
from pathlib import Path

from backend.result.schemas import EngineDocument
from backend.result.service import _job_row
from backend.workload.engine_limits import engine_path
from backend.workload.kinds.block import JobSpec
from backend.workload.schemas import WorkloadSpec


def _spec(numjobs: int) -> WorkloadSpec:
    job = JobSpec(
        name="threads", rw="randread", size_bytes=1 << 20, bs_bytes=4096, runtime_s=0.3, time_based=True,
        numjobs=numjobs, ioengine="psync",
    )  # fmt: skip
    return WorkloadSpec(jobs=[job])


def test_threads_are_one_grouped_job_and_one_result_row() -> None:
    spec = _spec(3)
    job_file = spec.engine_job()
    assert job_file["jobs"][0]["group_reporting"] == "1"
    assert "group_reporting" not in _spec(1).engine_job()["jobs"][0]
    with tempfile.TemporaryDirectory(dir="/dev/shm") as d:
        path = Path(d) / "job.json"
        job_file["jobs"][0]["filename"] = str(Path(d) / "data")
        path.write_text(json.dumps(job_file))
        out = subprocess.run([str(engine_path()), str(path)], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    raw = json.loads(out.stdout)
    assert len(raw["jobs"]) == 1 and raw["jobs"][0]["iowatt"]["members"] == 3
    doc = EngineDocument.model_validate(raw)
    row = _job_row(uuid.uuid4(), 0, doc.jobs[0], doc)
    wall_ns = raw["jobs"][0]["iowatt"]["runtime_ns"]
    assert row.runtime_ns == wall_ns
    # fio's job_runtime of a group is the clones' milliseconds summed: about three times the wall
    assert raw["jobs"][0]["job_runtime"] * 1_000_000 > 2 * wall_ns
