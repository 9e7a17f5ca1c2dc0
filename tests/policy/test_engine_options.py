"""Which options a server may send, and how the host's rules judge the options issue 24 added
(ADR 0030): the engine's --limits says who may send each option (`server`: allowed | host | path);
libs/policy judges every allowed option that can exceed what the host allows (rw forms and trims,
rate and rate_iops per direction, startdelay, wait_for, pacing of size-bound jobs, bsrange,
nrfiles x filesize, number_ios). Each rule is shown refusing and, one step inside the limit,
allowing. The parsers of these values read outside text: fuzzed below."""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from iowatt_policy import (
    AGENT_ONLY_OPTIONS,
    FROZEN_OPTIONS,
    HOST_RULE_OPTIONS,
    EngineOptions,
    Limits,
    ReportedPolicy,
    Target,
    Violation,
    check_run,
    parse_rate,
    parse_rw,
)
from iowatt_policy.check import _clone_starts, _jobs
from iowatt_policy.fio import (
    Percent,
    parse_bsrange,
    parse_offset_increment,
    parse_size,
    parse_size_range,
    parse_time_range_ns,
    parse_time_us_default,
    smallest_blocks,
)

ENGINE = Path(__file__).resolve().parents[2] / "agent" / "engine" / "build" / "iowatt-engine"
DEV = "/dev/disk/by-id/nvme-Example_SSD_S123"
DEV_RW = DEV + "-2"

needs_engine = pytest.mark.skipif(
    not os.access(ENGINE, os.X_OK), reason=f"the engine is not built ({ENGINE})"
)

