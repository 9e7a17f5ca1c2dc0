"""`check_run()`: may this run happen on this host? One implementation for the agent (on every
lease, authoritative) and the server (on every run it creates, with the policy the agent
reported, to answer 422 early). ADR 0009 §2-§3 and §5.
"""

from __future__ import annotations

import math
import os
import stat
from dataclasses import dataclass
from typing import Any

from iowatt_workload import (
    TPCH_BUFFER_POOL_BYTES_MAX,
    TPCH_BUFFER_POOL_BYTES_MIN,
    TPCH_QUERY_TIMEOUT_S_MAX,
    TPCH_QUERY_TIMEOUT_S_MIN,
    TPCH_SCALE_FACTOR_MAX,
    TPCH_STREAMS_MAX,
    MiB,
    tpch_min_streams,
)
from iowatt_workload.innodb import (
    INNODB_BUFFER_POOL_BYTES_MAX,
    INNODB_BUFFER_POOL_BYTES_MIN,
    INNODB_DEFAULT_BUFFER_POOL_BYTES,
    INNODB_SECONDS_MAX,
    INNODB_SECONDS_MIN,
    INNODB_TABLE_SIZE_MAX,
    INNODB_TABLES_MAX,
    INNODB_THREADS_MAX,
    INNODB_WARMUP_S_MAX,
    parse_settings,
)
from iowatt_workload.pts import REGION_ALIGN as PTS_REGION_ALIGN
from iowatt_workload.pts import PtsJobError
from iowatt_workload.pts import parse_job as parse_pts_job
from iowatt_workload.pts import planned_phases as pts_planned_phases
from iowatt_workload.pts import round_job as pts_round_job

from .fio import (
    Percent,
    clone_starts,
    parse_bool,
    parse_bs,
    parse_bsrange,
    parse_bssplit_sizes,
    parse_offset_increment,
    parse_rate,
    parse_rw,
    parse_size,
    parse_size_range,
    parse_time_ns,
    parse_time_range_ns,
    parse_time_us_default,
    parse_u64,
    smallest_blocks,
    value_text,
)
from .jobfile import ParseUnreadable, block_job
from .memory import (
    ENGINE_BASE_BYTES,
    ENGINE_WRITE_POOL_BYTES,
    MemoryBound,
    file_workload_memory,
    innodb_flush_memory,
    random_map_bytes,
    thread_bytes,
    tpch_memory,
    verify_log_bytes,
)
from .model import (
    BY_ID_PREFIX,
    KNOWN_DBMS,
    PolicyError,
    ReportedPolicy,
    Target,
    check_name,
    check_path,
    effective_max_files,
    effective_max_memory,
)
from .modes import INNODB_FLUSH, MODES, PTS, TPCH
from .options import FROZEN_OPTIONS, EngineOptions

# ADR 0009 §3: stable rule ids, shown on failed runs and in the server's 422.
TARGET_NOT_ALLOWED = "target.not_allowed"
TARGET_KIND = "target.kind"
TARGET_SYMLINK = "target.symlink"
FILE_READ_ONLY = "file.read_only"
DEVICE_NOT_DESTRUCTIVE = "device.not_destructive"
RUN_DESTRUCTIVE_NOT_CONFIRMED = "run.destructive_not_confirmed"
METER_SPEC_FROM_SERVER = "meter.spec_from_server"
METER_UNKNOWN = "meter.unknown"
LIMIT_THREADS = "limit.threads"
LIMIT_IODEPTH = "limit.iodepth"
LIMIT_BLOCK_SIZE = "limit.block_size"
LIMIT_BYTES_WRITTEN = "limit.bytes_written"
LIMIT_RUNTIME = "limit.runtime"
LIMIT_MEMORY = "limit.memory"
LIMIT_FILES = "limit.files"
OPTION_NOT_ALLOWED = "option.not_allowed"
DBMS_NOT_ALLOWED = "dbms.not_allowed"
RULES = (
    TARGET_NOT_ALLOWED,
    TARGET_KIND,
    TARGET_SYMLINK,
    FILE_READ_ONLY,
    DEVICE_NOT_DESTRUCTIVE,
    RUN_DESTRUCTIVE_NOT_CONFIRMED,
    METER_SPEC_FROM_SERVER,
    METER_UNKNOWN,
    LIMIT_THREADS,
    LIMIT_IODEPTH,
    LIMIT_BLOCK_SIZE,
    LIMIT_BYTES_WRITTEN,
    LIMIT_RUNTIME,
    LIMIT_MEMORY,
    LIMIT_FILES,
    OPTION_NOT_ALLOWED,
    DBMS_NOT_ALLOWED,
)

# ADR 0009 §5: engine options only the agent sets (from the host's target), never the server.
AGENT_ONLY_OPTIONS = frozenset(
    {"filename", "directory", "beneath", "create_new", "unlink", "keep_existing", "readonly", "destructive"}
)
# ADR 0030: which options a server may send is the engine's fact (its --limits `server` class,
# options.EngineOptions); the hand-written list of ADRs 0009/0029 survives only as the fallback of
# a caller without the engine's facts (options.FROZEN_OPTIONS), never extended.
ALLOWED_OPTIONS = FROZEN_OPTIONS
WRITE_MODES = frozenset({"write", "randwrite", "rw", "readwrite", "randrw"})
READ_MODES = frozenset({"read", "randread"})
MAX_VALUE_CHARS = 1000
MAX_NUMJOBS = 4096  # the engine's numjobs bound (its --limits): clones whose layout is walked

# Engine option -> the field of the server's workload job (WorkloadSpec.jobs[]) that carries it,
# so a 422 names what the user typed; options without a field keep their own name.
OPTION_FIELDS = {
    "bs": "bs_bytes",
    "blocksize": "bs_bytes",
    "size": "size_bytes",
    "offset": "offset_bytes",
    "io_size": "io_size_bytes",
    "io_limit": "io_size_bytes",
    "runtime": "runtime_s",
    "ramp_time": "ramp_time_s",
    "readwrite": "rw",
    "wait_for_previous": "stonewall",
}
# the size options read with the kb_base in force where they are given, and how
_SIZE_PARSERS: dict[str, Any] = {
    "size": parse_size,
    "offset": parse_size,
    "offset_increment": parse_offset_increment,
    "offset_align": parse_size,
    "io_size": parse_size,
    "bs": parse_bs,
    "bssplit": lambda t, kb: tuple(parse_bssplit_sizes(t, kb)),
    "bsrange": lambda t, kb: tuple(parse_bsrange(t, kb)),
    "filesize": parse_size_range,
    "rate": lambda t, kb: parse_rate(t, iops=False, kb_base=kb),
}


@dataclass(frozen=True)
class Violation:
    """Why a run may not happen. `field` is the RunCreate field a 422 names (`target_path`,
    `meter`, `destructive`, `workload.jobs.N.numjobs`, `workload.global.filename`, ...); `fix` is
    the host command that would allow the run (`iowatt-agent ...`), or what to change instead
    when no host command can allow it."""

    rule: str
    field: str
    message: str
    fix: str

    @property
    def fix_on_host(self) -> bool:
        return self.fix.startswith("iowatt-agent ")

    def fix_text(self) -> str:
        return f"on the host: {self.fix}" if self.fix_on_host else self.fix

    def reason(self) -> str:
        """The failed run's reason (ADR 0009 §3)."""
        return f"host policy refused this run [{self.rule}]: {self.message} ({self.fix_text()})"

    def to_dict(self) -> dict[str, str]:
        return {"rule": self.rule, "field": self.field, "message": self.message, "fix": self.fix}


def _limit_fix(flag: str, needed: int | float | None) -> str:
    value = "none" if needed is None else f"{needed:g}" if isinstance(needed, float) else str(needed)
    return f"iowatt-agent targets limits --{flag} {value}"


def _add_target_fix(path: str, policy: ReportedPolicy | None = None) -> str:
    inside = next(
        (
            t.path
            for t in (policy.targets if policy is not None else ())
            if t.kind == "directory" and path.startswith(t.path.rstrip("/") + "/")
        ),
        None,
    )
    if inside is not None:
        return (
            f"give the allowed directory {inside} itself (the agent creates its own data file in it), "
            f"or on the host: iowatt-agent targets add {path}"
        )
    if path.startswith(BY_ID_PREFIX):
        return f"iowatt-agent targets add --device {path}"
    if path.startswith(("/dev/shm/", "/dev/mqueue/")) or path == "/dev/shm":
        return f"iowatt-agent targets add {path} (a directory) or --file {path} (an existing file)"
    if path.startswith("/dev/"):
        return f"iowatt-agent targets add --device {BY_ID_PREFIX}... (the stable name of {path})"
    return f"iowatt-agent targets add {path} (a directory) or --file {path} (an existing file)"


