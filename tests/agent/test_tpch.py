"""`iowatt-agent bench --preset tpch` end to end through the CLI, on real PostgreSQL and MariaDB
instances at SF 0.01 (issue 15): every query answers and its answer is checked, the metrics
equal the spec's formulas computed here by hand from the recorded timings, and the instance
and its directory are gone afterwards, also after a full disk, a missing DBMS or Ctrl-C."""

from __future__ import annotations

import importlib.util
import json
import math
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from iowatt_agent import cli
from iowatt_agent.tpch import spec
from iowatt_agent.tpch.bench import TpchUsage, buffer_pool_bytes, parse_options, render
from iowatt_workload import TPCH_DEFAULT_BUFFER_POOL_BYTES, TPCH_LABEL, parse_size, tpch_min_streams
from typer.testing import CliRunner

# real DBMS servers (PostgreSQL, MariaDB, DuckDB): make test runs them, make test-fast does not
pytestmark = pytest.mark.slow

needs_duckdb = pytest.mark.skipif(
    importlib.util.find_spec("duckdb") is None,
    reason="the [tpch] extra is not installed (make deps installs it)",
)

REPO = Path(__file__).resolve().parents[2]
LABEL = TPCH_LABEL  # libs/workload's: the agent has no copy of its own


def have_postgres() -> bool:
    from iowatt_agent.tpch.dbms import Unsupported, pg_bindir

    try:
        pg_bindir()
    except Unsupported:
        return False
    return True


def have_mariadb() -> bool:
    from iowatt_agent.tpch.dbms import Unsupported, mariadb_binaries

    try:
        mariadb_binaries()
    except Unsupported:
        return False
    return True


@pytest.fixture
def target() -> Iterator[Path]:
    """A target the DBMS's own user (postgres, mysql) can reach: pytest's tmp_path is 0700."""
    d = Path(tempfile.mkdtemp(prefix="iowatt-tpch-test-"))
    d.chmod(0o755)
    yield d
    shutil.rmtree(d, ignore_errors=True)


def bench(
    target: Path, *args: str, env: dict[str, str] | None = None, timeout: float = 240
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "iowatt_agent", "bench", "--preset", "tpch", "--target", str(target), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, **(env or {})},
        cwd=REPO,
    )


def processes_under(path: Path) -> list[str]:
    """Command lines of live processes that name `path` (a DBMS left running there)."""
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if str(path) in cmd and "pytest" not in cmd and "iowatt_agent" not in cmd:
            found.append(f"{pid}: {cmd}")
    return found


def cwd_of(proc: Path) -> str:
    try:
        return os.readlink(proc / "cwd")
    except OSError:
        return ""


def gone_within(path: Path, seconds: float = 10.0) -> list[str]:
    deadline = time.monotonic() + seconds
    while (left := processes_under(path)) and time.monotonic() < deadline:
        time.sleep(0.1)
    return left


# --- the spec's formulas, by hand ------------------------------------------------------------------


def test_formulas_match_hand_computations():
    q = [float(i) for i in range(1, 23)]
    rf = [2.0, 3.0]
    # Power@Size = 3600 SF / (Π QI × Π RI)^(1/24)
    product = math.prod(q) * math.prod(rf)
    assert spec.power_at_size(1.0, q, rf) == pytest.approx(3600 / product ** (1 / 24), rel=1e-12)
    assert spec.power_at_size(10.0, q, rf) == pytest.approx(36000 / product ** (1 / 24), rel=1e-12)
    # 5.4.1.4: with Q1 = 0.001 s and Q22 = 100 s the ratio exceeds 1000: Q1 counts as 0.1 s
    q2 = [0.001, *([1.0] * 20), 100.0]
    expected = 3600 / (0.1 * 100.0 * math.prod(rf)) ** (1 / 24)
    assert spec.power_at_size(1.0, q2, rf) == pytest.approx(expected, rel=1e-12)
    # Throughput@Size = S × 22 × 3600 / Ts × SF; QphH = √(Power × Throughput)
    assert spec.throughput_at_size(1.0, 2, 3600.0) == 44.0
    assert spec.throughput_at_size(10.0, 3, 660.0) == pytest.approx(3 * 22 * 3600 / 660 * 10)
    assert spec.qphh_at_size(400.0, 100.0) == 200.0
    with pytest.raises(ValueError):
        spec.power_at_size(1.0, q[:21], rf)


