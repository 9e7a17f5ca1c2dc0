"""Workloads the server knows by name: the published reports' block-level, file and database
workloads as presets (docs/sources.md names each report and the tables each preset follows).

They are refreshed at API start-up (`ensure_builtins`) and exported for the agent's offline
`bench --preset` (agent/src/iowatt_agent/presets.json, checked for drift by a test).
"""

from iowatt_workload import MIN_RUNTIME_S, GiB, KiB, MiB, pass_name

from backend.workload.schemas import (
    TPCH_LABEL,
    HeapBtreeSpec,
    InnodbFlushSpec,
    JobfileSpec,
    JobSpec,
    PostmarkSpec,
    TpchSpec,
    VdbenchSpec,
    WorkloadSpec,
)


def _quick(direct: bool) -> WorkloadSpec:
    return WorkloadSpec(
        jobs=[
            JobSpec(
                name=name,
                rw=rw,
                bs_bytes=bs,
                size_bytes=64 * MiB,
                runtime_s=3,
                time_based=True,
                direct=direct,
            )
            for name, rw, bs in (
                ("randread-4k", "randread", 4096),
                ("seqread-1m", "read", MiB),
                ("seqwrite-1m", "write", MiB),
            )
        ]
    )


# Direct I/O so a disk shows the device, not the page cache (a 64 MiB file is always cached).
QUICK = _quick(direct=True)

# CrystalDiskMark 8's default tests (DiskSpd underneath): sequential 1 MiB at Q8T1 and Q1T1, random
# 4 KiB at Q32T1, Q32T16 (CDM 7/8 "peak") and Q1T1; reads then writes; 5 s each on a 1 GiB file,
# one discarded pass then 3 measured ones; CDM reports the best pass.
CDM_TESTS = [
    ("SEQ1M_Q8T1", False, MiB, 8, 1),
    ("SEQ1M_Q1T1", False, MiB, 1, 1),
    ("RND4K_Q32T1", True, 4 * KiB, 32, 1),
    ("RND4K_Q32T16", True, 4 * KiB, 32, 16),
    ("RND4K_Q1T1", True, 4 * KiB, 1, 1),
]


# CrystalDiskMark 3.x's test set, as the P3608 report's Table 1: "Seq" (sequential 1 MiB,
# QD1), "512K" and "4K" (random, QD1), "4K QD32" (random 4 KiB at QD32, one thread). The report names
# the block sizes (4 kB, 512 kB) and prints MB/s (10^6 B/s) plus IOPS for the 4K rows; it gives no
# size or pass count, so CDM 3.x's defaults: 5 passes on a 1000 MiB file, best-of, every pass
# counted (no discarded pass). Run time per pass as the current preset (5 s).
CDM_LEGACY_TESTS = [
    ("Seq", False, MiB, 1, 1),
    ("512K", True, 512 * KiB, 1, 1),
    ("4K", True, 4 * KiB, 1, 1),
    ("4K_QD32", True, 4 * KiB, 32, 1),
]


def crystaldiskmark(
    passes: int = 3,
    discard: int = 1,
    seconds: float = 5,
    size: int = GiB,
    tests: list[tuple[str, bool, int, int, int]] = CDM_TESTS,
) -> WorkloadSpec:
    jobs = []
    for test, rand, bs, qd, threads in tests:
        for direction in ("read", "write"):
            rw = ("rand" if rand else "") + direction
            for k in range(discard + passes):
                jobs.append(
                    JobSpec(
                        name=pass_name(f"{test}-{direction}", k),
                        rw=rw,
                        bs_bytes=bs,
                        size_bytes=size,
                        runtime_s=seconds,
                        time_based=True,
                        direct=True,
                        iodepth=qd,
                        numjobs=threads,
                        ioengine="io_uring" if qd > 1 else "psync",
                    )
                )
    return WorkloadSpec(jobs=jobs, passes=passes, discard_passes=discard)


# The P3608 report's DiskSpd sweep: diskspd -b<bs> -d5 -o1 -t1 -r -h (random read, QD1, one thread,
# caching off) on a 1 GiB file, 4 KiB to 16 MiB.
BS_SWEEP = [4 * KiB * 2**i for i in range(13)]  # 4 KiB ... 16 MiB