# --- the job -----------------------------------------------------------------------------------


@dataclass
class _Value:
    text: str
    field: str


@dataclass
class _Job:
    index: int
    options: dict[str, _Value]  # the engine's row name -> last value given (global first, then the job)
    kb_bytes: dict[str, int | tuple[int, ...] | Percent | str]  # size options read with the kb_base in force
    smallest: tuple[int, int] = (4096, 4096)  # the smallest block of each direction (bs, bssplit, bsrange)

    def field(self, name: str) -> str:
        value = self.options.get(name)
        if value is not None:
            return value.field
        return f"workload.jobs.{self.index}.{OPTION_FIELDS.get(name, name)}"

    def text(self, name: str) -> str | None:
        value = self.options.get(name)
        return value.text if value is not None else None


def _section_items(
    section: object, prefix: str, violations: list[Violation], engine: EngineOptions
) -> list[tuple[str, str, str]]:
    """(the engine's row name, value text, field) of one section, in order; bad entries and options
    the engine's facts do not let a server send become violations."""
    if not isinstance(section, dict):
        violations.append(
            Violation(OPTION_NOT_ALLOWED, prefix, "a job section must be an object of options", "fix the job")
        )
        return []
    items = []
    for name, value in section.items():
        field = f"{prefix}.{OPTION_FIELDS.get(str(name), str(name))}"
        server = engine.server_class(name) if isinstance(name, str) else None
        row = engine.canonical(name) if isinstance(name, str) else None
        if server != "allowed" or row is None:
            shown = repr(name)[:80]
            if server == "host" or name in AGENT_ONLY_OPTIONS:
                why = f"{shown} is set by the agent alone, from the host's target"
                fix = f"remove {shown} from the job: the host's target decides it"
            elif server == "path":
                why = (
                    f"{shown} names or makes files on the host: a server decides no path (the run's "
                    "target is the only file a job uses)"
                )
                fix = f"remove {shown} from the job (run it locally with iowatt-agent bench FILE.fio)"
            elif engine.source == "builtin":
                why = f"{shown} is not an option a server may send (without the engine's facts)"
                fix = f"remove {shown} from the job, or update iowatt-engine and iowatt-agent on the host"
            else:
                why = f"{shown} is not an option of the host's engine"
                fix = f"remove {shown} from the job (allowed options: the engine's fio options, no paths)"
            violations.append(Violation(OPTION_NOT_ALLOWED, field, why, fix))
            continue
        try:
            text = value_text(value)
        except ValueError as exc:
            violations.append(
                Violation(OPTION_NOT_ALLOWED, field, f"{name}: {exc}", f"give {name} a plain value")
            )
            continue
        if len(text) > MAX_VALUE_CHARS or "\x00" in text:
            violations.append(
                Violation(OPTION_NOT_ALLOWED, field, f"{name}: value too long or contains NUL", f"fix {name}")
            )
            continue
        items.append((row, text, field))
    return items


def _jobs(engine_job: object, violations: list[Violation], engine: EngineOptions) -> list[_Job]:
    if not isinstance(engine_job, dict):
        violations.append(
            Violation(OPTION_NOT_ALLOWED, "workload", "the engine job must be an object", "fix the job")
        )
        return []
    for key in engine_job:
        if key not in ("global", "jobs"):
            violations.append(
                Violation(
                    OPTION_NOT_ALLOWED,
                    f"workload.{key}"[:200],
                    f"{str(key)[:80]!r} is not part of an engine job (global, jobs)",
                    "send only global and jobs",
                )
            )
    glob = _section_items(engine_job.get("global") or {}, "workload.global", violations, engine)
    raw_jobs = engine_job.get("jobs")
    if not isinstance(raw_jobs, list) or not raw_jobs:
        violations.append(
            Violation(OPTION_NOT_ALLOWED, "workload.jobs", "the engine job has no jobs", "add a job")
        )
        return []
    jobs = []
    for index, raw in enumerate(raw_jobs):
        own = _section_items(raw, f"workload.jobs.{index}", violations, engine)
        job = _Job(index=index, options={}, kb_bytes={})
        kb_base = 1024
        for name, text, field in [*glob, *own]:
            job.options[name] = _Value(text, field)
            # sizes are read with the kb_base in force where they are given (the engine's rule)
            try:
                if name == "kb_base":
                    kb_base = int(text) if text in ("1000", "1024") else kb_base
                elif name in _SIZE_PARSERS:
                    job.kb_bytes[name] = _SIZE_PARSERS[name](text, kb_base)
                    if name in ("bs", "bssplit", "bsrange"):
                        job.smallest = smallest_blocks(job.smallest, name, text, kb_base)
                    if name == "bs":  # the later of bs and bsrange wins (the engine's rule)
                        job.kb_bytes.pop("bsrange", None)
                    elif name == "bsrange":
                        job.kb_bytes.pop("bs", None)
            except ValueError as exc:
                job.kb_bytes[name] = str(exc)
        jobs.append(job)
    return jobs


class _Unreadable(Exception):
    def __init__(self, name: str, field: str, why: str) -> None:
        super().__init__(why)
        self.name, self.field, self.why = name, field, why


def _u64(job: _Job, name: str, default: int) -> int:
    text = job.text(name)
    if text is None:
        return default
    try:
        return parse_u64(text)
    except ValueError as exc:
        raise _Unreadable(name, job.field(name), str(exc)) from None


def _time_ns(job: _Job, name: str) -> int:
    text = job.text(name)
    if text is None:
        return 0
    try:
        return parse_time_ns(text)
    except ValueError as exc:
        raise _Unreadable(name, job.field(name), str(exc)) from None


def _flag(job: _Job, name: str, *, unreadable: bool) -> bool:
    text = job.text(name)
    if text is None:
        return False
    try:
        return parse_bool(text)
    except ValueError:
        return unreadable  # the engine refuses it (exit 2) before any I/O; assume the worse case


def _sizes(job: _Job, name: str) -> int | tuple[int, ...] | Percent | None:
    value = job.kb_bytes.get(name)
    if isinstance(value, str):
        raise _Unreadable(name, job.field(name), value)
    return value


def _bytes(job: _Job, name: str) -> int | None:
    """A single size option (size, offset, io_size, offset_align)."""
    value = _sizes(job, name)
    assert value is None or isinstance(value, int)
    return value


def _clone_starts(job: _Job, file_bytes: int, size: int | None, *, grows: bool) -> dict[int, int]:
    """Where each clone's region starts in a file of file_bytes (fio.clone_starts: offset,
    offset_increment as a size or N % of the file as fio finds it per clone, offset_align or the
    smallest block). numjobs above the engine's 4096 (which it refuses) is read as 4096."""
    increment = _sizes(job, "offset_increment") or 0
    assert not isinstance(increment, tuple)
    align = _bytes(job, "offset_align") or min(job.smallest)
    numjobs = min(max(1, _u64(job, "numjobs", 1)), MAX_NUMJOBS)
    offset = _bytes(job, "offset") or 0
    return dict(
        clone_starts(offset, increment, numjobs, file_bytes=file_bytes, size=size, grows=grows, align=align)
    )


def job_writes(job: _Job) -> bool:
    """Every rw form that changes the target's data: writes, trims (destructive), fio's `:N`
    modifiers read by their mode; an unknown or unreadable mode counts as writing."""
    try:
        return parse_rw(job.text("rw") or "read").writes
    except ValueError:
        return True


def job_trims(job: _Job) -> bool:
    try:
        return parse_rw(job.text("rw") or "read").trims
    except ValueError:
        return False


def _largest_block(job: _Job) -> tuple[str, int, int]:
    """(the option naming it, the largest block, the smallest block) of bs, bssplit and bsrange."""
    bs = _sizes(job, "bs")
    split = _sizes(job, "bssplit")
    brange = _sizes(job, "bsrange")
    plain = bs if isinstance(bs, tuple) else () if isinstance(brange, tuple) else (4096,)
    candidates = [("bs", s) for s in plain]
    candidates += [("bssplit", s) for s in (split if isinstance(split, tuple) else ())]
    candidates += [("bsrange", s) for s in (brange if isinstance(brange, tuple) else ())]
    name, largest = max(candidates, key=lambda c: c[1])
    return name, largest, min(c[1] for c in candidates)


def _write_block(job: _Job) -> int:
    """The largest block a write of the job moves (bs's W, bssplit's and bsrange's largest)."""
    bs = _sizes(job, "bs")
    largest = bs[1] if isinstance(bs, tuple) else 4096
    for name in ("bssplit", "bsrange"):
        sizes = _sizes(job, name)
        if isinstance(sizes, tuple):
            largest = max(largest, *sizes)
    return largest