# Every option the engine lets a server send that the host's rules do not read, and why no host
# limit depends on it. An option the engine gains fails test_every_allowed_option_is_vetted until it
# is placed here or given a rule (HOST_RULE_OPTIONS): the review of what a server may now send.
INERT = {
    "rwmixread": "the mix: a job that writes at all counts as writing its whole region",
    "rwmixwrite": "as rwmixread",
    "direct": "O_DIRECT: no size, time or memory",
    "buffered": "as direct",
    "ioengine": "memory counts iodepth as given, whatever the engine",
    "fsync": "syncs: no bytes, the run time is capped by runtime or the hard timeout",
    "fdatasync": "as fsync",
    "end_fsync": "as fsync",
    "sync": "open flags",
    "invalidate": "drops the page cache of the target only",
    "fadvise_hint": "a hint",
    "random_distribution": "where offsets fall inside the region the rules count",
    "randseed": "a seed",
    "randrepeat": "a seed",
    "zero_buffers": "buffer content",
    "refill_buffers": "buffer content",
    "buffer_compress_percentage": "buffer content",
    "clocksource": "a clock",
    "iodepth_batch_submit": "at most iodepth",
    "force_async": "a flag per SQE",
    "iodepth_batch_complete_min": "completions a full queue waits for: at most iodepth are in flight",
    "iodepth_batch_complete_max": "completions taken per wait: no size, time or memory",
    "thread": "accepted, changes nothing",
    "threads": "fio's tiobench-profile option: accepted, changes nothing (as fio 3.33 outside the profile)",
    "group_reporting": "reporting",
    "new_group": "reporting groups only: no waiting",
    "exitall": "ends jobs earlier",
    "exitall_on_error": "ends jobs earlier",
    "continue_on_error": "goes on within the job's own bounds",
    "rate_min": "a floor: the job fails (EIO) below it, never runs longer",
    "rate_iops_min": "as rate_min",
    "rate_process": "the same rate, drawn",
    "rate_cycle": "rate_min's window (ms, at most an hour)",
    "thinktime_spin": "part of thinktime",
    "thinktime_blocks_type": "when thinktime counts",
    "thinktime_iotime": "adds stalls to a job bounded by runtime or by the hard timeout",
    "flow": "holds jobs back: bounded by runtime or by the hard timeout",
    "flow_id": "as flow",
    "flow_sleep": "as flow (at most an hour per sleep)",
    "latency_target": "fio's depth search within the job's runtime, never above its iodepth",
    "latency_window": "as latency_target",
    "latency_percentile": "as latency_target",
    "max_latency": "fails the job early",
    "steadystate": "stops a job early when steady, never extends it",
    "steadystate_duration": "as steadystate (the window is inside the runtime)",
    "steadystate_ramp_time": "as steadystate",
    "prio": "the job's own I/O priority (best-effort or idle unless realtime: see prioclass)",
    "prioclass": "ioprio_set of the job's threads, as a local fio user could",
    "nice": "the job's threads' nice value",
    "gtod_reduce": "measures less",
    "disable_lat": "measures less",
    "disable_clat": "measures less",
    "disable_slat": "measures less",
    "disable_bw_measurement": "measures less",
    "cmdprio_percentage": "refused by the engine",
    "cmdprio_class": "refused by the engine",
    "cmdprio": "refused by the engine",
    "cmdprio_bssplit": "refused by the engine",
    "verify": "reads back what the job wrote: no more bytes written; memory: the engine replays the "
    "offsets, or with several files per clone logs 24 bytes per write (the memory rule counts it); "
    "a time-based writer's read-back after its runtime is capped by the agent's hard timeout",
    "verify_pattern": "at most 512 bytes",
    "do_verify": "as verify",
    "verify_interval": "headers inside the job's blocks",
    "verify_offset": "as verify_interval",
    "verify_fatal": "ends a job earlier",
    "verify_only": "writes nothing",
    "verify_backlog": "the engine replays the offsets: no memory per block",
    "verify_backlog_batch": "as verify_backlog",
    "verify_state_save": "refused by the engine when 1",
    "verify_state_load": "refused by the engine when 1",
    "verify_async": "the job's own threads verify its reads (no threads of their own)",
    "openfiles": "descriptors, at most the engine's max_files (4096)",
    "file_service_type": "which of the job's files is next",
    "create_on_open": "when files are created, not how many",
    "create_only": "lays out, then no I/O: fewer bytes",
    "file_append": "writes past each file's end: counted as the job's bytes per pass",
    "fallocate": "how the layout the rules count is allocated",
    "unlink_each_loop": "0 only (the engine refuses 1)",
    "lockfile": "none only (the engine refuses the rest)",
    "log_avg_msec": "logs: their prefixes are path options, refused",
    "log_hist_msec": "as log_avg_msec",
    "log_hist_coarseness": "as log_avg_msec",
    "log_max_value": "as log_avg_msec",
    "log_offset": "as log_avg_msec",
    "per_job_logs": "as log_avg_msec",
    "log_unix_epoch": "as log_avg_msec",
    "log_alternate_epoch": "as log_avg_msec",
    "log_alternate_epoch_clock_id": "as log_avg_msec",
    "log_entries": "per-I/O log records kept before writing, within the engine's 64 MiB per job "
    "(and the logs' prefixes are path options, refused)",
    "log_compression": "refused by the engine unless 0",
    "log_store_compressed": "refused by the engine unless 0",
    "percentile_list": "at most 20 percentiles",
    "clat_percentiles": "reporting",
    "lat_percentiles": "reporting",
    "slat_percentiles": "reporting",
    # the patterns family (s8/patterns; named here before it lands so its landing needs no review
    # of these): offsets and sizes inside the region the rules count
    "rw_sequencer": "which offsets, not how many",
    "bs_unaligned": "bsrange's sizes, bounded by bsrange",
    "blockalign": "where blocks start",
    "random_generator": "which offsets",
    "percentage_random": "which offsets",
    # s10 submit-dedupe: buffer content, NUMA placement, log columns
    "dedupe_percentage": "buffer content (no memory: a buffer's content is a function of a seed)",
    "dedupe_mode": "as dedupe_percentage",
    "dedupe_working_set_percentage": "as dedupe_percentage (the working set is seeds, not stored)",
    "dedupe_global": "as dedupe_percentage",
    "numa_cpu_nodes": "the CPUs the job's own threads run on (nodes this host has, else the engine refuses)",
    "numa_mem_policy": "where the job's own buffers are allocated; the memory rule counts them wherever",
    "log_prio": "as log_avg_msec",
    # control options of issue 24's job files (s10, agent/engine/src/control.c); fill_device is a
    # "path" row (it fills the target's file system: never from a server)
    "ignore_error": "goes on over errors within the job's own bounds (as continue_on_error)",
    "exit_what": "ends jobs earlier",
    "allow_file_create": "0 refuses a missing file: fewer files, never more",
    # s11 engine (src/control.c)
    "error_dump": "stderr lines of I/O errors",
    "create_serialize": "the layout's order (0: a single file's when its start group starts)",
    # s25 layout and syncs (src/target.c, src/worker.c)
    "fsync_on_close": "fsyncs the job's own files: no more bytes",
    "create_fsync": "fsyncs the layout (0: not): no more bytes",
    "overwrite": "a write job's missing part laid out first, as a read job's layout (a directory "
    "target's layout is counted whatever the job; keep_existing and readonly refuse it)",
    "pre_read": "reads the job's region once before it: no bytes written",
    "scramble_buffers": "buffer content (refill_buffers=0 only)",
    "write_barrier": "changes nothing (fio 3.33's file engines ignore the flag)",
}


