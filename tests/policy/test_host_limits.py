"""Issue 22 (Medium 4): memory and files limits of a host. Defaults derived from the host (half its
RAM; half the target's free inodes, at most 10 million), the host's explicit setting wins, the one
memory bound of libs/policy (memory.py) for block jobs, file workloads and TPC-H."""

from __future__ import annotations

from typing import Any

import pytest
from iowatt_policy import (
    AUTO,
    DBMS_MEMORY,
    DEFAULT_MAX_FILES_CAP,
    LIMIT_FILES,
    LIMIT_MEMORY,
    Limits,
    MeterInfo,
    Policy,
    PolicyError,
    ReportedPolicy,
    Target,
    Violation,
    check_run,
    effective_max_files,
    effective_max_memory,
    file_workload_memory,
    tpch_memory,
)
from iowatt_policy.memory import ENGINE_BASE_BYTES, ENGINE_THREAD_BYTES, TPCH_GENERATOR_BYTES

GiB = 1 << 30
TiB = 1 << 40
RAM = 16 * GiB
VDBENCH = {
    "mode": "vdbench",
    "parameters": "fsd=f,anchor=/x,depth=2,width=100,files=1000000,size=4k\nfwd=w,fsd=f,operation=read,"
    "xfersize=4k,threads=4\nrd=r,fwd=w,elapsed=60,fwdrate=max,format=yes\n",
    "scale": "1",
}
# iowatt-engine --vdbench=VDBENCH --parse-only's bounds (run on this text: 10^10 files)
HUGE_SET = {
    "mode": "vdbench",
    "threads": 4,
    "max_block_bytes": 4096,
    "bytes_written_max": 40960000000000,
    "runtime_s_max": 60.0,
    "dataset_bytes": 40960000000000,
    "files": 10_000_000_000,
    "directories": 10100,
}
SMALL_SET = {**HUGE_SET, "files": 1664, "directories": 101, "dataset_bytes": 1664 * 4096}
TPCH = {"mode": "tpch", "dbms": "postgresql", "scale_factor": "0.01", "buffer_pool_bytes": str(TiB)}
TPCH_FACTS = {"mode": "tpch", "threads": 3, "max_block_bytes": 16384, "bytes_written_max": 1 << 20}


def policy(*, ram: int | None = RAM, inodes: int | None = 1_000_000, **limits: Any) -> ReportedPolicy:
    return ReportedPolicy(
        targets=(Target(path="/data/bench", kind="directory", writable=True, free_inodes=inodes),),
        meters=(MeterInfo("wall", "shelly", "plug"),),
        limits=Limits(**limits),
        allowed_dbms=("postgresql", "mariadb"),
        mem_total_bytes=ram,
    )


def check(job: dict[str, Any], pol: ReportedPolicy, facts: dict[str, Any] | None = None) -> list[Violation]:
    return check_run(
        pol, target_path="/data/bench", engine_job=job, meter=None, destructive=False, file_facts=facts
    )


def block(**options: Any) -> dict[str, Any]:
    return {"global": {}, "jobs": [{"rw": "randread", "size": "1g", **options}]}


def rules(found: list[Violation]) -> list[str]:
    return [v.rule for v in found]


# --- defaults and the host's own setting -----------------------------------------------------------


def test_defaults_derive_from_the_host_and_the_hosts_setting_wins() -> None:
    assert Limits().max_memory_bytes == Limits().max_files == AUTO
    assert effective_max_memory(Limits(), RAM).value == RAM // 2
    assert effective_max_memory(Limits(), None).value is None  # an agent that reported no RAM
    assert effective_max_memory(Limits(max_memory_bytes=GiB), RAM).value == GiB
    assert effective_max_memory(Limits(max_memory_bytes=None), RAM).value is None
    target = Target(path="/d", kind="directory", writable=True, free_inodes=1_000_000)
    assert effective_max_files(Limits(), target).value == 500_000
    huge = Target(path="/d", kind="directory", writable=True, free_inodes=10**12)
    assert effective_max_files(Limits(), huge).value == DEFAULT_MAX_FILES_CAP
    btrfs = Target(path="/d", kind="directory", writable=True, free_inodes=None)  # counts no inodes
    assert effective_max_files(Limits(), btrfs).value == DEFAULT_MAX_FILES_CAP
    assert effective_max_files(Limits(max_files=10**11), target).value == 10**11
    assert effective_max_files(Limits(max_files=None), target).value is None


