"""What makes two runs like-for-like: sha256 over canonical JSON of what defines the workload,
optionally with the host's kernel and the target's file system."""

import hashlib
import json
from typing import Any

from backend.workload.schemas import load_spec

# fields that name things but do not change the I/O
_IGNORED_JOB_FIELDS = {"name"}
# fields added after fingerprints were first issued, left out while at their default so a workload
# that does not use them keeps the fingerprint it had before they existed
_LATER_JOB_FIELDS: dict[str, Any] = {"end_fsync": False, "io_size_bytes": None}


def canonical_workload(spec: dict[str, Any]) -> list[dict[str, Any]]:
    """The jobs with every default filled in, so a spec stored before a field existed (or written
    without its default) fingerprints like the same workload written out in full."""
    full = load_spec(spec).model_dump(mode="json")
    return [
        {
            k: v
            for k, v in sorted(job.items())
            if k not in _IGNORED_JOB_FIELDS and (k not in _LATER_JOB_FIELDS or v != _LATER_JOB_FIELDS[k])
        }
        for job in full["jobs"]
    ]


def host_facts(inventory: dict[str, Any] | None, device_facts: dict[str, Any] | None) -> dict[str, Any]:
    inv = inventory or {}
    dev = device_facts or {}
    return {
        "kernel": (inv.get("os") or {}).get("kernel"),
        "fstype": dev.get("fstype"),
        "mount_options": dev.get("mount_options"),
    }


def fingerprint(spec: dict[str, Any], host: dict[str, Any] | None = None) -> str:
    doc: dict[str, Any] = {"jobs": canonical_workload(spec)}
    if host is not None:
        doc["host"] = host
    return hashlib.sha256(json.dumps(doc, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


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
        out = {}
        for i, v in enumerate(obj):
            out.update(_flatten(v, f"{prefix}.{i}" if prefix else str(i)))
        if not obj:
            out[prefix] = []
        return out
    return {prefix: obj}