def test_minimum_streams_follow_the_spec_table():
    # 5.3.4 (and seed 000's Table 2: 1 GB and 5 GB with 2 users, 10 GB with 3)
    factors = (0.01, 1, 5, 10, 30, 100, 300, 1000, 3000, 10000, 30000, 100000)
    assert [tpch_min_streams(sf) for sf in factors] == [2, 2, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]
    assert (
        spec.refresh_orders(1) == 1500
        and spec.refresh_orders(0.01) == 15
        and spec.refresh_orders(0.0001) == 1
    )
    assert spec.stream_order(0) == list(range(1, 23))
    assert sorted(spec.stream_order(3)) == list(range(1, 23)) and spec.stream_order(3) != spec.stream_order(4)


# --- end to end ------------------------------------------------------------------------------------


def check_run(doc: dict, dbms: str, streams: int, target: Path, pool: int = 16 << 20) -> None:
    t = doc["tpch"]
    assert t["label"] == LABEL
    assert t["dbms"] == dbms and t["scale_factor"] == 0.01 and t["streams"] == streams
    assert t["dbms_version"].startswith({"postgresql": "PostgreSQL ", "mariadb": "MariaDB "}[dbms])
    assert t["load_s"] > 0
    # every query of the power test and of every throughput stream answered, each answer checked
    queries = t["queries"]
    power = [q for q in queries if q["test"] == "power"]
    assert [q["query"] for q in power] == list(range(1, 23))
    for s in range(1, streams + 1):
        assert sorted(q["query"] for q in queries if q["stream"] == s) == list(range(1, 23))
    assert len(queries) == 22 * (streams + 1)
    bad = [q for q in queries if q["answer_ok"] is not True or q["timed_out"]]
    assert not bad, bad
    assert t["answers"]["checked"] == t["answers"]["ok"] == len(queries)
    assert t["answers"]["reference_matches_tpch_answers"] is True
    # refresh functions: RF1 and RF2 in the power test, one pair per stream in the throughput test
    rf = t["refresh"]
    assert rf["present"] is True and rf["orders_per_function"] == 15
    assert [(r["test"], r["function"], r["set"]) for r in rf["timings"]] == [
        ("power", "RF1", 0),
        ("power", "RF2", 0),
        *[("throughput", f, k) for k in range(1, streams + 1) for f in ("RF1", "RF2")],
    ]
    # the metrics, recomputed by hand from the recorded timings
    qi = [q["seconds"] for q in power]
    floor = max(qi) / 1000
    qi = [max(x, floor) for x in qi]
    ri = [r["seconds"] for r in rf["timings"][:2]]
    power_at_size = 3600 * 0.01 / math.prod([*qi, *ri]) ** (1 / 24)
    throughput_at_size = streams * 22 * 3600 / t["throughput_s"] * 0.01
    assert t["power_at_size"] == pytest.approx(power_at_size, rel=1e-4)
    assert t["throughput_at_size"] == pytest.approx(throughput_at_size, rel=1e-4)
    assert t["qphh_at_size"] == pytest.approx(math.sqrt(power_at_size * throughput_at_size), rel=1e-4)
    # the throughput test lasts at least as long as its longest stream's queries
    longest = max(sum(q["seconds"] for q in queries if q["stream"] == s) for s in range(1, streams + 1))
    assert t["throughput_s"] >= longest
    # a small buffer pool, said so, and the durability settings recorded
    assert t["buffer_pool"]["bytes"] == pool and "small" in t["buffer_pool"]["note"]
    settings = t["settings"]
    if dbms == "postgresql":
        assert settings["fsync"] == "on" and settings["shared_buffers"] == f"{pool >> 20}MB"
        assert settings["listen_addresses"] == ""  # unix socket only
        assert settings["unix_socket_directories"].startswith(t["instance_directory"])
        assert settings["jit"] == "off"  # the unit's MemoryDenyWriteExecute (issue 22)
    else:
        assert (
            settings["innodb_flush_log_at_trx_commit"] == "1"
            and settings["innodb_flush_method"] == "O_DIRECT"
        )
        # issue 22: the server refuses LOCAL INFILE and reads files only from the generator's
        # directory (inside the run's, gone now)
        assert settings["local_infile"] == "OFF"
        assert settings["secure_file_priv"].rstrip("/").endswith("/gen")
        assert Path(settings["secure_file_priv"]).is_relative_to(target)
    # the instance and its directory are gone
    assert Path(t["instance_directory"]).is_relative_to(target)
    assert list(target.iterdir()) == []
    assert gone_within(target) == []


