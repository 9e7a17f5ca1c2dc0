"""Reads of this host's own files that both the inventory and the host policy need (the policy
must not import the inventory: the inventory lists the workload kinds, whose runners use the
policy; tests/agent/test_import_cycles.py). Nothing here imports the agent's other modules."""

from __future__ import annotations

import hashlib
from pathlib import Path


def _read(path: Path) -> str | None:
    try:
        return path.read_text(errors="replace").strip()
    except OSError:
        return None


def _clean(value: str | None) -> str | None:
    if value is None:
        return None
    value = " ".join(value.split())
    return value or None


def hash_serial(serial: str | None) -> str | None:
    serial = _clean(serial)
    if not serial:
        return None
    return hashlib.sha256(serial.encode()).hexdigest()


def read_mem_bytes(root: Path = Path("/")) -> int:
    for line in (_read(root / "proc" / "meminfo") or "").splitlines():
        if line.startswith("MemTotal:"):
            return int(line.split()[1]) * 1024
    return 0
