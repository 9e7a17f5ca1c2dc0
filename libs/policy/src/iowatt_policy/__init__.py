"""iowatt's host policy (docs/adr/0009-host-policy.md), shared by the agent and the server.
Standard library only.

Model (`model.py`)
    Target(path, kind directory|file|device, writable, destructive, model, serial_sha256, size_bytes)
        Target.directory(p), Target.file(p, allow_write=), Target.device(by_id_path, destructive=)
    Limits(max_threads, max_iodepth, max_bs_bytes, max_bytes_written, max_runtime_s,
           max_memory_bytes, max_files)   None = no limit; the last two "auto" by default (AUTO)
    effective_max_memory(limits, mem_total_bytes), effective_max_files(limits, target) -> Effective
                                                  the limit in force: the host's, or the default
                                                  derived from its RAM / the target's free inodes
    Policy(targets, limits, allowed_dbms)         the host's policy.json (to_dict / from_dict);
                                                  allowed_dbms: DBMSs a TPC-H run may start (KNOWN_DBMS)
    MeterInfo(name, driver, tier)                 a meter as reported: never its spec
    ReportedPolicy(targets, meters, default_meter, limits, allowed_dbms, mem_total_bytes)
                                                  inventory.policy (directory targets carry
                                                  free_inodes)
    PolicyError(field, message)                   from every from_dict(): names the bad field
Rules (`check.py`)
    check_run(policy, *, target_path, engine_job, meter, destructive, file_facts=None) -> list[Violation]
        engine_job: a block job {"global", "jobs"} or a file workload's {"mode": "postmark",
        "commands"} / {"mode": "vdbench", "parameters", "scale", "elapsed"?} / {"mode":
        "heap-btree", "records", "queries"?, "cache_fractions"?, "randseed"?, "structure"?} or a
        TPC-H job {"mode": "tpch", "dbms", "scale_factor", "streams"?, "query_timeout_s"?,
        "buffer_pool_bytes"?} (dbms in the host's allowed_dbms: rule dbms.not_allowed): a
        directory target only; file_facts = the engine's --parse-only `bounds` (TPC-H: libs/
        workload's bound; None skips the limits)
    job_value(job, key) -> the checked value as command-line text
    Violation(rule, field, message, fix)          .reason(): "host policy refused this run [rule]: ..."
    check_target_on_host(target) -> (path the engine opens | None, violations)   agent only
    RULES, ALLOWED_OPTIONS (= FROZEN_OPTIONS), AGENT_ONLY_OPTIONS
Engine facts (`options.py`, ADR 0030)
    EngineOptions.from_limits(iowatt-engine --limits) / .builtin(): which options a server may
        send (the engine's `server` class of each row: allowed | host | path); check_run(engine=)
    FROZEN_OPTIONS (the pre-0030 list, the fallback without facts), HOST_RULE_OPTIONS (what the
        rules read)
Memory (`memory.py`)
    the one memory bound of a run: thread_bytes, random_map_bytes (block jobs, used by
    check_run), file_workload_memory(mode, facts, job), tpch_memory(dbms, pool, streams) ->
    MemoryBound(bytes, field, what); DBMS_MEMORY; the engine's constants
Several targets at once (`targets.py`)
    MAX_TARGETS (the one limit of a multi-target run's targets), shared_policy(policy, n): the
        policy each of n targets running together is judged by (threads, bytes written and
        memory divided by n)
Job files (`jobfile.py`, ADR 0029)
    block_job(parse) -> the engine's JSON job file of its --parse-only document of a fio job file
        (the job file's filename and directory dropped: the run's target replaces them);
        multi_file(parse): its jobs make files of their own (the run gets its own directory);
        parsed_jobs(parse), replaced_options(parse), same_jobs(a, b), ParseUnreadable,
        JOBFILE_SCHEMA, REPLACED_OPTIONS, MAX_JOBFILE_CHARS
fio values (`fio.py`)
    parse_size(text, kb_base) (iowatt_workload's, re-exported: one size parser, ADR 0013),
    parse_time_ns, parse_u64, parse_bool, parse_bs, parse_bssplit_sizes
"""

