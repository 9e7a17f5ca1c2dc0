"""A group run's default prepare timeout, from what its members must lay out (pure, no database).

Each member lays its files out, then takes its idle baseline, then reports ready (ADR 0038); the
group fails when a member is not ready within the prepare timeout of the first one. The first
member may have nothing to lay out (a raw device, a file already there) while another writes its
whole data set to a slow store, so the timeout allows the largest member's layout at a floor rate
plus its idle baseline plus a fixed margin:

    timeout = PREPARE_BASE_S + idle_s + max over members of (layout bytes / LAYOUT_FLOOR_BYTES_PER_S)

capped at MAX_PREPARE_TIMEOUT_S (the longest a member's agent waits at the barrier: the lease gives
it the group's timeout). The figures:
- LAYOUT_FLOOR_BYTES_PER_S, 20 MiB/s: the slowest store a member is expected to lay out on, with
  margin: sequential writes of one HDD are 100+ MB/s, a 1 GbE NAS ~110 MB/s, sshfs on this machine
  ~88 MB/s; 20 MiB/s leaves 4-5x for a busy host or a degraded array.
- PREPARE_BASE_S, 120 s (the old fixed default): the engine's start for the layout and the run's,
  the clock burst, a meter's start, on a loaded host.
- A member's layout bytes: every block job's region times its threads (fio lays out one file per
  clone), times the member's targets (laid out together on one host, counted as if one after the
  other); kinds that make their file sets as the measured workload (PostMark, vdbench, TPC-H) and
  job files lay out nothing before ready and count 0.
"""

from collections.abc import Iterable, Mapping
from typing import Any

from iowatt_workload import DEFAULT_IDLE_S

PREPARE_BASE_S = 120.0
LAYOUT_FLOOR_BYTES_PER_S = 20 * 1024 * 1024
MAX_PREPARE_TIMEOUT_S = 3600.0


def layout_bytes(spec: Mapping[str, Any], targets: int = 1) -> int:
    """What one member lays out before ready for a run's workload spec (RunCreate.workload as
    stored), on `targets` targets."""
    if spec.get("kind", "block") != "block":
        return 0
    jobs = spec.get("jobs")
    total = 0
    for job in jobs if isinstance(jobs, list) else ():
        if not isinstance(job, Mapping):
            continue
        size, threads = job.get("size_bytes"), job.get("numjobs", 1)
        if isinstance(size, int) and isinstance(threads, int) and size > 0 and threads > 0:
            total += size * threads
    return total * max(1, targets)


def default_timeout_s(member_layout_bytes: Iterable[int], idle_s: float | None) -> float:
    """The prepare timeout of a group whose members lay out these many bytes each."""
    largest = max(member_layout_bytes, default=0)
    idle = DEFAULT_IDLE_S if idle_s is None else idle_s
    seconds = PREPARE_BASE_S + idle + largest / LAYOUT_FLOOR_BYTES_PER_S
    return float(min(MAX_PREPARE_TIMEOUT_S, round(seconds)))