@pytest.fixture(scope="module")
def limits_doc() -> dict[str, Any]:
    if not os.access(ENGINE, os.X_OK):
        pytest.skip(f"the engine is not built ({ENGINE})")
    out = subprocess.run([str(ENGINE), "--limits"], capture_output=True, text=True, check=True).stdout
    doc: dict[str, Any] = json.loads(out)
    return doc


@pytest.fixture(scope="module")
def facts(limits_doc: dict[str, Any]) -> EngineOptions:
    return EngineOptions.from_limits(limits_doc)


def with_rows(facts: EngineOptions, *names: str) -> EngineOptions:
    """The engine's facts with these rows allowed: the patterns family's (bsrange, number_ios) on
    an engine built before it landed; a no-op on one that has them."""
    rows = {**{n: "allowed" for n in names}, **facts.rows}
    return dataclasses.replace(facts, rows=rows, names={**{n: n for n in names}, **facts.names})


def policy(**limits: Any) -> ReportedPolicy:
    return ReportedPolicy(
        targets=(
            dataclasses.replace(Target.directory("/data/bench"), free_inodes=100_000),
            Target.file("/data/ro.img"),
            Target.file("/data/rw.img", allow_write=True),
            dataclasses.replace(Target.device(DEV), size_bytes=1 << 30),
            dataclasses.replace(Target.device(DEV_RW, destructive=True), size_bytes=1 << 30),
        ),
        meters=(),
        default_meter=None,
        limits=Limits(**limits),
    )


def job(**options: Any) -> dict[str, Any]:
    base: dict[str, Any] = {"name": "j", "rw": "randread", "bs": "4096", "size": "67108864"}
    base.update(options)
    return {"global": {}, "jobs": [base]}


def check(
    engine_job: dict[str, Any],
    facts: EngineOptions | None,
    target: str = "/data/bench",
    destructive: bool = False,
    **limits: Any,
) -> list[Violation]:
    return check_run(
        policy(**limits),
        target_path=target,
        engine_job=engine_job,
        meter=None,
        destructive=destructive,
        engine=facts,
    )


def found(violations: list[Violation]) -> list[tuple[str, str]]:
    return [(v.rule, v.field) for v in violations]


# --- the engine's facts -----------------------------------------------------------------------------


@needs_engine
def test_the_engines_classes_are_the_agents_options_and_its_paths(
    facts: EngineOptions, limits_doc: Any
) -> None:
    host = {n for n, c in facts.rows.items() if c == "host"}
    assert host == AGENT_ONLY_OPTIONS - {"filename", "directory"}  # the agent sets both, as paths
    paths = {n for n, c in facts.rows.items() if c == "path"}
    assert set(limits_doc["block"]["jobfile"]["path_options"]) & set(facts.rows) <= paths
    assert {"filename", "directory", "filename_format", "write_bw_log", "verify_dump"} <= paths
    # aliases read as their rows
    assert facts.canonical("readwrite") == "rw" and facts.canonical("ss_dur") == "steadystate_duration"
    assert facts.server_class("nr_files") == "allowed" and facts.server_class("no_such") is None


@needs_engine
def test_every_allowed_option_is_vetted(facts: EngineOptions) -> None:
    allowed = {n for n, c in facts.rows.items() if c == "allowed"}
    unvetted = allowed - set(HOST_RULE_OPTIONS) - set(INERT)
    assert not unvetted, f"options a server may now send with no rule and no reason: {sorted(unvetted)}"


def test_an_engine_older_than_the_facts_is_not_read() -> None:
    old = {"block": {"options": {"rw": {"type": "choice", "alias": "readwrite"}}}}
    for doc in (old, {}, {"block": {"options": {}}}, {"block": {"options": {"rw": {"server": "maybe"}}}}, []):
        with pytest.raises(ValueError):
            EngineOptions.from_limits(doc)


