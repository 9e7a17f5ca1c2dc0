"""The engine's options table (agent/engine/src/options.c): one row per option drives parsing,
defaults, --help and the iowatt.options echo. These tests hold the table to what the engine
accepted before it existed and to the echo's stable key order."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from .conftest import run_engine

# every name the engine accepted before the table (the old name list), aliases included
KNOWN = {
    "name", "filename", "rw", "readwrite", "rwmixread", "rwmixwrite", "bs", "blocksize", "bssplit",
    "size", "offset", "offset_increment", "direct", "buffered", "numjobs", "runtime", "timeout", "time_based",
    "ramp_time", "ratemin", "threads",
    "ioengine", "iodepth", "stonewall", "wait_for_previous", "loops", "fsync", "fdatasync",
    "end_fsync", "sync", "invalidate", "fadvise_hint", "random_distribution", "norandommap",
    "randseed", "zero_buffers", "buffer_compress_percentage", "refill_buffers", "rate_iops",
    "destructive", "thread", "group_reporting", "randrepeat", "clocksource", "iodepth_batch_submit",
    "iodepth_batch", "iodepth_batch_complete_min", "iodepth_batch_complete", "iodepth_batch_complete_max",
    "force_async", "kb_base", "io_size", "io_limit", "beneath", "create_new", "unlink",
    "keep_existing", "readonly", "description",
    # verify family (src/verify.c)
    "verify", "verify_pattern", "do_verify", "verify_interval", "verify_offset", "verify_fatal",
    "verify_dump", "verify_only", "verify_backlog", "verify_backlog_batch", "verify_state_save",
    "verify_state_load", "verify_async",
    # multi-file jobs (src/multifile.c)
    "directory", "nrfiles", "nr_files", "filesize", "openfiles", "file_service_type", "filename_format",
    "create_on_open", "create_only", "file_append", "fallocate", "unlink_each_loop", "lockfile",
    "new_group", "wait_for", "exitall", "exitall_on_error", "startdelay", "continue_on_error",
    # pacing, QoS, steady state, priorities (pace.c, steady.c)
    "rate", "rate_min", "rate_iops_min", "rate_process", "rate_cycle", "ratecycle", "thinktime",
    "thinktime_spin", "thinktime_blocks", "thinktime_blocks_type", "thinktime_iotime", "io_submit_mode",
    "flow", "flow_id", "flow_sleep", "latency_target", "latency_window", "latency_percentile", "max_latency",
    "steadystate", "ss", "steadystate_duration", "ss_dur", "steadystate_ramp_time", "ss_ramp", "prio",
    "prioclass", "nice", "gtod_reduce", "disable_lat", "disable_clat", "disable_slat",
    "disable_bw_measurement", "disable_bw", "cmdprio_percentage",
    "cmdprio_class", "cmdprio", "cmdprio_bssplit",
    # patterns family (src/patterns.c)
    "rw_sequencer", "bsrange", "blocksize_range", "bs_unaligned", "blocksize_unaligned", "blockalign", "ba",
    "random_generator", "percentage_random", "number_ios",
    # layout and syncs (src/target.c, src/worker.c)
    "fsync_on_close", "create_fsync", "overwrite", "pre_read", "scramble_buffers", "write_barrier",
}  # fmt: skip

# iowatt.options, in order (a stable interface: docs/contracts.md, the agent's parser)
ECHO_KEYS = [
    "name", "filename", "rw", "rw_skip_bytes", "rw_random_every", "rwmixread", "bs_bytes", "bs_read_bytes",
    "bs_write_bytes", "bssplit",
    "size_bytes", "offset_bytes", "offset_increment",
    "direct", "numjobs", "runtime_ns", "time_based", "ramp_time_ns",
    "ioengine", "iodepth", "stonewall", "loops", "fsync", "fdatasync", "end_fsync", "sync", "invalidate",
    "fadvise_hint", "random_distribution", "random_distribution_param", "random_distribution_zones",
    "norandommap", "randseed",
    "randrepeat", "zero_buffers", "refill_buffers", "clocksource", "iodepth_batch_submit",
    "iodepth_batch_complete_min", "iodepth_batch_complete_max", "force_async",
    "io_size_bytes", "buffer_compress_percentage",
    "rate_iops", "rate_iops_read", "rate_iops_write",
    "rate_bytes_per_s", "rate_min_bytes_per_s", "rate_iops_min",
    "rate_process", "rate_cycle_ms", "thinktime_ns", "thinktime_spin_ns", "thinktime_blocks",
    "thinktime_blocks_type", "thinktime_iotime_ns", "io_submit_mode", "flow", "flow_id", "flow_sleep_us",
    "latency_target_ns", "latency_window_ns", "latency_percentile", "max_latency_ns", "steadystate",
    "steadystate_duration_ns", "steadystate_ramp_time_ns", "prio", "prioclass", "nice", "gtod_reduce",
    "disable_lat", "disable_clat", "disable_slat", "disable_bw_measurement",
    "cmdprio_percentage", "cmdprio_class", "cmdprio", "cmdprio_bssplit",
    "destructive", "beneath", "create_new",
    "unlink", "keep_existing", "readonly",
    # verify family (src/verify.c)
    "verify", "verify_pattern", "do_verify", "verify_interval_bytes", "verify_offset_bytes",
    "verify_fatal", "verify_dump", "verify_only", "verify_backlog", "verify_backlog_batch",
    # multi-file jobs (src/multifile.c)
    "directory", "nrfiles", "filesize_low_bytes", "filesize_high_bytes", "openfiles", "file_service_type",
    "file_service_param", "filename_format", "create_on_open", "create_only", "file_append", "fallocate",
]  # fmt: skip

# reporting (s8/reporting): fio's log files and percentile options (src/logs.c, src/output.c)
KNOWN |= {
    "write_bw_log", "write_lat_log", "write_iops_log", "write_hist_log", "log_avg_msec", "log_hist_msec",
    "log_hist_coarseness", "log_max_value", "log_offset", "per_job_logs", "log_unix_epoch",
    "log_alternate_epoch", "log_alternate_epoch_clock_id", "log_entries", "log_compression",
    "log_store_compressed", "percentile_list", "clat_percentiles", "lat_percentiles", "slat_percentiles",
}  # fmt: skip
ECHO_KEYS += [
    "write_bw_log", "write_lat_log", "write_iops_log", "write_hist_log", "log_avg_msec", "log_hist_msec",
    "log_hist_coarseness", "log_max_value", "log_offset", "per_job_logs", "log_unix_epoch",
    "log_alternate_epoch", "log_alternate_epoch_clock_id", "percentile_list", "clat_percentiles",
    "lat_percentiles", "slat_percentiles",
]  # fmt: skip
# patterns family (src/patterns.c): after the reporting rows in the table
ECHO_KEYS += [
    "rw_sequencer", "bsrange", "bs_unaligned", "blockalign_bytes", "random_generator", "percentage_random",
    "number_ios",
]  # fmt: skip

# scheduling and control (s8/meaning, src/sched.c)
ECHO_KEYS += [
    "group_reporting", "new_group", "wait_for", "exitall", "exitall_on_error", "startdelay_ns",
    "startdelay_high_ns", "continue_on_error",
]  # fmt: skip

# buffers, NUMA, log priorities (s10 submit-dedupe: src/dedupe.c, src/numa.c, src/logs.c)
KNOWN |= {
    "dedupe_percentage", "dedupe_mode", "dedupe_working_set_percentage", "dedupe_global", "numa_cpu_nodes",
    "numa_mem_policy", "log_prio",
}  # fmt: skip
ECHO_KEYS += [
    "dedupe_percentage", "dedupe_mode", "dedupe_working_set_percentage", "dedupe_global", "numa_cpu_nodes",
    "numa_mem_policy", "log_prio",
]  # fmt: skip
# control options of issue 24's job files (s10 verify-logs; src/control.c): after the scheduling rows
KNOWN |= {"ignore_error", "exit_what", "allow_file_create", "fill_device", "fill_fs", "offset_align"}
ECHO_KEYS += ["ignore_error", "exit_what", "allow_file_create", "fill_device", "offset_align_bytes"]
# s11 engine (src/control.c)
KNOWN |= {"error_dump", "create_serialize"}
ECHO_KEYS += ["error_dump", "create_serialize"]

ROW = re.compile(r"^  --([a-z_]+)=([A-Z]+) ")
ALIAS = re.compile(r"\(alias: ([a-z_]+)\)")


def help_rows(engine_bin: Path) -> list[tuple[str, str, str | None]]:
    out = run_engine(engine_bin, "--help").stdout
    rows = []
    for line in out.splitlines():
        if m := ROW.match(line):
            a = ALIAS.search(line)
            rows.append((m[1], m[2], a[1] if a else None))
    assert rows, out
    return rows


def test_help_lists_every_option_once(engine_bin: Path) -> None:
    rows = help_rows(engine_bin)
    names = [r[0] for r in rows] + [r[2] for r in rows if r[2]]
    assert len(names) == len(set(names))
    assert set(names) == KNOWN


def test_help_shows_defaults_from_the_table(engine_bin: Path) -> None:
    out = run_engine(engine_bin, "--help").stdout
    assert re.search(r"--ioengine=\S+ .*\(default psync\)", out)
    assert re.search(r"--rwmixread=INT .*\(default 50\)", out)
    modes = "read, write, randread, randwrite, rw, readwrite, randrw"
    modes += ", trim, randtrim, trimwrite, randtrimwrite"
    assert re.search(rf"--rw=VALUE .*\[{modes}\]", out)


def test_every_boolean_alone_means_1_and_others_need_a_value(engine_bin: Path, scratch: Path) -> None:
    f = scratch / "t.dat"
    f.write_bytes(b"\1" * 65536)
    rows = help_rows(engine_bin)
    assert {r[0] for r in rows if r[1] == "BOOL"} >= {"direct", "randrepeat", "thread", "readonly"}
    for name, typ, alias in rows:
        for n in [name] + ([alias] if alias else []):
            r = run_engine(
                engine_bin, f"--filename={f}", "--size=64k", "--ioengine=null", f"--{n}", check=False
            )
            if typ == "BOOL":
                assert "missing value" not in r.stderr, (n, r.stderr)
            else:
                assert r.rc == 2 and f"{n}: missing value (use --{n}=VALUE)" in r.stderr, (n, r.stderr)


def test_options_that_change_nothing_leave_the_job_alone(engine_bin: Path, scratch: Path) -> None:
    """threads (tiobench's) and write_barrier (fio 3.33 flags every Nth write as a barrier, and
    none of its file engines reads the flag): accepted, nothing stored (they once wrote their
    number over the job's name)"""
    f = scratch / "t.dat"
    for opt in ("--threads=2", "--write_barrier=2", "--thread"):
        job = run_engine(engine_bin, "--name=j", f"--filename={f}", "--rw=write", "--size=64k", opt).job
        assert (job["jobname"], job["job options"]["name"], job["write"]["total_ios"]) == ("j", "j", 16), opt


def test_echo_keys_and_defaults(engine_bin: Path, scratch: Path) -> None:
    f = scratch / "t.dat"
    f.write_bytes(b"\1" * 65536)
    opts = run_engine(engine_bin, f"--filename={f}", "--size=64k").job["iowatt"]["options"]
    assert list(opts) == ECHO_KEYS
    assert {k: opts[k] for k in ("name", "rw", "rwmixread", "bs_bytes", "ioengine", "iodepth", "loops")} == {
        "name": "job",
        "rw": "read",
        "rwmixread": 50,
        "bs_bytes": 4096,
        "ioengine": "psync",
        "iodepth": 1,
        "loops": 1,
    }
    assert opts["invalidate"] is True and opts["refill_buffers"] is True and opts["direct"] is False
    assert (opts["fadvise_hint"], opts["random_distribution"], opts["clocksource"]) == ("1", "random", "cpu")
    assert opts["iodepth_batch_submit"] == 1 and opts["randseed"] == 0x10DA5EED
    assert opts["io_size_bytes"] is None and opts["beneath"] is None and opts["sync"] == "none"


@pytest.mark.parametrize(
    ("arg", "message"),
    [
        ("--loops=0", "loops: must be greater than 0"),
        ("--io_size=0", "io_size: must be greater than 0"),
        ("--io_limit=0", "io_limit: must be greater than 0"),
        ("--size=0", "size: must be greater than 0"),
        ("--numjobs=0", "numjobs: must be 1..4096, got '0'"),
        ("--rwmixread=101", "rwmixread: must be 0..100, got '101'"),
        ("--iodepth_batch=65537", "iodepth_batch: must be 0..65536, got '65537'"),
        ("--kb_base=1001", "kb_base: must be 1024 or 1000, got '1001'"),
        ("--sync=async", "sync: unknown mode 'async' (none, sync, dsync, 0, 1)"),
        ("--readwrite=x", "readwrite: unknown mode 'x'"),
    ],
)
def test_bad_values_exit_2_naming_the_option(engine_bin: Path, scratch: Path, arg: str, message: str) -> None:
    r = run_engine(engine_bin, f"--filename={scratch / 't.dat'}", arg, check=False)
    assert r.rc == 2
    assert message in r.stderr