def diskspd_bs_sweep(seconds: float = 5) -> WorkloadSpec:
    return WorkloadSpec(
        jobs=[
            JobSpec(
                name=f"randread-{bs // KiB}k",
                rw="randread",
                bs_bytes=bs,
                size_bytes=GiB,
                runtime_s=seconds,
                time_based=True,
                direct=True,
            )
            for bs in BS_SWEEP
        ]
    )


# Oh's kernel-help report's C program: read/write x sequential/random x 4 KiB..4 MiB, with
# the kernel's help off (O_DIRECT, l. 155-162) and on (buffered: the kernel's default readahead and
# the page cache). "cache-nora" (buffered, readahead off) is ours: the report has no such mode.
# Each point does 64 MiB of I/O in the first 1 GiB of the target (report l. 44, 62-63), one
# pread/pwrite per block at QD1, as the report's lseek + read/write loop (l. 195-227).
KH_SIZES = [4 * KiB * 2**i for i in range(11)]  # 4 KiB ... 4 MiB
KH_REGION = GiB  # PART_SIZE
KH_IO = 64 * MiB  # ACCESS_SIZE


def kernel_help() -> WorkloadSpec:
    jobs = []
    for rw in ("read", "write", "randread", "randwrite"):
        for bs in KH_SIZES:
            for mode, direct, ra in (
                ("nocache", True, "default"),
                ("cache-ra", False, "on"),  # "on" = no fadvise hint: the kernel's default readahead
                ("cache-nora", False, "off"),
            ):
                if rw in ("write", "randwrite") and mode == "cache-nora":
                    continue  # readahead does not apply to writes
                jobs.append(
                    JobSpec(
                        name=f"{rw}-{bs // KiB}k-{mode}",
                        rw=rw,
                        bs_bytes=bs,
                        # Region and amount as the report: offsets are block numbers 0..count-1 from
                        # the start for sequential points (l. 169-171), so every sequential point
                        # does the first 64 MiB of the region, not a fresh slice; random points
                        # shuffle all 1 GiB / bs blocks and take the first count (l. 173-180):
                        # 64 MiB of distinct blocks spread over the whole 1 GiB. invalidate (on by
                        # default) drops the region from the page cache before each buffered point,
                        # so one point's cache never serves the next.
                        size_bytes=KH_REGION,
                        io_size_bytes=KH_IO,
                        direct=direct,
                        readahead=ra,
                        # The report calls fdatasync(fd) after the loop in every mode, inside the
                        # measured program (l. 229: `if (fdatsync(fd) == -1)`): a buffered write
                        # point is timed until its data reached the device, and an O_DIRECT one
                        # until the device's write cache is flushed. The engine syncs write jobs
                        # only; a read has nothing to write back.
                        end_fsync=rw in ("write", "randwrite"),
                    )
                )
    return WorkloadSpec(jobs=jobs)


# The pread/pwrite article: 4 KiB random reads, psync, 1..64 threads: IOPS and latency per thread count.
THREADS = [1, 2, 4, 8, 16, 32, 64]


def threads_latency(seconds: float = MIN_RUNTIME_S) -> WorkloadSpec:
    return WorkloadSpec(
        jobs=[
            JobSpec(
                name=f"randread-4k-t{n}",
                rw="randread",
                bs_bytes=4 * KiB,
                size_bytes=GiB,
                runtime_s=seconds,
                time_based=True,
                direct=True,
                numjobs=n,
            )
            for n in THREADS
        ]
    )


def seq_rand_table(direct: bool = True) -> WorkloadSpec:
    """The storage-methods article's four figures. `direct=False` is the buffered variant for targets
    without O_DIRECT (tmpfs before Linux 6.6: the article's "memory" column), shown by the
    disk-flash-memory view with its column labelled buffered."""
    return WorkloadSpec(
        jobs=[
            JobSpec(
                name=n,
                rw=rw,
                bs_bytes=bs,
                size_bytes=256 * MiB,
                runtime_s=MIN_RUNTIME_S,
                time_based=True,
                direct=direct,
            )
            for n, rw, bs in [
                ("seq-read", "read", MiB),
                ("seq-write", "write", MiB),
                ("rand-read-4k", "randread", 4096),
                ("rand-write-4k", "randwrite", 4096),
            ]
        ]
    )


