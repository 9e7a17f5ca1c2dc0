"""Data, queries and reference answers from DuckDB's TPC-H extension (ADR 0023).

`generate()` runs dbgen at any scale factor in an in-memory DuckDB database (spilling to the
run's directory), exports the eight tables and the refresh sets as '|'-separated files, takes
the 22 queries
(the spec's validation substitution parameters, as DuckDB ships them) and computes the
reference answer of every query in every database state the tests can see: the loaded
database (checked against `tpch_answers()` where the extension has them: SF 0.01, 0.1, 1)
and the loaded database plus each refresh set. Then DuckDB is closed and its spill files removed.

Refresh sets: DuckDB's dbgen writes no update sets, so RF1's rows are the generator's own
orders and lineitems re-keyed into the order keys dbgen leaves unused (within every 32 keys dbgen
uses the first 8; key + 8 is never used), SF × 1500 orders per set (2.5.2). RF2 deletes exactly
the orders (and their lineitems) RF1 inserted, so every pair leaves the database as loaded."""

from __future__ import annotations

import datetime as dt
import decimal
import math
import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from iowatt_workload import TPCH_GENERATOR_MEMORY_LIMIT_BYTES

from .dbms import Unsupported
from .spec import refresh_orders

TABLES = ("region", "nation", "part", "supplier", "partsupp", "customer", "orders", "lineitem")
REFRESH_TABLES = ("rf_orders", "rf_lineitem")
ANSWER_SCALE_FACTORS = (0.01, 0.1, 1.0)
DUCKDB_INSTALL = "pip install 'iowatt-agent[tpch]' (duckdb==1.5.5 and duckdb-extension-tpch==1.5.5)"
# Below this scale factor DuckDB generates and answers with one thread: a second one there costs
# 20-35 % more CPU and saves no wall time (a second or a few either way; measured at SF 0.01, 0.05
# and 0.1 on two cores). From it on, two threads.
ONE_THREAD_BELOW_SF = 0.1

Row = tuple[Any, ...]


@dataclass
class Generated:
    """What the DBMS side needs: the files to load, the queries, the reference answers."""

    directory: Path
    files: dict[str, Path]
    queries: dict[int, str]
    # references[state][query]: state 0 = as loaded, state k >= 1 = as loaded + refresh set k - 1
    references: list[dict[int, list[Row]]]
    refresh_orders: int
    refresh_sets: int
    reference_source: str
    reference_checked: bool | None  # DuckDB's answers equal tpch_answers() (None: SF has none)
    generator: dict[str, Any] = field(default_factory=dict)
    generate_s: float = 0.0


def extension_path() -> Path:
    """The tpch extension shipped in the duckdb-extension-tpch wheel (loaded by path: offline)."""
    try:
        import duckdb
        import duckdb_extension_tpch
    except ImportError:
        raise Unsupported(
            "DuckDB and its tpch extension (the data generator) are not installed", DUCKDB_INSTALL
        ) from None
    base = Path(duckdb_extension_tpch.__file__).parent / "extensions" / f"v{duckdb.__version__}"
    path = base / "tpch.duckdb_extension"
    if not path.is_file():
        raise Unsupported(f"no tpch extension for DuckDB {duckdb.__version__} at {path}", DUCKDB_INSTALL)
    return path


# The extension's copy in a run directory: the coordinator puts it there while it can still read
# the agent's installation (which the TPC-H user may not: a venv under /root, a 0700 checkout).
EXTENSION_COPY = "tpch.duckdb_extension"


