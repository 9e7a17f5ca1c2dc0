"""A TPC-H run's options, as `bench --preset tpch` parses them (bench.py) and a server's lease
states them (lease.py): what the coordinator (run.py) and the worker (worker.py, steps.py) read."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

DEFAULT_QUERY_TIMEOUT_S = 3600.0
# a run's directory in the target: iowatt-tpch-<random> for bench, iowatt-tpch-<run id> for a lease
RUN_DIR_PREFIX = "iowatt-tpch-"


@dataclass
class TpchOptions:
    dbms: str
    scale_factor: float
    streams: int
    query_timeout_s: float
    buffer_pool_bytes: int
    target: Path