from iowatt_policy.check import (
    AGENT_ONLY_OPTIONS,
    ALLOWED_OPTIONS,
    DBMS_NOT_ALLOWED,
    DEVICE_NOT_DESTRUCTIVE,
    FILE_JOB_KEYS,
    FILE_MODES,
    FILE_READ_ONLY,
    JOB_MODES,
    LIMIT_BLOCK_SIZE,
    LIMIT_BYTES_WRITTEN,
    LIMIT_FILES,
    LIMIT_IODEPTH,
    LIMIT_MEMORY,
    LIMIT_RUNTIME,
    LIMIT_THREADS,
    METER_SPEC_FROM_SERVER,
    METER_UNKNOWN,
    OPTION_NOT_ALLOWED,
    RULES,
    RUN_DESTRUCTIVE_NOT_CONFIRMED,
    TARGET_KIND,
    TARGET_NOT_ALLOWED,
    TARGET_SYMLINK,
    TPCH_MODE,
    Violation,
    check_run,
    check_target_on_host,
    job_value,
)
from iowatt_policy.fio import (
    RwMode,
    parse_bool,
    parse_bs,
    parse_bssplit_sizes,
    parse_rate,
    parse_rw,
    parse_size,
    parse_time_ns,
    parse_u64,
)
from iowatt_policy.jobfile import (
    JOBFILE_SCHEMA,
    MAX_JOBFILE_CHARS,
    REPLACED_OPTIONS,
    ParseUnreadable,
    block_job,
    multi_file,
    parsed_jobs,
    replaced_options,
    same_jobs,
)
from iowatt_policy.memory import DBMS_MEMORY, MemoryBound, file_workload_memory, tpch_memory
from iowatt_policy.model import (
    AUTO,
    BY_ID_PREFIX,
    DEFAULT_FILES_FRACTION,
    DEFAULT_MAX_BS_BYTES,
    DEFAULT_MAX_BYTES_WRITTEN,
    DEFAULT_MAX_FILES_CAP,
    DEFAULT_MAX_IODEPTH,
    DEFAULT_MAX_RUNTIME_S,
    DEFAULT_MAX_THREADS,
    DEFAULT_MEMORY_FRACTION,
    KNOWN_DBMS,
    Effective,
    Limits,
    MeterInfo,
    Policy,
    PolicyError,
    ReportedPolicy,
    Target,
    TargetKind,
    check_name,
    check_path,
    effective_max_files,
    effective_max_memory,
)
from iowatt_policy.options import (
    FROZEN_OPTIONS,
    HOST_RULE_OPTIONS,
    EngineOptions,
    engine_options,
)
from iowatt_policy.targets import MAX_TARGETS, shared_policy

__all__ = [
    "MAX_TARGETS",
    "shared_policy",
    "FROZEN_OPTIONS",
    "HOST_RULE_OPTIONS",
    "EngineOptions",
    "engine_options",
    "RwMode",
    "parse_rw",
    "parse_rate",
    "JOBFILE_SCHEMA",
    "MAX_JOBFILE_CHARS",
    "REPLACED_OPTIONS",
    "ParseUnreadable",
    "block_job",
    "multi_file",
    "parsed_jobs",
    "replaced_options",
    "same_jobs",
    "AUTO",
    "DBMS_MEMORY",
    "DEFAULT_FILES_FRACTION",
    "DEFAULT_MAX_FILES_CAP",
    "DEFAULT_MEMORY_FRACTION",
    "Effective",
    "LIMIT_FILES",
    "LIMIT_MEMORY",
    "MemoryBound",
    "effective_max_files",
    "effective_max_memory",
    "file_workload_memory",
    "tpch_memory",
    "AGENT_ONLY_OPTIONS",
    "ALLOWED_OPTIONS",
    "BY_ID_PREFIX",
    "DEFAULT_MAX_BS_BYTES",
    "DEFAULT_MAX_BYTES_WRITTEN",
    "DEFAULT_MAX_IODEPTH",
    "DEFAULT_MAX_RUNTIME_S",
    "DEFAULT_MAX_THREADS",
    "DBMS_NOT_ALLOWED",
    "DEVICE_NOT_DESTRUCTIVE",
    "FILE_JOB_KEYS",
    "FILE_MODES",
    "JOB_MODES",
    "KNOWN_DBMS",
    "TPCH_MODE",
    "FILE_READ_ONLY",
    "LIMIT_BLOCK_SIZE",
    "LIMIT_BYTES_WRITTEN",
    "LIMIT_IODEPTH",
    "LIMIT_RUNTIME",
    "LIMIT_THREADS",
    "METER_SPEC_FROM_SERVER",
    "METER_UNKNOWN",
    "OPTION_NOT_ALLOWED",
    "RULES",
    "RUN_DESTRUCTIVE_NOT_CONFIRMED",
    "TARGET_KIND",
    "TARGET_NOT_ALLOWED",
    "TARGET_SYMLINK",
    "Limits",
    "MeterInfo",
    "Policy",
    "PolicyError",
    "ReportedPolicy",
    "Target",
    "TargetKind",
    "Violation",
    "check_name",
    "check_path",
    "check_run",
    "check_target_on_host",
    "job_value",
    "parse_bool",
    "parse_bs",
    "parse_bssplit_sizes",
    "parse_size",
    "parse_time_ns",
    "parse_u64",
]
