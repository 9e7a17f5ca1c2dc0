"""The workload kinds: the one list every tier's registry is checked against (ADR 0027).

A kind is what a workload *is* (`WorkloadSpec.kind` on the wire and in stored specs); each tier
has one module per kind: the server's `backend/workload/kinds/<kind>.py` (parameters, validation,
lease job, timeout, scaling, identity), the agent's `iowatt_agent/kinds/<kind>.py` (program,
arguments, phases, kill grace, failure reasons). Both registries are refused at import when they
do not list exactly these kinds; the web UI's test reads the same list from
libs/workload/testdata/kinds.json.

Spellings: the kind is `heap_btree` everywhere (an identifier: a field name of the spec, a key
in Python); the engine's mode and flag are `heap-btree` (`--heap-btree`, a lease job's `"mode"`);
`heap-btree` is also a preset's name. Presets (`postmark-*`, `vdbench-*`, `tpch-smoke`, ...) are
named workloads of a kind, never kinds. A block workload's lease job has no mode (it is the
engine's JSON job file). A `jobfile` workload is a fio job file's text (ADR 0029): its lease job
is `{"mode": "jobfile", "text": ...}`, which the agent turns into a block job file from the
engine's own parse of it. A `pts` workload is a SNIA PTS run on a raw device (ADR 0046): its lease
job `{"mode": "pts", ...}` is run by the agent's child, which runs each round as an engine block job
(`pts.py` owns the rule, the matrices and the jobs). An `innodb_flush` workload is the InnoDB
flushing-policy matrix on a private MariaDB (`innodb.py`): its lease job `{"mode": "innodb-flush",
...}` is run by the agent's child.
"""

from __future__ import annotations

from typing import Final, Literal

WorkloadKind = Literal["block", "postmark", "vdbench", "tpch", "heap_btree", "jobfile", "pts", "innodb_flush"]

# every kind once, in the order the UI lists them
WORKLOAD_KINDS: Final[tuple[WorkloadKind, ...]] = (
    "block",
    "postmark",
    "vdbench",
    "tpch",
    "heap_btree",
    "jobfile",
    "pts",
    "innodb_flush",
)

# a kind's lease job "mode" (None: a block job file, which has none)
KIND_MODES: Final[dict[WorkloadKind, str | None]] = {
    "block": None,
    "postmark": "postmark",
    "vdbench": "vdbench",
    "tpch": "tpch",
    "heap_btree": "heap-btree",
    "jobfile": "jobfile",
    "pts": "pts",
    "innodb_flush": "innodb-flush",
}


def kind_of_mode(mode: str | None) -> WorkloadKind | None:
    """The kind whose lease job has `mode` (None: a block job), or None for a mode no kind has."""
    for kind, m in KIND_MODES.items():
        if m == mode:
            return kind
    return None