@needs_engine
def test_new_options_are_allowed_by_the_engines_facts_and_not_without_them(facts: EngineOptions) -> None:
    new = job(verify="crc32c", percentile_list="50:99.9", gtod_reduce="1", prio="4", new_group="1")
    assert check(new, facts) == []
    without = check(new, None)  # no engine facts: the frozen pre-0030 list only
    assert {v.field for v in without} == {
        f"workload.jobs.0.{n}" for n in ("verify", "percentile_list", "gtod_reduce", "prio", "new_group")
    }
    assert all("without the engine's facts" in v.message for v in without)
    assert check(job(direct="1", ioengine="libaio"), None) == []  # the platform's own options still go


@needs_engine
@pytest.mark.parametrize(
    ("option", "value", "says"),
    [
        ("write_bw_log", "/etc/cron.d/x", "names or makes files on the host"),
        ("write_lat_log", "lat", "names or makes files on the host"),
        ("filename_format", "$jobname.$filenum", "names or makes files on the host"),
        ("verify_dump", "1", "names or makes files on the host"),
        ("directory", "/etc", "set by the agent alone"),  # and a path: ADR 0009 §5
        ("beneath", "/", "set by the agent alone"),
        ("readonly", "0", "set by the agent alone"),
        ("exec_prerun", "id", "not an option of the host's engine"),
        ("include", "/etc/passwd", "not an option of the host's engine"),
    ],
)
def test_paths_and_the_hosts_own_options_are_refused(
    facts: EngineOptions, option: str, value: str, says: str
) -> None:
    [v] = check(job(**{option: value}), facts)
    assert v.rule == "option.not_allowed" and v.field == f"workload.jobs.0.{option}" and says in v.message


# --- rw: every form, trims -------------------------------------------------------------------------


RW_VECTORS = json.loads(
    (Path(__file__).resolve().parents[2] / "libs/policy/testdata/rw_modes.json").read_text()
)


@pytest.mark.parametrize("case", RW_VECTORS["cases"], ids=lambda c: c["rw"])
def test_rw_forms(case: dict[str, Any]) -> None:
    # the vectors the UI's tests read too (frontend/src/components/Jobfile/jobfile.test.ts)
    rw = parse_rw(case["rw"])
    assert (rw.writes, rw.trims) == (case["writes"], case["trims"])


@needs_engine
def test_read_with_fio_modifiers_is_a_read_of_a_read_only_file(facts: EngineOptions) -> None:
    for rw in ("read:-8k", "randread:4", "read:8k"):
        assert check(job(rw=rw), facts, "/data/ro.img") == []
    assert found(check(job(rw="write:112k"), facts, "/data/ro.img")) == [
        ("file.read_only", "workload.jobs.0.rw")
    ]
    # a modifier the engine would refuse is not taken for a read
    assert found(check(job(rw="read:x"), facts, "/data/ro.img")) == [("file.read_only", "workload.jobs.0.rw")]


@needs_engine
def test_trims_only_on_a_device_the_host_marked_destructive(facts: EngineOptions) -> None:
    trim = job(rw="randtrim", size="1m")
    assert found(check(trim, facts, "/data/bench")) == [("target.kind", "workload.jobs.0.rw")]
    assert [v.rule for v in check(trim, facts, "/data/rw.img")] == ["target.kind"]
    assert [v.rule for v in check(trim, facts, DEV, destructive=True)] == ["device.not_destructive"]
    assert [v.rule for v in check(trim, facts, DEV_RW)] == ["run.destructive_not_confirmed"]
    assert check(trim, facts, DEV_RW, destructive=True) == []


# --- rate and rate_iops per direction ---------------------------------------------------------------


def test_rate_pairs_read_per_direction() -> None:
    assert parse_rate("1m", iops=False) == (1 << 20, 1 << 20)
    assert parse_rate("1m,2m", iops=False) == (1 << 20, 2 << 20)
    assert parse_rate("1m,", iops=False) == (1 << 20, 0)  # reads only: writes uncapped
    assert parse_rate(",500k", iops=False) == (0, 500 << 10)
    assert parse_rate("100,50", iops=True) == (100, 50)
    assert parse_rate("1k", iops=False, kb_base=1000) == (1000, 1000)
    for bad in ("1m,2m,3m", "x", "100,5k"):
        with pytest.raises(ValueError):
            parse_rate(bad, iops=bad != "x" and "k" in bad)


