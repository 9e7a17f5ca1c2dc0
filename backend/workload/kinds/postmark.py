"""PostMark (the kind `postmark`): PostMark 1.5's `set` commands, structured; the engine's
--postmark runs them in a directory target. A run's scale multiplies the files and transactions."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from pydantic import Field, ValidationInfo, field_validator

from backend.kit.messages import human_bytes
from backend.kit.schema import InputSchema
from backend.workload.engine_limits import section
from backend.workload.kinds.base import Family, FileFacts, Kind, ParseOnly, bad

if TYPE_CHECKING:
    from backend.workload.schemas import WorkloadSpec

# PostMark's limits and defaults as the engine checks them (its --limits "postmark": each set
# command's range and default): a 422 here says what the engine's exit 2 would, before anything is
# queued.
_PM = section("postmark")
PM_MAX_SIZE: int = _PM["size_high"]["max"]
PM_MAX_NUMBER: int = _PM["number"]["max"]
PM_MAX_BLOCK: int = _PM["read"]["max"]
PM_MAX_INT: int = _PM["transactions"]["max"]
PM_MAX_SUBDIRS: int = _PM["subdirectories"]["max"]


class PostmarkSpec(InputSchema):
    """PostMark 1.5's `set` commands, structured; defaults are PostMark's (as the engine has them).
    `commands()` renders the command file the engine's --postmark reads."""

    number: int = Field(
        _PM["number"]["default"], ge=1, le=PM_MAX_NUMBER, description="files created first (set number)"
    )
    size_low_bytes: int = Field(
        _PM["size_low"]["default"], ge=1, le=PM_MAX_SIZE, description="smallest file size, bytes (set size)"
    )
    size_high_bytes: int = Field(
        _PM["size_high"]["default"],
        ge=1,
        le=PM_MAX_SIZE,
        description="largest file size, bytes: sizes are uniform in [low, high); equal to low = fixed "
        "size (appends then add nothing: files never grow past high)",
    )
    subdirectories: int = Field(
        0, ge=0, le=PM_MAX_SUBDIRS, description="files spread over this many subdirectories (0 or 1: none)"
    )
    read_block_bytes: int = Field(
        _PM["read"]["default"], ge=1, le=PM_MAX_BLOCK, description="bytes per read call (set read)"
    )
    write_block_bytes: int = Field(
        _PM["write"]["default"], ge=1, le=PM_MAX_BLOCK, description="bytes per write call (set write)"
    )
    transactions: int = Field(
        _PM["transactions"]["default"], ge=1, le=PM_MAX_INT, description="transactions (set transactions)"
    )
    bias_read: int = Field(
        _PM["bias_read"]["default"],
        ge=_PM["bias_read"]["min"],
        le=_PM["bias_read"]["max"],
        description="a transaction reads (else appends) N times in 10; -1 = neither",
    )
    bias_create: int = Field(
        _PM["bias_create"]["default"],
        ge=_PM["bias_create"]["min"],
        le=_PM["bias_create"]["max"],
        description="a transaction creates (else deletes) N times in 10; -1 = neither",
    )
    buffering: bool = Field(
        _PM["buffering"], description="PostMark's stdio buffering (true) or one call per block (false)"
    )
    seed: int = Field(
        _PM["seed"]["default"], ge=1, le=_PM["seed"]["max"], description="random generator seed (set seed)"
    )
    fsync: bool = Field(
        False,
        description="NOT IN POSTMARK: fsync after each file is written (create, append); marked in results",
    )

    @field_validator("size_high_bytes")
    @classmethod
    def _high_not_below_low(cls, v: int, info: ValidationInfo) -> int:
        low = info.data.get("size_low_bytes")
        if low is not None and v < low:
            raise bad(
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

    def scaled(self, factor: float) -> PostmarkSpec:
        """Files and transactions times `factor` (each at least 1)."""
        number = max(1, round(self.number * factor))
        transactions = max(1, round(self.transactions * factor))
        if number > PM_MAX_NUMBER or transactions > PM_MAX_INT:
            raise ValueError(
                f"the scaled workload has {number} files and {transactions} transactions: above PostMark's "
                f"limits ({PM_MAX_NUMBER} files, {PM_MAX_INT} transactions)"
            )
        return self.model_copy(update={"number": number, "transactions": transactions})


class Postmark(Kind):
    name = "postmark"
    label = "a PostMark workload"
    parameters_model = PostmarkSpec
    family: ClassVar[Family] = "file"

    def engine_job(self, spec: WorkloadSpec) -> dict[str, object]:
        """{"mode": "postmark", "commands": TEXT}."""
        assert spec.postmark is not None
        return {"mode": "postmark", "commands": spec.postmark.commands()}

    def extra_work(self, spec: WorkloadSpec, facts: FileFacts) -> tuple[float, int]:
        assert spec.postmark is not None
        pm = spec.postmark
        return pm.transactions * max(pm.size_high_bytes, facts.max_block_bytes), 2 * pm.transactions

    def scaled(self, spec: WorkloadSpec, factor: float) -> dict[str, object]:
        assert spec.postmark is not None
        return {"postmark": spec.postmark.scaled(factor)}

    def parse_only(self, spec: WorkloadSpec) -> ParseOnly:
        assert spec.postmark is not None
        return ParseOnly("--postmark", [], spec.postmark.commands(), "postmark", "commands.txt")

    def default_name(self, spec: WorkloadSpec) -> str:
        return "postmark"
