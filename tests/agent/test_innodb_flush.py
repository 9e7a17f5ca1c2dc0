"""The InnoDB flushing-policy matrix on the agent (iowatt_agent.innodb, docs/innodb-flush.md):
sysbench's report read into numbers (a recorded report, and fuzzed), the per-transaction figures
computed by hand, a hostile server's values refused before anything runs, and one real run of all
six settings at a small scale (1 table of 500 rows, 1 s per setting) on a loop device, the DBMS
run as its unprivileged user and its directory removed."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from iowatt_agent.innodb import lease, sysbench
from iowatt_agent.kinds import RUNNERS
from iowatt_policy import Limits, ReportedPolicy, Target, check_run
from iowatt_workload.innodb import ALL_SETTINGS, parse_settings, per_transaction, settings_text

from tests.services import on_one_cpu

DATA = Path(__file__).resolve().parents[1] / "data" / "innodb"
JOB = {
    "mode": "innodb-flush",
    "settings": "1:1,1:0,2:1,2:0,0:1,0:0",
    "tables": "1",
    "table_size": "500",
    "threads": "2",
    "seconds": "1",
    "warmup_s": "0",
    "buffer_pool_bytes": "16777216",
}


# --- sysbench's report ------------------------------------------------------------------------------


def test_a_recorded_report_reads_with_the_percentiles_sysbench_prints() -> None:
    r = sysbench.parse_report((DATA / "sysbench-run.txt").read_text())
    assert (r["transactions"], r["transactions_per_s"]) == (245, 243.95)
    assert (r["queries"], r["errors"], r["reconnects"]) == (1498, 11, 0)
    assert r["total_time_ns"] == 1_003_500_000
    lat = r["latency_ns"]
    assert (lat["min"], lat["avg"], lat["max"]) == (690_000, 8_170_000, 65_730_000)
    # the histogram's p95 is sysbench's own (the same buckets and rule), to its printed 0.01 ms
    assert abs(lat["p95"] - lat["sysbench_p95"]) <= 10_000
    assert lat["p95"] <= lat["p99"] <= 65_645_000
    assert sum(c for _, c in r["histogram"]) == 245


def _report(rows: list[tuple[float, int]], tx: int, tps: float, avg: float) -> str:
    hist = "\n".join(f"  {v:10.3f} |{'*' * min(40, c)}{' ' * (40 - min(40, c))} {c}" for v, c in rows)
    return (
        "sysbench 1.0.20\n\nLatency histogram (values are in milliseconds)\n"
        "       value  ------------- distribution ------------- count\n"
        f"{hist}\n \nSQL statistics:\n"
        f"    transactions:                        {tx}    ({tps:.2f} per sec.)\n"
        f"    queries:                             {tx * 6}   ({tps * 6:.2f} per sec.)\n"
        "General statistics:\n    total time:                          1.0000s\n"
        f"Latency (ms):\n         min:      0.10\n         avg:      {avg:.2f}\n         max:     99.00\n"
    )


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(1, 10**7), st.integers(1, 500)),
        min_size=1,
        max_size=40,
        unique_by=lambda r: r[0],
    ),
    st.integers(0, 10**6),
    st.floats(0, 1e6, allow_nan=False),
)
def test_generated_reports_read_back_exactly(rows: list[tuple[int, int]], tx: int, tps: float) -> None:
    rows = sorted(rows)
    buckets = [(v / 1000, c) for v, c in rows]  # ms with three decimals, as sysbench prints
    r = sysbench.parse_report(_report(buckets, tx, tps, 1.5))
    assert r["transactions"] == tx and r["transactions_per_s"] == pytest.approx(round(tps, 2))
    assert r["histogram"] == [[v * 1000, c] for v, c in rows]
    total = sum(c for _, c in rows)
    for pct in (95.0, 99.0):
        need = max(1, int(total * pct / 100 + 0.5))
        seen, want = 0, None
        for v, c in rows:
            seen += c
            if seen >= need:
                want = v * 1000
                break
        assert r["latency_ns"][{95.0: "p95", 99.0: "p99"}[pct]] == want


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=400) | st.binary(max_size=200).map(lambda b: b.decode("latin-1")))
def test_any_text_is_a_report_or_a_report_error(text: str) -> None:
    try:
        r = sysbench.parse_report(text)
    except sysbench.ReportError:
        return
    assert r["transactions"] >= 0 and r["latency_ns"]["avg"] >= 0


def test_a_report_without_its_figures_is_refused_by_name() -> None:
    good = (DATA / "sysbench-run.txt").read_text()
    for line, what in (("transactions:", "transactions"), ("total time:", "total time"), ("avg:", "average")):
        broken = "\n".join(x for x in good.splitlines() if line not in x)
        with pytest.raises(sysbench.ReportError, match=what):
            sysbench.parse_report(broken)
    with pytest.raises(sysbench.ReportError):
        sysbench.parse_report("x" * (sysbench.MAX_REPORT_CHARS + 1))


# --- per transaction ---------------------------------------------------------------------------------


def test_per_transaction_figures_by_hand() -> None:
    cell = {
        "transactions": 200,
        "status_delta": {
            "Innodb_data_fsyncs": 210,
            "Innodb_os_log_written": 240_000,
            "Innodb_data_written": 0,
            "Binlog_bytes_written": 400_000,
        },
        "binlog_fsyncs": 190,  # group commits with sync_binlog=1
        "device_delta": {"writes": 900, "write_bytes": 7_000_000, "flushes": 600},
    }
    p = per_transaction(cell)
    assert p["fsyncs_per_tx"] == (210 + 190) / 200
    assert (p["innodb_fsyncs_per_tx"], p["binlog_fsyncs_per_tx"]) == (1.05, 0.95)
    assert (p["redo_bytes_per_tx"], p["binlog_bytes_per_tx"]) == (1200, 2000)
    assert (p["device_bytes_per_tx"], p["device_writes_per_tx"], p["device_flushes_per_tx"]) == (
        35_000,
        4.5,
        3,
    )
    # no device (tmpfs), no transactions, a counter the server lacks: None, never a guess
    q = per_transaction({**cell, "device_delta": None, "status_delta": {"Innodb_data_fsyncs": 1}})
    assert q["device_bytes_per_tx"] is None and q["redo_bytes_per_tx"] is None
    assert all(v is None for v in per_transaction({**cell, "transactions": 0}).values())


# --- a hostile server ----------------------------------------------------------------------------------

POLICY = ReportedPolicy(
    targets=(Target.directory("/data/bench"),), limits=Limits(), allowed_dbms=("mariadb",)
)

HOSTILE = [
    ("settings", "1:1;DROP DATABASE mysql"),
    ("settings", "1:1,1:1"),
    ("settings", "3:0"),
    ("settings", "1:1 "),
    ("settings", 11),
    ("tables", "1 --mysql-host=evil"),
    ("tables", "$(reboot)"),
    ("threads", "0"),
    ("threads", "2.5"),
    ("seconds", "١٢"),  # digits, but not ASCII ones
    ("seconds", "99999999"),
    ("table_size", "-1"),
    ("buffer_pool_bytes", "1e12"),
    ("warmup_s", ["1"]),
]


@pytest.mark.parametrize(("key", "value"), HOSTILE, ids=[f"{k}={v!r}" for k, v in HOSTILE])
def test_a_hostile_value_is_refused_by_the_host_and_by_the_child(key: str, value: Any) -> None:
    job = {**JOB, key: value}
    found = check_run(POLICY, target_path="/data/bench", engine_job=job, meter=None, destructive=False)
    assert [v.field for v in found] == [f"workload.innodb_flush.{key}"], found
    with pytest.raises(ValueError, match=key):
        lease.options_of(job)


def test_extra_keys_and_the_hosts_consent() -> None:
    found = check_run(
        POLICY,
        target_path="/data/bench",
        engine_job={**JOB, "sysbench": "--x"},
        meter=None,
        destructive=False,
    )
    assert [v.field for v in found] == ["workload.sysbench"]
    no_consent = ReportedPolicy(targets=POLICY.targets, limits=Limits(), allowed_dbms=("postgresql",))
    [v] = check_run(no_consent, target_path="/data/bench", engine_job=JOB, meter=None, destructive=False)
    assert (v.rule, v.field, v.fix) == (
        "dbms.not_allowed",
        "workload.innodb_flush",
        "iowatt-agent targets allow-dbms mariadb",
    )
    assert check_run(POLICY, target_path="/data/bench", engine_job=JOB, meter=None, destructive=False) == []


def test_sysbench_gets_only_the_checked_integers(tmp_path: Path) -> None:
    o = lease.options_of({**JOB, "tables": 3.0, "threads": " 4 "})  # JSON numbers and padding read plainly
    argv = sysbench.command(
        Path("/usr/bin/sysbench"),
        "run",
        socket=tmp_path / "s.sock",
        tables=o.tables,
        table_size=o.table_size,
        threads=o.threads,
        seconds=o.seconds,
    )
    assert argv[1:7] == [
        "oltp_write_only",
        "--db-driver=mysql",
        f"--mysql-socket={tmp_path}/s.sock",
        "--mysql-user=root",
        "--mysql-password=",
        "--mysql-db=sbtest",
    ]
    assert "--tables=3" in argv and "--threads=4" in argv and argv[-1] == "run"
    with pytest.raises(ValueError):
        sysbench.command(Path("/x"), "cleanup", socket=tmp_path, tables=1, table_size=1, threads=1, seconds=1)
    with pytest.raises(ValueError):
        sysbench.command(Path("/x"), "run", socket=Path("rel"), tables=1, table_size=1, threads=1, seconds=1)
    assert parse_settings(settings_text(ALL_SETTINGS)) == list(ALL_SETTINGS)


def test_the_runner_is_the_child_with_the_lease_files() -> None:
    r = RUNNERS["innodb_flush"]
    assert r.mode == "innodb-flush" and not r.runs_engine and r.kill_grace_s
    facts = r.limit_facts(None, JOB)  # type: ignore[arg-type]
    assert facts["mode"] == "innodb-flush" and facts["threads"] == 2 and facts["bytes_written_max"] is None


# --- one real run -----------------------------------------------------------------------------------


def _ready() -> str | None:
    try:
        lease.check_supported()
    except lease.Unavailable as exc:
        return str(exc)
    return None


@contextlib.contextmanager
def loop_target() -> Iterator[tuple[Path, bool]]:
    """A 256 MiB ext4 on a loop device when this is root with losetup (the device's counters then
    are the run's own), else a plain temporary directory."""
    base = Path(tempfile.mkdtemp(prefix="iowatt-innodb-", dir="/var/tmp"))
    os.chmod(base, 0o755)
    mnt, loop = base / "mnt", None
    try:
        if os.geteuid() == 0 and shutil.which("losetup") and shutil.which("mkfs.ext4"):
            img = base / "fs.img"
            with open(img, "wb") as f:
                f.truncate(256 << 20)
            loop = subprocess.run(
                ["losetup", "-f", "--show", str(img)], capture_output=True, text=True, check=True
            ).stdout.strip()
            subprocess.run(["mkfs.ext4", "-q", loop], check=True, capture_output=True)
            mnt.mkdir()
            subprocess.run(["mount", loop, str(mnt)], check=True, capture_output=True)
            os.chmod(mnt, 0o755)
            yield mnt, True
        else:
            mnt.mkdir(mode=0o755)
            yield mnt, False
    finally:
        if loop:
            subprocess.run(["umount", str(mnt)], capture_output=True)
            subprocess.run(["losetup", "-d", loop], capture_output=True)
        shutil.rmtree(base, ignore_errors=True)


@pytest.mark.skipif(_ready() is not None, reason=str(_ready()))
def test_the_six_settings_run_on_a_loop_device_as_the_dbms_user(tmp_path: Path) -> None:
    job = tmp_path / "job.innodb-flush"
    job.write_text(json.dumps(JOB))
    with loop_target() as (target, device):
        run_dir = target / lease.run_dir_name("e2e")
        # on one CPU, MariaDB and sysbench's threads too: each cell loads for its second flat out
        # (the cells without fsyncs took both cores), and the checks are per transaction, never
        # how many transactions
        res = subprocess.run(
            on_one_cpu(
                [
                    sys.executable,
                    "-m",
                    "iowatt_agent.innodb.lease",
                    f"--job={job}",
                    f"--directory={run_dir}",
                    f"--target={target}",
                ]
            ),
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert res.returncode == 0, res.stderr[-2000:]
        assert not run_dir.exists()  # the instance and its data removed
    doc = json.loads(res.stdout)
    assert doc["iowatt"]["mode"] == "innodb-flush" and doc["jobs"][0]["jobname"] == "innodb-flush"
    m = doc["innodb_flush"]
    assert m["dbms_version"].startswith("MariaDB ") and m["variables"]["log_bin"] == "ON"
    cells = {(c["innodb_flush_log_at_trx_commit"], c["sync_binlog"]): c for c in m["cells"]}
    assert list(cells) == list(ALL_SETTINGS)
    for c in cells.values():
        assert c["transactions"] > 0 and c["tps"] > 0 and c["latency_ns"]["p99"] >= c["latency_ns"]["p95"]
    per = {k: per_transaction(c) for k, c in cells.items()}
    # at every commit: InnoDB's fsync and the binary log's; once a second: far fewer
    assert per[(1, 1)]["fsyncs_per_tx"] > 1.0 > 0.5 > per[(0, 0)]["fsyncs_per_tx"]
    assert per[(1, 1)]["binlog_fsyncs_per_tx"] > 0.5 and per[(1, 0)]["binlog_fsyncs_per_tx"] == 0
    assert per[(2, 0)]["innodb_fsyncs_per_tx"] < 0.5 < per[(1, 0)]["innodb_fsyncs_per_tx"]
    if device:
        assert m["device"].startswith("loop")
        assert all(per[k]["device_bytes_per_tx"] > 0 for k in ALL_SETTINGS)
        if per[(1, 1)]["device_flushes_per_tx"] is not None:  # Linux 5.5+
            assert per[(1, 1)]["device_flushes_per_tx"] > per[(0, 0)]["device_flushes_per_tx"]