# Song & Lee (DRAM-SSD vs HDD), §3.2.1 and Table 1: PostMark at three levels, "Block Size = 4KB, File
# Size = 327KB" (fixed: low = high, so appends add nothing, as PostMark does at the high bound).
# KB read as 1024 bytes, as the block size's 4 KB = 4096. Everything else is PostMark 1.5's default
# (bias 5/5, buffering on, seed 42).
PM_FILE_SIZE = 327 * KiB
PM_BLOCK = 4 * KiB
POSTMARK_LEVELS = {  # level: (subdirectories, files, transactions)
    "low": (10, 10_000, 50_000),
    "medium": (10, 30_000, 50_000),
    "high": (100, 70_000, 100_000),
}


def postmark_level(level: str) -> WorkloadSpec:
    subdirectories, number, transactions = POSTMARK_LEVELS[level]
    return WorkloadSpec(
        kind="postmark",
        postmark=PostmarkSpec(
            number=number,
            transactions=transactions,
            subdirectories=subdirectories,
            size_low_bytes=PM_FILE_SIZE,
            size_high_bytes=PM_FILE_SIZE,
            read_block_bytes=PM_BLOCK,
            write_block_bytes=PM_BLOCK,
        ),
    )


# Schulz's StorageIO report (enterprise HDDs), note 12: the two vdbench 5.04 scripts verbatim (the
# `vdbench -f ...` command line after each is not part of the file; `anchor=H:` is replaced by the
# run's directory).
# Full size: big 100 files of 5 GiB (500 GiB) for 10 h; small 1,638,400 files of 16 KiB (25 GiB)
# for 10 h. The default scale makes each a few hundred MB at most for 36 s (the engine's --scale:
# files per directory, file size and elapsed times the factor); a run's scale multiplies it.
VDBENCH_BIG = """# Sample script for big files testing
fsd=fsd1,anchor=H:,depth=1,width=5,files=20,size=5G
fwd=fwd1,fsd=fsd1,rdpct=90,xfersize=128k,fileselect=random,fileio=random,threads=64
rd=rd1,fwd=fwd1,fwdrate=max,format=yes,elapsed=10h,interval=30
"""
VDBENCH_SMALL = """# Sample script for big files testing
fsd=fsd1,anchor=H:,depth=1,width=64,files=25600,size=16k
fwd=fwd1,fsd=fsd1,rdpct=90,xfersize=1k,fileselect=random,fileio=random,threads=64
rd=rd1,fwd=fwd1,fwdrate=max,format=yes,elapsed=10h,interval=30
"""
VDBENCH_DEFAULT_SCALE = 0.001


def vdbench_set(parameters: str, scale: float = VDBENCH_DEFAULT_SCALE) -> WorkloadSpec:
    return WorkloadSpec(kind="vdbench", vdbench=VdbenchSpec(parameters=parameters, scale=scale))


# Song & Lee (DRAM-SSD vs HDD), §3.2.2, Table 2 and Figures 8-11: TPC-H on PostgreSQL and MariaDB
# (MySQL in the paper) at 1, 5 and 10 GB with 2, 2 and 3 streams (the spec's minimum, the default
# here). A run's scale multiplies the scale factor: the paper's 5 GB run is scale 5.
def tpch(dbms: str, scale_factor: float = 1.0, query_timeout_s: float = 3600) -> WorkloadSpec:
    settings = {"dbms": dbms, "scale_factor": scale_factor, "query_timeout_s": query_timeout_s}
    return WorkloadSpec(kind="tpch", tpch=TpchSpec.model_validate(settings))


# The P3608 report's § 1.4, Table 3: a heap file and a B+tree, N random inserts then point queries,
# behind a buffer pool of 10 % ... 100 % of the data pages. The report ran N = 50 M; 1 M by default
# here (a run's scale multiplies N: scale 50 is the report's).
HEAP_BTREE_RECORDS = 1_000_000


def heap_btree(records: int = HEAP_BTREE_RECORDS) -> WorkloadSpec:
    return WorkloadSpec(kind="heap_btree", heap_btree=HeapBtreeSpec(records=records))


# --- issue 29: the host's write-back (seed 004) and IOPS at a latency target, as fio job files ---------
# Both need engine options the block form does not carry (rw=write:N, latency_target): they are fio
# job files (the kind `jobfile`, ADR 0029), run as written (neither shortened nor scaled).

