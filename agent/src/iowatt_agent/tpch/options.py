"""A TPC-H run's options, as `bench --preset tpch` parses them (bench.py) and a server's lease
states them (lease.py): what the coordinator (run.py) and the worker (worker.py, steps.py) read."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

DEFAULT_QUERY_TIMEOUT_S = 3600.0
# a run's directory in the target: iowatt-tpch-<random> for bench, iowatt-tpch-<run id> for a lease
RUN_DIR_PREFIX = "iowatt-tpch-"
# every private DBMS's run directory (TPC-H's; the InnoDB flushing matrix's, iowatt_agent.innodb):
# the clean-up helpers (`isolation remove`, `lease.remove_instance`) remove only these
DBMS_RUN_DIR_PREFIXES = (RUN_DIR_PREFIX, "iowatt-innodb-")


@dataclass
class TpchOptions:
    dbms: str
    scale_factor: float
    streams: int
    query_timeout_s: float
    buffer_pool_bytes: int
    target: Path
