"""Issue 12: the compare page and the dashboard with 2, 8 and 30 runs in Chromium at 1440x900.

Two real runs (the engine on a disk directory and on tmpfs, uploaded by the real agent) give real
results; the other 28 are copies of them in the stack's database (run, result document, job
figures, per-second series), each with its rates multiplied and its latencies divided by a factor
between 1/3 and 133, so that changes go both ways and span what the issue names ("133x lower
latency", "+8,000% faster"). The two-run set is the disk run and a copy with faster reads and
slower writes: which real run is faster is the machine's to decide. tests/browser/compare.mjs then
checks every chart's plot area (>= 200 px), that the page never scrolls sideways, the
direction-aware change phrases, distinct sweep titles, the transposed table, the dashboard, and
times navigation start -> table and charts rendered (docs: tests/browser/README.md)."""

import re
import shutil
import tempfile
import uuid
from pathlib import Path

import psycopg
import pytest

from tests.browser.test_browser import _needs, _node, _shot
from tests.stack import Stack

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("stack-b")]

KiB = 1024
MiB = 1024 * KiB

# A block-size sweep (three points: the sweep chart) and a write job (both I/O directions),
# through the page cache so tmpfs takes it too; one second per job, paced (`rate_iops`: as fast as
# the page cache goes, the engine kept a core busy for each second; the copies' factors, not the
# real runs' speed, make the changes the page draws).
PACE = {"rate_iops": 2000}
WORKLOAD = {
    "jobs": [
        *(
            {
                "name": f"randread-{bs // KiB}k",
                "rw": "randread",
                "bs_bytes": bs,
                "size_bytes": 16 * MiB,
                "runtime_s": 1,
                "time_based": True,
                "direct": False,
                **PACE,
            }
            for bs in (4 * KiB, 16 * KiB, 64 * KiB)
        ),
        {
            "name": "write-64k",
            "rw": "write",
            "bs_bytes": 64 * KiB,
            "size_bytes": 16 * MiB,
            "runtime_s": 1,
            "time_based": True,
            "direct": False,
            **PACE,
        },
    ]
}

FACTORS = [1 / 3, 1.3, 2, 5, 81, 133, 0.8, 1.05, 12]
RATES = ("read_iops", "read_bw_bytes", "read_io_bytes", "write_iops", "write_bw_bytes", "write_io_bytes")
LATENCY = re.compile(r"^(read|write)_(lat_mean|clat_p\d+|clat_max)_ns$")


def _columns(conn: psycopg.Connection, table: str) -> list[str]:
    rows = conn.execute(
        "SELECT column_name FROM information_schema.columns WHERE table_name = %s ORDER BY ordinal_position",
        (table,),
    ).fetchall()
    return [str(r[0]) for r in rows]


def _scaled(cols: list[str], factor: float, write_factor: float | None = None) -> str:
    out = []
    for c in cols:
        f = write_factor if write_factor is not None and c.startswith("write_") else factor
        if c == "run_id":
            out.append("%(new)s::uuid")
        elif c in RATES:
            out.append(f"({c} * {f})::{'float8' if c.endswith('iops') else 'bigint'}")
        elif LATENCY.match(c):
            out.append(f"({c} / {f})::{'float8' if 'mean' in c else 'bigint'}")
        elif c == "upload_id":
            out.append("gen_random_uuid()")
        else:
            out.append(c)
    return ", ".join(out)


def _clone(
    conn: psycopg.Connection, source: str, name: str, factor: float, write_factor: float | None = None
) -> str:
    """A copy of a succeeded run with its result, rates x factor and latencies / factor (the write
    direction's by write_factor when given)."""
    new = str(uuid.uuid4())
    cols = _columns(conn, "runs")
    picked = ", ".join(
        "%(new)s::uuid"
        if c == "id"
        else "%(name)s"
        if c == "name"
        else "now()"
        if c == "created_at"
        else "NULL"
        if c in ("lease_id", "campaign_id")
        else c
        for c in cols
    )
    conn.execute(
        f"INSERT INTO runs ({', '.join(cols)}) SELECT {picked} FROM runs WHERE id = %(src)s",
        {"new": new, "name": name, "src": source},
    )
    for table in ("run_results", "result_jobs", "result_series"):
        tcols = _columns(conn, table)
        scaled = _scaled(tcols, factor, write_factor)
        conn.execute(
            f"INSERT INTO {table} ({', '.join(tcols)}) SELECT {scaled} FROM {table} WHERE run_id = %(src)s",
            {"new": new, "src": source},
        )
    return new


def test_compare_2_8_30_runs_in_chromium(live: Stack, tmp_path: Path) -> None:
    _needs()
    disk = tempfile.mkdtemp(prefix="iowatt-compare-disk-", dir="/var/tmp")
    ram = tempfile.mkdtemp(prefix="iowatt-compare-ram-", dir="/dev/shm")
    try:
        real = [
            live.queue(disk, workload=WORKLOAD, name="compare: disk"),
            live.queue(ram, workload=WORKLOAD, name="compare: ram"),
        ]
        for rid in real:
            assert live.wait(rid)["status"] == "succeeded"
        db = live.commands["api"][1]["IOWATT_DATABASE_URL"].replace("postgresql+psycopg://", "postgresql://")
        clones = []
        with psycopg.connect(db, autocommit=True) as conn:
            for i in range(28):
                factor = FACTORS[i % len(FACTORS)] * (1 + i // len(FACTORS) * 0.1)
                source = real[i % 2]
                clones.append(_clone(conn, source, f"compare: copy {i + 1:02d} x{factor:.3g}", factor))
            # the two-run set: which of the real disk and tmpfs runs is faster through the page
            # cache is the machine's to decide, so it is a real run and a copy with reads 3x
            # faster and writes 2x slower (changes both ways, marked better and worse)
            mixed = _clone(conn, real[0], "compare: reads x3, writes x0.5", 3.0, write_factor=0.5)
        with live.api() as api:
            r = api.get("/compare", params={"runs": ",".join(real + clones)})
            assert r.status_code == 200, r.text
            assert len(r.json()["columns"]) == 30
            assert r.json()["comparability"]["verdict"] == "comparable"
        sets = {2: [real[0], mixed], 8: real + clones[:6], 30: real + clones}
        report = _node(
            "tests/browser/compare.mjs",
            live,
            tmp_path,
            IOWATT_COMPARE_SETS=";".join(f"{n}:{','.join(ids)}" for n, ids in sets.items()),
        )
        timings = dict(re.findall(r"timing (\d+) runs: (\d+) ms", report))
        assert set(timings) == {"2", "8", "30"}, report
        print(report)
        for shot in (
            "K-compare-2",
            "K-compare-8",
            "K-compare-30",
            "K-compare-8-full",  # render=all: every chart drawn in one full-page capture
            "K-compare-30-full",
            "K-compare-30-metrics-as-rows",
            "K-dashboard",
        ):
            _shot(report, tmp_path, shot)
    finally:
        for d in (disk, ram):
            shutil.rmtree(d, ignore_errors=True)
