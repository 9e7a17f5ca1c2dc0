"""Presets the server knows by name (seeded by the migration-independent `ensure_builtins`)."""

from backend.workload.schemas import JobSpec, WorkloadSpec

MiB = 1024 * 1024


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
