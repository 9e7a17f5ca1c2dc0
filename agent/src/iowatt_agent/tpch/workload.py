"""The SQL side: the spec's schema (1.4) in each DBMS's dialect, the bulk load, the 22 queries,
the refresh functions (2.5), the power test (5.3.3: RF1, Q1..Q22, RF2 in one stream) and the
throughput test (5.3.4: S query streams and one refresh stream running S RF1/RF2 pairs)."""

from __future__ import annotations

import contextlib
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .data import REFRESH_TABLES, TABLES, Generated, answers_match
from .dbms import Connection, Instance
from .isolation import real_path
from .spec import stream_order

COLUMNS: dict[str, list[tuple[str, str]]] = {
    "region": [("r_regionkey", "INTEGER"), ("r_name", "CHAR(25)"), ("r_comment", "VARCHAR(152)")],
    "nation": [
        ("n_nationkey", "INTEGER"),
        ("n_name", "CHAR(25)"),
        ("n_regionkey", "INTEGER"),
        ("n_comment", "VARCHAR(152)"),
    ],
    "part": [
        ("p_partkey", "INTEGER"),
        ("p_name", "VARCHAR(55)"),
        ("p_mfgr", "CHAR(25)"),
        ("p_brand", "CHAR(10)"),
        ("p_type", "VARCHAR(25)"),
        ("p_size", "INTEGER"),
        ("p_container", "CHAR(10)"),
        ("p_retailprice", "DECIMAL(15,2)"),
        ("p_comment", "VARCHAR(23)"),
    ],
    "supplier": [
        ("s_suppkey", "INTEGER"),
        ("s_name", "CHAR(25)"),
        ("s_address", "VARCHAR(40)"),
        ("s_nationkey", "INTEGER"),
        ("s_phone", "CHAR(15)"),
        ("s_acctbal", "DECIMAL(15,2)"),
        ("s_comment", "VARCHAR(101)"),
    ],
    "partsupp": [
        ("ps_partkey", "INTEGER"),
        ("ps_suppkey", "INTEGER"),
        ("ps_availqty", "INTEGER"),
        ("ps_supplycost", "DECIMAL(15,2)"),
        ("ps_comment", "VARCHAR(199)"),
    ],
    "customer": [
        ("c_custkey", "INTEGER"),
        ("c_name", "VARCHAR(25)"),
        ("c_address", "VARCHAR(40)"),
        ("c_nationkey", "INTEGER"),
        ("c_phone", "CHAR(15)"),
        ("c_acctbal", "DECIMAL(15,2)"),
        ("c_mktsegment", "CHAR(10)"),
        ("c_comment", "VARCHAR(117)"),
    ],
    "orders": [
        ("o_orderkey", "BIGINT"),
        ("o_custkey", "INTEGER"),
        ("o_orderstatus", "CHAR(1)"),
        ("o_totalprice", "DECIMAL(15,2)"),
        ("o_orderdate", "DATE"),
        ("o_orderpriority", "CHAR(15)"),
        ("o_clerk", "CHAR(15)"),
        ("o_shippriority", "INTEGER"),
        ("o_comment", "VARCHAR(79)"),
    ],
    "lineitem": [
        ("l_orderkey", "BIGINT"),
        ("l_partkey", "INTEGER"),
        ("l_suppkey", "INTEGER"),
        ("l_linenumber", "INTEGER"),
        ("l_quantity", "DECIMAL(15,2)"),
        ("l_extendedprice", "DECIMAL(15,2)"),
        ("l_discount", "DECIMAL(15,2)"),
        ("l_tax", "DECIMAL(15,2)"),
        ("l_returnflag", "CHAR(1)"),
        ("l_linestatus", "CHAR(1)"),
        ("l_shipdate", "DATE"),
        ("l_commitdate", "DATE"),
        ("l_receiptdate", "DATE"),
        ("l_shipinstruct", "CHAR(25)"),
        ("l_shipmode", "CHAR(10)"),
        ("l_comment", "VARCHAR(44)"),
    ],
}
COLUMNS["rf_orders"] = [*COLUMNS["orders"], ("rf_set", "INTEGER")]
COLUMNS["rf_lineitem"] = [*COLUMNS["lineitem"], ("rf_set", "INTEGER")]