def copy_extension(source_fd: int, to: Path) -> None:
    """The extension read from `source_fd` (from its start; the descriptor stays open) into a new
    file `to`, 0644: never an existing entry, never through a link."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    out = os.open(to, flags, 0o644)
    try:
        offset = 0
        while True:
            chunk = os.pread(source_fd, 1 << 20, offset)
            if not chunk:
                break
            view = memoryview(chunk)
            while view:
                view = view[os.write(out, view) :]
            offset += len(chunk)
    finally:
        os.close(out)


def generate(
    directory: Path,
    scale_factor: float,
    refresh_sets: int,
    memory_limit_bytes: int = TPCH_GENERATOR_MEMORY_LIMIT_BYTES,
    extension: Path | None = None,
) -> Generated:
    """Generate, export and compute references in `directory` (created; the caller removes it).
    DuckDB holds at most `memory_limit_bytes` of data in memory and spills the rest to `directory`
    (libs/workload's limit, which libs/policy's memory bound counts; DuckDB's own structures come
    on top)."""
    import time

    import duckdb

    ext = extension if extension is not None else extension_path()
    directory.mkdir(mode=0o755)
    started = time.monotonic()
    # In memory (spilling to `directory`): DuckDB resolves a database file's path once with
    # realpath and reopens its WAL by that path, so a link swapped into the run's path later
    # would be followed; COPY and the temp directory take `directory` as given.
    con = duckdb.connect(":memory:")
    try:
        con.execute(f"SET memory_limit = '{int(memory_limit_bytes)}B'")
        con.execute(f"SET temp_directory = {sql_text(directory / 'duckdb.tmp')}")
        con.execute(f"SET threads = {generator_threads(scale_factor)}")
        con.execute(f"LOAD {sql_text(ext)}")
        con.execute(f"CALL dbgen(sf = {float(scale_factor)!r})")
        n = refresh_orders(scale_factor)
        total_orders = int(_one(con, "SELECT count(*) FROM orders"))
        if n * refresh_sets > total_orders:
            raise ValueError(
                f"{refresh_sets} refresh sets of {n} orders need more than the {total_orders} orders"
            )
        if int(_one(con, "SELECT count(*) FROM orders WHERE o_orderkey % 32 >= 8")):
            raise RuntimeError("dbgen's order keys are not in the expected sparse layout")
        # Set k takes the orders at ranks k*n .. k*n+n-1 and shifts their keys into the unused gap.
        con.execute(
            "CREATE TABLE rf_orders AS SELECT o_orderkey + 8 AS o_orderkey, o_custkey, o_orderstatus, "
            "o_totalprice, o_orderdate, o_orderpriority, o_clerk, o_shippriority, o_comment, "
            f"CAST((rn - 1) // {n} AS INTEGER) AS rf_set FROM "
            "(SELECT *, row_number() OVER (ORDER BY o_orderkey) AS rn FROM orders) "
            f"WHERE rn <= {n * refresh_sets}"
        )
        con.execute(
            "CREATE TABLE rf_lineitem AS SELECT l.l_orderkey + 8 AS l_orderkey, l_partkey, l_suppkey, "
            "l_linenumber, l_quantity, l_extendedprice, l_discount, l_tax, l_returnflag, l_linestatus, "
            "l_shipdate, l_commitdate, l_receiptdate, l_shipinstruct, l_shipmode, l_comment, r.rf_set "
            "FROM lineitem l JOIN rf_orders r ON l.l_orderkey + 8 = r.o_orderkey"
        )
        files: dict[str, Path] = {}
        for table in (*TABLES, *REFRESH_TABLES):
            path = directory / f"{table}.tbl"
            con.execute(f"COPY {table} TO {sql_text(path)} (FORMAT csv, DELIMITER '|', HEADER false)")
            files[table] = path
        queries = {
            int(nr): str(q).strip().rstrip(";")
            for nr, q in con.execute("SELECT query_nr, query FROM tpch_queries() ORDER BY 1").fetchall()
        }
        base = {q: list(con.execute(sql).fetchall()) for q, sql in queries.items()}
        checked: bool | None = None
        source = "DuckDB's answers to the same queries on the same data"
        if any(math.isclose(scale_factor, sf) for sf in ANSWER_SCALE_FACTORS):
            official = {
                int(nr): parse_answer(str(text))
                for nr, sf, text in con.execute(
                    "SELECT query_nr, scale_factor, answer FROM tpch_answers()"
                ).fetchall()
                if math.isclose(float(sf), scale_factor)
            }
            checked = all(answers_match(base[q], official[q]) for q in queries)
            source += f"; for the loaded database checked against tpch_answers() at SF {scale_factor:g}"
        references = [base]
        for k in range(refresh_sets):
            con.execute("BEGIN")
            con.execute(f"INSERT INTO orders SELECT * EXCLUDE (rf_set) FROM rf_orders WHERE rf_set = {k}")
            con.execute(f"INSERT INTO lineitem SELECT * EXCLUDE (rf_set) FROM rf_lineitem WHERE rf_set = {k}")
            references.append({q: list(con.execute(sql).fetchall()) for q, sql in queries.items()})
            con.execute("ROLLBACK")
        version = str(_one(con, "SELECT version()"))
    finally:
        con.close()
    shutil.rmtree(directory / "duckdb.tmp", ignore_errors=True)
    return Generated(
        directory=directory,
        files=files,
        queries=queries,
        references=references,
        refresh_orders=n,
        refresh_sets=refresh_sets,
        reference_source=source,
        reference_checked=checked,
        generator={"name": "DuckDB dbgen (tpch extension)", "duckdb": version, "extension": str(ext.name)},
        generate_s=time.monotonic() - started,
    )


def generator_threads(scale_factor: float) -> int:
    """DuckDB's threads for generating at `scale_factor` (ONE_THREAD_BELOW_SF)."""
    return 1 if scale_factor < ONE_THREAD_BELOW_SF else 2


