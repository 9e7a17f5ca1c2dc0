"""The workload kinds on the server, one module each (ADR 0027; docs/architecture.md "Adding a
workload kind"). `KINDS` lists every kind once; it is refused at import when it does not list
exactly libs/workload's WORKLOAD_KINDS, the list the agent's registry is held to too."""

from __future__ import annotations

from iowatt_workload import WORKLOAD_KINDS, WorkloadKind

from backend.workload.kinds.base import FileFacts, Kind, ParseOnly
from backend.workload.kinds.block import Block
from backend.workload.kinds.heap_btree import HeapBtree
from backend.workload.kinds.innodb_flush import InnodbFlush
from backend.workload.kinds.jobfile import Jobfile
from backend.workload.kinds.postmark import Postmark
from backend.workload.kinds.pts import Pts
from backend.workload.kinds.tpch import Tpch
from backend.workload.kinds.vdbench import Vdbench

KINDS: dict[WorkloadKind, Kind] = {
    k.name: k for k in (Block(), Postmark(), Vdbench(), Tpch(), HeapBtree(), Jobfile(), Pts(), InnodbFlush())
}
if tuple(KINDS) != WORKLOAD_KINDS:  # pragma: no cover - a kind added on one side only
    raise RuntimeError(f"the server's workload kinds {tuple(KINDS)} are not libs/workload's {WORKLOAD_KINDS}")

# the kinds with one set of parameters each, in the spec's field named after the kind (every kind
# but block: the file and database kinds, a fio job file's text, a SNIA PTS run's)
PARAMETER_KINDS: tuple[WorkloadKind, ...] = tuple(name for name, k in KINDS.items() if k.is_file)


def kind(name: str) -> Kind:
    """The kind named `name` (KeyError for a name no kind has)."""
    return KINDS[name]  # type: ignore[index]


__all__ = ["KINDS", "PARAMETER_KINDS", "FileFacts", "Kind", "ParseOnly", "kind"]
