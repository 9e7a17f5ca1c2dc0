"""Block workloads: fio-style jobs the engine runs from its JSON job file, in a file, a device or
a directory's data file (the kind `block`; a spec without a kind is one). Shortened, not scaled."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, ClassVar, Literal, cast

from iowatt_workload import KiB, MiB, parse_size
from pydantic import (
    Field,
    SerializerFunctionWrapHandler,
    TypeAdapter,
    ValidationInfo,
    WithJsonSchema,
    field_validator,
    model_serializer,
)

from backend.kit.messages import human_bytes
from backend.kit.schema import InputSchema
from backend.workload.engine_limits import block_limit, option, option_default, option_max
from backend.workload.kinds.base import MAX_RANDSEED, Family, Kind, Sizing, TargetKind, bad

if TYPE_CHECKING:
    from backend.workload.schemas import WorkloadSpec

Rw = Literal["read", "write", "randread", "randwrite", "rw", "randrw"]
IoEngine = Literal["psync", "libaio", "io_uring"]
Readahead = Literal["default", "on", "off"]
# the settings an imported file may leave unstated (JobSpec.unstated)
Unstated = Literal["rw", "bs_bytes", "size_bytes", "iodepth", "numjobs", "ioengine", "direct"]


def _null_when_unstated(t: Any) -> WithJsonSchema:
    """The output schema of a setting an imported job may leave unstated: the type or null (a
    request must state it: the input schema stays the type)."""
    return WithJsonSchema(TypeAdapter(t | None).json_schema(), mode="serialization")


RwSetting = Annotated[Rw, _null_when_unstated(Rw)]
IntSetting = Annotated[int, _null_when_unstated(int)]
IoEngineSetting = Annotated[IoEngine, _null_when_unstated(IoEngine)]
BoolSetting = Annotated[bool, _null_when_unstated(bool)]
# engine fadvise_hint per readahead mode: "on" gives no hint, so the kernel's default readahead
# window applies (FADV_SEQUENTIAL would double it: more than "on"); "default" is fio's hint per
# pattern (SEQUENTIAL for sequential, RANDOM for random jobs).
_FADVISE = {"default": "1", "on": "0", "off": "random"}

MAX_BS = 256 * MiB
MAX_BSSPLIT = block_limit("max_bssplit")  # entries per direction, the engine's (--limits)
SHORTEN_MIN = 0.01


def _bssplit_sizes(text: str) -> list[int]:
    """fio's bssplit ("4k/10:64k/90", optionally "READ,WRITE"): its block sizes, checked as the
    engine checks them (sizes > 0, percentages that add up to 100; an entry without one shares
    the rest)."""
    sizes: list[int] = []
    for direction in text.split(",", 1):
        entries = [e for e in direction.split(":") if e]
        if not entries:
            raise bad("write entries such as 4k/10:64k/90 (block size/percent, separated by colons)")
        if len(entries) > MAX_BSSPLIT:
            raise bad(f"may have at most {MAX_BSSPLIT} block sizes per direction")
        total, open_share = 0, 0
        for entry in entries:
            size_text, slash, pct_text = entry.partition("/")
            try:
                size = parse_size(size_text)
            except ValueError:
                size = 0
            if size <= 0:
                raise bad(f"{size_text!r} is not a block size (write 4k, 64k, 1m …)")
            if slash:
                if not pct_text.isdigit() or int(pct_text) > 100:
                    raise bad(f"{pct_text!r} is not a percentage from 0 to 100")
                total += int(pct_text)
            else:
                open_share += 1
            sizes.append(size)
        if total > 100 or (not open_share and total != 100):
            raise bad(f"the percentages add up to {total}; they must add up to 100")
    return sizes


def _distribution(text: str) -> str:
    """fio's random_distribution as the engine reads it: random, zipf:T, pareto:H, normal[:DEV]."""
    kind, colon, param = text.partition(":")
    value: float | None = None
    if colon:
        try:
            value = float(param)
        except ValueError:
            raise bad(f"{param!r} is not a number") from None
    if kind == "random" and not colon:
        return text
    if kind == "zipf" and value is not None:
        if not value > 0 or value == 1:
            raise bad("zipf needs a theta above 0 and other than 1, e.g. zipf:1.2")
        return text
    if kind == "pareto" and value is not None:
        if not 0 < value < 1:
            raise bad("pareto needs h between 0 and 1, e.g. pareto:0.9")
        return text
    if kind == "normal":
        if value is not None and not 0 < value <= 100:
            raise bad("normal's deviation is a percent of the region: above 0, at most 100")
        return text
    raise bad("must be random, zipf:THETA, pareto:H or normal[:DEVIATION%], e.g. zipf:1.2")


