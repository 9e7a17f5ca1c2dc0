"""The one TPC-H bound: how much a TPC-H-derived run writes and how big its database
is, from its scale factor. The server sizes a run with it (timeout, cache residency, what the UI
shows) and the agent checks a lease against the host's limits with it: one estimate, not two.

The spec's table sizes (TPC-H clause 4.2.5, "Estimated database size", SF 1: rows × typical row
bytes) give the raw data; a run's database on disk is larger (primary keys, indexes on the
foreign-key columns, the DBMS's page and row overhead: DATABASE_FACTOR, measured at SF 1 on
PostgreSQL: the run directory passed 2.5 GB with the generated files still there). What a run
writes (WRITE_FACTOR of the raw data): the generated flat files (about 1.2), the loaded database
(DATABASE_FACTOR), the load's log (WAL, redo: about 1) and the refresh functions' and the queries'
temporary files (spills past the small buffer pool: about 1.3). A run's time is not bounded by its
size (queries run until their timeout): `runtime_s_max` is null.
"""

from __future__ import annotations

from typing import TypedDict

from iowatt_workload.sizes import GiB, MiB, TiB

# What every TPC-H-derived run, result and view says of itself: its figures follow the spec's
# formulas but were not audited, so they are not TPC-H results (TPC's fair-use rules; docs/tpch.md).
# One text for the agent's output, the server's schemas, presets and views; the web UI's copy
# passes libs/workload/testdata/constants.json.
TPCH_LABEL = "TPC-H-derived, not audited"

# clause 4.2.5 at SF 1: table -> (rows, typical row bytes); NATION and REGION do not scale
TABLES_SF1: dict[str, tuple[int, int]] = {
    "supplier": (10_000, 159),
    "part": (200_000, 155),
    "partsupp": (800_000, 144),
    "customer": (150_000, 179),
    "orders": (1_500_000, 104),
    "lineitem": (6_001_215, 112),
    "nation": (25, 128),
    "region": (5, 124),
}
FIXED_TABLES = ("nation", "region")
DATABASE_FACTOR = 2.5
WRITE_FACTOR = 6.0
PAGE_BYTES = 16384  # the larger DBMS page (InnoDB 16 KiB; PostgreSQL 8 KiB); bulk writes may be larger

# clause 5.3.4: minimum query streams by scale factor (the largest row not above SF); 2 below 10.
# The one table: the agent's bench and leases, the server and the policy call tpch_min_streams;
# the web UI's copy (components/DbWorkload/dbWorkload.ts minimumStreams) passes
# testdata/tpch_streams.json, as tests/workload/test_tpch_bound.py does here.
MIN_STREAMS = (
    (100000, 11),
    (30000, 10),
    (10000, 9),
    (3000, 8),
    (1000, 7),
    (300, 6),
    (100, 5),
    (30, 4),
    (10, 3),
)
MIN_STREAMS_BELOW = 2

# What the agent's TPC-H code sets on the programs it runs, and libs/policy's memory bound
# (memory.py tpch_memory) counts: one value for both (libs/policy cannot import the agent).
# DuckDB's memory_limit while it generates the data (agent tpch/data.py), bytes.
TPCH_GENERATOR_MEMORY_LIMIT_BYTES = GiB
# The DBMS's buffer pool when a run names none (agent tpch/dbms.py; bench's --buffer-pool):
# small on purpose, so the data does not fit in the DBMS's own cache and the device is measured.
TPCH_DEFAULT_BUFFER_POOL_BYTES = 16 * MiB

# What a TPC-H run may ask, wherever it is asked: the server's TpchSpec (a 422 naming the field),
# libs/policy's check of a lease job (the host refuses it) and the agent's `bench --preset tpch`
# (exit 2) all read these; vectors testdata/tpch_bounds.json.
# The largest scale factor: about 1 TB of raw data, 6 TB written (WRITE_FACTOR) on the target.
TPCH_SCALE_FACTOR_MAX = 1000.0
# Query streams of the throughput test: each is a DBMS connection, and the private PostgreSQL the
# agent starts allows 100 (agent tpch/dbms.py max_connections).
TPCH_STREAMS_MAX = 64
# The smallest buffer pool a run may name: both DBMSs start with it.
TPCH_BUFFER_POOL_BYTES_MIN = MiB
# The largest: 1 TiB (beyond any host's memory; the host's own memory limit refuses less: libs/policy
# memory.py).
TPCH_BUFFER_POOL_BYTES_MAX = TiB
# Seconds per query (a query past it is cancelled and marked): from 10 ms to a week.
TPCH_QUERY_TIMEOUT_S_MIN = 0.01
TPCH_QUERY_TIMEOUT_S_MAX = 7 * 86400


class TpchFacts(TypedDict):
    mode: str
    threads: int
    max_block_bytes: int
    bytes_written_max: int
    runtime_s_max: None
    dataset_bytes: int
    files: int
    directories: int


def tpch_min_streams(scale_factor: float) -> int:
    """The spec's minimum S for `scale_factor` (5.3.4): the row of the largest scale factor not
    above it; 2 below SF 10 (the spec's SF 1 row; it lists no smaller factor)."""
    for sf, streams in MIN_STREAMS:
        if scale_factor >= sf:
            return streams
    return MIN_STREAMS_BELOW


def tpch_raw_bytes(scale_factor: float) -> int:
    """The spec's table sizes at `scale_factor` (rows × typical row bytes; NATION, REGION fixed)."""
    total = 0.0
    for name, (rows, row_bytes) in TABLES_SF1.items():
        total += rows * row_bytes * (1.0 if name in FIXED_TABLES else scale_factor)
    return int(total)


def tpch_facts(scale_factor: float, streams: int | None = None) -> TpchFacts:
    """A TPC-H run's facts in the shape of the engine's `bounds` (mode "tpch"): `dataset_bytes` =
    the database on disk (raw × DATABASE_FACTOR), `bytes_written_max` = raw × WRITE_FACTOR,
    `runtime_s_max` null (unbounded), `threads` = S query streams + the refresh stream (S null =
    the spec's minimum), `files` the eight tables. ValueError for SF outside (0, 1000]."""
    if not 0 < scale_factor <= TPCH_SCALE_FACTOR_MAX:
        raise ValueError(f"a TPC-H scale factor is above 0 and at most {TPCH_SCALE_FACTOR_MAX:g}")
    s = tpch_min_streams(scale_factor) if streams is None else streams
    if s < 1:
        raise ValueError("a TPC-H run has at least one query stream")
    raw = tpch_raw_bytes(scale_factor)
    return {
        "mode": "tpch",
        "threads": s + 1,
        "max_block_bytes": PAGE_BYTES,
        "bytes_written_max": int(raw * WRITE_FACTOR),
        "runtime_s_max": None,
        "dataset_bytes": int(raw * DATABASE_FACTOR),
        "files": len(TABLES_SF1),
        "directories": 1,
    }
