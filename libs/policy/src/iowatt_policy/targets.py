"""Runs on several targets of one host at once (multi-target runs).

MAX_TARGETS is the one limit on how many targets one run may name: the server's request schema
and the agent's lease check both read it here.

The targets of such a run load the host at the same time, so the host-wide limits are shared
between them: `shared_policy(policy, n)` is the policy each target is judged by, with the
threads, bytes-written and memory limits divided by n (rounded down, at least 1). The per-job
limits (iodepth, block size), the runtime (the targets run side by side, not one after the
other) and the files limit (each target's own file system) are unchanged.
"""

from dataclasses import replace

from iowatt_policy.model import Limits, ReportedPolicy, effective_max_memory

MAX_TARGETS = 8


def _share(value: int | None, n: int) -> int | None:
    return None if value is None else max(1, value // n)


def shared_policy(policy: ReportedPolicy, n: int) -> ReportedPolicy:
    """The policy one of `n` targets that run together is judged by (n = 1: `policy` itself)."""
    if n <= 1:
        return policy
    limits: Limits = policy.limits
    memory = effective_max_memory(limits, policy.mem_total_bytes).value
    shared = replace(
        limits,
        max_threads=_share(limits.max_threads, n),
        max_bytes_written=_share(limits.max_bytes_written, n),
        # "auto" is MemTotal's share: divided as the value it stands for (unknown RAM: unchecked)
        max_memory_bytes=_share(memory, n) if memory is not None else limits.max_memory_bytes,
    )
    return replace(policy, limits=shared)