@needs_engine
def test_time_based_writes_are_bounded_by_the_write_directions_cap(facts: EngineOptions) -> None:
    def writes(**o: str) -> list[tuple[str, str]]:
        j = job(rw="randwrite", runtime="10", time_based="1", **o)
        return found(check(j, facts, DEV_RW, destructive=True, max_bytes_written=3 << 20))

    assert writes(rate_iops="100,50") == []  # 50 writes/s x 4 KiB x 10 s = 2 MB
    assert writes(rate_iops="50,100") == [("limit.bytes_written", "workload.jobs.0.size_bytes")]  # 4 MB
    assert writes(rate=",256k") == []  # 2.5 MiB
    assert writes(rate=",512k") == [("limit.bytes_written", "workload.jobs.0.size_bytes")]  # 5 MiB
    unbounded = writes(rate="256k,")  # reads capped, writes not
    assert unbounded == [("limit.bytes_written", "workload.jobs.0.time_based")]
    assert writes(rate_iops="100,x") == [("limit.bytes_written", "workload.jobs.0.rate_iops")]


# --- run time: startdelay, wait_for, pacing ---------------------------------------------------------


@needs_engine
def test_startdelay_and_wait_for_add_to_the_runs_duration(facts: EngineOptions) -> None:
    one = job(runtime="20", time_based="1")
    assert check({**one, "jobs": [{**one["jobs"][0], "startdelay": "30"}]}, facts, max_runtime_s=60) == []
    late = {**one, "jobs": [{**one["jobs"][0], "startdelay": "10-45"}]}  # the range's high end counts
    [v] = check(late, facts, max_runtime_s=60)
    assert (v.rule, v.field) == ("limit.runtime", "workload.jobs.0.startdelay") and "65 s" in v.message
    two = {
        "global": {"runtime": "40", "time_based": "1", "size": "1m"},
        "jobs": [{"name": "a"}, {"name": "b"}],
    }
    assert check(two, facts, max_runtime_s=60) == []  # together: 40 s
    chained = {**two, "jobs": [{"name": "a"}, {"name": "b", "wait_for": "a"}]}
    [v] = check(chained, facts, max_runtime_s=60)
    assert (v.rule, v.field) == ("limit.runtime", "workload.jobs.1.wait_for") and "80 s" in v.message


@needs_engine
def test_a_size_bound_job_lasts_what_its_pacing_forces(facts: EngineOptions) -> None:
    def paced(**o: str) -> list[tuple[str, str]]:
        pacing = with_rows(facts, "number_ios")
        return found(check(job(rw="write", size="64m", **o), pacing, max_runtime_s=60))

    assert paced(rate="2m") == []  # 32 s
    assert paced(rate="1m") == [("limit.runtime", "workload.jobs.0.rate")]  # 64 s
    assert paced(rate_iops="500") == []  # 16384 writes: 33 s
    assert paced(rate_iops="200") == [("limit.runtime", "workload.jobs.0.rate_iops")]
    assert paced(rate_iops="200,1000") == []  # the read cap does not pace writes
    assert paced(thinktime="2ms") == []  # 16384 x 2 ms = 33 s
    assert paced(thinktime="5000") == [("limit.runtime", "workload.jobs.0.thinktime")]  # us: 82 s
    assert paced(thinktime="5000", thinktime_blocks="2") == []
    assert paced(rate="1m", runtime="30") == []  # a runtime bounds it
    assert paced(rate="1m", number_ios="1000") == []  # 4 MB


# --- sizes, blocks, files ---------------------------------------------------------------------------


@needs_engine
def test_bsrange_is_judged_as_block_sizes(facts: EngineOptions) -> None:
    facts = with_rows(facts, "bsrange")
    assert check(job(bsrange="4k-1m"), facts, max_bs_bytes=1 << 20) == []
    [v] = check(job(bsrange="4k-2m"), facts, max_bs_bytes=1 << 20)
    assert (v.rule, v.field) == ("limit.block_size", "workload.jobs.0.bsrange")
    assert parse_bsrange("4k-64k,8k-1m") == [4096, 65536, 8192, 1 << 20]


