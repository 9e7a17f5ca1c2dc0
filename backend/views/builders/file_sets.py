"""vdbench's big and small file sets per device."""

from backend.compare.validity import cache_resident_of
from backend.views.builders.common import (
    View,
    _cell,
    _col,
    _num,
    _table,
)
from backend.views.loading import MAX_RUNS, Loaded
from backend.views.schemas import (
    ViewInfo,
    ViewRow,
    ViewTable,
)

# --- 7. the StorageIO report's Tables 3 and 5: vdbench file sets per device -----------------------

VDBENCH_SETS = {  # preset: (row group, the report's table)
    "vdbench-big": ("Big files", "the StorageIO report's Table 3"),
    "vdbench-small": ("Small files", "the StorageIO report's Table 5"),
}


def _file_op(r: Loaded, name: str, field: str) -> float | None:
    if r.file is None:
        return None
    op = next((o for o in r.file.ops if o.name == name), None)
    return _num(getattr(op, field)) if op is not None else None


def _cache_note(r: Loaded) -> str | None:
    msg = cache_resident_of(r.run.workload_spec, r.file, r.mem_bytes)
    return "cache-resident: " + msg if msg else None


def _vdbench_filesets(info: ViewInfo, runs: list[Loaded], baseline: Loaded | None) -> ViewTable:
    cols = [
        _col(
            "set",
            "File set",
            None,
            "the StorageIO report's big-file (Table 3) or small-file (Table 5) workload",
            "text",
        ),
        _col("run", "Device", None, "the run: its device (or target) on its agent", "text"),
        _col("scale", "Scale", "×", "the file set's scale (1 = the report's full size and time)"),
        _col(
            "read_rate",
            "Avg. file read rate (op/s)",
            "op/s",
            "read operations (one xfersize block) per second",
        ),
        _col(
            "read_resp",
            "Avg. read resp. time (ms)",
            "ns",
            "mean response time of a read operation, shown in ms",
        ),
        _col("write_rate", "Avg. file write rate (op/s)", "op/s", "write operations per second"),
        _col("write_resp", "Avg. write resp. time (ms)", "ns", "mean response time of a write, shown in ms"),
        _col(
            "cpu_total",
            "Avg. CPU % total",
            "%",
            "the host's CPU busy, % of all CPUs (/proc/stat over the measured intervals), as vdbench's "
            "'CPU total'",
        ),
        _col(
            "cpu_sys",
            "Avg. CPU % system",
            "%",
            "the host's CPU in the kernel, % of all CPUs (vdbench's 'sys')",
        ),
        _col("read_mbps", "Avg. MB/s read", "B/s", "bytes read per second, shown in MB/s = 10^6 B/s"),
        _col("write_mbps", "Avg. MB/s write", "B/s", "bytes written per second, shown in MB/s = 10^6 B/s"),
    ]
    rows = []
    for preset, (group, _) in VDBENCH_SETS.items():
        for r in runs:
            if r.info.preset != preset:
                continue
            f = r.file
            rows.append(
                ViewRow(
                    group=group,
                    cells=[
                        _cell(group),
                        _cell(r.info.label, _cache_note(r)),
                        _cell(_num(f.scale) if f else None),
                        _cell(_file_op(r, "read", "rate_per_s")),
                        _cell(_file_op(r, "read", "resp_mean_ns")),
                        _cell(_file_op(r, "write", "rate_per_s")),
                        _cell(_file_op(r, "write", "resp_mean_ns")),
                        _cell(_num(f.host_cpu_total_pct) if f else None),
                        _cell(_num(f.host_cpu_system_pct) if f else None),
                        _cell(_num(f.read_bw_bytes) if f else None),
                        _cell(_num(f.write_bw_bytes) if f else None),
                    ],
                )
            )
    notes = [
        "One row per run: the StorageIO report's Table 3 (big files: 5 directories × 20 files of 5 GiB, "
        "128 KiB transfers) then Table 5 (small files: 64 × 25,600 files of 16 KiB, 1 KiB transfers); 90 % "
        "reads, random files, random I/O, 64 threads.",
        "Rates are operations per second over the measured intervals; an operation is one transfer. "
        "Response times are means, shown in ms as vdbench prints them.",
        "MB/s = 10^6 bytes per second (vdbench prints MiB/s: divide ours by 1.048576 to compare).",
    ]
    if any(r.file and r.file.scale not in (None, 1.0) for r in runs):
        notes.append(
            "Scaled runs (Scale below 1) ran a smaller file set for a shorter time: files per directory, "
            "file size and elapsed time times the scale. The report's runs were 10 h on the full set."
        )
    if any(_cache_note(r) for r in runs):
        notes.append(
            "Rows marked cache-resident: the file set fits in the host's RAM without O_DIRECT, so the "
            "figures may measure the page cache, not the device."
        )
    return _table(info, runs, cols, rows, notes, shown={"ns": "ms"})


VIEWS: list[View] = [
    (
        ViewInfo(
            name="vdbench-filesets",
            title="vdbench file sets per device",
            description="Big and small file sets: file read and write rates and response times, CPU "
            "total and system, read and write MB/s, one row per run.",
            seed="Schulz's StorageIO report, Tables 3 (large files) and 5 (small files)",
            presets=list(VDBENCH_SETS),
            min_runs=1,
            max_runs=MAX_RUNS,
        ),
        _vdbench_filesets,
    ),
]
