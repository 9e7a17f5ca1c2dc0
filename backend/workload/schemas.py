"""A workload is a validated engine job spec in base units (bytes, seconds).

The server validates here what it can (422 naming the field); the engine validates again
at run time (exit 2), so a spec that slips through still cannot do harm.
"""

import uuid
from collections.abc import Callable
from typing import Annotated, Any, Literal

from iowatt_workload import TPCH_LABEL as TPCH_LABEL  # re-exported: builtin.py's presets say it
from iowatt_workload import KiB, MiB, is_multi_pass, parse_size, tpch_facts
from iowatt_workload import pass_of as pass_of  # re-exported: callers name it from here
from pydantic import BeforeValidator, Field, ValidationError, ValidationInfo, field_validator, model_validator
from pydantic_core import PydanticCustomError

from backend.kit.messages import human_bytes
from backend.kit.schema import InputSchema, OutputSchema

Rw = Literal["read", "write", "randread", "randwrite", "rw", "randrw"]
IoEngine = Literal["psync", "libaio", "io_uring"]
Readahead = Literal["default", "on", "off"]
# engine fadvise_hint per readahead mode: "on" gives no hint, so the kernel's default readahead
# window applies (FADV_SEQUENTIAL would double it: more than "on"); "default" is fio's hint per
# pattern (SEQUENTIAL for sequential, RANDOM for random jobs).
_FADVISE = {"default": "1", "on": "0", "off": "random"}

MAX_BS = 256 * MiB
MAX_RANDSEED = 2**53 - 1  # the largest integer a browser's JSON keeps exactly
MAX_BSSPLIT = 64  # the engine's MAX_BSSPLIT entries per direction
SHORTEN_MIN = 0.01


def _bad(message: str) -> PydanticCustomError:
    """A validator's error in plain words (the 422 shows it beside the field the loc names)."""
    return PydanticCustomError("invalid_value", message)


def _bssplit_sizes(text: str) -> list[int]:
    """fio's bssplit ("4k/10:64k/90", optionally "READ,WRITE"): its block sizes, checked as the
    engine checks them (sizes > 0, percentages that add up to 100; an entry without one shares
    the rest)."""
    sizes: list[int] = []
    for direction in text.split(",", 1):
        entries = [e for e in direction.split(":") if e]
        if not entries:
            raise _bad("write entries such as 4k/10:64k/90 (block size/percent, separated by colons)")
        if len(entries) > MAX_BSSPLIT:
            raise _bad(f"may have at most {MAX_BSSPLIT} block sizes per direction")
        total, open_share = 0, 0
        for entry in entries:
            size_text, slash, pct_text = entry.partition("/")
            try:
                size = parse_size(size_text)
            except ValueError:
                size = 0
            if size <= 0:
                raise _bad(f"{size_text!r} is not a block size (write 4k, 64k, 1m …)")
            if slash:
                if not pct_text.isdigit() or int(pct_text) > 100:
                    raise _bad(f"{pct_text!r} is not a percentage from 0 to 100")
                total += int(pct_text)
            else:
                open_share += 1
            sizes.append(size)
        if total > 100 or (not open_share and total != 100):
            raise _bad(f"the percentages add up to {total}; they must add up to 100")
    return sizes


def _distribution(text: str) -> str:
    """fio's random_distribution as the engine reads it: random, zipf:T, pareto:H, normal[:DEV]."""
    kind, colon, param = text.partition(":")
    value: float | None = None
    if colon:
        try:
            value = float(param)
        except ValueError:
            raise _bad(f"{param!r} is not a number") from None
    if kind == "random" and not colon:
        return text
    if kind == "zipf" and value is not None:
        if not value > 0 or value == 1:
            raise _bad("zipf needs a theta above 0 and other than 1, e.g. zipf:1.2")
        return text
    if kind == "pareto" and value is not None:
        if not 0 < value < 1:
            raise _bad("pareto needs h between 0 and 1, e.g. pareto:0.9")
        return text
    if kind == "normal":
        if value is not None and not 0 < value <= 100:
            raise _bad("normal's deviation is a percent of the region: above 0, at most 100")
        return text
    raise _bad("must be random, zipf:THETA, pareto:H or normal[:DEVIATION%], e.g. zipf:1.2")


