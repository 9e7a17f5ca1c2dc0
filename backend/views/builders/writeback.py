"""The host's write-back (issue 29, seed 004): the `writeback` preset's runs side by side, buffered
writes past the dirty limits and the storage-methods article's "completely random write or skip"
pair with the skip ÷ random ratio (the article: a 5× gap). Each run's page shows the write-back
itself over time (Dirty, Writeback, the limits: docs/writeback.md)."""

from backend.views.builders.common import View, _cell, _col, _num, _side, _table
from backend.views.loading import Loaded
from backend.views.schemas import ViewInfo, ViewRow, ViewTable

# (job name in the preset's job file, the row's label)
WB_TESTS = [
    ("seq-write-1m-buffered", "Sequential write 1 MiB, buffered (past the dirty limit, fsync at the end)"),
    ("rand-write-4k-buffered", "Random write 4 KiB, buffered (fsync at the end)"),
    ("rand-write-4k-direct", "Completely random write 4 KiB, direct"),
    ("skip-write-4k-direct", "Skip write 4 KiB, direct (ascending, one block in every 64 KiB)"),
]


def _write(r: Loaded, name: str, field: str) -> float | None:
    return _num(_side(r.jobs.get(name), "write", field))


def _writeback(info: ViewInfo, runs: list[Loaded], baseline: Loaded | None) -> ViewTable:
    cols = [_col("test", "Test", None, "the preset's job", "text")]
    for i, r in enumerate(runs):
        cols += [
            _col(
                f"bw_{i}",
                f"{r.info.label} (MB/s)",
                None,  # rows of two units: MB/s, and × in the last (each cell says its own)
                f"write bandwidth of {r.info.name} in MB/s = 10^6 B/s; buffered jobs timed through their "
                "final fsync; the last row the skip ÷ random ratio",
                run_id=r.run.id,
            ),
            _col(f"iops_{i}", f"{r.info.label} (IOPS)", "IO/s", "writes per second", run_id=r.run.id),
        ]
    rows = []
    for name, label in WB_TESTS:
        cells = [_cell(label)]
        for r in runs:
            cells += [_cell(_write(r, name, "bw_bytes"), unit="B/s"), _cell(_write(r, name, "iops"))]
        rows.append(ViewRow(group=None, cells=cells))
    ratio = [_cell("Skip ÷ completely random (the article: 5×)")]
    for r in runs:
        skip, rand = (
            _write(r, "skip-write-4k-direct", "bw_bytes"),
            _write(r, "rand-write-4k-direct", "bw_bytes"),
        )
        value = skip / rand if skip is not None and rand else None
        ratio += [_cell(value, unit="×"), _cell(None)]
    rows.append(ViewRow(group=None, cells=ratio))
    notes = [
        "The same number of 4 KiB direct writes over the same 8 GiB: at random offsets, and in ascending "
        "order one block in every 64 KiB (fio's rw=write:60k). The article measured a 5× gap on a 10k "
        "RPM disk; an SSD shows little.",
        "Buffered jobs write through the page cache and are timed through their final fsync; each run's "
        "page charts Dirty and Writeback (/proc/meminfo) each second beside throughput, with the kernel's "
        "dirty limits drawn (docs/writeback.md).",
        "MB/s = 10^6 bytes per second.",
    ]
    return _table(info, runs, cols, rows, notes)


VIEWS: list[View] = [
    (
        ViewInfo(
            name="writeback",
            title="Write-back and random vs skip writes",
            description="Buffered writes past the kernel's dirty limits, and the storage-methods article's "
            "completely random against skip writes with their ratio.",
            seed="the storage-methods article (seed 004): 'Completely Random write or skip, 5 times "
            "performance gap' and 'Write back on the dirty page'",
            presets=["writeback"],
            min_runs=1,
            max_runs=8,
        ),
        _writeback,
    )
]
