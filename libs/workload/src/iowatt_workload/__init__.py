"""iowatt's workload rules, shared by the agent and the server (docs/adr/0013-workload-rules-library.md).
Standard library only. Every rule here has one implementation in Python; where the web UI needs
the same rule it has one TypeScript module, and both pass the vectors in libs/workload/testdata/.

Sizes (`sizes.py`, vectors sizes.json; frontend/src/lib/format.ts parseSize/formatSize)
    parse_size(text, kb_base=1024) -> bytes      fio's syntax, as the engine reads it
    format_size(bytes) -> "4k"                   shortest spelling parse_size reads back exactly
    KiB, MiB, GiB, TiB, U64_MAX
Passes (`passes.py`, vectors best_of.json; the UI shows the server's PassSummary)
    pass_of(name) -> (test, k) | None, pass_name(test, k), is_multi_pass(passes, discard)
    PassResult(name, read_bw_bytes, read_iops, read_ios, write_bw_bytes, write_iops, write_ios)
    best_of_passes(results, passes=, discard=) -> [BestOf]   CrystalDiskMark's best-of
Identity (`identity.py`, vectors identity.json; frontend/src/lib/workload.ts workloadKey)
    canonical_jobs(jobs), workload_fingerprint(jobs, host=None) -> sha256 hex
TPC-H bound (`tpch.py`; the server sizes runs with it, the agent checks leases with it)
    TPCH_LABEL                                   what every TPC-H-derived run and result says of itself
    tpch_facts(scale_factor, streams=None) -> bounds-shaped dict (mode "tpch")
    tpch_min_streams(scale_factor) (clause 5.3.4; vectors tpch_streams.json, the UI's copy
        components/DbWorkload/dbWorkload.ts minimumStreams), tpch_raw_bytes(scale_factor)
    TPCH_DEFAULT_BUFFER_POOL_BYTES, TPCH_GENERATOR_MEMORY_LIMIT_BYTES   what the agent sets on the
        DBMS and the generator, and libs/policy's memory bound counts
    TPCH_SCALE_FACTOR_MAX, TPCH_STREAMS_MAX, TPCH_BUFFER_POOL_BYTES_MIN/_MAX,
    TPCH_QUERY_TIMEOUT_S_MIN/_MAX   what a run may ask (the
        server's TpchSpec, libs/policy's lease check, bench --preset tpch; vectors tpch_bounds.json)
Kinds (`kinds.py`, vectors kinds.json; ADR 0027: every tier's registry of kinds is checked against it)
    WorkloadKind, WORKLOAD_KINDS, KIND_MODES (kind -> lease job mode), kind_of_mode(mode)
Defaults (`defaults.py`; DEFAULT_IDLE_S and TPCH_LABEL in vectors constants.json, the UI's copies
frontend/src/lib/workload.ts, components/DbWorkload/dbWorkload.ts)
    DEFAULT_IDLE_S                                idle baseline before and after a run, seconds
    MIN_RUNTIME_S, TIMER_SLACK_S                  the short-run rule (vectors constants.json; the
        server's validity flag, the UI's job default and per-job mark, frontend/src/lib/workload.ts)
"""

from iowatt_workload.defaults import DEFAULT_IDLE_S, MIN_RUNTIME_S, TIMER_SLACK_S
from iowatt_workload.identity import (
    IGNORED_JOB_FIELDS,
    LATER_JOB_FIELDS,
    canonical_jobs,
    workload_fingerprint,
)
from iowatt_workload.kinds import KIND_MODES, WORKLOAD_KINDS, WorkloadKind, kind_of_mode
from iowatt_workload.passes import (
    PASS_SUFFIX,
    BestOf,
    Direction,
    PassResult,
    best_of_passes,
    direction_of,
    is_multi_pass,
    pass_name,
    pass_of,
)
from iowatt_workload.sizes import U64_MAX, GiB, KiB, MiB, TiB, format_size, parse_size
from iowatt_workload.tpch import (
    TPCH_BUFFER_POOL_BYTES_MAX,
    TPCH_BUFFER_POOL_BYTES_MIN,
    TPCH_DEFAULT_BUFFER_POOL_BYTES,
    TPCH_GENERATOR_MEMORY_LIMIT_BYTES,
    TPCH_LABEL,
    TPCH_QUERY_TIMEOUT_S_MAX,
    TPCH_QUERY_TIMEOUT_S_MIN,
    TPCH_SCALE_FACTOR_MAX,
    TPCH_STREAMS_MAX,
    TpchFacts,
    tpch_facts,
    tpch_min_streams,
    tpch_raw_bytes,
)

__all__ = [
    "DEFAULT_IDLE_S",
    "MIN_RUNTIME_S",
    "TIMER_SLACK_S",
    "KIND_MODES",
    "WORKLOAD_KINDS",
    "WorkloadKind",
    "kind_of_mode",
    "GiB",
    "IGNORED_JOB_FIELDS",
    "KiB",
    "LATER_JOB_FIELDS",
    "MiB",
    "PASS_SUFFIX",
    "TPCH_BUFFER_POOL_BYTES_MAX",
    "TPCH_BUFFER_POOL_BYTES_MIN",
    "TPCH_DEFAULT_BUFFER_POOL_BYTES",
    "TPCH_GENERATOR_MEMORY_LIMIT_BYTES",
    "TPCH_LABEL",
    "TPCH_QUERY_TIMEOUT_S_MAX",
    "TPCH_QUERY_TIMEOUT_S_MIN",
    "TPCH_SCALE_FACTOR_MAX",
    "TPCH_STREAMS_MAX",
    "TiB",
    "U64_MAX",
    "BestOf",
    "Direction",
    "PassResult",
    "best_of_passes",
    "canonical_jobs",
    "direction_of",
    "format_size",
    "is_multi_pass",
    "parse_size",
    "pass_name",
    "pass_of",
    "workload_fingerprint",
    "TpchFacts",
    "tpch_facts",
    "tpch_min_streams",
    "tpch_raw_bytes",
]
