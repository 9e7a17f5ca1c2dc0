"""Consumers of the output: fio's own json+ tool and the server's result schema."""

from __future__ import annotations

import csv
import json
import shutil
import subprocess
from pathlib import Path

import pytest

from .conftest import run_engine


def test_fio_jsonplus_clat2csv_reads_our_output(engine_bin: Path, scratch: Path) -> None:
    tool = shutil.which("fio_jsonplus_clat2csv")
    if tool is None:
        pytest.skip("fio_jsonplus_clat2csv (Debian package fio) not installed")
    r = run_engine(
        engine_bin,
        "--output-format=json+",
        "--name=a",
        f"--filename={scratch}/t.dat",
        "--rw=randrw",
        "--size=4m",
        "--runtime=500ms",
        "--time_based=1",
    )
    src = scratch / "out.json"
    src.write_text(r.stdout)
    subprocess.run([tool, str(src), str(scratch / "clat")], check=True, capture_output=True, timeout=60)
    rows = list(csv.reader((scratch / "clat_job0").open()))
    header = [h.strip() for h in rows[0]]
    col = header.index("read_clat_ns_count")
    total = sum(int(row[col]) for row in rows[1:] if row[col].strip())
    assert total == r.job["read"]["total_ios"]


def test_server_result_schema_accepts_output(engine_bin: Path, scratch: Path) -> None:
    schemas = pytest.importorskip("backend.result.schemas")
    r = run_engine(
        engine_bin,
        "--name=a",
        f"--filename={scratch}/t.dat",
        "--rw=randread",
        "--size=4m",
        "--runtime=1100ms",
        "--time_based=1",
        "--name=b",
        f"--filename={scratch}/t.dat",
        "--rw=write",
        "--bs=64k",
        "--size=4m",
        "--stonewall=1",
    )
    doc = schemas.EngineDocument.model_validate(json.loads(r.stdout))
    a, b = doc.jobs
    assert a.read.total_ios > 0 and a.read.clat_ns.percentile["99.000000"] > 0
    assert a.iowatt.series and a.iowatt.options["bs_bytes"] == 4096
    assert b.write.io_bytes == 4 << 20 and b.iowatt.options["bs_bytes"] == 65536