def test_limits_round_trip_and_refuse_bad_values() -> None:
    pol = Policy(limits=Limits(max_memory_bytes=8 * GiB, max_files=None))
    assert Policy.from_dict(pol.to_dict()) == pol
    assert Policy.from_dict({"limits": {}}).limits.max_memory_bytes == AUTO  # an old policy.json
    reported = policy()
    assert ReportedPolicy.from_dict(reported.to_dict()) == reported
    assert reported.to_dict()["targets"][0]["free_inodes"] == 1_000_000
    for key, value in [
        ("max_memory_bytes", 0),
        ("max_memory_bytes", "AUTO"),
        ("max_memory_bytes", True),
        ("max_files", -1),
        ("max_files", 1.5),
        ("max_threads", "auto"),  # only memory and files have a host-derived default
    ]:
        with pytest.raises(PolicyError) as exc:
            Limits.from_dict({key: value})
        assert exc.value.field == f"limits.{key}"
    with pytest.raises(PolicyError, match="free_inodes"):
        ReportedPolicy.from_dict({"targets": [{"path": "/d", "kind": "directory", "free_inodes": -1}]})
    with pytest.raises(PolicyError, match="mem_total_bytes"):
        ReportedPolicy.from_dict({"mem_total_bytes": "16g"})


# --- the three cases of the issue ------------------------------------------------------------------


def test_a_vdbench_set_of_ten_billion_files_is_refused() -> None:
    found = check(VDBENCH, policy(), HUGE_SET)
    assert rules(found) == [LIMIT_MEMORY, LIMIT_FILES]
    memory, files = found
    assert memory.field == files.field == "workload.vdbench.parameters"
    assert "10000010100 inodes" in files.message and "the host allows 500000" in files.message
    assert "free inodes" in files.message
    assert files.fix == "iowatt-agent targets limits --max-files 10000010100"
    # 9 bytes of state per file: 90 GB, over half of 16 GiB
    needed = ENGINE_BASE_BYTES + 4 * (ENGINE_THREAD_BYTES + 4096) + 9 * 10**10 + 10100
    assert f"needs up to {needed} bytes of memory" in memory.message
    assert f"the host allows {RAM // 2}" in memory.message
    assert memory.fix == f"iowatt-agent targets limits --max-memory {needed}"
    assert memory.reason().startswith("host policy refused this run [limit.memory]: ")
    # the small set passes; the host's own limits win over the defaults
    assert check(VDBENCH, policy(), SMALL_SET) == []
    assert check(VDBENCH, policy(max_files=None, max_memory_bytes=None), HUGE_SET) == []
    assert rules(check(VDBENCH, policy(max_files=1000), SMALL_SET)) == [LIMIT_FILES]
    # even without an inode count (btrfs) the cap holds
    assert rules(check(VDBENCH, policy(inodes=None, max_memory_bytes=None), HUGE_SET)) == [LIMIT_FILES]


def test_a_tpch_buffer_pool_of_one_tib_is_refused_from_the_job_alone() -> None:
    for facts in (None, TPCH_FACTS):  # the agent's first check has no facts yet
        found = check(TPCH, policy(), facts)
        assert rules(found) == [LIMIT_MEMORY]
        assert found[0].field == "workload.tpch.buffer_pool_bytes"
        assert f"the host allows {RAM // 2}" in found[0].message and "postgresql" in found[0].message
    assert check({**TPCH, "buffer_pool_bytes": str(1 << 30)}, policy(), TPCH_FACTS) == []
    assert check(TPCH, policy(max_memory_bytes=2 * TiB), TPCH_FACTS) == []
    # MariaDB: InnoDB's 10 % over its pool
    maria = tpch_memory("mariadb", 4 * GiB, 2)
    assert maria is not None and maria.bytes == int(4 * GiB * 1.1) + DBMS_MEMORY["mariadb"].base_bytes + 3 * (
        DBMS_MEMORY["mariadb"].per_connection_bytes
    )
    # a small pool: the generator (DuckDB, 1 GB) is the larger
    small = tpch_memory("postgresql", 16 << 20, 2)
    assert small is not None and small.bytes == TPCH_GENERATOR_BYTES
    assert rules(check({**TPCH, "buffer_pool_bytes": str(16 << 20)}, policy(ram=2 * GiB))) == [LIMIT_MEMORY]