def _pair(job: _Job, name: str) -> tuple[int, int]:
    """(read, write) of rate (bytes/s, read with kb_base) or rate_iops (I/Os/s); 0 = no cap."""
    if name == "rate":
        value = _sizes(job, "rate")
        return (value[0], value[1]) if isinstance(value, tuple) else (0, 0)
    text = job.text(name)
    if text is None:
        return 0, 0
    try:
        return parse_rate(text, iops=True)
    except ValueError as exc:
        raise _Unreadable(name, job.field(name), str(exc)) from None


def _time_parsed(job: _Job, name: str, parse: Any) -> Any:
    text = job.text(name)
    if text is None:
        return None
    try:
        return parse(text)
    except ValueError as exc:
        raise _Unreadable(name, job.field(name), str(exc)) from None


# --- the rules ---------------------------------------------------------------------------------


def _listed_target(policy: ReportedPolicy, target_path: str) -> tuple[Target | None, list[Violation]]:
    """The host's target at exactly `target_path`, or the violation that refuses it: a path that
    is not a plain absolute one, or one the host does not list (every workload kind's one rule)."""
    try:
        check_path(target_path, "target_path")
    except PolicyError as exc:
        return None, [
            Violation(
                TARGET_NOT_ALLOWED,
                "target_path",
                f"{exc.message}; only the host's targets, exactly as listed, may be used",
                "iowatt-agent targets list (use a target's path as listed)",
            )
        ]
    target = policy.target(target_path)
    if target is None:
        listed = ", ".join(t.path for t in policy.targets[:5]) or "none"
        return None, [
            Violation(
                TARGET_NOT_ALLOWED,
                "target_path",
                f"{target_path} is not one of this host's targets (allowed: {listed})",
                _add_target_fix(target_path, policy),
            )
        ]
    return target, []


def _check_target(
    policy: ReportedPolicy, target_path: str, destructive: bool, jobs: list[_Job]
) -> list[Violation]:
    target, refused = _listed_target(policy, target_path)
    if target is None:
        return refused
    found: list[Violation] = []
    writer = next((j for j in jobs if job_writes(j)), None)
    trimmer = next((j for j in jobs if job_trims(j)), None)
    if trimmer is not None and target.kind != "device":
        found.append(
            Violation(
                TARGET_KIND,
                trimmer.field("rw"),
                f"job {trimmer.index} trims ({trimmer.text('rw')}): a trim discards data, which the "
                f"host allows only on a raw device it marked destructive; {target.path} is a "
                f"{target.kind} target",
                "pick a device target the host marked destructive, or use rw=write",
            )
        )
    if destructive and target.kind != "device":
        found.append(
            Violation(
                TARGET_KIND,
                "destructive",
                f"destructive applies to raw devices only; {target.path} is a {target.kind} target",
                "send destructive: false",
            )
        )
    if target.kind == "file" and writer is not None and not target.writable:
        found.append(
            Violation(
                FILE_READ_ONLY,
                writer.field("rw"),
                f"job {writer.index} writes ({writer.text('rw')}) but the host allows only reads of "
                f"{target.path}",
                f"iowatt-agent targets add --file {target.path} --allow-write",
            )
        )
    if target.kind == "device":
        fix = f"iowatt-agent targets add --device {target.path} --destructive"
        if destructive and not target.destructive:
            found.append(
                Violation(
                    DEVICE_NOT_DESTRUCTIVE,
                    "destructive",
                    f"the run asks for destructive writes but the host has not marked {target.path} "
                    "destructive",
                    fix,
                )
            )
        elif writer is not None and not target.destructive:
            found.append(
                Violation(
                    DEVICE_NOT_DESTRUCTIVE,
                    writer.field("rw"),
                    f"job {writer.index} writes to the raw device {target.path}, which the host allows "
                    "only to be read",
                    fix,
                )
            )
        elif writer is not None and not destructive:
            found.append(
                Violation(
                    RUN_DESTRUCTIVE_NOT_CONFIRMED,
                    "destructive",
                    f"job {writer.index} writes to the raw device {target.path} (its data is lost): the run "
                    "must carry destructive: true",
                    "send destructive: true; the UI does after the user types the device's model or serial",
                )
            )
    return found


def _check_meter(policy: ReportedPolicy, meter: str | None) -> list[Violation]:
    if meter is None or meter == "":
        return []  # the host's default meter / no meter
    if ":" in meter:
        # never echo it: a spec may carry a password or a community string
        return [
            Violation(
                METER_SPEC_FROM_SERVER,
                "meter",
                "the run names a meter spec; specs (and the programs or credentials in them) live only on "
                "the host, runs name a meter",
                "iowatt-agent meters set NAME SPEC",
            )
        ]
    if policy.meter(meter) is not None:
        return []
    try:
        name = check_name(meter, "meter")
    except PolicyError:
        return [
            Violation(
                METER_UNKNOWN, "meter", "the meter name is not valid", "iowatt-agent meters set NAME SPEC"
            )
        ]
    known = ", ".join(m.name for m in policy.meters) or "none"
    return [
        Violation(
            METER_UNKNOWN,
            "meter",
            f"this host has no meter named {name!r} (its meters: {known})",
            f"iowatt-agent meters set {name} SPEC",
        )
    ]


def _check_limits(policy: ReportedPolicy, target: Target | None, jobs: list[_Job]) -> list[Violation]:
    limits = policy.limits
    found: list[Violation] = []

    def unreadable(rule: str, exc: _Unreadable) -> None:
        found.append(
            Violation(
                rule, exc.field, f"cannot check {exc.name}: {exc.why}", f"give {exc.name} in fio's syntax"
            )
        )

    # threads: the most a stonewall group runs at the same time (`_group_threads`: jobs that wait_for
    # another are never counted beside the jobs they wait for)
    groups: list[list[tuple[_Job, int]]] = []
    for job in jobs:
        if not groups or (job.index > 0 and _flag(job, "stonewall", unreadable=False)):
            groups.append([])
        try:
            threads = _job_threads(job)
        except _Unreadable as exc:
            unreadable("limit.threads", exc)
            continue
        groups[-1].append((job, threads))
    for group in groups:
        most, together = _group_threads(group)
        if limits.max_threads is None or most <= limits.max_threads:
            continue
        first = together[0]
        numjobs_of = {job.index: n for job, n in group}
        idx = [j.index for j in together]
        listed = (
            f"{idx[0]}-{idx[-1]}" if idx == list(range(idx[0], idx[-1] + 1)) else ", ".join(map(str, idx))
        )
        who = (
            f"jobs {listed} run at the same time with {most} threads"
            if len(together) > 1
            else f"job {first.index} runs {numjobs_of[first.index]} threads"
        )
        heaviest = max(together, key=lambda j: numjobs_of[j.index])
        found.append(
            Violation(
                LIMIT_THREADS,
                heaviest.field("numjobs"),
                f"{who}; the host allows {limits.max_threads}",
                _limit_fix("max-threads", most),
            )
        )
        break

    for job in jobs:
        try:
            iodepth = _u64(job, "iodepth", 1)
        except _Unreadable as exc:
            unreadable(LIMIT_IODEPTH, exc)
        else:
            if limits.max_iodepth is not None and iodepth > limits.max_iodepth:
                found.append(
                    Violation(
                        LIMIT_IODEPTH,
                        job.field("iodepth"),
                        f"job {job.index} asks for iodepth {iodepth}; the host allows {limits.max_iodepth}",
                        _limit_fix("max-iodepth", iodepth),
                    )
                )
        try:
            name, largest, _ = _largest_block(job)
        except _Unreadable as exc:
            unreadable(LIMIT_BLOCK_SIZE, exc)
        else:
            if limits.max_bs_bytes is not None and largest > limits.max_bs_bytes:
                found.append(
                    Violation(
                        LIMIT_BLOCK_SIZE,
                        job.field(name),
                        f"job {job.index} uses {largest}-byte blocks; the host allows {limits.max_bs_bytes}",
                        _limit_fix("max-bs", largest),
                    )
                )

    if limits.max_runtime_s is not None:
        found.extend(_check_runtime(limits.max_runtime_s, target, jobs))

    if limits.max_bytes_written is not None:
        found.extend(_check_bytes_written(limits.max_bytes_written, target, jobs))
    found.extend(_check_block_memory(policy, target, jobs))
    found.extend(_check_block_files(policy, target, jobs))
    return found


def _job_threads(job: _Job) -> int:
    """Threads one job runs: numjobs, and with io_submit_mode=offload each clone's pool of iodepth
    submission threads besides it (the engine's src/offload.c)."""
    numjobs = _u64(job, "numjobs", 1)
    if (job.text("io_submit_mode") or "inline") == "offload":
        return numjobs * (1 + _u64(job, "iodepth", 1))
    return numjobs