@needs_engine
def test_nrfiles_and_filesize_against_the_hosts_files_and_bytes(facts: EngineOptions) -> None:
    files = job(nrfiles="100", numjobs="10", size=None)
    del files["jobs"][0]["size"]
    assert check(files, facts, max_files=1000) == []
    [v] = check(job(nrfiles="101", numjobs="10"), facts, max_files=1000)
    assert (v.rule, v.field) == ("limit.files", "workload.jobs.0.nrfiles") and "1010 files" in v.message
    sized = {"global": {}, "jobs": [{"name": "w", "rw": "write", "nrfiles": "8", "filesize": "1m-4m"}]}
    assert check(sized, facts, max_bytes_written=64 << 20) == []  # 8 x 4 MiB laid out + 32 MiB written
    [v] = check(sized, facts, max_bytes_written=63 << 20)
    assert v.rule == "limit.bytes_written"


@needs_engine
def test_number_ios_bounds_a_size_bound_writer(facts: EngineOptions) -> None:
    facts = with_rows(facts, "number_ios")
    assert check(job(rw="write", size="1g", number_ios="256"), facts, target=DEV_RW, destructive=True,
                 max_bytes_written=1 << 20) == []  # fmt: skip
    [v] = check(job(rw="write", size="1g", number_ios="257"), facts, target=DEV_RW, destructive=True,
                max_bytes_written=1 << 20)  # fmt: skip
    assert v.rule == "limit.bytes_written"


@needs_engine
def test_a_job_file_from_fios_examples_is_judged_with_its_new_options(facts: EngineOptions) -> None:
    """fio's flow.fio (flow, flow_sleep, norandommap, thread, time_based) and basic-verify.fio
    (verify=crc32c), parsed by the engine as the agent does, then judged."""
    examples = Path(__file__).resolve().parents[1] / "engine" / "fio-examples"
    for name, target, destructive in (("flow", "/data/bench", False), ("basic-verify", DEV_RW, True)):
        parse = json.loads(
            subprocess.run(
                [str(ENGINE), "--untrusted", "--parse-only", str(examples / f"{name}.fio")],
                capture_output=True,
                text=True,
                check=True,
                env={"PATH": "/usr/bin:/bin"},
            ).stdout
        )
        lease = {"mode": "jobfile", "text": "(the text)"}
        pol = policy()
        assert check_run(pol, target_path=target, engine_job=lease, meter=None, destructive=destructive,
                         file_facts=parse, engine=facts) == [], name  # fmt: skip
        # flow.fio writes time-based with no rate: a host bounding bytes written refuses it at the text
        bounded = policy(max_bytes_written=1 << 30)
        got = check_run(bounded, target_path=target, engine_job=lease, meter=None, destructive=destructive,
                        file_facts=parse, engine=facts)  # fmt: skip
        if name == "flow":
            assert found(got) == [("limit.bytes_written", "workload.jobfile.text")]
            assert got[0].message.startswith("[job2] ")


# --- fuzz: the parsers of these values read outside text ---------------------------------------------

values = st.text(alphabet="0123456789kKmMgGtTpPiIbB,:-.xse %/", max_size=24) | st.text(max_size=24)


@given(values)
@settings(max_examples=400, deadline=None)
def test_the_value_parsers_give_a_value_or_valueerror(text: str) -> None:
    for parse in (
        parse_rw,
        lambda t: parse_rate(t, iops=False),
        lambda t: parse_rate(t, iops=True),
        parse_time_range_ns,
        parse_size_range,
        parse_bsrange,
        parse_time_us_default,
        parse_offset_increment,
        lambda t: smallest_blocks((4096, 4096), "bssplit", t),
        lambda t: smallest_blocks((4096, 4096), "bsrange", t),
    ):
        with contextlib.suppress(ValueError):
            parse(text)
    rw = parse_rw(text) if ":" not in text else None
    if rw is not None:
        assert rw.writes or rw.mode in ("read", "randread")  # a read only when it says read


new_options = st.sampled_from(
    [
        "rw", "rate", "rate_iops", "startdelay", "wait_for", "thinktime", "thinktime_blocks", "bsrange",
        "nrfiles", "filesize", "number_ios", "runtime", "time_based", "size", "kb_base", "verify", "name",
        "offset_increment", "offset_align", "offset", "numjobs", "bssplit", "bs",
    ]
)  # fmt: skip