class JobSpec(InputSchema):
    name: str = Field(
        min_length=1, max_length=100, description="letters, digits, '_', '.' and '-' (unique in the workload)"
    )
    rw: Rw
    size_bytes: int = Field(gt=0, description="size of the region (file) the job works on, bytes")
    offset_bytes: int = Field(0, ge=0, description="start of the region, bytes")
    bs_bytes: int = Field(gt=0, le=MAX_BS, description="block size in bytes")
    runtime_s: float | None = Field(None, gt=0, le=7 * 24 * 3600, description="time limit, seconds")
    time_based: bool = False
    ramp_time_s: float = Field(0, ge=0, le=24 * 3600, description="warm-up excluded from stats, seconds")
    rwmixread: int = Field(50, ge=0, le=100, description="percent reads in rw/randrw")
    numjobs: int = Field(1, ge=1, le=256)
    iodepth: int = Field(1, ge=1, le=4096)
    ioengine: IoEngine = "psync"
    direct: bool = False
    invalidate: bool = Field(True, description="drop the region from the page cache before a buffered job")
    readahead: Readahead = Field(
        "default",
        description="buffered runs: default (fio's per-pattern hint: SEQUENTIAL for sequential, RANDOM "
        "for random jobs), on (no hint: the kernel's default readahead), off (RANDOM: no readahead)",
    )
    end_fsync: bool = Field(
        False,
        description="jobs that write: fsync the file when the job ends; the sync's time counts in the "
        "job's runtime and so in its bandwidth (as fio's end_fsync); no effect on read-only jobs",
    )
    io_size_bytes: int | None = Field(
        None,
        gt=0,
        description="bytes to transfer per pass inside the region, as fio's io_size: sequential jobs "
        "do the first io_size_bytes of the region, random jobs distinct blocks drawn from all of it; "
        "null = size_bytes",
    )
    # Added in spec version 2 (every engine option the platform supports; defaults = unset).
    bssplit: str | None = Field(
        None,
        max_length=1000,
        description="mixed block sizes as fio's bssplit: '4k/10:64k/90' (size/percent; an entry without "
        "a percent shares the rest), optionally 'READS,WRITES'; replaces bs_bytes for the I/O; "
        "null = bs_bytes",
    )
    rate_iops: int | None = Field(
        None,
        gt=0,
        le=100_000_000,
        description="open load: issue at this rate, I/Os per second; null = as fast as it can",
    )
    random_distribution: str = Field(
        "random",
        max_length=40,
        description="random jobs' offsets: random (uniform), zipf:THETA, pareto:H or normal[:DEVIATION%]",
    )
    fsync_every: int = Field(
        0,
        ge=0,
        le=1_000_000_000,
        description="jobs that write: fsync after this many writes (fio's fsync); 0 = never",
    )
    sync: bool = Field(
        False, description="open the file with O_DSYNC (fio's sync=dsync): every write is durable"
    )
    randseed: int | None = Field(
        None, ge=0, le=MAX_RANDSEED, description="seed of the offset and data generators; null = the engine's"
    )
    loops: int = Field(1, ge=1, le=10_000, description="passes over the region (fio's loops)")

    # Cross-field checks sit on the later field so a 422 names the field to fix; messages speak of
    # what the form shows (block size, size, runtime), never of field names.
    @field_validator("name")
    @classmethod
    def _name_chars(cls, v: str) -> str:
        if not all(c.isascii() and (c.isalnum() or c in "_.-") for c in v):
            raise _bad("may use only letters, digits, '_', '.' and '-' (no spaces)")
        return v

    @field_validator("bs_bytes")
    @classmethod
    def _bs_fits(cls, v: int, info: ValidationInfo) -> int:
        size = info.data.get("size_bytes")
        if size is not None and v > size:
            raise _bad(
                f"the block size ({human_bytes(v)}) must not be larger than the size ({human_bytes(size)})"
            )
        return v

    @field_validator("time_based")
    @classmethod
    def _time_based_needs_runtime(cls, v: bool, info: ValidationInfo) -> bool:
        if v and info.data.get("runtime_s") is None:
            raise _bad(
                "a time-based job needs a runtime: enter seconds, or let the job end when its size is done"
            )
        return v

    @field_validator("direct")
    @classmethod
    def _direct_aligned(cls, v: bool, info: ValidationInfo) -> bool:
        bs, off = info.data.get("bs_bytes"), info.data.get("offset_bytes")
        if v and bs is not None and bs % 512:
            raise _bad(f"direct I/O needs a block size in multiples of 512 bytes (not {human_bytes(bs)})")
        if v and off is not None and off % 512:
            raise _bad(f"direct I/O needs an offset in multiples of 512 bytes (not {human_bytes(off)})")
        return v

    @field_validator("io_size_bytes")
    @classmethod
    def _io_size_fits_a_block(cls, v: int | None, info: ValidationInfo) -> int | None:
        bs = info.data.get("bs_bytes")
        if v is not None and bs is not None and v < bs:
            raise _bad(f"the I/O size must be at least one block ({human_bytes(bs)})")
        return v

    @field_validator("bssplit")
    @classmethod
    def _bssplit_valid(cls, v: str | None, info: ValidationInfo) -> str | None:
        if v is None or v == "":
            return None
        sizes = _bssplit_sizes(v)
        size, direct = info.data.get("size_bytes"), info.data.get("direct")
        for bs in sizes:
            if bs > MAX_BS:
                raise _bad(f"a block size ({human_bytes(bs)}) is above the limit of {human_bytes(MAX_BS)}")
            if size is not None and bs > size:
                raise _bad(f"a block size ({human_bytes(bs)}) is larger than the size ({human_bytes(size)})")
            if direct and bs % 512:
                raise _bad(f"direct I/O needs block sizes in multiples of 512 bytes (not {human_bytes(bs)})")
        return v

    @field_validator("random_distribution")
    @classmethod
    def _distribution_valid(cls, v: str) -> str:
        return _distribution(v)

    def engine_options(self) -> dict[str, str]:
        """fio option names with explicit-unit values, as the engine's JSON job file takes them."""
        opts = {
            "name": self.name,
            "rw": self.rw,
            "bs": str(self.bs_bytes),
            "size": str(self.size_bytes),
            "offset": str(self.offset_bytes),
            "numjobs": str(self.numjobs),
            "iodepth": str(self.iodepth),
            "ioengine": self.ioengine,
            "direct": "1" if self.direct else "0",
            "stonewall": "1",
        }
        if self.rw in ("rw", "randrw"):
            opts["rwmixread"] = str(self.rwmixread)
        if self.runtime_s is not None:
            opts["runtime"] = f"{int(self.runtime_s * 1000)}ms"
        if self.time_based:
            opts["time_based"] = "1"
        if self.ramp_time_s:
            opts["ramp_time"] = f"{int(self.ramp_time_s * 1000)}ms"
        if self.io_size_bytes is not None:
            opts["io_size"] = str(self.io_size_bytes)
        if self.end_fsync:
            opts["end_fsync"] = "1"
        if self.bssplit is not None:
            opts["bssplit"] = self.bssplit
        if self.rate_iops is not None:
            opts["rate_iops"] = str(self.rate_iops)
        if self.random_distribution != "random":
            opts["random_distribution"] = self.random_distribution
        if self.fsync_every:
            opts["fsync"] = str(self.fsync_every)
        if self.sync:
            opts["sync"] = "dsync"
        if self.randseed is not None:
            opts["randseed"] = str(self.randseed)
        if self.loops != 1:
            opts["loops"] = str(self.loops)
        if not self.direct:
            opts["invalidate"] = "1" if self.invalidate else "0"
            opts["fadvise_hint"] = _FADVISE[self.readahead]
        return opts

    def expected_duration_s(self) -> float:
        """Upper bound used for the agent's hard timeout (unbounded jobs get a generous cap)."""
        if self.runtime_s is not None:
            return self.runtime_s + self.ramp_time_s
        # size-bound: as slow as a disk doing small random I/O (256 KiB/s), at most an hour
        io_bytes = (self.io_size_bytes or self.size_bytes) * self.loops
        return min(3600.0, io_bytes / (256 * KiB)) + self.ramp_time_s

    def shortened(self, factor: float) -> "JobSpec":
        """This job cut to `factor` of its length: runtime and warm-up scaled (at least 1 s and
        0 s), a size-bound job's I/O per pass scaled to whole blocks (at least one)."""
        if self.runtime_s is not None:
            runtime = max(1.0, round(self.runtime_s * factor, 1))
            return self.model_copy(
                update={"runtime_s": runtime, "ramp_time_s": round(self.ramp_time_s * factor, 1)}
            )
        io_bytes = self.io_size_bytes or self.size_bytes
        io_size = max(self.bs_bytes, int(io_bytes * factor) // self.bs_bytes * self.bs_bytes)
        return self.model_copy(
            update={"io_size_bytes": io_size, "ramp_time_s": round(self.ramp_time_s * factor, 1)}
        )


# Pass names (`TEST.pK`, pass_of) and best-of-passes are libs/workload's (iowatt_workload.passes):
# the agent and the server read them with the same code.


WorkloadKind = Literal["block", "postmark", "vdbench", "tpch", "heap_btree"]
KIND_LABEL = {
    "block": "a block workload",
    "postmark": "a PostMark workload",
    "vdbench": "a vdbench file set",
    "tpch": "a TPC-H workload",
    "heap_btree": "a heap/B-tree sweep",
}
# a kind's parameters field and the lease job's "mode" (file and database kinds)
KIND_MODE = {"postmark": "postmark", "vdbench": "vdbench", "tpch": "tpch", "heap_btree": "heap-btree"}

# PostMark's limits as the engine checks them (src/postmark.c): a 422 here says what the engine's
# exit 2 would, before anything is queued.
PM_MAX_SIZE = 1 << 30
PM_MAX_NUMBER = 100_000_000
PM_MAX_BLOCK = 64 * MiB
PM_MAX_INT = 2**31 - 1
PM_MAX_SUBDIRS = 100_000
VDBENCH_MAX_TEXT = 64 * KiB
SCALE_MAX = 1000.0
ELAPSED_MAX_S = 366 * 86400  # the engine's --elapsed bound


def _scale_text(value: float) -> str:
    """A scale as the engine's --scale reads it (strtod): shortest exact decimal, no exponent."""
    text = f"{value:.12f}".rstrip("0").rstrip(".")
    return text if text not in ("", "0") else repr(value)


class PostmarkSpec(InputSchema):
    """PostMark 1.5's `set` commands, structured; defaults are PostMark's (as the engine has them).
    `commands()` renders the command file the engine's --postmark reads."""

    number: int = Field(500, ge=1, le=PM_MAX_NUMBER, description="files created first (set number)")
    size_low_bytes: int = Field(500, ge=1, le=PM_MAX_SIZE, description="smallest file size, bytes (set size)")
    size_high_bytes: int = Field(
        10000,
        ge=1,
        le=PM_MAX_SIZE,
        description="largest file size, bytes: sizes are uniform in [low, high); equal to low = fixed "
        "size (appends then add nothing: files never grow past high)",
    )
    subdirectories: int = Field(
        0, ge=0, le=PM_MAX_SUBDIRS, description="files spread over this many subdirectories (0 or 1: none)"
    )
    read_block_bytes: int = Field(512, ge=1, le=PM_MAX_BLOCK, description="bytes per read call (set read)")
    write_block_bytes: int = Field(512, ge=1, le=PM_MAX_BLOCK, description="bytes per write call (set write)")
    transactions: int = Field(500, ge=1, le=PM_MAX_INT, description="transactions (set transactions)")
    bias_read: int = Field(
        5, ge=-1, le=10, description="a transaction reads (else appends) N times in 10; -1 = neither"
    )
    bias_create: int = Field(
        5, ge=-1, le=10, description="a transaction creates (else deletes) N times in 10; -1 = neither"
    )
    buffering: bool = Field(
        True, description="PostMark's stdio buffering (true) or one call per block (false)"
    )
    seed: int = Field(42, ge=1, le=PM_MAX_INT, description="random generator seed (set seed)")
    fsync: bool = Field(
        False,
        description="NOT IN POSTMARK: fsync after each file is written (create, append); marked in results",
    )

    @field_validator("size_high_bytes")
    @classmethod
    def _high_not_below_low(cls, v: int, info: ValidationInfo) -> int:
        low = info.data.get("size_low_bytes")
        if low is not None and v < low:
            raise _bad(
                f"the largest size ({human_bytes(v)}) must not be below the smallest ({human_bytes(low)})"
            )
        return v

    def commands(self) -> str:
        """The PostMark command file: `set` lines, `run`, `quit`."""
        lines = [
            f"set size {self.size_low_bytes} {self.size_high_bytes}",
            f"set number {self.number}",
        ]
        if self.subdirectories >= 1:
            lines.append(f"set subdirectories {self.subdirectories}")
        lines += [
            f"set read {self.read_block_bytes}",
            f"set write {self.write_block_bytes}",
            f"set transactions {self.transactions}",
            f"set bias read {self.bias_read}",
            f"set bias create {self.bias_create}",
            f"set buffering {'true' if self.buffering else 'false'}",
            f"set seed {self.seed}",
        ]
        if self.fsync:
            lines.append("set fsync true")
        return "\n".join([*lines, "run", "quit"]) + "\n"

    def scaled(self, factor: float) -> "PostmarkSpec":
        """Files and transactions times `factor` (each at least 1)."""
        number = max(1, round(self.number * factor))
        transactions = max(1, round(self.transactions * factor))
        if number > PM_MAX_NUMBER or transactions > PM_MAX_INT:
            raise ValueError(
                f"the scaled workload has {number} files and {transactions} transactions: above PostMark's "
                f"limits ({PM_MAX_NUMBER} files, {PM_MAX_INT} transactions)"
            )
        return self.model_copy(update={"number": number, "transactions": transactions})


class VdbenchSpec(InputSchema):
    """A vdbench parameter file (fsd/fwd/rd), read only by the engine's parser (ADR 0022)."""

    parameters: str = Field(
        min_length=1,
        max_length=VDBENCH_MAX_TEXT,
        description="the vdbench parameter file text (at most 64 KiB); anchor= is replaced on the host by "
        "the run's directory",
    )
    scale: float = Field(
        1.0,
        gt=0,
        le=SCALE_MAX,
        description="the engine's --scale: files per directory, file sizes and elapsed times this factor "
        "(1 = as written)",
    )
    elapsed_s: int | None = Field(
        None,
        ge=1,
        le=ELAPSED_MAX_S,
        description="run time override, seconds (the engine's --elapsed); null = rd's",
    )

    @field_validator("parameters")
    @classmethod
    def _fits(cls, v: str) -> str:
        if len(v.encode()) > VDBENCH_MAX_TEXT:
            raise _bad(f"the parameter file is {human_bytes(len(v.encode()))}: at most 64 KiB")
        return v


Dbms = Literal["postgresql", "mariadb"]
TPCH_DEFAULT_BUFFER_POOL = (
    16 * MiB
)  # the bench's default (agent tpch/dbms.py): small, so the device serves reads
TPCH_MAX_STREAMS = 64  # the bench's --streams bound
HB_MAX_RECORDS = 2_000_000_000  # the engine's --records bound
HB_MAX_FRACTIONS = 64
HB_DEFAULT_FRACTIONS = [round(0.1 * i, 1) for i in range(1, 11)]


def _fraction_text(value: float) -> str:
    return f"{value:.6f}".rstrip("0").rstrip(".")


class TpchSpec(InputSchema):
    """A TPC-H-derived run (TPC-H-derived, not audited: docs/tpch.md): the agent generates the data,
    loads it into a private DBMS on the target and runs the power and throughput tests."""

    dbms: Dbms = Field(description="the DBMS the agent starts on the target (the host must allow it)")
    scale_factor: float = Field(
        gt=0, le=1000, description="TPC-H scale factor SF (1 ≈ 1 GB of raw data; 0.01 for a smoke run)"
    )
    streams: int | None = Field(
        None,
        ge=1,
        le=TPCH_MAX_STREAMS,
        description="query streams in the throughput test; null = the spec's minimum for SF (2 below 10)",
    )
    query_timeout_s: float = Field(
        3600, ge=0.01, le=7 * 86400, description="seconds per query; a query past it is cancelled and marked"
    )
    buffer_pool_bytes: int = Field(
        TPCH_DEFAULT_BUFFER_POOL,
        ge=MiB,
        le=1 << 40,
        description="the DBMS's cache (default 16 MiB, small on purpose so the device serves reads)",
    )

    def scaled(self, factor: float) -> "TpchSpec":
        sf = float(f"{self.scale_factor * factor:.12g}")
        if not 0 < sf <= SCALE_MAX:
            raise ValueError(
                f"the scale factor {self.scale_factor:g} times {factor:g} is {sf:g}: TPC-H runs take "
                f"above 0 and at most {SCALE_MAX:g}"
            )
        return self.model_copy(update={"scale_factor": sf})


class HeapBtreeSpec(InputSchema):
    """Seed 002's heap-file and B+tree sweep (Table 3), run by the engine's --heap-btree."""

    records: int = Field(
        ge=1, le=HB_MAX_RECORDS, description="records inserted per structure and fraction (N)"
    )
    queries: int | None = Field(
        None, ge=1, le=HB_MAX_RECORDS, description="B+tree point queries; null = the engine's min(N, 10000)"
    )
    cache_fractions: list[float] = Field(
        default_factory=lambda: list(HB_DEFAULT_FRACTIONS),
        min_length=1,
        max_length=HB_MAX_FRACTIONS,
        description="buffer pool sizes as fractions of the data pages, each above 0 and at most 1 "
        "(default the seed's ten: 0.1 … 1.0)",
    )
    randseed: int = Field(
        1, ge=0, le=MAX_RANDSEED, description="records and queries (the engine's --randseed)"
    )
    structure: Literal["both", "heap", "btree"] = Field("both", description="heap, btree or both")

    @field_validator("cache_fractions")
    @classmethod
    def _fractions(cls, v: list[float]) -> list[float]:
        for f in v:
            if not 0 < f <= 1:
                raise _bad(f"a cache fraction is above 0 and at most 1, not {f:g}")
        if len(set(v)) != len(v):
            raise _bad("each cache fraction once")
        return v

    def scaled(self, factor: float) -> "HeapBtreeSpec":
        records = max(1, round(self.records * factor))
        if records > HB_MAX_RECORDS:
            raise ValueError(
                f"the scaled sweep has {records} records: the engine takes at most {HB_MAX_RECORDS}"
            )
        return self.model_copy(update={"records": records})

    def engine_options(self) -> list[str]:
        """The engine's --heap-btree options (without --directory)."""
        argv = [
            f"--records={self.records}",
            f"--cache-fraction={self.fractions_text()}",
            f"--randseed={self.randseed}",
            f"--structure={self.structure}",
        ]
        if self.queries is not None:
            argv.append(f"--queries={self.queries}")
        return argv

    def fractions_text(self) -> str:
        return ",".join(_fraction_text(f) for f in self.cache_fractions)


class FileFacts(InputSchema):
    """What the engine's --parse-only says a file workload will do (its `bounds`), as the server got
    them when the workload was saved or the run queued; a TPC-H workload's from libs/workload's
    tpch_facts (the one TPC-H bound). Set by the server; a value sent is replaced."""

    mode: Literal["postmark", "vdbench", "heap-btree", "tpch"]
    threads: int = Field(description="threads running at once")
    max_block_bytes: int = Field(description="largest read or write transfer, bytes")
    bytes_written_max: int | None = Field(
        description="upper bound of bytes the run writes, layout included; null = unbounded"
    )
    runtime_s_max: float | None = Field(
        description="declared duration, seconds; null = size-bound (PostMark)"
    )
    dataset_bytes: int = Field(description="bytes of the file set as laid out")
    files: int = Field(description="files of the file set as laid out")
    directories: int = Field(description="directories of the file set as laid out")
    o_direct: bool = Field(False, description="every file set is opened O_DIRECT (vdbench openflags)")


class WorkloadSpec(InputSchema):
    kind: WorkloadKind = Field(
        "block",
        description="block: fio-style jobs (jobs); postmark: PostMark (postmark); vdbench: a vdbench file "
        f"set (vdbench); tpch: {TPCH_LABEL}, on a private DBMS (tpch); heap_btree: seed 002's "
        "heap/B-tree sweep (heap_btree)",
    )
    jobs: list[JobSpec] = Field(
        default_factory=list,
        max_length=200,
        validate_default=True,
        description="block workloads: 1 to 200 jobs; file workloads: none",
    )
    passes: int = Field(1, ge=1, le=20, description="measured passes per test (CrystalDiskMark-style)")
    discard_passes: int = Field(0, ge=0, le=5, description="leading passes run but not counted")
    shortened_by: float | None = Field(
        None,
        gt=0,
        lt=1,
        description="the factor this workload's jobs were shortened by (WorkloadSpec.shortened: runtimes, "
        "or a size-bound job's I/O, times the factor), recorded so results say so; null = full length",
    )
    postmark: PostmarkSpec | None = Field(None, validate_default=True, description="kind postmark only")
    vdbench: VdbenchSpec | None = Field(None, validate_default=True, description="kind vdbench only")
    tpch: TpchSpec | None = Field(None, validate_default=True, description=f"kind tpch only ({TPCH_LABEL})")
    heap_btree: HeapBtreeSpec | None = Field(None, validate_default=True, description="kind heap_btree only")
    scaled_by: float | None = Field(
        None,
        gt=0,
        description="file workloads: the run's scale applied to this spec (vdbench: multiplied into "
        "vdbench.scale; postmark: number and transactions times it; tpch: the scale factor times it; "
        "heap_btree: records times it), recorded so results say so; null = as saved",
    )
    facts: FileFacts | None = Field(
        None,
        description="file workloads: the engine's --parse-only bounds as the server got them (set by "
        "the server; a value sent is replaced); null for block workloads",
    )

    @field_validator("jobs")
    @classmethod
    def _jobs_for_block_only(cls, v: list[JobSpec], info: ValidationInfo) -> list[JobSpec]:
        kind = info.data.get("kind", "block")
        if kind == "block" and not v:
            raise _bad("a block workload needs at least one job")
        if kind != "block" and v:
            raise _bad(f"{KIND_LABEL[kind]} has no jobs: its parameters are in '{kind}'")
        return v

    @field_validator("postmark")
    @classmethod
    def _postmark_for_its_kind(cls, v: PostmarkSpec | None, info: ValidationInfo) -> PostmarkSpec | None:
        _only_for_kind("postmark", v, info)
        return v

    @field_validator("vdbench")
    @classmethod
    def _vdbench_for_its_kind(cls, v: VdbenchSpec | None, info: ValidationInfo) -> VdbenchSpec | None:
        _only_for_kind("vdbench", v, info)
        return v

    @field_validator("tpch")
    @classmethod
    def _tpch_for_its_kind(cls, v: TpchSpec | None, info: ValidationInfo) -> TpchSpec | None:
        _only_for_kind("tpch", v, info)
        return v

    @field_validator("heap_btree")
    @classmethod
    def _heap_btree_for_its_kind(cls, v: HeapBtreeSpec | None, info: ValidationInfo) -> HeapBtreeSpec | None:
        _only_for_kind("heap_btree", v, info)
        return v

    @model_validator(mode="after")
    def _unique_names(self) -> "WorkloadSpec":
        names = [j.name for j in self.jobs]
        if len(names) != len(set(names)):
            raise ValueError("job names must be unique within a workload")
        if is_multi_pass(self.passes, self.discard_passes):
            total = self.passes + self.discard_passes
            bad = [n for n in names if (pass_of(n) or ("", total))[1] >= total]
            if bad:
                raise ValueError(f"with passes, job names end in .p0 … .p{total - 1}: {', '.join(bad[:3])}")
        return self

    @property
    def is_file(self) -> bool:
        return self.kind != "block"

    def shortened(self, factor: float) -> "WorkloadSpec":
        """The one implementation of a shortened preset ("×0.1 for a quick look"): every job cut
        to `factor` of its length, and the factor recorded (multiplied when shortened twice).
        Block workloads only: a file workload is made smaller with `scaled`."""
        if self.is_file:
            raise ValueError(f"{KIND_LABEL[self.kind]} is made smaller with scale, not shorten")
        if not SHORTEN_MIN <= factor < 1:
            raise ValueError(f"a shortening factor is from {SHORTEN_MIN} to below 1")
        recorded = round((self.shortened_by or 1.0) * factor, 6)
        return self.model_copy(
            update={"jobs": [j.shortened(factor) for j in self.jobs], "shortened_by": max(recorded, 1e-6)}
        )

    def scaled(self, factor: float) -> "WorkloadSpec":
        """A file workload at `factor` of its size (ADR 0022): vdbench's scale multiplied,
        PostMark's files and transactions multiplied (at least 1); the factor recorded in
        scaled_by (multiplied when scaled twice). The facts no longer hold: they are cleared
        (the server asks the engine again). ValueError when the result is out of bounds."""
        if not self.is_file:
            raise ValueError("a block workload is made shorter with shorten, not scale")
        if not factor > 0:
            raise ValueError("a scale is above 0")
        recorded = float(f"{(self.scaled_by or 1.0) * factor:.12g}")
        update: dict[str, object] = {"scaled_by": recorded, "facts": None}
        if self.vdbench is not None:
            scale = float(f"{self.vdbench.scale * factor:.12g}")
            if not 0 < scale <= SCALE_MAX:
                raise ValueError(
                    f"the workload's scale {self.vdbench.scale:g} times {factor:g} is {scale:g}: "
                    f"the engine takes above 0 and at most {SCALE_MAX:g}"
                )
            update["vdbench"] = self.vdbench.model_copy(update={"scale": scale})
        if self.postmark is not None:
            update["postmark"] = self.postmark.scaled(factor)
        if self.tpch is not None:
            update["tpch"] = self.tpch.scaled(factor)
        if self.heap_btree is not None:
            update["heap_btree"] = self.heap_btree.scaled(factor)
        return self.model_copy(update=update)

    def engine_job(self) -> dict[str, object]:
        """What the agent receives in lease.engine_job: the engine's job file for a block workload;
        for a file workload {"mode": "postmark", "commands": TEXT} or {"mode": "vdbench",
        "parameters": TEXT, "scale": "X", "elapsed"?: "S"} (strings, as the engine's flags)."""
        if self.postmark is not None and self.kind == "postmark":
            return {"mode": "postmark", "commands": self.postmark.commands()}
        if self.vdbench is not None and self.kind == "vdbench":
            job: dict[str, object] = {
                "mode": "vdbench",
                "parameters": self.vdbench.parameters,
                "scale": _scale_text(self.vdbench.scale),
            }
            if self.vdbench.elapsed_s is not None:
                job["elapsed"] = str(self.vdbench.elapsed_s)
            return job
        if self.tpch is not None and self.kind == "tpch":
            t = self.tpch
            job = {"mode": "tpch", "dbms": t.dbms, "scale_factor": _scale_text(t.scale_factor)}
            if t.streams is not None:
                job["streams"] = str(t.streams)
            job["query_timeout_s"] = _scale_text(t.query_timeout_s)
            job["buffer_pool_bytes"] = str(t.buffer_pool_bytes)
            return job
        if self.heap_btree is not None and self.kind == "heap_btree":
            h = self.heap_btree
            job = {"mode": "heap-btree", "records": str(h.records)}
            if h.queries is not None:
                job["queries"] = str(h.queries)
            job["cache_fractions"] = h.fractions_text()
            job["randseed"] = str(h.randseed)
            job["structure"] = h.structure
            return job
        return {"global": {}, "jobs": [j.engine_options() for j in self.jobs]}

    def identity_jobs(self) -> list[dict[str, Any]]:
        """What the compare's like-for-like rule (iowatt_workload.identity) sees: a block
        workload's jobs; a file workload's parameters as one entry ({"kind": ..., then PostMark's
        settings, or vdbench's text, scale and elapsed_s}), so two file workloads are the same only
        when they run the same thing."""
        if self.kind == "postmark" and self.postmark is not None:
            return [{"kind": "postmark", **self.postmark.model_dump(mode="json")}]
        if self.kind == "vdbench" and self.vdbench is not None:
            return [{"kind": "vdbench", **self.vdbench.model_dump(mode="json")}]
        if self.kind == "tpch" and self.tpch is not None:
            return [{"kind": "tpch", **self.tpch.model_dump(mode="json")}]
        if self.kind == "heap_btree" and self.heap_btree is not None:
            return [{"kind": "heap_btree", **self.heap_btree.model_dump(mode="json")}]
        return [j.model_dump(mode="json") for j in self.jobs]

    def timeout_s(self) -> int:
        if self.kind == "tpch":
            return self._tpch_timeout_s()
        if self.is_file:
            return self._file_timeout_s()
        # The engine lays out and pre-fills files before reading: allow for that and for slack.
        return int(sum(j.expected_duration_s() for j in self.jobs) * 1.5 + 10 * len(self.jobs) + 300)

    def _file_timeout_s(self) -> int:
        """The agent's hard wall-clock limit for a file workload, from the engine's facts: the
        declared run time, plus laying out and writing the data at a slow 20 MB/s, plus the file
        operations at a slow 200 per second (a busy disk: creations, deletions, opens), times 1.5
        and 10 minutes of slack. Without facts (the engine was not there when a preset was
        refreshed): FILE_TIMEOUT_NO_FACTS_S."""
        f = self.facts
        if f is None:
            return FILE_TIMEOUT_NO_FACTS_S
        data = max(f.dataset_bytes, f.bytes_written_max or 0)
        ops = 2 * f.files + f.directories
        if self.postmark is not None:
            ops += 2 * self.postmark.transactions
            data += self.postmark.transactions * max(self.postmark.size_high_bytes, f.max_block_bytes)
        seconds = (f.runtime_s_max or 0.0) + data / SLOW_BYTES_PER_S + ops / SLOW_FILE_OPS_PER_S
        return int(seconds * 1.5 + 600)

    def _tpch_timeout_s(self) -> int:
        """A TPC-H run is not bounded by its size (queries run to their timeout): the agent's hard
        limit is generating, loading and writing the bound's bytes at a slow 20 MB/s, plus every
        query and refresh function of the power test and of the longest throughput stream at the
        query timeout, times 1.5 and 10 minutes of slack; at most TPCH_TIMEOUT_MAX_S."""
        assert self.tpch is not None
        facts = tpch_facts(self.tpch.scale_factor, self.tpch.streams)
        streams = facts["threads"] - 1
        statements = (22 + 2) + 22 + 2 * streams  # power; a throughput stream; the refresh stream
        seconds = facts["bytes_written_max"] / SLOW_BYTES_PER_S + statements * self.tpch.query_timeout_s
        return int(min(TPCH_TIMEOUT_MAX_S, seconds * 1.5 + 600))


SLOW_BYTES_PER_S = 20e6
SLOW_FILE_OPS_PER_S = 200.0
FILE_TIMEOUT_NO_FACTS_S = 6 * 3600
TPCH_TIMEOUT_MAX_S = 7 * 86400


def _only_for_kind(kind: str, v: object, info: ValidationInfo) -> None:
    given = info.data.get("kind", "block")
    if given == kind and v is None:
        raise _bad(f"{KIND_LABEL[kind]} needs its parameters here")
    if given != kind and v is not None:
        raise _bad(f"only a workload of kind {kind!r} has these parameters (this one is {given!r})")


# --- stored specs ------------------------------------------------------------------------------
# A spec is stored as JSON with the version of this schema that wrote it ("spec_version"; rows
# written before versions existed have none: version 0). Reading upgrades it step by step to
# SPEC_VERSION, then validates it against today's rules; a stored spec that today's rules refuse
# (a limit tightened since) is still read with its stored values, never an error: it was valid
# when it was written, and the engine checks every job again before it runs (exit 2).
# Changing WorkloadSpec or JobSpec: bump SPEC_VERSION and add the upgrade from the previous
# version to _UPGRADES (a renamed field is moved there, a removed one dropped).

SPEC_VERSION = 4
_UPGRADES: dict[int, Callable[[dict[str, Any]], dict[str, Any]]] = {
    0: lambda doc: doc,  # version 1 is version 0 with a version number: nothing moves
    # version 2 adds job options (bssplit, rate_iops, random_distribution, fsync_every, sync,
    # randseed, loops) and the spec's shortened_by, all with defaults that mean "unset": nothing moves
    1: lambda doc: doc,
    # version 3 adds kind (default block), postmark, vdbench, scaled_by and facts (ADR 0022): every
    # version-2 spec is a block workload as it stands, so nothing moves
    2: lambda doc: doc,
    # version 4 adds kinds tpch and heap_btree with their tpch / heap_btree (issue 15), both null
    # for every earlier kind: nothing moves
    3: lambda doc: doc,
}


def stored_spec(spec: WorkloadSpec) -> dict[str, Any]:
    """The JSON a run or workload row stores: the spec and the version of the schema writing it."""
    return {**spec.model_dump(mode="json"), "spec_version": SPEC_VERSION}


def upgrade_spec(doc: dict[str, Any]) -> dict[str, Any]:
    """A stored spec brought to today's field names and shape (without its version key)."""
    doc = dict(doc)
    version = int(doc.pop("spec_version", 0))
    while version < SPEC_VERSION:
        doc = _UPGRADES[version](doc)
        version += 1
    return doc


def load_spec(doc: dict[str, Any] | WorkloadSpec) -> WorkloadSpec:
    """A stored spec as a WorkloadSpec. Never fails on a row written by an older schema: what
    today's rules refuse keeps its stored value (fields unknown today are left out)."""
    if isinstance(doc, WorkloadSpec):
        return doc
    doc = upgrade_spec(doc)
    try:
        return WorkloadSpec.model_validate(doc)
    except ValidationError:
        jobs = [
            JobSpec.model_construct(**{k: v for k, v in job.items() if k in JobSpec.model_fields})
            for job in doc.get("jobs", [])
        ]
        nested: dict[str, Any] = {}
        for key, model in (
            ("postmark", PostmarkSpec),
            ("vdbench", VdbenchSpec),
            ("tpch", TpchSpec),
            ("heap_btree", HeapBtreeSpec),
            ("facts", FileFacts),
        ):
            if isinstance(doc.get(key), dict):
                nested[key] = model.model_construct(
                    **{k: v for k, v in doc[key].items() if k in model.model_fields}
                )
        plain = {
            k: v for k, v in doc.items() if k in WorkloadSpec.model_fields and k not in ("jobs", *nested)
        }
        return WorkloadSpec.model_construct(jobs=jobs, **plain, **nested)


# An output field holding a stored spec: read with load_spec, so a response carrying an old row
# is not re-validated against today's input limits (the instance load_spec returns is taken as it
# is: models do not re-validate instances), and the OpenAPI schema stays WorkloadSpec.
StoredWorkloadSpec = Annotated[WorkloadSpec, BeforeValidator(load_spec)]


class WorkloadCreate(InputSchema):
    name: str = Field(min_length=1, max_length=120)
    description: str = Field("", max_length=2000)
    team_id: uuid.UUID
    spec: WorkloadSpec


class WorkloadRead(OutputSchema):
    id: uuid.UUID
    name: str
    description: str
    spec: StoredWorkloadSpec
    builtin: bool