# The storage-methods article (seed 004) asks how the kernel's write-back of dirty pages shapes
# buffered writes, and finds "completely random write or skip: 5 times performance gap". Buffered
# writes larger than the kernel's dirty limit run at memory speed until Dirty reaches the limit, then
# at the device's (balance_dirty_pages throttles the writer): the run page charts Dirty and Writeback
# each second beside throughput, with the limits (docs/writeback.md). The pair: the same number of
# 4 KiB direct writes over the same 8 GiB, at random offsets and in ascending order one block in
# every 64 KiB (`rw=write:60k`: 60 KiB skipped after each write).
WRITEBACK_JOBFILE = """\
; iowatt preset "writeback" (issue 29; seed 004, the storage-methods article): buffered writes past
; the kernel's dirty limits, then the article's "completely random write or skip" pair. The run page
; charts /proc/meminfo's Dirty and Writeback each second beside throughput, with the limits; the
; writeback view puts the pair side by side. 16 GiB is past the dirty limit of most hosts (20 % of
; the memory the kernel may dirty, by default); a host with more: clone this file with a larger size.
[global]
ioengine=psync
stonewall

[seq-write-1m-buffered]
rw=write
bs=1m
size=16g
direct=0
end_fsync=1

[rand-write-4k-buffered]
rw=randwrite
bs=4k
size=16g
io_size=2g
direct=0
end_fsync=1

[rand-write-4k-direct]
rw=randwrite
bs=4k
size=8g
io_size=512m
direct=1

[skip-write-4k-direct]
rw=write:60k
bs=4k
size=8g
io_size=512m
direct=1
"""


QOS_DEPTHS = [1, 2, 4, 8, 16, 32, 64, 128, 256]


def qos_jobfile(name: str, rw_lines: str, target: str = "1ms", percentile: int = 99) -> str:
    """A queue-depth sweep (10 s per depth, 1 ... 256) and fio's latency_target search (up to 60 s,
    2 s windows) on a 1 GiB region, direct, io_uring."""
    depths = "".join(f"\n[qd{d}]\niodepth={d}\n" for d in QOS_DEPTHS)
    return f"""\
; iowatt preset "{name}" (issue 29): IOPS at a latency target (QoS). A queue-depth sweep, each point
; IOPS against its p99 and p99.9 latency (the qos view's curve), then fio's latency_target search:
; the highest depth whose {percentile}th percentile stays at or below {target}, its IOPS the figure.
; For another target, clone this file and change latency_target / latency_percentile.
[global]
{rw_lines}bs=4k
size=1g
direct=1
ioengine=io_uring
time_based=1
runtime=10
stonewall
{depths}
[at-target]
iodepth=256
runtime=60
latency_target={target}
latency_window=2s
latency_percentile={percentile}
"""


# Presets whose jobs are shorter than the short-run rule (libs/workload MIN_RUNTIME_S) by design,
# and that design in the words the run's short_run flag says (compare/validity.py): the reports'
# and tools' own lengths, kept so a run reproduces them. Every other preset runs each job at least
# MIN_RUNTIME_S (tests/backend/test_presets.py holds both sides).
SHORT_BY_DESIGN: dict[str, str] = {
    "quick": "the quick preset's first look, 3 s per job",
    "quick-buffered": "the quick preset's first look, 3 s per job",
    "crystaldiskmark": "CrystalDiskMark's own 5 s per test",
    "crystaldiskmark-legacy": "CrystalDiskMark 3.x's own 5 s per pass",
    "diskspd-bs-sweep": "the P3608 report's DiskSpd -d5, 5 s per point",
    "kernel-help": "the kernel-help report's fixed 64 MiB per point, as long as the device takes",
    "writeback": "the write-back preset's fixed amounts (16 GiB, 2 GiB, 512 MiB), as long as it takes",
    "qos-randread-4k": "the latency-target search reports its final 2 s window, as fio",
    "qos-randrw-70-30": "the latency-target search reports its final 2 s window, as fio",
}