@needs_duckdb
@pytest.mark.skipif(not have_postgres(), reason="PostgreSQL server binaries are not installed")
def test_postgresql_sf001_end_to_end(target):
    res = bench(target, "--dbms", "postgresql", "--scale-factor", "0.01", "--json")
    assert res.returncode == 0, res.stderr[-3000:]
    check_run(json.loads(res.stdout), "postgresql", 2, target)
    assert LABEL in res.stderr  # progress lines say it too


@needs_duckdb
@pytest.mark.skipif(not have_mariadb(), reason="MariaDB server binaries are not installed")
def test_mariadb_sf001_end_to_end(target):
    # 64 MiB: with 16 MiB and O_DIRECT the random lookups of Q14/Q15 go to the disk (seconds each
    # on this shared machine): what the default is for, not what a functional test needs
    res = bench(
        target,
        "--dbms",
        "mariadb",
        "--scale-factor",
        "0.01",
        "--streams",
        "1",  # the throughput test's streams are PostgreSQL's test's subject (2 there)
        "--buffer-pool",
        "64m",
        "--json",
    )
    assert res.returncode == 0, res.stderr[-3000:]
    check_run(json.loads(res.stdout), "mariadb", 1, target, pool=64 << 20)
    assert "--buffer-pool" in json.loads(res.stdout)["tpch"]["buffer_pool"]["note"]


@needs_duckdb
@pytest.mark.parametrize(
    ("dbms", "env", "hint"),
    [
        ("postgresql", "IOWATT_TPCH_PG_BINDIR", "apt-get install -y postgresql"),
        ("mariadb", "IOWATT_TPCH_MARIADB_BINDIR", "apt-get install -y mariadb-server"),
    ],
)
def test_missing_dbms_is_unsupported_with_the_install_command(target, tmp_path, dbms, env, hint):
    empty = tmp_path / "no-binaries"
    empty.mkdir()
    res = bench(target, "--dbms", dbms, "--scale-factor", "0.01", "--json", env={env: str(empty)}, timeout=60)
    assert res.returncode == 77, res.stderr
    assert "unsupported on this host" in res.stderr and hint in res.stderr
    assert res.stdout == "" and list(target.iterdir()) == []