def _group_threads(group: list[tuple[_Job, int]]) -> tuple[int, list[_Job]]:
    """The most threads the jobs of one stonewall group run at the same time, and those jobs. A job
    with wait_for=NAME starts when every earlier job named NAME has ended (the engine's and fio's
    rule), so it never runs beside them nor beside what they waited for; any jobs not ordered so
    may overlap (their durations are unknown). The most is the heaviest set of jobs no two of which
    are ordered (a maximum-weight antichain): the total minus a maximum flow from each job to the
    jobs after it (Dilworth's theorem, weighted)."""
    n = len(group)
    if n == 0:
        return 0, []
    names = [job.text("name") or str(job.index) for job, _ in group]
    after = [[False] * n for _ in range(n)]  # after[a][b]: b starts only after a ended
    for b, (job, _) in enumerate(group):
        waited = job.text("wait_for")
        if waited:
            for a in range(b):
                if names[a] == waited:
                    after[a][b] = True
    if not any(any(row) for row in after):
        return sum(t for _, t in group), [job for job, _ in group]
    for k in range(n):  # transitive closure (a group holds at most the engine's 256 jobs)
        for a in range(n):
            if after[a][k]:
                row, via = after[a], after[k]
                for b in range(n):
                    if via[b]:
                        row[b] = True
    # flow network: source 0, left a = 1 + a, right b = 1 + n + b, sink 1 + 2n
    size, source, sink = 2 * n + 2, 0, 2 * n + 1
    inf = sum(t for _, t in group) + 1
    cap: list[dict[int, int]] = [{} for _ in range(size)]

    def edge(u: int, v: int, c: int) -> None:
        cap[u][v] = cap[u].get(v, 0) + c
        cap[v].setdefault(u, 0)

    for a, (_, t) in enumerate(group):
        edge(source, 1 + a, t)
        edge(1 + n + a, sink, t)
        for b in range(n):
            if after[a][b]:
                edge(1 + a, 1 + n + b, inf)
    flow = 0
    while True:  # Edmonds-Karp
        parent = {source: source}
        queue = [source]
        for u in queue:
            for v, c in cap[u].items():
                if c > 0 and v not in parent:
                    parent[v] = u
                    queue.append(v)
        if sink not in parent:
            break
        push, v = inf, sink
        while v != source:
            push = min(push, cap[parent[v]][v])
            v = parent[v]
        v = sink
        while v != source:
            cap[parent[v]][v] -= push
            cap[v][parent[v]] += push
            v = parent[v]
        flow += push
    reach = parent  # the source's side of a minimum cut
    together = [group[a][0] for a in range(n) if (1 + a) in reach and (1 + n + a) not in reach]
    return inf - 1 - flow, together


def _region(job: _Job, target: Target | None) -> int | None:
    """Bytes one thread's pass covers: size, else nrfiles x the largest filesize, else what the
    target has past offset; None when nothing bounds it."""
    size = _bytes(job, "size")
    offset = _bytes(job, "offset")
    filesize = _sizes(job, "filesize")
    if size is not None:
        return size
    if isinstance(filesize, tuple):
        return _u64(job, "nrfiles", 1) * filesize[1]
    if target is not None and target.size_bytes is not None:
        return max(0, target.size_bytes - (offset or 0))
    return None