@given(
    st.lists(st.tuples(new_options, values), max_size=6),
    st.sampled_from(["/data/bench", DEV_RW, "/data/ro.img"]),
)
@settings(max_examples=300, deadline=None)
def test_any_values_of_the_new_options_are_judged_never_an_exception(
    pairs: list[tuple[str, str]], target: str
) -> None:
    j = job(**{"rw": "write", **dict(pairs)})
    facts = EngineOptions.builtin()
    rows = {**facts.rows, **{n: "allowed" for n, _ in pairs}}
    names = {**facts.names, **{n: n for n, _ in pairs}}
    lax = EngineOptions(rows=rows, names=names, source="test")  # type: ignore[arg-type]
    for v in check(
        j, lax, target, destructive=True, max_bytes_written=1 << 30, max_runtime_s=60, max_files=10
    ):
        assert v.rule and v.field.startswith(("workload", "target_path", "destructive"))


def test_frozen_options_are_the_pre_0030_list() -> None:
    # never extended: a new option is the engine's to classify (ADR 0030)
    assert len(FROZEN_OPTIONS) == 45 and "verify" not in FROZEN_OPTIONS and "filename" not in FROZEN_OPTIONS


@needs_engine
def test_offset_increment_lays_out_to_the_last_clones_region(facts: EngineOptions) -> None:
    """4 clones of 16 MiB, 64 MiB apart: the data file is laid out to 3 x 64 + 16 MiB (fio's and the
    engine's layout), and the clones write 4 x 16 MiB."""
    facts = with_rows(facts, "offset_increment")  # an engine built before the row landed
    spread = job(rw="write", size="16m", numjobs="4", offset_increment="64m")
    assert check(spread, facts, max_bytes_written=(208 + 64) << 20) == []
    [v] = check(spread, facts, max_bytes_written=(208 + 64 << 20) - 1)
    assert v.rule == "limit.bytes_written" and str(208 + 64 << 20) in v.message
    assert check(job(rw="write", size="16m", numjobs="4"), facts, max_bytes_written=80 << 20) == []


OINC_VECTORS = json.loads(
    (Path(__file__).resolve().parents[2] / "libs/policy/testdata/offset_increment.json").read_text()
)["cases"]


@pytest.mark.parametrize("case", OINC_VECTORS, ids=[c["why"][:48] for c in OINC_VECTORS])
def test_offset_increment_places_the_clones_as_the_vectors(case: dict[str, Any]) -> None:
    """Each clone's start (a size increment, or N % of the file as fio finds it per clone, aligned
    up to offset_align or the smallest block: bs, bssplit's blocks that run, bs's R,W); the vectors
    are the engine's and fio's (tests/engine/test_control_options.py runs both on each)."""
    lax = with_rows(EngineOptions.builtin(), "offset_increment", "offset_align")
    violations: list[Violation] = []
    [parsed] = _jobs({"jobs": [{"name": "j", **case["options"]}]}, violations, lax)
    assert violations == []
    size = parse_size(case["options"]["size"])
    starts = _clone_starts(parsed, case["file_bytes"] or 0, size, grows=True)
    assert [starts[k] for k in range(len(case["starts"]))] == case["starts"]


@pytest.mark.parametrize(
    "case", [c for c in OINC_VECTORS if c["file_bytes"] is None], ids=lambda c: str(c["why"][:48])
)
def test_a_percentage_offset_increment_lays_out_the_new_file_to_its_real_end(case: dict[str, Any]) -> None:
    """A directory target's data file is new: clone 0 lays it out to its region's end, each later
    clone takes N % of what the ones before left, and the layout (a read job writes nothing else)
    ends where the furthest region ends, as the engine and fio lay it out."""
    lax = with_rows(EngineOptions.builtin(), "offset_increment", "offset_align")
    after = case["file_bytes_after"]
    read = job(**{**case["options"], "rw": "read"})
    assert check(read, lax, max_bytes_written=after) == []
    [v] = check(read, lax, max_bytes_written=after - 1)
    assert v.rule == "limit.bytes_written" and f"data file writes {after} bytes" in v.message, v.message