@pytest.mark.parametrize(
    ("args", "field"),
    [
        (["--dbms", "oracle", "--scale-factor", "1"], "--dbms"),
        (["--dbms", "postgresql", "--scale-factor", "0"], "--scale-factor"),
        (["--dbms", "postgresql", "--scale-factor", "ten"], "--scale-factor"),
        (["--dbms", "postgresql", "--scale-factor", "1", "--streams", "0"], "--streams"),
        (["--dbms", "postgresql", "--scale-factor", "1", "--query-timeout", "-1"], "--query-timeout"),
        (["--dbms", "postgresql", "--scale-factor", "1", "--buffer-pool", "lots"], "--buffer-pool"),
        (["--dbms", "postgresql", "--scale-factor", "1", "--rows", "5"], "--rows"),
        (["--dbms", "postgresql", "--scale-factor", "1", "--rw", "read"], "--rw"),
        (["--dbms", "postgresql", "--scale-factor", "1", "--meter", "hwmon:/x"], "--meter"),
    ],
)
def test_bad_arguments_exit_2_naming_the_field(target, args, field):
    # the CLI in this process (typer's runner: its exit code, its stderr): nine agent processes
    # only to read their arguments cost ~0.4 CPU-s each; test_target_must_be_a_directory and the
    # runs above exercise the real process's exit codes
    res = CliRunner().invoke(cli.app, ["bench", "--preset", "tpch", "--target", str(target), *args])
    assert res.exit_code == 2, res.output
    assert field in res.stderr
    assert list(target.iterdir()) == []


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("16m", 16 << 20),
        ("1g", 1 << 30),
        ("64MB", 64 << 20),
        ("1048576", 1 << 20),
        ("0x100000", 1 << 20),
        # fio's rule, as everywhere else the agent and the engine read a size: 4096KiB is
        # 4,096,000 bytes (the old parser of --buffer-pool read it as 4 MiB)
        ("4096KiB", 4_096_000),
        ("2MiB", 2_000_000),
    ],
)
def test_buffer_pool_reads_sizes_as_everything_else_does(text, expected):
    assert buffer_pool_bytes(text) == expected == parse_size(text)


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("1.5g", "not a size"),  # no fractions (the old parser took 1.5 GiB)
        ("4KiB", "from 1m to 1t"),  # 4000 bytes (the old parser: 4096), below the minimum either way
        ("1m ", "not a size"),  # no spaces
        ("-16m", "not a size"),
        ("16q", "not a size"),
        ("1000000", "from 1m to 1t"),
        ("", "not a size"),
    ],
)
def test_buffer_pool_refuses_what_the_size_syntax_does_not_read(text, why):
    with pytest.raises(TpchUsage, match=why) as caught:
        buffer_pool_bytes(text)
    assert "--buffer-pool" in str(caught.value)


def test_options_take_the_librarys_defaults(target):
    opts = parse_options(["--dbms", "postgresql", "--scale-factor", "10"], str(target))
    assert opts.buffer_pool_bytes == TPCH_DEFAULT_BUFFER_POOL_BYTES == 16 << 20
    assert opts.streams == tpch_min_streams(10) == 3
    with pytest.raises(TpchUsage, match="--buffer-pool"):
        parse_options(["--dbms", "postgresql", "--scale-factor", "1", "--buffer-pool", "1.5g"], str(target))


def test_target_must_be_a_directory(target):
    f = target / "file"
    f.write_bytes(b"x")
    res = bench(f, "--dbms", "postgresql", "--scale-factor", "0.01", timeout=60)
    assert res.returncode == 2 and "must be a directory" in res.stderr


@needs_duckdb
@pytest.mark.skipif(os.geteuid() != 0, reason="mounting a size-limited tmpfs needs root")
@pytest.mark.parametrize(
    ("dbms", "size", "have"),
    [
        # room for the worker's copy of DuckDB's tpch extension (17 MiB, mapped until the worker
        # exits), the generated files (~12 MiB) and the new cluster (PostgreSQL ~40 MiB, MariaDB
        # ~55 MiB with its 32 MiB redo log), not for the load
        ("postgresql", "77m", have_postgres),
        ("mariadb", "89m", have_mariadb),
    ],
)
def test_full_disk_during_the_load_stops_cleanly_and_removes_the_instance(target, dbms, size, have):
    if not have():
        pytest.skip(f"{dbms} server binaries are not installed")
    subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size},mode=0755", "tmpfs", str(target)], check=True)
    try:
        # one throughput stream: the load fails, so a second stream's reference answers are not needed
        res = bench(target, "--dbms", dbms, "--scale-factor", "0.01", "--streams", "1", "--json")
        assert res.returncode == 1, res.stderr[-3000:]
        assert "loading " in res.stderr and "power test" not in res.stderr  # it was the load
        assert "tpch target full" in res.stderr, res.stderr[-2000:]
        assert "instance stopped" in res.stderr and res.stdout == ""
        assert list(target.iterdir()) == []
        assert gone_within(target) == []
    finally:
        subprocess.run(["umount", "-l", str(target)], check=False)


