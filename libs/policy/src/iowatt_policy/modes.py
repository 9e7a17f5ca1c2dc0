"""The lease job of each workload kind that is not a block job file, as this library checks it:
one record per mode (ADR 0027). The kinds and their modes are libs/workload's list
(`iowatt_workload.KIND_MODES`); this module is refused at import when its modes are not exactly
those of that list, so a kind added there must say here what its lease job may contain.
"""

from __future__ import annotations

from dataclasses import dataclass

from iowatt_workload import KIND_MODES, WorkloadKind


@dataclass(frozen=True)
class JobMode:
    """What a lease job of one mode may contain and which RunCreate fields its violations name."""

    mode: str  # the lease job's "mode"
    kind: WorkloadKind  # the workload kind (WorkloadSpec.kind) whose job it is
    # the job's keys -> (the RunCreate field it comes from, required)
    keys: dict[str, tuple[str, bool]]
    limit_fields: tuple[str, str, str]  # the fields a limit's violation names: (main, size, time)
    text_values: bool  # every value is the engine's own text (PostMark, vdbench), never a JSON number
    engine: bool  # the engine runs it in a directory target (else an agent's child: TPC-H's, PTS's)
    # once the engine has parsed it, a block job file (any target kind; ADR 0029): check_run judges
    # the parse as a block job (jobfile.block_job), not as a file set
    block: bool = False


POSTMARK = JobMode(
    mode="postmark",
    kind="postmark",
    # the server's WorkloadSpec.postmark is structured, rendered to `commands`
    keys={"commands": ("workload.postmark", True)},
    limit_fields=("workload.postmark", "workload.postmark", "workload.postmark"),
    text_values=True,
    engine=True,
)
VDBENCH = JobMode(
    mode="vdbench",
    kind="vdbench",
    keys={
        "parameters": ("workload.vdbench.parameters", True),
        "scale": ("workload.vdbench.scale", True),
        "elapsed": ("workload.vdbench.elapsed_s", False),
    },
    limit_fields=("workload.vdbench.parameters", "workload.vdbench.scale", "workload.vdbench.elapsed_s"),
    text_values=True,
    engine=True,
)
HEAP_BTREE = JobMode(
    mode="heap-btree",
    kind="heap_btree",
    keys={
        "records": ("workload.heap_btree.records", True),
        "queries": ("workload.heap_btree.queries", False),
        "cache_fractions": ("workload.heap_btree.cache_fractions", False),
        "randseed": ("workload.heap_btree.randseed", False),
        "structure": ("workload.heap_btree.structure", False),
    },
    limit_fields=("workload.heap_btree.records",) * 3,
    text_values=False,
    engine=True,
)
TPCH = JobMode(
    mode="tpch",
    kind="tpch",
    keys={
        "dbms": ("workload.tpch.dbms", True),
        "scale_factor": ("workload.tpch.scale_factor", True),
        "streams": ("workload.tpch.streams", False),
        "query_timeout_s": ("workload.tpch.query_timeout_s", False),
        "buffer_pool_bytes": ("workload.tpch.buffer_pool_bytes", False),
    },
    limit_fields=("workload.tpch.scale_factor",) * 3,
    text_values=False,
    engine=False,
)

JOBFILE = JobMode(
    mode="jobfile",
    kind="jobfile",
    # the fio job file's text; the engine's parse of it (check_run's file_facts) is a block job
    keys={"text": ("workload.jobfile.text", True)},
    limit_fields=("workload.jobfile.text",) * 3,
    text_values=True,
    engine=True,
    block=True,
)

PTS = JobMode(
    mode="pts",
    kind="pts",
    # a SNIA PTS run (ADR 0046): libs/workload's pts.parse_job reads these; check_run judges the
    # engine jobs the run makes (pts.planned_jobs) as the block jobs they are
    keys={
        "test": ("workload.pts.test", True),
        "profile": ("workload.pts.profile", False),
        "purge": ("workload.pts.purge", False),
        "threads": ("workload.pts.threads", False),
        "iodepth": ("workload.pts.iodepth", False),
        "ioengine": ("workload.pts.ioengine", False),
        "round_s": ("workload.pts.round_s", False),
        "capacity_fraction": ("workload.pts.capacity_fraction", False),
        "max_rounds": ("workload.pts.max_rounds", False),
        "block_sizes": ("workload.pts.block_sizes", False),
        "mixes": ("workload.pts.mixes", False),
        "burst_s": ("workload.pts.burst_s", False),
        "bursts": ("workload.pts.bursts", False),
        "wait_states": ("workload.pts.wait_states", False),
    },
    limit_fields=("workload.pts", "workload.pts", "workload.pts.round_s"),
    text_values=False,
    engine=False,  # the agent's child runs it, each round an engine block job on a device target
)

INNODB_FLUSH = JobMode(
    mode="innodb-flush",
    kind="innodb_flush",
    # the InnoDB flushing-policy matrix (libs/workload innodb.py): a private MariaDB, as TPC-H's,
    # under sysbench; every value an integer in its bound, the settings "F:S" pairs
    keys={
        "settings": ("workload.innodb_flush.settings", True),
        "tables": ("workload.innodb_flush.tables", True),
        "table_size": ("workload.innodb_flush.table_size", True),
        "threads": ("workload.innodb_flush.threads", True),
        "seconds": ("workload.innodb_flush.seconds", True),
        "warmup_s": ("workload.innodb_flush.warmup_s", False),
        "buffer_pool_bytes": ("workload.innodb_flush.buffer_pool_bytes", False),
    },
    limit_fields=("workload.innodb_flush.threads", "workload.innodb_flush", "workload.innodb_flush.seconds"),
    text_values=False,
    engine=False,  # the agent's child: a private MariaDB and sysbench, as the DBMS's user
)

# every mode once, engine modes first (the order messages list them in)
MODES: dict[str, JobMode] = {
    m.mode: m for m in (POSTMARK, VDBENCH, HEAP_BTREE, JOBFILE, PTS, TPCH, INNODB_FLUSH)
}
_EXPECTED = {kind: mode for kind, mode in KIND_MODES.items() if mode is not None}
if {m.kind: m.mode for m in MODES.values()} != _EXPECTED:  # pragma: no cover - a kind added on one side
    raise RuntimeError(f"libs/policy's job modes {sorted(MODES)} are not libs/workload's {_EXPECTED}")
