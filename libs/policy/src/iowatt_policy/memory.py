"""The one memory bound of a run: how much memory a run makes the host hold, from what
its job states, never from the server's word. `check_run` judges it against the host's
`max_memory_bytes` (libs/policy, so the server at queue time and the agent on every lease use
the same numbers). Each term is an upper estimate of the allocations of the program that runs;
the constants below say where each comes from (agent/engine/src, the DBMSs' documentation).

block job      per stonewall group (its jobs run together; groups one after another): the sum
               over its jobs of numjobs x (iodepth x the largest block, rounded up to 4 KiB: the
               engine's request buffers, worker.c) + ENGINE_THREAD_BYTES, plus a random job's
               block map (size / smallest block / 8 bytes per thread, when blocks of several sizes
               are mixed: worker.c) and ENGINE_WRITE_POOL_BYTES + the largest block per writing
               job (job.c), plus a verify job's log of its writes when it has several files
               per clone (VERIFY_LOG_ENTRY_BYTES per smallest block of the clone's bytes, not
               time-based: verify.c); the largest group, plus ENGINE_BASE_BYTES.
postmark       ENGINE_BASE_BYTES + one thread + 2 x number slots of POSTMARK_SLOT_BYTES
               (postmark.c's table) + 2 x the largest file size (its source buffer; at most
               bytes_written_max / number + 1, from the engine's bounds) + the largest transfer.
vdbench        ENGINE_BASE_BYTES + threads x (ENGINE_THREAD_BYTES + the largest transfer) +
               files x VDBENCH_FILE_BYTES + directories x VDBENCH_DIR_BYTES (fileset.c's per-file
               state and size, per-directory state: a set of 10^10 files is 90 GB of RAM).
heap-btree     ENGINE_BASE_BYTES + the buffer pool: dataset_bytes x the largest cache fraction
               (a heap-only sweep), or dataset_bytes when a B+tree is built (the engine sizes it
               by building it in memory first, heapbtree.c), x (1 + frame overhead), + records / 8
               (the seen-bitmap of the queries).
tpch           the larger of the data generator (DuckDB, tpch/data.py: memory_limit 1 GiB plus
               its own overhead: TPCH_GENERATOR_BYTES) and the DBMS: buffer_pool_bytes (+10 % for
               InnoDB's control blocks) + the DBMS's base + (streams + 1) connections x its
               per-connection memory (the DBMS_MEMORY table).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from iowatt_workload import (
    TPCH_DEFAULT_BUFFER_POOL_BYTES,
    TPCH_GENERATOR_MEMORY_LIMIT_BYTES,
    GiB,
    KiB,
    MiB,
)

# the engine process: its binary, libc, the job table, per-interval records and histograms
# (agent/engine/src: main.c, report.c; a few MiB measured as RSS of a null-engine run)
ENGINE_BASE_BYTES = 16 * MiB
# per engine thread: histograms (2 x 1856 x 8 B per direction, interval histograms), request
# tables, the io_uring/libaio rings of the depth, and the touched part of the thread's stack
ENGINE_THREAD_BYTES = 1 * MiB
# a writing job's random-data pool (job.c: 256 KiB + one block)
ENGINE_WRITE_POOL_BYTES = 256 * KiB
BUFFER_ALIGN = 4096
# verify in a job of several files per clone: the read-back's log of the writes (verify.h struct
# vlogent: offset, number, length, file), at most one entry per smallest block of the clone's bytes
VERIFY_LOG_ENTRY_BYTES = 24
# postmark.c: struct pm_slot (num, sub, size) per slot, 2 x number slots
POSTMARK_SLOT_BYTES = 16
# fileset.c: fstate (1 B) + fsize (8 B) per file, dstate (1 B) per directory
VDBENCH_FILE_BYTES = 9
VDBENCH_DIR_BYTES = 1
# heap-btree: a pool frame's bookkeeping (bufpool.h struct bp_frame, 16 B, and the page's `where`
# entry, 4 B) per 8 KiB page, rounded up to 1 % of the pool
HEAP_BTREE_POOL_OVERHEAD = 0.01
# TPC-H's generator: DuckDB with the memory_limit the agent sets (libs/workload's
# TPCH_GENERATOR_MEMORY_LIMIT_BYTES, 1 GiB: tpch/data.py) is allowed to exceed it by its own
# structures; 512 MiB for those, 1.5 GiB in all. A run without buffer_pool_bytes gets the agent's
# default pool, TPCH_DEFAULT_BUFFER_POOL_BYTES (libs/workload; the server always sends one).
TPCH_GENERATOR_OVERHEAD_BYTES = 512 * MiB
TPCH_GENERATOR_BYTES = TPCH_GENERATOR_MEMORY_LIMIT_BYTES + TPCH_GENERATOR_OVERHEAD_BYTES


@dataclass(frozen=True)
class DbmsMemory:
    """A DBMS's memory besides its buffer pool, from its documented defaults (tpch/dbms.py sets
    only the pool, the log and max_connections)."""

    base_bytes: int  # the server process and its shared structures
    per_connection_bytes: int  # one client connection running TPC-H's queries
    pool_overhead: float  # the pool's own control structures, as a fraction of it
    why: str


DBMS_MEMORY: dict[str, DbmsMemory] = {
    # PostgreSQL: wal_buffers (up to 16 MiB), the lock and process tables of max_connections=100,
    # maintenance_work_mem (64 MiB) for the load's index builds and each of the 3 autovacuum
    # workers; per backend: about 10 MiB of its own plus TPC-H's sorts and hashes, up to 8 nodes of
    # work_mem (4 MiB) x hash_mem_multiplier (2)
    "postgresql": DbmsMemory(
        base_bytes=64 * MiB + 16 * MiB + 4 * 64 * MiB,
        per_connection_bytes=10 * MiB + 8 * 4 * MiB * 2,
        pool_overhead=0.0,
        why="PostgreSQL: 336 MiB base (WAL buffers, maintenance_work_mem x 4), 74 MiB a connection",
    ),
    # MariaDB: key_buffer_size 128 MiB, aria_pagecache_buffer_size 128 MiB, innodb_log_buffer_size
    # 16 MiB, the server's own ~64 MiB; per connection: sort_buffer 2 MiB, join_buffer 256 KiB,
    # read buffers 384 KiB, thread stack 299 KiB and an in-memory temporary table up to
    # tmp_table_size 16 MiB, about 20 MiB; InnoDB allocates ~10 % over its buffer pool
    "mariadb": DbmsMemory(
        base_bytes=128 * MiB + 128 * MiB + 16 * MiB + 64 * MiB,
        per_connection_bytes=20 * MiB,
        pool_overhead=0.10,
        why="MariaDB: 336 MiB base (key and Aria caches, log buffer), 20 MiB a connection, +10 % of the pool",
    ),
}


@dataclass(frozen=True)
class MemoryBound:
    """A run's memory bound: `bytes`, the RunCreate `field` that drives it and `what` in words."""

    bytes: int
    field: str
    what: str