def test_a_block_job_with_huge_buffers_is_refused() -> None:
    huge = block(numjobs=64, iodepth=256, bs="64m")  # 64 x 256 x 64 MiB = 1 TiB of buffers
    found = check(huge, policy())
    assert rules(found) == [LIMIT_MEMORY]
    assert found[0].field == "workload.jobs.0.bs_bytes"  # the largest factor: 64 MiB = 16384 x 4 KiB
    assert "64 threads x iodepth 256 x 67108864-byte buffers" in found[0].message
    assert found[0].fix.startswith("iowatt-agent targets limits --max-memory ")
    needed = int(found[0].fix.rsplit(" ", 1)[1])
    assert needed == ENGINE_BASE_BYTES + 64 * (256 * (64 << 20) + ENGINE_THREAD_BYTES)
    assert check(huge, policy(max_memory_bytes=needed)) == []
    assert check(huge, policy(ram=None)) == []  # an agent that reported no RAM: its own check decides
    assert check(block(numjobs=16, iodepth=32, bs="4k"), policy()) == []  # CrystalDiskMark's Q32T16


def test_block_memory_follows_stonewall_groups_and_names_the_driving_field() -> None:
    pol = policy(ram=8 * GiB)  # 4 GiB allowed
    one_gib_job = {"rw": "read", "numjobs": "1", "iodepth": "16", "bs": "64m"}  # 1 GiB of buffers
    together = {"global": {}, "jobs": [one_gib_job] * 4}
    assert rules(check(together, pol)) == [LIMIT_MEMORY]
    assert "with 3 more jobs at the same time" in check(together, pol)[0].message
    apart = {"global": {}, "jobs": [one_gib_job] + [{**one_gib_job, "stonewall": "1"}] * 3}
    assert check(apart, pol) == []
    many = block(numjobs=5000, iodepth=1, bs="4k")
    assert check(many, pol)[0].field == "workload.jobs.0.numjobs"
    deep = block(numjobs=1, iodepth=100000, bs="64k")
    assert check(deep, pol)[0].field == "workload.jobs.0.iodepth"


def test_a_random_job_with_mixed_blocks_counts_its_block_map() -> None:
    pol = policy(ram=None, max_memory_bytes=GiB)
    mixed = {"global": {}, "jobs": [{"rw": "randread", "size": str(16 * TiB), "bssplit": "512/50:64k/50"}]}
    found = check(mixed, pol)  # 16 TiB / 512 B / 8 = 4 GiB of map per thread
    assert rules(found) == [LIMIT_MEMORY]
    assert check({"global": {}, "jobs": [{**mixed["jobs"][0], "norandommap": "1"}]}, pol) == []


def test_heap_btree_and_postmark_memory_from_the_engines_bounds() -> None:
    hb = {"mode": "heap-btree", "records": "1000000", "cache_fractions": "0.1", "structure": "heap"}
    facts = {
        "mode": "heap-btree",
        "threads": 1,
        "max_block_bytes": 8192,
        "dataset_bytes": 10 * GiB,
        "files": 1,
    }
    facts |= {"directories": 0, "bytes_written_max": 1 << 30, "runtime_s_max": None}
    heap = file_workload_memory("heap-btree", facts, hb)
    both = file_workload_memory("heap-btree", facts, {**hb, "structure": "both"})
    assert heap is not None and both is not None
    assert heap.bytes < 1.1 * GiB + ENGINE_BASE_BYTES < 10 * GiB < both.bytes  # the B+tree is sized in memory
    assert rules(check({**hb, "structure": "both"}, policy(), facts)) == [LIMIT_MEMORY]
    assert check(hb, policy(), facts) == []
    pm = {"mode": "postmark", "commands": "set number 1000\nrun\nquit\n"}
    pm_facts = {
        "mode": "postmark",
        "threads": 1,
        "max_block_bytes": 4096,
        "bytes_written_max": 1000 * (1 << 20),
    }
    pm_facts |= {"runtime_s_max": None, "dataset_bytes": 500 << 20, "files": 1000, "directories": 0}
    bound = file_workload_memory("postmark", pm_facts, pm)
    assert bound is not None and bound.bytes > 2 * (1 << 20)  # its source buffer: twice the largest file
    assert check(pm, policy(), pm_facts) == []