def _paced_ns(job: _Job, target: Target | None) -> tuple[int, str]:
    """A size-bound job's least duration from its pacing (rate, rate_iops, thinktime), with the
    option that sets it: the engine cannot go faster than its caps, so a run that must last longer
    than the host allows is refused now instead of being killed by the agent's hard timeout."""
    region = _region(job, target)
    if region is None or region == 0:
        return 0, "runtime"
    io_size = _bytes(job, "io_size")
    bytes_pass = (io_size or region) * _u64(job, "loops", 1)
    largest = _largest_block(job)[1]
    number_ios = _u64(job, "number_ios", 0)
    ios = -(-bytes_pass // largest)
    if number_ios:
        ios = min(ios, number_ios * _u64(job, "loops", 1))
        bytes_pass = min(bytes_pass, ios * largest)
    writes, reads = job_writes(job), not _write_only(job)
    best = (0, "runtime")
    for name, (r_cap, w_cap), amount in (
        ("rate", _pair(job, "rate"), bytes_pass),
        ("rate_iops", _pair(job, "rate_iops"), ios),
    ):
        # one direction only: a mixed job's share of each is drawn, so only a lone one is sure
        cap = w_cap if writes and not reads else r_cap if reads and not writes else 0
        if cap:
            best = max(best, (amount * 1_000_000_000 // cap, name))
    think = _time_parsed(job, "thinktime", parse_time_us_default) or 0
    if think:
        blocks = max(1, _u64(job, "thinktime_blocks", 1))
        best = max(best, (ios // blocks * think, "thinktime"))
    return best


def _write_only(job: _Job) -> bool:
    try:
        rw = parse_rw(job.text("rw") or "read")
    except ValueError:
        return False
    return rw.mode in ("write", "randwrite", "trim", "randtrim", "trimwrite", "randtrimwrite")


def _check_runtime(limit_s: float, target: Target | None, jobs: list[_Job]) -> list[Violation]:
    """`limit.runtime`: the run's declared duration. Stonewall groups run one after another; in a
    group each job starts at the group's start plus its startdelay (the high end of a range), or
    when the jobs it names in wait_for have ended, and lasts ramp_time + runtime; a size-bound job
    (no runtime) lasts at least what its pacing forces (`_paced_ns`), else the agent's hard timeout
    caps it."""
    group_start = group_end = 0
    ends: dict[str, int] = {}
    for job in jobs:
        if job.index > 0 and _flag(job, "stonewall", unreadable=True):
            group_start = group_end
        try:
            runtime = _time_ns(job, "runtime")
            ramp = _time_ns(job, "ramp_time")
            delay = (_time_parsed(job, "startdelay", parse_time_range_ns) or (0, 0))[1]
            paced, paced_by = _paced_ns(job, target) if not runtime else (0, "runtime")
        except _Unreadable as exc:
            why = f"cannot check {exc.name}: {exc.why}"
            return [Violation(LIMIT_RUNTIME, exc.field, why, f"give {exc.name} in fio's syntax")]
        waited = job.text("wait_for")
        released = max(group_start, ends.get(waited, group_start)) if waited else group_start
        end = released + delay + (ramp + runtime if runtime else paced)
        name = job.text("name") or str(job.index)
        ends[name] = max(ends.get(name, 0), end)
        group_end = max(group_end, end)
        if group_end / 1e9 > limit_s:
            needed = group_end / 1e9
            cause = (
                paced_by
                if paced
                else "startdelay"
                if delay > ramp + runtime
                else "wait_for"
                if waited and released > group_start
                else "runtime"
            )
            paced_why = f" (job {job.index} is size-bound and paced by {cause}: at least {paced / 1e9:g} s)"
            why = {
                "runtime": "",
                "startdelay": f" (job {job.index} starts {delay / 1e9:g} s late: startdelay)",
                "wait_for": f" (job {job.index} waits for {str(waited)[:60]!r} to end: wait_for)",
            }.get(cause, paced_why)
            return [
                Violation(
                    LIMIT_RUNTIME,
                    job.field(cause),
                    f"the run lasts {needed:g} s up to job {job.index}{why}; the host allows {limit_s:g} s",
                    _limit_fix("max-runtime", float(needed)),
                )
            ]
    return []


def _check_block_files(policy: ReportedPolicy, target: Target | None, jobs: list[_Job]) -> list[Violation]:
    """`limit.files` of a block job in a directory target: nrfiles x numjobs summed over the run
    (the engine's own bound is its `max_files`), judged as the files it would lay out."""
    if target is None or target.kind != "directory" or not any("nrfiles" in j.options for j in jobs):
        return []
    limit = effective_max_files(policy.limits, target)
    if limit.value is None:
        return []
    total = 0
    for job in jobs:
        try:
            total += _u64(job, "nrfiles", 1) * _u64(job, "numjobs", 1)
        except _Unreadable as exc:
            why = f"cannot check {exc.name}: {exc.why}"
            return [Violation(LIMIT_FILES, exc.field, why, f"fix {exc.name}")]
        if total > limit.value:
            return [
                Violation(
                    LIMIT_FILES,
                    job.field("nrfiles"),
                    f"the run lays out {total} files by job {job.index} (nrfiles x numjobs); the host "
                    f"allows {limit.value} ({limit.source})",
                    _limit_fix("max-files", total),
                )
            ]
    return []


def _check_block_memory(policy: ReportedPolicy, target: Target | None, jobs: list[_Job]) -> list[Violation]:
    """`limit.memory` of a block job (memory.py): the largest stonewall group's buffers."""
    limit = effective_max_memory(policy.limits, policy.mem_total_bytes)
    if limit.value is None or not jobs:
        return []
    worst: MemoryBound | None = None
    group: list[tuple[int, str, str]] = []  # (bytes, field, what) of the jobs running together
    for job in jobs:
        if job.index > 0 and _flag(job, "stonewall", unreadable=False):
            group = []
        try:
            numjobs = _u64(job, "numjobs", 1)
            iodepth = _u64(job, "iodepth", 1)
            _, largest, smallest = _largest_block(job)
            size = _sizes(job, "size")
        except _Unreadable as exc:
            return [
                Violation(
                    LIMIT_MEMORY,
                    exc.field,
                    f"cannot check {exc.name}: {exc.why}",
                    f"give {exc.name} in fio's syntax",
                )
            ]
        per_thread = thread_bytes(iodepth, largest)
        rw = job.text("rw") or "read"
        if rw.startswith("rand") and largest > smallest and not _flag(job, "norandommap", unreadable=False):
            region = size if isinstance(size, int) else target.size_bytes if target is not None else None
            per_thread += random_map_bytes(region, smallest)
        try:
            files = _u64(job, "nrfiles", 1)
            filesize = _sizes(job, "filesize")
        except _Unreadable:
            files, filesize = 1, None
        verify = (job.text("verify") or "0").strip().lower() not in ("0", "none")
        if verify and files > 1 and not _flag(job, "time_based", unreadable=False):
            # the engine logs each write for the read-back (agent/engine/src/verify.c): the clone's
            # files together, size or nrfiles x the largest filesize
            high = filesize[-1] if isinstance(filesize, tuple) else filesize
            region = size if isinstance(size, int) else files * high if isinstance(high, int) else None
            per_thread += verify_log_bytes(region, smallest)
        job_bytes = numjobs * per_thread + (ENGINE_WRITE_POOL_BYTES + largest if job_writes(job) else 0)
        # the field a 422 names: the largest of the factors (numjobs, iodepth, blocks of 4 KiB)
        factors = {"numjobs": numjobs, "iodepth": iodepth, "bs": largest // 4096}
        group.append(
            (
                job_bytes,
                job.field(max(factors, key=lambda k: factors[k])),
                f"job {job.index} runs {numjobs} threads x iodepth {iodepth} x {largest}-byte buffers",
            )
        )
        total = ENGINE_BASE_BYTES + sum(g[0] for g in group)
        if worst is None or total > worst.bytes:
            _, field, what = max(group, key=lambda g: g[0])
            if len(group) > 1:
                what += f" (with {len(group) - 1} more jobs at the same time)"
            worst = MemoryBound(total, field, what)
    return _memory_violation(worst, limit.value, limit.source) if worst is not None else []


def _memory_violation(bound: MemoryBound, limit: int, source: str) -> list[Violation]:
    if bound.bytes <= limit:
        return []
    return [
        Violation(
            LIMIT_MEMORY,
            bound.field,
            f"the run needs up to {bound.bytes} bytes of memory on the host ({bound.what}); the host "
            f"allows {limit} ({source})",
            _limit_fix("max-memory", bound.bytes),
        )
    ]


def _check_files(
    policy: ReportedPolicy, target: Target | None, mode: str, facts: dict[str, Any]
) -> list[Violation]:
    """`limit.files`: the files and directories a file workload lays out in its target (the
    engine's bounds), against the host's max_files or its default from the target's inodes."""
    limit = effective_max_files(policy.limits, target)
    if limit.value is None:
        return []
    main = _LIMIT_FIELDS[mode][0]
    files, dirs = facts.get("files"), facts.get("directories")
    if not all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in (files, dirs)):
        return [
            Violation(
                LIMIT_FILES,
                main,
                f"cannot check the {mode} workload's files: the engine's facts do not give them",
                "update iowatt-engine on the host (its --parse-only prints bounds)",
            )
        ]
    assert isinstance(files, int) and isinstance(dirs, int)
    if files + dirs <= limit.value:
        return []
    return [
        Violation(
            LIMIT_FILES,
            main,
            f"the {mode} workload lays out {files} files and {dirs} directories ({files + dirs} inodes); "
            f"the host allows {limit.value} ({limit.source})",
            _limit_fix("max-files", files + dirs),
        )
    ]


def _check_job_memory(
    policy: ReportedPolicy, mode: str, engine_job: dict[str, Any], facts: object
) -> list[Violation]:
    """`limit.memory` of a file workload (from the engine's bounds) or a TPC-H run (its job)."""
    limit = effective_max_memory(policy.limits, policy.mem_total_bytes)
    if limit.value is None:
        return []
    bound: MemoryBound | None
    if mode == INNODB_MODE:
        threads = _plain_number(engine_job.get("threads"), integer=True) or 1
        pool = _plain_number(engine_job.get("buffer_pool_bytes"), integer=True)
        bound = innodb_flush_memory(int(pool or INNODB_DEFAULT_BUFFER_POOL_BYTES), int(threads))
    elif mode == TPCH_MODE:
        sf = _plain_number(engine_job.get("scale_factor"), integer=False) or 1.0
        streams = _plain_number(engine_job.get("streams"), integer=True)
        pool = _plain_number(engine_job.get("buffer_pool_bytes"), integer=True)
        bound = tpch_memory(
            str(engine_job.get("dbms")),
            int(pool) if pool is not None else None,
            int(streams) if streams is not None else tpch_min_streams(sf),
        )
    else:
        bound = file_workload_memory(mode, facts, engine_job) if isinstance(facts, dict) else None
    if bound is None:
        return [
            Violation(
                LIMIT_MEMORY,
                _LIMIT_FIELDS[mode][0],
                f"cannot check the {mode} workload's memory: the engine's facts do not give its threads, "
                "transfers, files and data set",
                "update iowatt-engine on the host (its --parse-only prints bounds)",
            )
        ]
    return _memory_violation(bound, limit.value, limit.source)


def _check_bytes_written(limit: int, target: Target | None, jobs: list[_Job]) -> list[Violation]:
    total = 0
    layout_end = 0
    for job in jobs:
        try:
            size = _bytes(job, "size")
            offset = _bytes(job, "offset")
            io_size = _bytes(job, "io_size")
            numjobs = _u64(job, "numjobs", 1)
            loops = _u64(job, "loops", 1)
            number_ios = _u64(job, "number_ios", 0)
            rate_bytes = _pair(job, "rate")[1]
            rate_iops = _pair(job, "rate_iops")[1]
            write_bs = _write_block(job)
            runtime = _time_ns(job, "runtime")
            ramp = _time_ns(job, "ramp_time")
            filesize = _sizes(job, "filesize")
            files = _u64(job, "nrfiles", 1)
            if isinstance(filesize, tuple) and size is None:
                size = files * filesize[1]  # fio's size of a multi-file job: its files together
            # the agent's data file in a directory target is new: laid out to the furthest clone's
            # region end, a percentage offset_increment growing with it (fio 3.33's, the engine's)
            if target is not None and target.kind == "directory" and isinstance(size, int):
                last = max(_clone_starts(job, 0, size, grows=True).values())
                layout_end = max(layout_end, last + size)
        except _Unreadable as exc:
            return [
                Violation(
                    LIMIT_BYTES_WRITTEN,
                    exc.field,
                    f"cannot check {exc.name}: {exc.why}",
                    f"give {exc.name} in fio's syntax",
                )
            ]
        if not job_writes(job):
            continue
        # the write direction's caps (R,W forms: only W bounds writes; 0 = no cap)
        caps = [c for c in (rate_bytes, rate_iops * write_bs) if c]
        rate_bound = min(caps) * (ramp + runtime) / 1e9 if caps and runtime else None
        if _flag(job, "time_based", unreadable=True):
            per_thread = rate_bound
            unbounded_field = job.field("time_based")
        else:
            region = size
            if region is None and target is not None and target.size_bytes is not None:
                region = max(0, target.size_bytes - (offset or 0))
            per_pass = io_size or region
            if per_pass is not None and number_ios:
                per_pass = min(per_pass, number_ios * write_bs)  # at most number_ios I/Os a pass
            per_thread = per_pass * loops if per_pass is not None else None
            if per_thread is not None and rate_bound is not None:
                per_thread = min(per_thread, rate_bound)
            unbounded_field = job.field("size")
        if per_thread is None:
            return [
                Violation(
                    LIMIT_BYTES_WRITTEN,
                    unbounded_field,
                    f"job {job.index} writes without a bound on its bytes (time-based without rate_iops, or "
                    f"no size); the host allows {limit} bytes per run",
                    _limit_fix("max-bytes-written", None),
                )
            ]
        total += int(per_thread) * numjobs
        if total + layout_end > limit:
            return [
                Violation(
                    LIMIT_BYTES_WRITTEN,
                    job.field("io_size" if io_size else "size"),
                    f"the run writes up to {total + layout_end} bytes by job {job.index}; the host "
                    f"allows {limit}",
                    _limit_fix("max-bytes-written", total + layout_end),
                )
            ]
    if layout_end > limit:
        return [
            Violation(
                LIMIT_BYTES_WRITTEN,
                jobs[0].field("size") if jobs else "workload",
                f"laying out the run's data file writes {layout_end} bytes; the host allows {limit}",
                _limit_fix("max-bytes-written", layout_end),
            )
        ]
    return []


# --- file workloads (PostMark and vdbench file sets) and the heap vs B-tree sweep -----------------

# the modes and what each job may contain: one record per mode (modes.py, ADR 0027)
# run by the engine in a directory target (a job file is a block job once parsed: any target)
FILE_MODES = tuple(m for m, rules in MODES.items() if rules.engine and not rules.block)
TPCH_MODE = TPCH.mode  # a private DBMS started by the agent in a directory target
INNODB_MODE = INNODB_FLUSH.mode  # the same, under sysbench (libs/workload innodb.py)
DBMS_MODES = (TPCH_MODE, INNODB_MODE)  # modes that start a DBMS: the host's allowed_dbms decides
JOB_MODES = tuple(MODES)
MAX_FILE_JOB_CHARS = 64 * 1024  # a command / parameter file (the server's bound too)
MAX_SCALE = 1000.0  # the engine's bound of --scale
MAX_ELAPSED_S = 1e9
# TPC-H: libs/workload's, which the server's TpchSpec and the agent's bench read too
MAX_SCALE_FACTOR = TPCH_SCALE_FACTOR_MAX
MAX_STREAMS = TPCH_STREAMS_MAX
MAX_RECORDS = 2_000_000_000  # the engine's --records bound
MAX_FRACTIONS = 64
# the keys of each mode's job, and the RunCreate field each comes from
FILE_JOB_KEYS: dict[str, dict[str, tuple[str, bool]]] = {m: rules.keys for m, rules in MODES.items()}
# the engine's `bounds` (its --parse-only): key -> accepts null
FILE_FACT_KEYS = {
    "threads": False,
    "max_block_bytes": False,
    "bytes_written_max": True,
    "runtime_s_max": True,
}


def _plain_number(value: object, *, integer: bool) -> float | None:
    """A job value as a number: a string of at most 40 characters (what the server sends) or a
    JSON number; None when it is neither (bool, NaN, inf, text)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        number = float(value)
    elif isinstance(value, str) and 0 < len(value) <= 40 and value.isascii():
        text = value.strip()  # ASCII only: float() also reads other scripts' digits ("١٢" is 12)
        if integer and not text.isdigit():
            return None
        try:
            number = float(text)
        except ValueError:
            return None
    else:
        return None
    if not math.isfinite(number) or (integer and number != int(number)):
        return None
    return number


def _fractions(value: object) -> str | None:
    """heap-btree's cache fractions "F,F,...": 1..64 numbers 0 < F <= 1; None when not."""
    if not isinstance(value, str) or not value or len(value) > MAX_FRACTIONS * 12:
        return None
    parts = value.split(",")
    if len(parts) > MAX_FRACTIONS:
        return None
    for part in parts:
        number = _plain_number(part, integer=False)
        if number is None or not 0 < number <= 1:
            return None
    return value


# key -> (why the value is refused, the check); the check answers whether the value is plain
_VALUE_RULES: dict[str, tuple[str, Any]] = {
    "scale": (f"a number > 0 and <= {MAX_SCALE:g}", lambda v: _in(v, 0, MAX_SCALE, open_low=True)),
    "elapsed": (f"a number > 0 and <= {MAX_ELAPSED_S:g}", lambda v: _in(v, 0, MAX_ELAPSED_S, open_low=True)),
    "records": (f"an integer from 1 to {MAX_RECORDS}", lambda v: _in(v, 1, MAX_RECORDS, integer=True)),
    "queries": ("an integer from 0 to 1000000000", lambda v: _in(v, 0, 1e9, integer=True)),
    "randseed": ("an integer from 0 to 2^64 - 1", lambda v: _in(v, 0, 2**64 - 1, integer=True)),
    "cache_fractions": (
        f"1 to {MAX_FRACTIONS} fractions 0 < F <= 1, comma-separated (0.1,0.2,...)",
        lambda v: _fractions(v) is not None,
    ),
    "structure": ("heap, btree or both", lambda v: v in ("heap", "btree", "both")),
    "scale_factor": (
        f"a number > 0 and <= {MAX_SCALE_FACTOR:g}",
        lambda v: _in(v, 0, MAX_SCALE_FACTOR, open_low=True),
    ),
    "streams": (f"an integer from 1 to {MAX_STREAMS}", lambda v: _in(v, 1, MAX_STREAMS, integer=True)),
    "query_timeout_s": (
        f"a number of seconds from {TPCH_QUERY_TIMEOUT_S_MIN:g} to {TPCH_QUERY_TIMEOUT_S_MAX:g}",
        lambda v: _in(v, TPCH_QUERY_TIMEOUT_S_MIN, TPCH_QUERY_TIMEOUT_S_MAX),
    ),
    "buffer_pool_bytes": (
        f"an integer from {TPCH_BUFFER_POOL_BYTES_MIN} ({TPCH_BUFFER_POOL_BYTES_MIN // MiB} MiB) "
        f"to {TPCH_BUFFER_POOL_BYTES_MAX} ({TPCH_BUFFER_POOL_BYTES_MAX // MiB // 1024 // 1024} TiB)",
        lambda v: _in(v, TPCH_BUFFER_POOL_BYTES_MIN, TPCH_BUFFER_POOL_BYTES_MAX, integer=True),
    ),
}


# the InnoDB flushing matrix's keys (libs/workload innodb.py's bounds); its buffer pool's bounds are
# its own, not TPC-H's
_INNODB_RULES: dict[str, tuple[str, Any]] = {
    "settings": (
        "F:S pairs, comma-separated, each once (F 0, 1 or 2; S 0 or 1)",
        lambda v: _innodb_settings(v),
    ),
    **{
        key: (
            f"an integer from {low} to {high}",
            lambda v, low=low, high=high: _in(v, low, high, integer=True),
        )
        for key, (low, high) in {
            "tables": (1, INNODB_TABLES_MAX),
            "table_size": (1, INNODB_TABLE_SIZE_MAX),
            "threads": (1, INNODB_THREADS_MAX),
            "seconds": (INNODB_SECONDS_MIN, INNODB_SECONDS_MAX),
            "warmup_s": (0, INNODB_WARMUP_S_MAX),
            "buffer_pool_bytes": (INNODB_BUFFER_POOL_BYTES_MIN, INNODB_BUFFER_POOL_BYTES_MAX),
        }.items()
    },
}


def _innodb_settings(value: object) -> bool:
    try:
        parse_settings(value)
    except ValueError:
        return False
    return True


def _in(value: object, low: float, high: float, *, integer: bool = False, open_low: bool = False) -> bool:
    number = _plain_number(value, integer=integer)
    if number is None:
        return False
    return (number > low if open_low else number >= low) and number <= high


def _file_job_shape(engine_job: dict[str, Any]) -> tuple[str | None, list[Violation]]:
    """(mode, violations) of a file workload's or a TPC-H job: a known mode, exactly its keys,
    plain values (a value that is not exactly a number, a fraction list or a name is refused:
    nothing a server sends reaches a command line unchecked)."""
    mode = engine_job.get("mode")
    if not isinstance(mode, str) or mode not in JOB_MODES:
        return None, [
            Violation(
                OPTION_NOT_ALLOWED,
                "workload.kind",
                f"{repr(mode)[:80]} is not a workload mode this agent runs ({', '.join(JOB_MODES)})",
                "send a block job or a postmark / vdbench / heap-btree / jobfile / tpch workload",
            )
        ]
    keys = FILE_JOB_KEYS[mode]
    found: list[Violation] = []
    for key in engine_job:
        if key != "mode" and key not in keys:
            found.append(
                Violation(
                    OPTION_NOT_ALLOWED,
                    f"workload.{key}"[:200],
                    f"{str(key)[:80]!r} is not part of a {mode} job (mode, {', '.join(keys)})",
                    f"send only mode, {', '.join(keys)}",
                )
            )
    for key, (field, required) in keys.items():
        value = engine_job.get(key)
        if value is None:
            if required:
                found.append(Violation(OPTION_NOT_ALLOWED, field, f"a {mode} job needs {key}", f"give {key}"))
            continue
        if key in ("commands", "parameters", "text"):
            if not isinstance(value, str):
                found.append(Violation(OPTION_NOT_ALLOWED, field, f"{key} must be a string", f"fix {key}"))
            elif len(value) > MAX_FILE_JOB_CHARS or "\x00" in value or not value.strip():
                found.append(
                    Violation(
                        OPTION_NOT_ALLOWED,
                        field,
                        f"{key}: empty, longer than {MAX_FILE_JOB_CHARS} characters or contains NUL",
                        f"fix {key}",
                    )
                )
            continue
        if key == "dbms":
            if value not in KNOWN_DBMS:
                found.append(
                    Violation(
                        OPTION_NOT_ALLOWED,
                        field,
                        f"{repr(value)[:40]} is not a DBMS this agent starts ({', '.join(KNOWN_DBMS)})",
                        f"send one of {', '.join(KNOWN_DBMS)}",
                    )
                )
            continue
        if MODES[mode].text_values and not isinstance(value, str):
            found.append(Violation(OPTION_NOT_ALLOWED, field, f"{key} must be a string", f"fix {key}"))
            continue
        what, ok = _INNODB_RULES[key] if mode == INNODB_MODE else _VALUE_RULES[key]
        if not ok(value):
            found.append(
                Violation(
                    OPTION_NOT_ALLOWED,
                    field,
                    f"{key} must be {what}, got {repr(value)[:40]}",
                    f"fix {key}",
                )
            )
    return mode, found


def job_value(engine_job: dict[str, Any], key: str) -> str | None:
    """A checked job value as the text a command line takes (numbers from JSON as the server
    would write them); None when absent."""
    value = engine_job.get(key)
    if value is None:
        return None
    if isinstance(value, float) and value == int(value) and key not in ("scale_factor", "query_timeout_s"):
        return str(int(value))
    return value.strip() if isinstance(value, str) else format(value, ".12g")


def _check_file_target(
    policy: ReportedPolicy, target_path: str, destructive: bool, mode: str
) -> list[Violation]:
    target, refused = _listed_target(policy, target_path)
    if target is None:
        return refused
    found: list[Violation] = []
    if target.kind != "directory":
        dirs = [t.path for t in policy.targets if t.kind == "directory"][:5]
        found.append(
            Violation(
                TARGET_KIND,
                "target_path",
                f"a {mode} workload makes its files in a directory target; {target.path} is a "
                f"{target.kind} target",
                f"pick a directory target ({', '.join(dirs) or 'the host has none'}), or on the host: "
                "iowatt-agent targets add DIR",
            )
        )
    if destructive:
        found.append(
            Violation(
                TARGET_KIND,
                "destructive",
                f"destructive applies to raw devices only; a {mode} workload runs in a directory",
                "send destructive: false",
            )
        )
    return found


# the RunCreate field a limit's violation names, per mode: (main, size, time)
_LIMIT_FIELDS = {m: rules.limit_fields for m, rules in MODES.items()}


def _check_file_limits(policy: ReportedPolicy, mode: str, facts: object) -> list[Violation]:
    """The host's limits against the facts of this workload, never guessed here: the engine's
    `bounds` (its --parse-only) of a file workload; for TPC-H the bound of libs/workload's one
    function (`bytes_written_max` only: the DBMS's threads and transfers are its own, and its
    run time is unbounded, capped by the agent's timeout)."""
    limits = policy.limits
    main, size_field, time_field = _LIMIT_FIELDS[mode]
    wanted = {
        "threads": (limits.max_threads, LIMIT_THREADS, main),
        "max_block_bytes": (limits.max_bs_bytes, LIMIT_BLOCK_SIZE, main),
        "bytes_written_max": (limits.max_bytes_written, LIMIT_BYTES_WRITTEN, size_field),
        "runtime_s_max": (limits.max_runtime_s, LIMIT_RUNTIME, time_field),
    }
    if mode == TPCH_MODE:
        wanted = {"bytes_written_max": wanted["bytes_written_max"]}
    doc = facts if isinstance(facts, dict) else {}
    found: list[Violation] = []
    if isinstance(facts, dict) and doc.get("mode") not in (None, mode):
        return [
            Violation(
                OPTION_NOT_ALLOWED,
                "workload.kind",
                f"the engine's facts are of a {str(doc.get('mode'))[:20]} workload, the job is {mode}",
                "send one workload",
            )
        ]
    for key, (limit, rule, field) in wanted.items():
        if limit is None:
            continue
        value = doc.get(key)
        nullable = FILE_FACT_KEYS[key]
        number_ok = isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
        if key not in doc or (value is None and not nullable) or (value is not None and not number_ok):
            found.append(
                Violation(
                    rule,
                    field,
                    f"cannot check the {mode} workload's {key}: the engine's facts do not give it",
                    "update iowatt-engine on the host (its --parse-only prints bounds)",
                )
            )
            continue
        if value is None:
            if key == "bytes_written_max":
                found.append(
                    Violation(
                        rule,
                        field,
                        f"the {mode} workload writes without a bound on its bytes (time-based writes "
                        f"without maxdata); the host allows {limit} bytes per run",
                        _limit_fix("max-bytes-written", None),
                    )
                )
            continue  # runtime null: size-bound (postmark), capped by the agent's hard timeout
        shown = f"{value:g}" if isinstance(value, float) else str(value)
        what = {
            "threads": f"runs {shown} threads at once",
            "max_block_bytes": f"uses {shown}-byte transfers",
            "bytes_written_max": f"writes up to {shown} bytes (file set included)",
            "runtime_s_max": f"lasts {shown} s",
        }[key]
        if value > limit:
            needed: int | float = float(value) if key == "runtime_s_max" else int(value)
            flag = {
                "threads": "max-threads",
                "max_block_bytes": "max-bs",
                "bytes_written_max": "max-bytes-written",
                "runtime_s_max": "max-runtime",
            }[key]
            found.append(
                Violation(
                    rule,
                    field,
                    f"the {mode} workload {what}; the host allows {limit:g}"
                    if isinstance(limit, float)
                    else f"the {mode} workload {what}; the host allows {limit}",
                    _limit_fix(flag, needed),
                )
            )
    return found


def _check_file_run(
    policy: ReportedPolicy,
    *,
    target_path: str,
    engine_job: dict[str, Any],
    meter: str | None,
    destructive: bool,
    facts: dict[str, Any] | None,
) -> list[Violation]:
    mode, shape = _file_job_shape(engine_job)
    found = _check_file_target(policy, target_path, destructive, mode or "file")
    found.extend(_check_meter(policy, meter))
    found.extend(shape)
    if mode == TPCH_MODE:
        found.extend(_check_dbms(policy, engine_job.get("dbms")))
    if mode == INNODB_MODE:  # its DBMS is MariaDB, always
        found.extend(_check_dbms(policy, "mariadb", "workload.innodb_flush", "an InnoDB flushing-policy run"))
    if mode in DBMS_MODES and not shape:
        found.extend(_check_job_memory(policy, mode, engine_job, facts))  # from the job alone
    if mode is not None and facts is not None and not shape:
        found.extend(_check_file_limits(policy, mode, facts))
        same_mode = not (isinstance(facts, dict) and facts.get("mode") not in (None, mode))
        if same_mode and mode not in DBMS_MODES:  # a DBMS's files are its own few hundred
            found.extend(_check_job_memory(policy, mode, engine_job, facts))
            found.extend(_check_files(policy, policy.target(target_path), mode, facts))
    return found


def _check_dbms(
    policy: ReportedPolicy, dbms: object, field: str = "workload.tpch.dbms", what: str = "a TPC-H run"
) -> list[Violation]:
    """Starting a DBMS runs its programs on the host: only one the host consented to."""
    if dbms not in KNOWN_DBMS:
        return []  # the shape's violation names it
    if dbms in policy.allowed_dbms:
        return []
    allowed = ", ".join(policy.allowed_dbms) or "none"
    return [
        Violation(
            DBMS_NOT_ALLOWED,
            field,
            f"{what} starts a private {dbms} server on the host, which has not consented to it "
            f"(allowed DBMSs: {allowed})",
            f"iowatt-agent targets allow-dbms {dbms}",
        )
    ]


# modes whose job, once the engine has parsed it, is a block job file (a fio job file: ADR 0029)
BLOCK_MODES = tuple(m for m, rules in MODES.items() if rules.block)


def _check_jobfile_run(
    policy: ReportedPolicy,
    *,
    target_path: str,
    engine_job: dict[str, Any],
    meter: str | None,
    destructive: bool,
    parse: object,
    engine: EngineOptions | None,
) -> list[Violation]:
    """A fio job file (ADR 0029): its shape (the text), then the engine's parse of it judged as the
    block job it is (jobfile.block_job: the job file's filename and directory dropped, the run's
    target replaces them), every violation named at the text. Without a parse (a caller that has
    none) only the target and meter: the agent always parses, and judges its own parse."""
    mode, shape = _file_job_shape(engine_job)
    text_field = MODES[mode or "jobfile"].keys["text"][0]
    if shape or parse is None:
        found = _check_target(policy, target_path, destructive, [])
        return [*found, *_check_meter(policy, meter), *shape]
    try:
        job = block_job(parse)
    except ParseUnreadable as exc:
        return [
            Violation(
                OPTION_NOT_ALLOWED,
                text_field,
                f"the job file cannot be checked: {exc}",
                "update iowatt-engine on the host (its --parse-only reads fio job files)",
            )
        ]
    found = check_run(
        policy, target_path=target_path, engine_job=job, meter=meter, destructive=destructive, engine=engine
    )
    names = [str(j["name"]) for j in job["jobs"]]
    return [_at_text(v, text_field, names) for v in found]


def _at_text(v: Violation, text_field: str, names: list[str]) -> Violation:
    """A block job's violation named at the job file's text, its job by name ("job 0" is the first
    section the engine made a job of)."""
    if not v.field.startswith(("workload.jobs", "workload.global")):
        return v
    message = v.message
    parts = v.field.split(".")
    if len(parts) > 2 and parts[1] == "jobs" and parts[2].isdigit() and int(parts[2]) < len(names):
        message = f"[{names[int(parts[2])][:60]}] {message}"
    elif parts[1] == "global":
        message = f"[global] {message}"
    return Violation(v.rule, text_field, message, v.fix)


# --- SNIA PTS runs (ADR 0046) ---------------------------------------------------------------------


def _check_pts_run(
    policy: ReportedPolicy,
    *,
    target_path: str,
    engine_job: dict[str, Any],
    meter: str | None,
    destructive: bool,
    facts: object,
    engine: EngineOptions | None,
) -> list[Violation]:
    """A SNIA PTS run (libs/workload's pts): its job read by parse_job, a device target (the run
    purges and writes it whole), then every engine job the run makes (the preconditioning where
    the test has one, the round, Host Idle Recovery's burst and return to baseline; built from
    the device's capacity: the agent's reading in `facts`, else the size the
    host reported for the target) judged as the block job it is: the two keys of a destructive
    device, the meter, the options, limits and memory. Each violation is named at the PTS
    parameters (`workload.pts`), its phase said."""
    try:
        params = parse_pts_job(engine_job)
    except PtsJobError as exc:
        field = PTS.keys.get(exc.key, ("workload.pts", False))[0]
        return [Violation(OPTION_NOT_ALLOWED, field, f"pts: {exc.message}", f"fix {exc.key}")]
    target = policy.target(target_path)
    if target is not None and target.kind != "device":
        devices = [t.path for t in policy.targets if t.kind == "device" and t.destructive][:5]
        return [
            Violation(
                TARGET_KIND,
                "target_path",
                f"a SNIA PTS run purges and writes a whole raw device; {target.path} is a "
                f"{target.kind} target",
                f"pick a device target the host marked destructive ({', '.join(devices) or 'none here'}), "
                "or on the host: iowatt-agent targets add --device /dev/disk/by-id/NAME --destructive",
            ),
            *_check_meter(policy, meter),
        ]
    capacity = facts.get("capacity_bytes") if isinstance(facts, dict) else None
    if not isinstance(capacity, int) or isinstance(capacity, bool):
        capacity = target.size_bytes if target is not None else None
    try:
        phases = (
            pts_planned_phases(params, capacity)
            if isinstance(capacity, int) and capacity > 0
            # no size known: the keys, meter and options
            else [("round", pts_round_job(params, PTS_REGION_ALIGN))]
        )
    except ValueError as exc:
        return [
            Violation(
                TARGET_KIND,
                "workload.pts.capacity_fraction",
                f"pts: {exc}",
                "test a larger share of the device (capacity_fraction), or a larger device",
            )
        ]
    found: list[Violation] = []
    for phase, job in phases:
        for v in check_run(
            policy,
            target_path=target_path,
            engine_job=job,
            meter=meter,
            destructive=destructive,
            engine=engine,
        ):
            if v.field.startswith(("workload.jobs", "workload.global")):
                v = Violation(v.rule, "workload.pts", f"the PTS {phase}'s engine job: {v.message}", v.fix)
            if v not in found:
                found.append(v)
    return found


def check_run(
    policy: ReportedPolicy,
    *,
    target_path: str,
    engine_job: dict[str, Any] | Any,
    meter: str | None,
    destructive: bool,
    file_facts: dict[str, Any] | None = None,
    engine: EngineOptions | None = None,
) -> list[Violation]:
    """Every reason `policy` refuses this run (empty: allowed), in a stable order: target, meter,
    options, limits. `engine_job` is the engine's job file ({"global": {...}, "jobs": [...]}) as
    the server sends it, before the agent adds its own options, or a file workload's job
    ({"mode": "postmark", "commands": ...} / {"mode": "vdbench", "parameters": ..., "scale": ...,
    "elapsed"?: ...} / {"mode": "heap-btree", "records": ..., ...}) or a TPC-H job ({"mode":
    "tpch", "dbms": ..., "scale_factor": ..., ...}: a DBMS of the host's `allowed_dbms` only) or a
    fio job file ({"mode": "jobfile", "text": ...}: `file_facts` is then the engine's
    --parse-only document of the text, judged as a block job; ADR 0029) or a SNIA PTS run
    ({"mode": "pts", "test": ..., ...}: a device target; every engine job it makes judged as a
    block job, `file_facts` {"capacity_bytes": N} the device's size as the agent read it; ADR 0046).
    `file_facts` is the engine's `bounds` for a file workload (its `--parse-only`), for TPC-H
    the bound of libs/workload's function: None skips the limits (a caller without them); the
    agent always passes them.
    `engine` is the host's engine's option facts (its --limits, options.EngineOptions: which options
    a server may send, ADR 0030); None reads a block job by options.FROZEN_OPTIONS alone."""
    if isinstance(engine_job, dict) and engine_job.get("mode") == PTS.mode:
        return _check_pts_run(
            policy,
            target_path=target_path,
            engine_job=engine_job,
            meter=meter,
            destructive=destructive,
            facts=file_facts,
            engine=engine,
        )
    if isinstance(engine_job, dict) and engine_job.get("mode") in BLOCK_MODES:
        return _check_jobfile_run(
            policy,
            target_path=target_path,
            engine_job=engine_job,
            meter=meter,
            destructive=destructive,
            parse=file_facts,
            engine=engine,
        )
    if isinstance(engine_job, dict) and "mode" in engine_job:
        return _check_file_run(
            policy,
            target_path=target_path,
            engine_job=engine_job,
            meter=meter,
            destructive=destructive,
            facts=file_facts,
        )
    found: list[Violation] = []
    options: list[Violation] = []
    jobs = _jobs(engine_job, options, engine or EngineOptions.builtin())
    found.extend(_check_target(policy, target_path, destructive, jobs))
    found.extend(_check_meter(policy, meter))
    found.extend(options)
    found.extend(_check_limits(policy, policy.target(target_path), jobs))
    return found


# --- on the host ---------------------------------------------------------------------------------


def check_target_on_host(target: Target) -> tuple[str | None, list[Violation]]:
    """What the target is on this host now: (the path the engine opens, []) or (None, why not).

    A directory or file must be exactly what was listed, with no symlink anywhere in its path
    (`target.symlink`); a device's by-id link must resolve to a block device. The kind must
    still match (`target.kind`): a directory replaced by a file is refused, not followed."""
    path = target.path
    try:
        st = os.lstat(path)
    except OSError as exc:
        return None, [
            Violation(
                TARGET_KIND,
                "target_path",
                f"{path} is not there any more ({exc.strerror})",
                f"iowatt-agent targets remove {path}",
            )
        ]
    if target.kind == "device":
        real = os.path.realpath(path)
        try:
            real_st = os.stat(real)
        except OSError as exc:
            return None, [
                Violation(
                    TARGET_KIND,
                    "target_path",
                    f"{path} -> {real}: {exc.strerror}",
                    f"iowatt-agent targets remove {path}",
                )
            ]
        if not stat.S_ISBLK(real_st.st_mode):
            return None, [
                Violation(
                    TARGET_KIND,
                    "target_path",
                    f"{path} -> {real} is not a block device",
                    f"iowatt-agent targets remove {path}",
                )
            ]
        return real, []
    if stat.S_ISLNK(st.st_mode) or os.path.realpath(path) != path:
        return None, [
            Violation(
                TARGET_SYMLINK,
                "target_path",
                f"{path} is or passes through a symbolic link (it resolves to {os.path.realpath(path)})",
                f"iowatt-agent targets add {'--file ' if target.kind == 'file' else ''}"
                f"{os.path.realpath(path)}",
            )
        ]
    is_kind = stat.S_ISDIR(st.st_mode) if target.kind == "directory" else stat.S_ISREG(st.st_mode)
    if not is_kind:
        return None, [
            Violation(
                TARGET_KIND,
                "target_path",
                f"{path} is listed as a {target.kind} but is not one any more",
                f"iowatt-agent targets remove {path}",
            )
        ]
    return path, []