# 1.4.2.2 primary keys; indexes on the foreign-key columns (1.4.2.3 and 1.5.7 allow them; the
# constraints themselves are not declared). The refresh staging tables are indexed by set.
PRIMARY_KEYS = {
    "region": "r_regionkey",
    "nation": "n_nationkey",
    "part": "p_partkey",
    "supplier": "s_suppkey",
    "partsupp": "ps_partkey, ps_suppkey",
    "customer": "c_custkey",
    "orders": "o_orderkey",
    "lineitem": "l_orderkey, l_linenumber",
}
INDEXES = [
    ("nation", "n_regionkey"),
    ("supplier", "s_nationkey"),
    ("customer", "c_nationkey"),
    ("partsupp", "ps_suppkey"),
    ("orders", "o_custkey"),
    ("lineitem", "l_partkey, l_suppkey"),
    ("lineitem", "l_suppkey"),
    ("rf_orders", "rf_set"),
    ("rf_lineitem", "rf_set"),
]
TIMEOUT_MARK = "timeout"


def dialect_query(dbms: str, number: int, sql: str) -> str:
    """DuckDB's query text in `dbms`'s dialect. PostgreSQL takes it as is; MariaDB has no column
    list on a derived table (Q13: `AS c_orders (c_custkey, c_count)`), so the alias moves inside."""
    if dbms == "mariadb" and number == 13:
        sql = re.sub(r"count\(o_orderkey\)\s*\n", "count(o_orderkey) AS c_count\n", sql, count=1)
        sql = re.sub(r"AS c_orders\s*\(\s*c_custkey,\s*c_count\s*\)", "AS c_orders", sql, count=1)
    return sql


@dataclass
class Timing:
    test: str  # power | throughput
    stream: int
    query: int
    seconds: float
    answer_ok: bool | None
    timed_out: bool = False
    error: str | None = None
    started_s: float = 0.0  # since the test's start

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "test": self.test,
            "stream": self.stream,
            "query": self.query,
            "seconds": round(self.seconds, 6),
            "answer_ok": self.answer_ok,
            "timed_out": self.timed_out,
        }
        if self.error:
            out["error"] = self.error
        return out


@dataclass
class RefreshTiming:
    test: str
    function: str  # RF1 | RF2
    refresh_set: int
    seconds: float

    def as_dict(self) -> dict[str, Any]:
        return {
            "test": self.test,
            "function": self.function,
            "set": self.refresh_set,
            "seconds": round(self.seconds, 6),
        }