def test_facts_without_counts_refuse_while_the_limit_is_in_force() -> None:
    partial = {k: v for k, v in SMALL_SET.items() if k not in ("files", "directories")}
    found = check(VDBENCH, policy(), partial)
    assert rules(found) == [LIMIT_MEMORY, LIMIT_FILES]
    assert all("update iowatt-engine" in v.fix for v in found)
    assert check(VDBENCH, policy(max_memory_bytes=None, max_files=None), partial) == []


def test_an_old_agents_report_is_still_read() -> None:
    """An agent older than issue 22 reports no memory/files limits, no RAM and no inodes: the
    server reads it (defaults "auto"), checks files against the cap alone and leaves memory to
    the agent's own check (the authority)."""
    old = {
        "targets": [{"path": "/data/bench", "kind": "directory", "writable": True, "destructive": False}],
        "meters": [],
        "default_meter": None,
        "limits": {"max_threads": 64, "max_iodepth": 256, "max_bs_bytes": 1 << 26},
        "allowed_dbms": ["postgresql"],
    }
    reported = ReportedPolicy.from_dict(old)
    assert reported.mem_total_bytes is None and reported.limits.max_files == AUTO
    assert check(TPCH, reported, TPCH_FACTS) == []
    assert rules(check(VDBENCH, reported, HUGE_SET)) == [LIMIT_FILES]


# --- fuzzed: the reported policy and the engine's facts come from outside ---------------------------

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats() | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=20), inner, max_size=4),
    max_leaves=12,
)
LIMIT_VALUE = (
    st.none() | st.just("auto") | st.integers(-5, 2**64) | st.floats() | st.text(max_size=6) | st.booleans()
)


@settings(max_examples=300, deadline=None)
@given(
    limits=st.dictionaries(st.sampled_from(["max_memory_bytes", "max_files", "max_threads"]), LIMIT_VALUE),
    free=st.none() | st.integers(-5, 2**64) | st.text(max_size=4),
    ram=st.none() | st.integers(-5, 2**64) | st.floats(),
)
def test_a_reported_policy_with_any_values_is_read_or_refused_by_field(
    limits: Any, free: Any, ram: Any
) -> None:
    doc = {
        "targets": [{"path": "/data/bench", "kind": "directory", "free_inodes": free}],
        "limits": limits,
        "mem_total_bytes": ram,
        "allowed_dbms": ["postgresql"],
    }
    try:
        reported = ReportedPolicy.from_dict(doc)
    except PolicyError as exc:
        assert exc.field.split(".")[0] in ("limits", "targets", "policy", "mem_total_bytes")
        return
    assert ReportedPolicy.from_dict(reported.to_dict()) == reported
    for found in (
        check(VDBENCH, reported, SMALL_SET),
        check(TPCH, reported),
        check(block(numjobs=4), reported),
    ):
        assert all(v.rule in (LIMIT_MEMORY, LIMIT_FILES, "limit.threads") for v in found), found


@settings(max_examples=300, deadline=None)
@given(
    facts=st.dictionaries(st.sampled_from(sorted(HUGE_SET)), JSON),
    job=st.dictionaries(st.text(max_size=8), JSON),
)
def test_any_facts_and_job_values_give_a_bound_or_none_never_an_exception(facts: Any, job: Any) -> None:
    for mode in ("vdbench", "postmark", "heap-btree"):
        bound = file_workload_memory(mode, facts, job)
        assert bound is None or bound.bytes > 0
    found = check(VDBENCH, policy(), {**SMALL_SET, **facts})
    assert all(isinstance(v, Violation) for v in found)
