"""Passes and best-of-passes (CrystalDiskMark-style workloads): the one rule.

A multi-pass workload names its jobs `TEST.pK` (K = 0, 1, ...); the first `discard` passes warm
up and are not counted. Per test, over the measured passes:

- direction: `read` when only reads moved I/O, `write` when only writes did, `mixed` when both
  did (a rw/randrw test). It is read from what the engine measured, not from job names.
- the figure ranked: the bandwidth of that direction; for `mixed`, read + write bandwidth (and
  IOPS). Chosen because CrystalDiskMark reports the best pass per test as the best read pass of
  a read test and the best write pass of a write test, and its Mix test reports one combined
  rate; ranking a mixed pass by one side would crown a pass that starved the other side.
- best: the pass with the highest bandwidth (the earliest on a tie); its IOPS are reported with
  it (not the highest IOPS of any pass), so best bandwidth and best IOPS come from one pass.
- median of bandwidth and of IOPS; spread = (max - min) / median of bandwidth, in percent
  (0 when the median is 0).

Test vectors shared with the frontend: libs/workload/testdata/best_of.json.
"""

from __future__ import annotations

import re
import statistics
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

Direction = Literal["read", "write", "mixed"]

PASS_SUFFIX = re.compile(r"^(?P<test>.+)\.p(?P<k>\d+)$")


def pass_of(job_name: str) -> tuple[str, int] | None:
    """('SEQ1M_Q8T1-read', 2) for 'SEQ1M_Q8T1-read.p2'; None for a job outside a pass scheme."""
    m = PASS_SUFFIX.match(job_name)
    return (m.group("test"), int(m.group("k"))) if m else None


def pass_name(test: str, k: int) -> str:
    """The job name of pass `k` of `test` (the inverse of pass_of)."""
    return f"{test}.p{k}"


@dataclass(frozen=True)
class PassResult:
    """One job's measured figures, whatever stored them (an engine document, a result row)."""

    name: str
    read_bw_bytes: float = 0.0
    read_iops: float = 0.0
    read_ios: int = 0
    write_bw_bytes: float = 0.0
    write_iops: float = 0.0
    write_ios: int = 0


@dataclass(frozen=True)
class BestOf:
    """A test's measured passes and the pass CrystalDiskMark would show."""

    test: str
    direction: Direction
    passes: int  # measured passes
    discarded: int  # passes run but not counted
    bw_bytes: tuple[float, ...]  # per measured pass, in pass order, B/s
    iops: tuple[float, ...]
    best_index: int  # into bw_bytes / iops
    best_job: str
    best_bw_bytes: float
    best_iops: float
    median_bw_bytes: float
    median_iops: float
    spread_pct: float


def is_multi_pass(passes: int, discard: int) -> bool:
    """Whether a workload's jobs follow the pass scheme (more than one pass, or any discarded)."""
    return passes > 1 or discard > 0


def direction_of(results: Iterable[PassResult]) -> Direction:
    items = list(results)
    reads = any(r.read_ios > 0 for r in items)
    writes = any(r.write_ios > 0 for r in items)
    if reads and writes:
        return "mixed"
    return "write" if writes else "read"


def best_of_passes(results: Iterable[PassResult], *, passes: int, discard: int) -> list[BestOf]:
    """One BestOf per test, in the order tests first appear; [] for a single-pass workload.
    Jobs outside the pass scheme and tests without a measured pass are left out."""
    if not is_multi_pass(passes, discard):
        return []
    tests: dict[str, list[tuple[int, PassResult]]] = {}
    for r in results:
        p = pass_of(r.name)
        if p is not None:
            tests.setdefault(p[0], []).append((p[1], r))
    out = []
    for test, items in tests.items():
        ordered = sorted(items, key=lambda x: x[0])
        measured = [r for k, r in ordered if k >= discard]
        if not measured:
            continue
        direction = direction_of(measured)
        if direction == "read":
            bws = [r.read_bw_bytes for r in measured]
            iops = [r.read_iops for r in measured]
        elif direction == "write":
            bws = [r.write_bw_bytes for r in measured]
            iops = [r.write_iops for r in measured]
        else:
            bws = [r.read_bw_bytes + r.write_bw_bytes for r in measured]
            iops = [r.read_iops + r.write_iops for r in measured]
        best = max(range(len(measured)), key=lambda i: bws[i])
        med = statistics.median(bws)
        out.append(
            BestOf(
                test=test,
                direction=direction,
                passes=len(measured),
                discarded=len(ordered) - len(measured),
                bw_bytes=tuple(bws),
                iops=tuple(iops),
                best_index=best,
                best_job=measured[best].name,
                best_bw_bytes=bws[best],
                best_iops=iops[best],
                median_bw_bytes=float(med),
                median_iops=float(statistics.median(iops)),
                spread_pct=(max(bws) - min(bws)) / med * 100 if med else 0.0,
            )
        )
    return out