def _round_up(n: int, to: int) -> int:
    return (n + to - 1) // to * to


def thread_bytes(iodepth: int, largest_block: int) -> int:
    """One engine thread of a block job: its request buffers and its own state."""
    return max(1, iodepth) * _round_up(max(1, largest_block), BUFFER_ALIGN) + ENGINE_THREAD_BYTES


def random_map_bytes(region_bytes: int | None, smallest_block: int) -> int:
    """A random job's map of blocks done (blocks of mixed sizes, no norandommap), per thread."""
    if not region_bytes or smallest_block <= 0:
        return 0
    return ((region_bytes // smallest_block) + 63) // 64 * 8


def verify_log_bytes(region_bytes: int | None, smallest_block: int) -> int:
    """A verify job of several files per clone: its log of the writes, per thread."""
    if not region_bytes or smallest_block <= 0:
        return 0
    return (region_bytes // smallest_block + 1) * VERIFY_LOG_ENTRY_BYTES


def file_workload_memory(mode: str, facts: dict[str, Any], job: dict[str, Any]) -> MemoryBound | None:
    """The memory bound of an engine file workload from its `bounds` (the engine's --parse-only)
    and its job (heap-btree's fractions and records); None when the facts lack a number."""

    def count(key: str) -> int | None:
        value = facts.get(key)
        if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value < 2**64:
            return None  # also NaN and infinity
        return int(value)

    threads, block, files, dirs = (
        count("threads"),
        count("max_block_bytes"),
        count("files"),
        count("directories"),
    )
    dataset = count("dataset_bytes")
    if threads is None or block is None or files is None or dirs is None or dataset is None:
        return None
    if mode == "vdbench":
        total = (
            ENGINE_BASE_BYTES
            + threads * (ENGINE_THREAD_BYTES + _round_up(max(1, block), BUFFER_ALIGN))
            + files * VDBENCH_FILE_BYTES
            + dirs * VDBENCH_DIR_BYTES
        )
        what = (
            f"{threads} threads with {block}-byte transfers and the state of {files} files and "
            f"{dirs} directories"
        )
        return MemoryBound(total, "workload.vdbench.parameters", what)
    if mode == "postmark":
        written = count("bytes_written_max") or 0
        largest_file = written // max(1, files) + 1
        total = (
            ENGINE_BASE_BYTES
            + ENGINE_THREAD_BYTES
            + 2 * files * POSTMARK_SLOT_BYTES
            + 2 * largest_file
            + _round_up(max(1, block), BUFFER_ALIGN)
        )
        return MemoryBound(total, "workload.postmark", f"{files} files of up to {largest_file} bytes")
    if mode == "heap-btree":
        structure = str(job.get("structure") or "both")
        fractions = str(job.get("cache_fractions") or "1")
        try:
            largest = max(float(f) for f in fractions.split(","))
        except ValueError:
            largest = 1.0
        if not 0 < largest <= 1:  # NaN too: check_run refuses such a job; count the whole pool
            largest = 1.0
        pool = dataset if structure != "heap" else int(dataset * min(1.0, largest))
        try:
            records = int(float(str(job.get("records") or 0)))
        except (ValueError, OverflowError):
            records = 0
        total = ENGINE_BASE_BYTES + int(pool * (1 + HEAP_BTREE_POOL_OVERHEAD)) + max(0, records) // 8 + 1
        what = f"a buffer pool of {pool} bytes" + (
            " (the B+tree is sized in memory)" if structure != "heap" else ""
        )
        return MemoryBound(total, "workload.heap_btree.records", what)
    return None


def tpch_memory(dbms: str, buffer_pool_bytes: int | None, streams: int) -> MemoryBound | None:
    """The memory bound of a TPC-H run: the larger of its generator and its DBMS; None for a DBMS
    without a row in DBMS_MEMORY."""
    row = DBMS_MEMORY.get(dbms)
    if row is None:
        return None
    pool = TPCH_DEFAULT_BUFFER_POOL_BYTES if buffer_pool_bytes is None else buffer_pool_bytes
    server = int(pool * (1 + row.pool_overhead)) + row.base_bytes + (streams + 1) * row.per_connection_bytes
    if server >= TPCH_GENERATOR_BYTES:
        what = f"a {dbms} buffer pool of {pool} bytes and {streams + 1} connections ({row.why})"
        return MemoryBound(server, "workload.tpch.buffer_pool_bytes", what)
    return MemoryBound(
        TPCH_GENERATOR_BYTES,
        "workload.tpch",  # the generator is the same at any scale factor or pool
        f"the TPC-H data generator (DuckDB, memory_limit {TPCH_GENERATOR_MEMORY_LIMIT_BYTES / GiB:g} GiB)",
    )


def innodb_flush_memory(buffer_pool_bytes: int, threads: int) -> MemoryBound:
    """The memory bound of an InnoDB flushing-policy run: MariaDB's (its pool +10 %, its base, a
    connection per sysbench thread and the agent's own) plus sysbench's few MiB per thread."""
    row = DBMS_MEMORY["mariadb"]
    server = int(buffer_pool_bytes * (1 + row.pool_overhead)) + row.base_bytes
    total = server + (threads + 1) * (row.per_connection_bytes + SYSBENCH_PER_THREAD_BYTES)
    what = f"a mariadb buffer pool of {buffer_pool_bytes} bytes and {threads} sysbench threads ({row.why})"
    return MemoryBound(total, "workload.innodb_flush.buffer_pool_bytes", what)


# sysbench's Lua state and its client connection's buffers per thread
SYSBENCH_PER_THREAD_BYTES = 4 * MiB