class JobSpec(InputSchema):
    name: str = Field(
        min_length=1, max_length=100, description="letters, digits, '_', '.' and '-' (unique in the workload)"
    )
    rw: RwSetting
    size_bytes: IntSetting = Field(gt=0, description="size of the region (file) the job works on, bytes")
    offset_bytes: int = Field(0, ge=0, description="start of the region, bytes")
    bs_bytes: IntSetting = Field(gt=0, le=MAX_BS, description="block size in bytes")
    runtime_s: float | None = Field(None, gt=0, le=7 * 24 * 3600, description="time limit, seconds")
    time_based: bool = False
    ramp_time_s: float = Field(0, ge=0, le=24 * 3600, description="warm-up excluded from stats, seconds")
    rwmixread: int = Field(
        int(option_default("rwmixread")),
        ge=option("rwmixread")["min"],
        le=option_max("rwmixread"),
        description="percent reads in rw/randrw",
    )
    numjobs: IntSetting = Field(int(option_default("numjobs")), ge=option("numjobs")["min"], le=256)
    iodepth: IntSetting = Field(
        int(option_default("iodepth")), ge=option("iodepth")["min"], le=option_max("iodepth")
    )
    ioengine: IoEngineSetting = cast(IoEngine, option_default("ioengine"))
    direct: BoolSetting = False
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
        option_default("random_distribution"),
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
    loops: int = Field(
        int(option_default("loops")),
        ge=option("loops")["min"],
        le=10_000,
        description="passes over the region (fio's loops)",
    )
    unstated: list[Unstated] | None = Field(
        None,
        description="an imported run's settings its file did not state: answered as null, "
        "shown as not stated; absent for every other job",
    )

    @model_serializer(mode="wrap")
    def _unstated_out(self, handler: SerializerFunctionWrapHandler):  # type: ignore[no-untyped-def]
        """`unstated` only where set (a measured job's dump is as before); each unstated setting
        null (the stored spec keeps placeholders there: backend/upload/service.py spec_of)."""
        out: dict[str, Any] = handler(self)
        marks = out.pop("unstated", None)
        if marks is not None:
            out["unstated"] = marks
            for key in marks:
                out[key] = None
        return out

    # Cross-field checks sit on the later field so a 422 names the field to fix; messages speak of
    # what the form shows (block size, size, runtime), never of field names.
    @field_validator("name")
    @classmethod
    def _name_chars(cls, v: str) -> str:
        if not all(c.isascii() and (c.isalnum() or c in "_.-") for c in v):
            raise bad("may use only letters, digits, '_', '.' and '-' (no spaces)")
        return v

    @field_validator("bs_bytes")
    @classmethod
    def _bs_fits(cls, v: int, info: ValidationInfo) -> int:
        size = info.data.get("size_bytes")
        if size is not None and v > size:
            raise bad(
                f"the block size ({human_bytes(v)}) must not be larger than the size ({human_bytes(size)})"
            )
        return v

    @field_validator("time_based")
    @classmethod
    def _time_based_needs_runtime(cls, v: bool, info: ValidationInfo) -> bool:
        if v and info.data.get("runtime_s") is None:
            raise bad(
                "a time-based job needs a runtime: enter seconds, or let the job end when its size is done"
            )
        return v

    @field_validator("direct")
    @classmethod
    def _direct_aligned(cls, v: bool, info: ValidationInfo) -> bool:
        bs, off = info.data.get("bs_bytes"), info.data.get("offset_bytes")
        if v and bs is not None and bs % 512:
            raise bad(f"direct I/O needs a block size in multiples of 512 bytes (not {human_bytes(bs)})")
        if v and off is not None and off % 512:
            raise bad(f"direct I/O needs an offset in multiples of 512 bytes (not {human_bytes(off)})")
        return v

    @field_validator("unstated")
    @classmethod
    def _unstated_only_by_imports(cls, v: list[str] | None) -> list[str] | None:
        # a request's job states every setting; only spec_of marks an imported job (after
        # validating it), and load_spec reads a stored imported spec without re-validating it
        if v is not None:
            raise bad("is set only by an import, for the settings its file did not state")
        return v

    @field_validator("io_size_bytes")
    @classmethod
    def _io_size_fits_a_block(cls, v: int | None, info: ValidationInfo) -> int | None:
        bs = info.data.get("bs_bytes")
        if v is not None and bs is not None and v < bs:
            raise bad(f"the I/O size must be at least one block ({human_bytes(bs)})")
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
                raise bad(f"a block size ({human_bytes(bs)}) is above the limit of {human_bytes(MAX_BS)}")
            if size is not None and bs > size:
                raise bad(f"a block size ({human_bytes(bs)}) is larger than the size ({human_bytes(size)})")
            if direct and bs % 512:
                raise bad(f"direct I/O needs block sizes in multiples of 512 bytes (not {human_bytes(bs)})")
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
        if self.numjobs > 1:
            # the job's threads as one result, as the platform has always shown a job (fio's
            # meaning: without it every clone is its own jobs[] entry)
            opts["group_reporting"] = "1"
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

    def shortened(self, factor: float) -> JobSpec:
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


class Block(Kind):
    name = "block"
    label = "a block workload"
    family: ClassVar[Family] = "block"
    sizing: ClassVar[Sizing] = "shorten"
    targets: ClassVar[tuple[TargetKind, ...]] = ("file", "device", "directory")

    def engine_job(self, spec: WorkloadSpec) -> dict[str, object]:
        """The engine's JSON job file (the agent adds the target's filename and options)."""
        return {"global": {}, "jobs": [j.engine_options() for j in spec.jobs]}

    def identity_jobs(self, spec: WorkloadSpec) -> list[dict[str, Any]]:
        return [j.model_dump(mode="json") for j in spec.jobs]

    def timeout_s(self, spec: WorkloadSpec) -> int:
        # The engine lays out and pre-fills files before reading: allow for that and for slack.
        return int(sum(j.expected_duration_s() for j in spec.jobs) * 1.5 + 10 * len(spec.jobs) + 300)

    def shortened_jobs(self, spec: WorkloadSpec, factor: float) -> list[JobSpec]:
        return [j.shortened(factor) for j in spec.jobs]

    def default_name(self, spec: WorkloadSpec) -> str:
        return "+".join(j.name for j in spec.jobs)[:120]