@needs_duckdb
@pytest.mark.skipif(not have_postgres(), reason="PostgreSQL server binaries are not installed")
def test_ctrl_c_during_the_power_test_stops_the_dbms_and_removes_its_directory(target):
    # one throughput stream: the run is stopped in the power test
    proc = subprocess.Popen(
        [sys.executable, "-m", "iowatt_agent", "bench", "--preset", "tpch", "--target", str(target),
         "--dbms", "postgresql", "--scale-factor", "0.01", "--streams", "1", "--json"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO,
    )  # fmt: skip
    assert proc.stderr is not None
    seen = []
    for line in proc.stderr:
        seen.append(line)
        if "power test" in line:
            break
    assert any("power test" in line for line in seen), "".join(seen)
    servers = processes_under(target)  # the private server runs inside the target
    assert servers
    if os.geteuid() == 0:  # nothing of the run is root (issue 22): not the server, not the worker
        assert all(os.stat(f"/proc/{line.split(':')[0]}").st_uid != 0 for line in servers), servers
        [run_dir] = list(target.iterdir())
        workers = [p for p in Path("/proc").iterdir() if p.name.isdigit() and cwd_of(p) == str(run_dir)]
        assert workers and all(p.stat().st_uid != 0 for p in workers), workers
    proc.send_signal(signal.SIGINT)
    out, rest = proc.communicate(timeout=120)
    assert proc.returncode == 130, "".join(seen) + rest
    assert "interrupted" in rest and out == ""
    assert list(target.iterdir()) == []
    assert gone_within(target) == []


@needs_duckdb
@pytest.mark.skipif(not have_postgres(), reason="PostgreSQL server binaries are not installed")
def test_query_timeout_is_marked_and_the_metrics_withheld(target, capsys):
    # Q1 scans every lineitem: ~0.1 s at SF 0.01 even on an idle machine, far above 20 ms
    res = bench(
        target,
        "--dbms",
        "postgresql",
        "--scale-factor",
        "0.01",
        "--streams",
        "1",
        "--query-timeout",
        "0.02",
        "--json",
    )
    assert res.returncode == 0, res.stderr[-3000:]
    t = json.loads(res.stdout)["tpch"]
    q1 = next(q for q in t["queries"] if q["test"] == "power" and q["query"] == 1)
    assert q1["timed_out"] is True and q1["answer_ok"] is None and q1["error"] == "timeout"
    assert q1["seconds"] < 10  # cancelled, not run to the end
    assert t["timeouts"] == sum(q["timed_out"] for q in t["queries"]) >= 1
    assert t["query_timeout_s"] == 0.02
    assert t["power_at_size"] is None and t["throughput_at_size"] is None and t["qphh_at_size"] is None
    assert "timed out" in t["metrics_note"]
    assert all(q["answer_ok"] is True for q in t["queries"] if not q["timed_out"])
    assert list(target.iterdir()) == [] and gone_within(target) == []
    # the tables for people mark it too, and say what the numbers are not
    render(t)
    shown = capsys.readouterr().out
    assert shown.startswith(LABEL) and shown.rstrip().endswith(LABEL)
    assert "TIMEOUT" in shown and "n/a" in shown and "Q22" in shown


@needs_duckdb
@pytest.mark.skipif(os.geteuid() != 0, reason="only root hands the DBMS to another user")
@pytest.mark.skipif(not have_postgres(), reason="PostgreSQL server binaries are not installed")
def test_a_target_the_dbms_user_cannot_reach_is_refused_before_any_work(target):
    inner = target / "private"
    inner.mkdir(mode=0o700)
    res = bench(inner, "--dbms", "postgresql", "--scale-factor", "0.01", "--json", timeout=60)
    assert res.returncode == 1, res.stderr
    assert "cannot enter" in res.stderr and str(inner) in res.stderr and "generating" not in res.stderr
    assert list(inner.iterdir()) == []