BUILTINS: dict[str, tuple[str, WorkloadSpec]] = {
    "quick": (
        "A few seconds each of 4 KiB random read, 1 MiB sequential read and 1 MiB sequential write "
        "on a 64 MiB file, direct I/O, psync, QD1: a first look at any target.",
        QUICK,
    ),
    "quick-buffered": (
        "The quick workload through the page cache (no O_DIRECT): for file systems without direct I/O "
        "(tmpfs before Linux 6.6); it measures the page cache as much as the device.",
        _quick(direct=False),
    ),
    "seq-rand-table": (
        "Sequential 1 MiB and random 4 KiB read and write, direct I/O, 10 s each on a 256 MiB file: "
        "the MB/s and IOPS table the published reports print.",
        seq_rand_table(),
    ),
    "seq-rand-table-buffered": (
        "seq-rand-table through the page cache (no O_DIRECT): for memory (tmpfs) on Linux before 6.6, "
        "which has no O_DIRECT; the disk-flash-memory view labels its column buffered.",
        seq_rand_table(direct=False),
    ),
    "crystaldiskmark": (
        "CrystalDiskMark-style: SEQ1M Q8T1, SEQ1M Q1T1, RND4K Q32T1, RND4K Q32T16, RND4K Q1T1, read and "
        "write, 5 s each on a pre-filled 1 GiB file; 1 discarded pass + 3 passes, best-of as CDM and the "
        "median.",
        crystaldiskmark(),
    ),
    "crystaldiskmark-legacy": (
        "CrystalDiskMark 3.x's tests (the P3608 report's Table 1): Seq (1 MiB, QD1), 512K and 4K random "
        "(QD1), 4K QD32; read and write, 5 s each on a 1000 MiB file, 5 passes, best-of as CDM and the "
        "median.",
        crystaldiskmark(passes=5, discard=0, size=1000 * MiB, tests=CDM_LEGACY_TESTS),
    ),
    "diskspd-bs-sweep": (
        "DiskSpd-style random-read block-size sweep (the P3608 report): QD1, 1 thread, direct, "
        "4 KiB to 16 MiB, 5 s per point on a 1 GiB file.",
        diskspd_bs_sweep(),
    ),
    "kernel-help": (
        "The 'kernel help' sweep: read/write x sequential/random x 4 KiB..4 MiB, page cache off (direct) "
        "and on (buffered: the kernel's default readahead, and readahead off), QD1; each point does "
        "64 MiB of I/O in a 1 GiB region (sequential: its first 64 MiB; random: distinct blocks from "
        "all of it), writes timed through a final fsync.",
        kernel_help(),
    ),
    "threads-latency": (
        "Multi-threaded 4 KiB random reads (pread), 1 to 64 threads, 10 s each: IOPS and latency "
        "mean/p50/p99/p99.9 against the thread count.",
        threads_latency(),
    ),
    "postmark-low": (
        "PostMark, Song & Lee's Low level (their Table 1): 10 subdirectories, 10,000 files, 50,000 "
        "transactions; files of 327 KiB, 4 KiB reads and writes; their Table 3 reports its run time. "
        "File set about 3.1 GiB; a run's scale multiplies files and transactions.",
        postmark_level("low"),
    ),
    "postmark-medium": (
        "PostMark, Song & Lee's Medium level (their Table 1): 10 subdirectories, 30,000 files, 50,000 "
        "transactions; files of 327 KiB, 4 KiB reads and writes. File set about 9.4 GiB; a run's scale "
        "multiplies files and transactions.",
        postmark_level("medium"),
    ),
    "postmark-high": (
        "PostMark, Song & Lee's High level (their Table 1): 100 subdirectories, 70,000 files, 100,000 "
        "transactions; files of 327 KiB, 4 KiB reads and writes. File set about 21.8 GiB; a run's scale "
        "multiplies files and transactions.",
        postmark_level("high"),
    ),
    "vdbench-big": (
        "vdbench large files, Schulz's VdbenchFSBigTest verbatim: 5 directories x 20 files of 5 GiB, "
        "128 KiB random I/O in random files, 90% read, 64 threads. Full size 500 GiB for 10 h; by "
        "default at scale 0.001: 65 files of about 5.1 MiB (about 333 MiB) for 36 s.",
        vdbench_set(VDBENCH_BIG),
    ),
    "vdbench-small": (
        "vdbench small files, Schulz's VdbenchFSSmallTest verbatim: 64 directories x 25,600 files of "
        "16 KiB, 1 KiB random I/O in random files, 90% read, 64 threads. Full size 1,638,400 files "
        "(25 GiB) for 10 h; by default at scale 0.001: 1,664 files of 1 KiB for 36 s.",
        vdbench_set(VDBENCH_SMALL),
    ),
    "tpch-postgresql": (
        f"{TPCH_LABEL}: TPC-H on a private PostgreSQL on the target, Song & Lee's Table 2 and Figures 8-11: "
        "load, power and throughput tests, QphH@Size. Scale factor 1 (about 1 GB of raw data, 2.5 GB on "
        "disk), 2 streams (the spec's minimum), 16 MiB buffer pool so the device serves reads. A run's "
        "scale multiplies the scale factor: Song & Lee's 5 and 10 GB runs are scale 5 and 10 (3 streams at "
        "10). The host must allow PostgreSQL (iowatt-agent targets allow-dbms postgresql).",
        tpch("postgresql"),
    ),
    "tpch-mariadb": (
        f"{TPCH_LABEL}: TPC-H on a private MariaDB (InnoDB, O_DIRECT) on the target, Song & Lee's Table 2 "
        "and Figures 8-11 (MySQL there). Scale factor 1, 2 streams, 16 MiB buffer pool; a run's scale "
        "multiplies the scale factor (Song & Lee's 5 and 10 GB: scale 5 and 10). The host must allow "
        "MariaDB (iowatt-agent targets allow-dbms mariadb).",
        tpch("mariadb"),
    ),
    "tpch-smoke": (
        f"{TPCH_LABEL}: TPC-H at scale factor 0.01 on a private PostgreSQL (about 25 MB on disk, a "
        "minute or two, queries cut at 5 min): a quick look that the host runs TPC-H. The host must "
        "allow PostgreSQL.",
        tpch("postgresql", 0.01, query_timeout_s=300),
    ),
    "heap-btree": (
        "Heap file and B+tree, the P3608 report's Table 3: N random inserts then point queries on 8 KiB "
        "pages behind a buffer pool of 10 %, 20 %, ... 100 % of the data pages (ten fractions), direct "
        "I/O. N = 1,000,000 records here (about 80 MB per structure); the report ran 50,000,000: a run's "
        "scale multiplies N (scale 50 is the report's).",
        heap_btree(),
    ),
    "writeback": (
        "The host's write-back (seed 004): 16 GiB of 1 MiB sequential and 2 GiB of 4 KiB random writes "
        "through the page cache (fsync at the end), past most hosts' dirty limits: the run page charts "
        "Dirty and Writeback beside throughput with the limits drawn; then the article's completely "
        "random vs skip pair, 512 MiB of 4 KiB direct writes over 8 GiB each, at random offsets and "
        "ascending one block in every 64 KiB (rw=write:60k). A fio job file, run as written.",
        WorkloadSpec(kind="jobfile", jobfile=JobfileSpec(text=WRITEBACK_JOBFILE)),
    ),
    "qos-randread-4k": (
        "IOPS at a latency target (QoS): 4 KiB random reads, direct, io_uring, on a 1 GiB region: a "
        "queue-depth sweep (QD 1 to 256, 10 s each: IOPS against p99 and p99.9) and fio's "
        "latency_target search for the highest depth whose p99 stays at or below 1 ms (2 s windows, "
        "up to 60 s). A fio job file: clone it for another target or percentile.",
        WorkloadSpec(
            kind="jobfile", jobfile=JobfileSpec(text=qos_jobfile("qos-randread-4k", "rw=randread\n"))
        ),
    ),
    "innodb-flush": (
        "InnoDB flushing policy (the storage-methods article's 'Mysql (InnoDB) disk flushing policy'): a "
        "private MariaDB on the target with the binary log on, under sysbench's oltp_write_only (4 tables "
        "of 100,000 rows, 8 threads), 60 s per setting after 10 s of warm-up, for each of "
        "innodb_flush_log_at_trx_commit 1, 2, 0 x sync_binlog 1, 0: transactions per second, latency, "
        "fsyncs and bytes written per transaction, energy per transaction with a meter. A run's scale "
        "multiplies the seconds. The host must allow MariaDB (iowatt-agent targets allow-dbms mariadb) "
        "and have sysbench.",
        WorkloadSpec(kind="innodb_flush", innodb_flush=InnodbFlushSpec()),
    ),
    "qos-randrw-70-30": (
        "IOPS at a latency target (QoS) for a mixed load: 4 KiB random I/O, 70 % reads, direct, "
        "io_uring, on a 1 GiB region: the queue-depth sweep (QD 1 to 256, 10 s each) and fio's "
        "latency_target search for p99 at or below 1 ms. A fio job file: clone it for another target.",
        WorkloadSpec(
            kind="jobfile",
            jobfile=JobfileSpec(text=qos_jobfile("qos-randrw-70-30", "rw=randrw\nrwmixread=70\n")),
        ),
    ),
}