def test_offset_increment_percentages_are_read_or_refused_as_the_engine() -> None:
    assert parse_offset_increment("25%") == Percent(25) and parse_offset_increment("010%") == Percent(10)
    assert parse_offset_increment("100%") == Percent(100) and parse_offset_increment("64k") == 65536
    for bad in ("0%", "101%", "%", "x%", "-5%", "5.5%", "1%%", "1234567890123456%"):
        with pytest.raises(ValueError):
            parse_offset_increment(bad)
    lax = with_rows(EngineOptions.builtin(), "offset_increment")
    [v] = check(job(rw="write", numjobs="2", offset_increment="0%"), lax, max_bytes_written=1 << 40)
    assert v.rule == "limit.bytes_written" and v.field == "workload.jobs.0.offset_increment", v
    assert "cannot check offset_increment" in v.message
    # a percentage is no longer refused: 2 clones of 64 MiB, 50 % apart, lay out 96 MiB
    ok = job(rw="randread", numjobs="2", offset_increment="50%")
    assert check(ok, lax, max_bytes_written=96 << 20) == []
    assert len(check(ok, lax, max_bytes_written=(96 << 20) - 1)) == 1


# --- threads: only jobs that can run at the same time (s10 submit-dedupe) -------------------------------


@needs_engine
def test_jobs_that_wait_for_others_are_not_counted_beside_them(facts: EngineOptions) -> None:
    """A job with wait_for=NAME starts when the jobs named NAME have ended: the host's thread limit
    counts the most threads that can run at once, not the group's sum."""
    chain = {
        "global": {"rw": "randread", "size": "1m", "numjobs": "4"},
        "jobs": [{"name": "a"}, {"name": "b", "wait_for": "a"}, {"name": "c", "wait_for": "b"}],
    }
    assert check(chain, facts, max_threads=4) == []  # a, then b, then c: 4 at a time
    # c waits for a only: b and c may overlap (8); a never runs beside c
    fork = {**chain, "jobs": [{"name": "a"}, {"name": "b"}, {"name": "c", "wait_for": "a"}]}
    [v] = check(fork, facts, max_threads=7)
    assert v.rule == "limit.threads" and "8 threads" in v.message, v.message
    assert check(fork, facts, max_threads=8) == []
    # the heaviest set of jobs that can overlap: d (6) waits for a; b + c + d = 9 beat a + b + c = 7
    heavy = {
        "global": {"rw": "randread", "size": "1m"},
        "jobs": [
            {"name": "a", "numjobs": "4"},
            {"name": "b", "numjobs": "2"},
            {"name": "c", "numjobs": "1"},
            {"name": "d", "numjobs": "6", "wait_for": "a"},
        ],
    }
    [v] = check(heavy, facts, max_threads=8)
    assert "jobs 1-3 run at the same time with 9 threads" in v.message, v.message
    assert v.field == "workload.jobs.3.numjobs"
    assert check(heavy, facts, max_threads=9) == []
    # wait_for names a job defined later (the engine refuses it): never a reason to count less
    later = {**heavy, "jobs": [{**heavy["jobs"][3], "name": "d"}, *heavy["jobs"][:3]]}
    assert [x.rule for x in check(later, facts, max_threads=9)] == ["limit.threads"]


@needs_engine
def test_offload_counts_its_submission_threads(facts: EngineOptions) -> None:
    """io_submit_mode=offload: each clone has a pool of iodepth submission threads beside it."""
    off = job(numjobs="2", iodepth="3", io_submit_mode="offload")
    [v] = check(off, facts, max_threads=7)
    assert v.rule == "limit.threads" and "8 threads" in v.message, v.message
    assert check(off, facts, max_threads=8) == []
    assert check(job(numjobs="2", iodepth="3"), facts, max_threads=2) == []  # inline: 2


def test_a_verify_job_of_several_files_counts_its_log_of_writes(facts: EngineOptions) -> None:
    """the engine logs each write of a verify job of several files per clone for its read-back
    (24 bytes a write): the memory rule counts it; a single file is replayed, a time-based job
    never reads back, a job without verify keeps nothing"""
    # 2 files of 256 GiB in 4k blocks: 2^27 writes x 24 bytes = 3 GiB of log per thread
    many = job(rw="randwrite", nrfiles="2", filesize="256g", verify="crc32c", size=None)
    del many["jobs"][0]["size"]
    assert [v.rule for v in check(many, facts, max_memory_bytes=1 << 30)] == ["limit.memory"]
    others = ({"verify": "0"}, {"nrfiles": "1", "filesize": "512g"}, {"time_based": "1", "runtime": "10"})
    for other in others:
        alt = {"global": {}, "jobs": [{**many["jobs"][0], **other}]}
        assert check(alt, facts, max_memory_bytes=1 << 30) == [], other
