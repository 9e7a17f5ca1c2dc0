"""Workload identity: when two runs ran "the same" workload (the compare's like-for-like check).

Two workloads are the same when their jobs, in order, are equal once
- job names are left out (they name things but do not change the I/O), and
- fields added after identities were first issued (`LATER_JOB_FIELDS`) are left out while at
  their default, so a workload that does not use them keeps the identity it had before.

The jobs given must carry every field with its default filled in (the server's stored spec read
through its schema; the API's RunRead.workload). The fingerprint is sha256 over canonical JSON
(sorted keys, no spaces) of `{"jobs": [...]}` plus, optionally, facts of the host. The frontend
groups runs with the same rule (frontend/src/lib/workload.ts `workloadKey`); both pass
libs/workload/testdata/identity.json.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from typing import Any

IGNORED_JOB_FIELDS = frozenset({"name"})
LATER_JOB_FIELDS: Mapping[str, Any] = {
    "end_fsync": False,
    "io_size_bytes": None,
    # spec version 2's engine options
    "bssplit": None,
    "rate_iops": None,
    "random_distribution": "random",
    "fsync_every": 0,
    "sync": False,
    "randseed": None,
    "loops": 1,
}


def canonical_jobs(jobs: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The jobs as identity sees them (keys sorted, names and unused later fields left out)."""
    return [
        {
            k: v
            for k, v in sorted(job.items())
            if k not in IGNORED_JOB_FIELDS and (k not in LATER_JOB_FIELDS or v != LATER_JOB_FIELDS[k])
        }
        for job in jobs
    ]


def workload_fingerprint(jobs: Iterable[Mapping[str, Any]], host: Mapping[str, Any] | None = None) -> str:
    """sha256 hex of the canonical jobs (and the host facts, when given)."""
    doc: dict[str, Any] = {"jobs": canonical_jobs(jobs)}
    if host is not None:
        doc["host"] = dict(host)
    return hashlib.sha256(json.dumps(doc, sort_keys=True, separators=(",", ":")).encode()).hexdigest()
