"""What makes two runs like-for-like: sha256 over canonical JSON of what defines the workload,
optionally with the host's kernel and the target's file system. The rule (which job fields count,
the canonical JSON) is libs/workload's `iowatt_workload.identity`, shared with the web UI through
test vectors; this module fills in a stored spec's defaults first and names the host facts."""

import json
from typing import Any

from iowatt_workload import canonical_jobs, workload_fingerprint

from backend.agent.schemas import Inventory
from backend.workload.schemas import load_spec


def canonical_workload(spec: dict[str, Any]) -> list[dict[str, Any]]:
    """The jobs with every default filled in, so a spec stored before a field existed (or written
    without its default) fingerprints like the same workload written out in full."""
    return canonical_jobs(load_spec(spec).identity_jobs())


def host_facts(inventory: dict[str, Any] | None, device_facts: dict[str, Any] | None) -> dict[str, Any]:
    inv = Inventory.read(inventory)  # the stored inventory, read by its one schema
    dev = device_facts or {}
    return {
        "kernel": inv.os.kernel if inv is not None and inv.os is not None else None,
        "fstype": dev.get("fstype"),
        "mount_options": dev.get("mount_options"),
    }


def fingerprint(spec: dict[str, Any], host: dict[str, Any] | None = None) -> str:
    return workload_fingerprint(load_spec(spec).identity_jobs(), host)


def differences(docs: dict[str, dict[str, Any]]) -> list[tuple[str, dict[str, Any]]]:
    """Fields whose values differ across runs: [(dotted field, {run id: value})]."""
    flat = {rid: _flatten(doc) for rid, doc in docs.items()}
    keys = sorted({k for f in flat.values() for k in f})
    out = []
    for k in keys:
        values = {rid: f.get(k) for rid, f in flat.items()}
        if len({json.dumps(v, sort_keys=True) for v in values.values()}) > 1:
            out.append((k, values))
    return out


def _flatten(obj: Any, prefix: str = "") -> dict[str, Any]:
    if isinstance(obj, dict):
        out: dict[str, Any] = {}
        for k, v in obj.items():
            out.update(_flatten(v, f"{prefix}.{k}" if prefix else str(k)))
        return out
    if isinstance(obj, list):
        if obj and all(v is None or isinstance(v, str | int | float | bool) for v in obj):
            # a list of plain values is one field ("iodepth,numjobs"), not one row per place: an
            # imported job's `unstated` list otherwise read as unstated.0, unstated.1, ...
            return {prefix: ",".join(str(v) for v in obj)}
        out = {}
        for i, v in enumerate(obj):
            out.update(_flatten(v, f"{prefix}.{i}" if prefix else str(i)))
        if not obj:
            out[prefix] = []
        return out
    return {prefix: obj}
