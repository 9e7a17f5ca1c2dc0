"""Presets the server knows by name (seeded by the migration-independent `ensure_builtins`)."""

from backend.workload.schemas import JobSpec, WorkloadSpec

MiB = 1024 * 1024

QUICK = WorkloadSpec(
    jobs=[
        JobSpec(
            name="randread-4k",
            rw="randread",
            bs_bytes=4096,
            size_bytes=64 * MiB,
            runtime_s=3,
            time_based=True,
        ),
        JobSpec(
            name="seqread-1m", rw="read", bs_bytes=MiB, size_bytes=64 * MiB, runtime_s=3, time_based=True
        ),
        JobSpec(
            name="seqwrite-1m", rw="write", bs_bytes=MiB, size_bytes=64 * MiB, runtime_s=3, time_based=True
        ),
    ]
)

BUILTINS: dict[str, tuple[str, WorkloadSpec]] = {
    "quick": (
        "A few seconds each of 4 KiB random read, 1 MiB sequential read and 1 MiB sequential write "
        "on a 64 MiB file, buffered, psync: a first look at any target.",
        QUICK,
    ),
    "seq-rand-table": (
        "Sequential 1 MiB and random 4 KiB read and write, direct I/O, 5 s each on a 256 MiB file: "
        "the MB/s and IOPS table every seed prints.",
        WorkloadSpec(
            jobs=[
                JobSpec(
                    name=n,
                    rw=rw,
                    bs_bytes=bs,
                    size_bytes=256 * MiB,
                    runtime_s=5,
                    time_based=True,
                    direct=True,
                )
                for n, rw, bs in [
                    ("seq-read", "read", MiB),
                    ("seq-write", "write", MiB),
                    ("rand-read-4k", "randread", 4096),
                    ("rand-write-4k", "randwrite", 4096),
                ]
            ]
        ),
    ),
}