class Workload:
    """The SQL of one run against one started instance."""

    def __init__(self, instance: Instance, gen: Generated, query_timeout_s: float) -> None:
        self.instance = instance
        self.dbms = instance.dbms
        self.gen = gen
        self.query_timeout_s = query_timeout_s
        self.queries = {n: dialect_query(self.dbms, n, q) for n, q in gen.queries.items()}

    # --- load ------------------------------------------------------------------------------------

    def load(self, progress: Callable[[str], None]) -> float:
        """Create the schema, bulk-load every table (COPY / LOAD DATA), build the keys and indexes,
        gather statistics; the seconds it took (the spec's load test is not in the metric)."""
        started = time.monotonic()
        conn = self.instance.connect()
        try:
            cur = conn.cursor()
            for table in (*TABLES, *REFRESH_TABLES):
                cols = ", ".join(f"{c} {t} NOT NULL" for c, t in COLUMNS[table])
                pk = PRIMARY_KEYS.get(table)
                if self.dbms == "mariadb":
                    key = f", PRIMARY KEY ({pk})" if pk else ""
                    cur.execute(f"CREATE TABLE {table} ({cols}{key}) ENGINE=InnoDB")
                else:
                    cur.execute(f"CREATE TABLE {table} ({cols})")
            conn.commit()
            for table in (*TABLES, *REFRESH_TABLES):
                progress(f"loading {table}")
                self._bulk_load(conn, table, self.gen.files[table])
            progress("building keys and indexes")
            for table, pk in PRIMARY_KEYS.items():
                if self.dbms == "postgresql":
                    cur.execute(f"ALTER TABLE {table} ADD PRIMARY KEY ({pk})")
            for i, (table, cols) in enumerate(INDEXES):
                cur.execute(f"CREATE INDEX ix_{table}_{i} ON {table} ({cols})")
            progress("gathering statistics")
            if self.dbms == "postgresql":
                conn.commit()
                cur.execute("ANALYZE")
            else:
                cur.execute(f"ANALYZE TABLE {', '.join((*TABLES, *REFRESH_TABLES))}")
                cur.fetchall()
            conn.commit()
        finally:
            conn.close()
        return time.monotonic() - started

    def _bulk_load(self, conn: Connection, table: str, path: Path) -> None:
        cur = conn.cursor()
        if self.dbms == "postgresql":
            with (
                cur.copy(f"COPY {table} FROM STDIN (FORMAT csv, DELIMITER '|')") as copy,
                path.open("rb") as f,
            ):
                while block := f.read(1 << 20):
                    copy.write(block)
            conn.commit()
        else:
            # the server reads the file itself (its --secure-file-priv is the generator's
            # directory); never LOCAL INFILE, which makes the client send a file the server names
            cur.execute(
                f"LOAD DATA INFILE %s INTO TABLE {table} FIELDS TERMINATED BY '|' "
                "OPTIONALLY ENCLOSED BY '\"' LINES TERMINATED BY '\\n'",
                (str(real_path(path)),),
            )

    # --- queries and refresh functions -------------------------------------------------------------

    def open_session(self) -> Connection:
        """A connection with the per-query timeout set and autocommit on (one statement, one
        transaction, so every query sees one committed state)."""
        conn = self.instance.connect()
        cur = conn.cursor()
        if self.dbms == "postgresql":
            conn.autocommit = True  # type: ignore[attr-defined]
            cur.execute(f"SET statement_timeout = {int(self.query_timeout_s * 1000)}")
        else:
            cur.execute(f"SET SESSION max_statement_time = {self.query_timeout_s:.3f}")
        return conn

    def run_query(
        self, conn: Connection, test: str, stream: int, number: int, states: list[int], t0: float
    ) -> Timing:
        """Run query `number`; its answer must equal the reference of one of `states`."""
        cur = conn.cursor()
        started = time.monotonic()
        try:
            cur.execute(self.queries[number])
            rows = list(cur.fetchall())
        except Exception as exc:  # noqa: BLE001 - a timed-out or failed query is a result
            seconds = time.monotonic() - started
            if self._is_timeout(exc):
                return Timing(test, stream, number, seconds, None, True, TIMEOUT_MARK, started - t0)
            if self._is_disk_full(exc):
                raise
            return Timing(test, stream, number, seconds, False, False, _first_line(exc), started - t0)
        seconds = time.monotonic() - started
        ok = any(answers_match(rows, self.gen.references[s][number]) for s in states)
        return Timing(test, stream, number, seconds, ok, started_s=started - t0)

    def refresh(self, conn: Connection, function: str, refresh_set: int, test: str) -> RefreshTiming:
        """RF1: insert refresh set `refresh_set`'s orders and their lineitems; RF2: delete them
        (lineitems first). Each function is one transaction, not cut by the query timeout."""
        cur = conn.cursor()
        sel = f"FROM rf_orders WHERE rf_set = {int(refresh_set)}"
        ocols = ", ".join(c for c, _ in COLUMNS["orders"])
        lcols = ", ".join(c for c, _ in COLUMNS["lineitem"])
        if function == "RF1":
            statements = [
                f"INSERT INTO orders ({ocols}) SELECT {ocols} {sel}",
                f"INSERT INTO lineitem ({lcols}) SELECT {lcols} FROM rf_lineitem "
                f"WHERE rf_set = {int(refresh_set)}",
            ]
        elif self.dbms == "mariadb":
            # MariaDB 10.x plans a single-table DELETE ... IN (subquery) as the subquery checked per row
            # (the semi-join a SELECT gets came to DELETE in 11.1, MDEV-7487): at SF 1 that is 6 M
            # lineitems, minutes; the multi-table DELETE joins through the primary keys instead.
            rs = int(refresh_set)
            statements = [
                "DELETE lineitem FROM lineitem JOIN rf_orders ON l_orderkey = o_orderkey "
                f"WHERE rf_set = {rs}",
                "DELETE orders FROM orders JOIN rf_orders r ON orders.o_orderkey = r.o_orderkey "
                f"WHERE r.rf_set = {rs}",
            ]
        else:
            statements = [
                f"DELETE FROM lineitem WHERE l_orderkey IN (SELECT o_orderkey {sel})",
                f"DELETE FROM orders WHERE o_orderkey IN (SELECT o_orderkey {sel})",
            ]
        if self.dbms == "mariadb":
            # the query timeout cuts queries, not the refresh functions (the run's hard timeout
            # bounds those): a refresh cut short would fail the run instead of being a result
            statements = [f"SET STATEMENT max_statement_time = 0 FOR {sql}" for sql in statements]
        started = time.monotonic()
        cur.execute("BEGIN")
        try:
            if self.dbms == "postgresql":
                cur.execute("SET LOCAL statement_timeout = 0")  # as above: queries only
            for sql in statements:
                cur.execute(sql)
            cur.execute("COMMIT")
        except BaseException:
            cur.execute("ROLLBACK")
            raise
        return RefreshTiming(test, function, refresh_set, time.monotonic() - started)

    def _is_timeout(self, exc: Exception) -> bool:
        if self.dbms == "postgresql":
            return getattr(exc, "sqlstate", None) == "57014"
        return bool(exc.args) and exc.args[0] in (1969, 3024)

    def _is_disk_full(self, exc: BaseException) -> bool:
        return is_disk_full(exc)

    # --- tests -----------------------------------------------------------------------------------

    def power_test(self, progress: Callable[[str], None]) -> tuple[list[Timing], list[RefreshTiming]]:
        """5.3.3: RF1 (set 0), Q1..Q22, RF2 (set 0), one session, one after the other."""
        conn = self.open_session()
        try:
            t0 = time.monotonic()
            refreshes = [self.refresh(conn, "RF1", 0, "power")]
            timings = []
            for q in stream_order(0):
                progress(f"power test: Q{q}")
                timings.append(self.run_query(conn, "power", 0, q, [1], t0))
            refreshes.append(self.refresh(conn, "RF2", 0, "power"))
            return timings, refreshes
        finally:
            conn.close()

    def throughput_test(
        self, streams: int, stop: threading.Event, progress: Callable[[str], None]
    ) -> tuple[list[Timing], list[RefreshTiming], float]:
        """5.3.4: S query streams (their own sessions, their own query orders) and one refresh
        stream running S RF1/RF2 pairs (sets 1..S) at the same time; Ts from the start to the end
        of the last stream. A query may see the database as loaded or with one refresh set in it."""
        states = [0, *range(2, streams + 2)]
        timings: list[Timing] = []
        refreshes: list[RefreshTiming] = []
        errors: list[BaseException] = []
        lock = threading.Lock()
        sessions = [self.open_session() for _ in range(streams + 1)]
        t0 = time.monotonic()

        def query_stream(s: int) -> None:
            try:
                for q in stream_order(s):
                    if stop.is_set():
                        return
                    t = self.run_query(sessions[s - 1], "throughput", s, q, states, t0)
                    with lock:
                        timings.append(t)
            except BaseException as exc:  # noqa: BLE001 - handed to the main thread
                with lock:
                    errors.append(exc)
                stop.set()

        def refresh_stream() -> None:
            try:
                for k in range(1, streams + 1):
                    for fn in ("RF1", "RF2"):
                        if stop.is_set():
                            return
                        r = self.refresh(sessions[streams], fn, k, "throughput")
                        with lock:
                            refreshes.append(r)
            except BaseException as exc:  # noqa: BLE001
                with lock:
                    errors.append(exc)
                stop.set()

        threads = [
            threading.Thread(target=query_stream, args=(s,), daemon=True) for s in range(1, streams + 1)
        ]
        threads.append(threading.Thread(target=refresh_stream, daemon=True))
        try:
            for t in threads:
                t.start()
            while any(t.is_alive() for t in threads):
                with lock:
                    done = len(timings)
                progress(f"throughput test: {done}/{streams * 22} queries")
                for t in threads:
                    t.join(0.25)
            elapsed = time.monotonic() - t0
        finally:
            for c in sessions:
                with contextlib.suppress(Exception):  # the server may be gone already
                    c.close()
        if errors:
            raise errors[0]
        timings.sort(key=lambda t: (t.stream, t.started_s))
        return timings, refreshes, elapsed


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


def is_disk_full(exc: BaseException) -> bool:
    """The target ran out of space (PostgreSQL 53100, MariaDB 1114/1021/3/28 errno, ENOSPC)."""
    if getattr(exc, "sqlstate", None) == "53100":
        return True
    if isinstance(exc, OSError) and exc.errno == 28:
        return True
    text = str(exc)
    markers = ("No space left on device", "errno: 28", "error 28", "Disk full", "disk full")
    if any(m in text for m in markers):
        return True
    args: tuple[Any, ...] = tuple(getattr(exc, "args", ()))
    return bool(args) and isinstance(args[0], int) and args[0] in (1114, 1021)