def sql_text(path: Path) -> str:
    """A path as an SQL string literal (a target may have a quote in its name)."""
    return "'" + str(path).replace("'", "''") + "'"


def _one(con: Any, sql: str) -> Any:
    row = con.execute(sql).fetchone()
    return row[0] if row else None


def parse_answer(text: str) -> list[Row]:
    """tpch_answers()'s text: a header line, then one '|'-separated line per row, each ended by a
    newline (an empty line is a row of NULL: Q17 at SF 0.01)."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [tuple(line.split("|")) for line in lines[1:]]


def _cell(value: Any) -> float | str | None:
    if value is None:
        return None
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, int | float | decimal.Decimal):
        return float(value)
    if isinstance(value, dt.date | dt.datetime):
        return value.isoformat()[:10]
    text = value.decode() if isinstance(value, bytes) else str(value)
    text = text.strip()
    if text == "":
        return None  # tpch_answers() writes NULL as nothing; dbgen's strings are never empty
    try:
        return float(text)
    except ValueError:
        return text


def _cells_match(a: Any, b: Any) -> bool:
    x, y = _cell(a), _cell(b)
    if isinstance(x, float) and isinstance(y, float):
        # money to the cent, averages and ratios to 1e-9 relative (MariaDB rounds divisions to
        # div_precision_increment digits: within a cent too)
        return math.isclose(x, y, rel_tol=1e-9, abs_tol=0.01)
    return x == y


def _sort_key(row: Row) -> tuple[str, ...]:
    """Rows in a stable order whatever the DBMS's rounding: numbers to a tenth."""
    cells = (_cell(c) for c in row)
    return tuple(f"{c:.1f}" if isinstance(c, float) else str(c) for c in cells)


def _rows_match(a: list[Row], b: list[Row]) -> bool:
    return all(
        len(r) == len(s) and all(_cells_match(x, y) for x, y in zip(r, s, strict=True))
        for r, s in zip(a, b, strict=True)
    )


def answers_match(got: list[Row], want: list[Row]) -> bool:
    """The same rows in the same order (the queries order their results), or, where ties in the
    ORDER BY may come in any order, the same rows in another order."""
    if len(got) != len(want):
        return False
    if _rows_match(got, want):
        return True
    return _rows_match(sorted(got, key=_sort_key), sorted(want, key=_sort_key))


def remove_files(gen: Generated) -> None:
    for path in gen.files.values():
        path.unlink(missing_ok=True)
