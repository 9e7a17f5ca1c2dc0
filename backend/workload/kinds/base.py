"""What every workload kind is on the server (ADR 0027): one `Kind` subclass per module of this
package, listed once in `KINDS` (`__init__.py`).

A kind owns its parameters (the spec's field named after it, or a block workload's `jobs`), their
checks, the lease job the agent receives, the agent's hard timeout, how a run makes it smaller
(`shorten` or `scale`), what the compare's like-for-like rule sees of it, its default run name,
and what it needs of the target and the host. `WorkloadSpec` (the wire's one flat object, unchanged:
`{"kind": "postmark", "postmark": {...}, ...}`, no kind = block) finds its kind in `KINDS` and
asks it; nothing else compares kind names.

Shared here, so the kind modules need nothing of `schemas` (which imports them): the plain-words
error, the scale bound and spelling, FileFacts and the slow rates timeouts are sized with.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar, Literal

from iowatt_workload import KIND_MODES, WorkloadKind
from pydantic import Field
from pydantic_core import PydanticCustomError

from backend.kit.schema import InputSchema

if TYPE_CHECKING:
    from backend.workload.schemas import WorkloadSpec

MAX_RANDSEED = 2**53 - 1  # the largest integer a browser's JSON keeps exactly
SCALE_MAX = 1000.0
SLOW_BYTES_PER_S = 20e6
SLOW_FILE_OPS_PER_S = 200.0
FILE_TIMEOUT_NO_FACTS_S = 6 * 3600

Family = Literal["block", "file", "database"]
Sizing = Literal["shorten", "scale", "none"]  # none: runs as written (a fio job file)
TargetKind = Literal["file", "device", "directory"]


def bad(message: str) -> PydanticCustomError:
    """A validator's error in plain words (the 422 shows it beside the field the loc names)."""
    return PydanticCustomError("invalid_value", message)


def scale_text(value: float) -> str:
    """A scale as the engine's --scale reads it (strtod): shortest exact decimal, no exponent."""
    text = f"{value:.12f}".rstrip("0").rstrip(".")
    return text if text not in ("", "0") else repr(value)


def scaled_factor(value: float, factor: float, what: str, limit: str) -> float:
    """`value` times `factor` in twelve digits; ValueError unless above 0 and at most SCALE_MAX."""
    scaled = float(f"{value * factor:.12g}")
    if not 0 < scaled <= SCALE_MAX:
        raise ValueError(
            f"the {what} {value:g} times {factor:g} is {scaled:g}: {limit} above 0 and at most {SCALE_MAX:g}"
        )
    return scaled


class FileFacts(InputSchema):
    """What the engine's --parse-only says a file workload will do (its `bounds`), as the server got
    them when the workload was saved or the run queued; a TPC-H workload's from libs/workload's
    tpch_facts (the one TPC-H bound). Set by the server; a value sent is replaced."""

    mode: Literal["postmark", "vdbench", "heap-btree", "tpch", "innodb-flush"]
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


class ParseOnly:
    """How the engine's --parse-only reads a kind's parameters: `file_flag`=PATH (the text written
    to a file named `file_name`; None: no file) and `args`, and the spec's field a refusal is
    reported at."""

    def __init__(
        self,
        file_flag: str | None,
        args: list[str],
        text: str,
        field: str,
        file_name: str = "parameters.txt",
        *,
        positional: bool = False,
    ) -> None:
        self.file_flag, self.args, self.text = file_flag, args, text
        self.field, self.file_name = field, file_name
        # the file is the last argument (a fio job file: `iowatt-engine --parse-only FILE`), and
        # the engine's "FILE:LINE:" in a refusal reads "line LINE:"
        self.positional = positional

    def command(self, engine: str, path: str) -> list[str]:
        return [engine, *([f"{self.file_flag}={path}"] if self.file_flag else []), *self.args]

    def parse_command(self, engine: str, path: str, directory: str) -> list[str]:
        """The whole --parse-only command line (`directory`: one the engine never touches)."""
        if self.positional:
            return [*self.command(engine, path), "--parse-only", path]
        return [*self.command(engine, path), f"--directory={directory}", "--parse-only"]


class Kind:
    """One workload kind. Subclasses set the class attributes and the methods their family needs;
    the defaults are an engine file workload's (scaled, run in a directory, facts from the
    engine's --parse-only)."""

    name: ClassVar[WorkloadKind]
    label: ClassVar[str]  # "a PostMark workload": messages name the kind so
    family: ClassVar[Family]  # block jobs, an engine file set, or a database run (rows of figures)
    sizing: ClassVar[Sizing] = "scale"  # how a run makes it smaller
    # the parameter a run's scale multiplies (None: several, or shortened instead)
    scaled_parameter: ClassVar[str | None] = None
    targets: ClassVar[tuple[TargetKind, ...]] = ("directory",)  # target kinds it runs in
    # the model of the spec's field named after the kind (None: a block workload's jobs)
    parameters_model: ClassVar[type[InputSchema] | None] = None

    @property
    def mode(self) -> str | None:
        """The lease job's "mode" (libs/workload's KIND_MODES: None for a block job file)."""
        return KIND_MODES[self.name]

    @property
    def is_file(self) -> bool:
        """Not a block workload's jobs: one set of parameters in the spec's field named after the
        kind (a fio job file's text too, though its family is block)."""
        return self.parameters_model is not None

    def parameters(self, spec: WorkloadSpec) -> InputSchema | None:
        """The spec's parameters of this kind (None for a block workload, or when missing)."""
        value = getattr(spec, self.name, None) if self.is_file else None
        return value if isinstance(value, InputSchema) else None

    def engine_job(self, spec: WorkloadSpec) -> dict[str, object]:
        raise NotImplementedError

    def identity_jobs(self, spec: WorkloadSpec) -> list[dict[str, Any]]:
        """What the compare's like-for-like rule sees: the kind's parameters as one entry."""
        params = self.parameters(spec)
        if params is None:
            return [j.model_dump(mode="json") for j in spec.jobs]
        return [{"kind": self.name, **params.model_dump(mode="json")}]

    def timeout_s(self, spec: WorkloadSpec) -> int:
        """The agent's hard wall-clock limit for a file workload, from the engine's facts: the
        declared run time, plus laying out and writing the data at a slow 20 MB/s, plus the file
        operations at a slow 200 per second (a busy disk: creations, deletions, opens), times 1.5
        and 10 minutes of slack. Without facts (the engine was not there when a preset was
        refreshed): FILE_TIMEOUT_NO_FACTS_S."""
        f = spec.facts
        if f is None:
            return FILE_TIMEOUT_NO_FACTS_S
        data, ops = self.extra_work(spec, f)
        data += max(f.dataset_bytes, f.bytes_written_max or 0)
        ops += 2 * f.files + f.directories
        seconds = (f.runtime_s_max or 0.0) + data / SLOW_BYTES_PER_S + ops / SLOW_FILE_OPS_PER_S
        return int(seconds * 1.5 + 600)

    def extra_work(self, spec: WorkloadSpec, facts: FileFacts) -> tuple[float, int]:
        """Bytes and file operations beyond the facts' file set (PostMark's transactions)."""
        return 0.0, 0

    def scaled(self, spec: WorkloadSpec, factor: float) -> dict[str, object]:
        """The spec's update for a run's scale (ValueError when out of bounds)."""
        raise ValueError(f"{self.label} is made shorter with shorten, not scale")

    def parse_only(self, spec: WorkloadSpec) -> ParseOnly | None:
        """The engine's --parse-only of this workload (None: facts come from elsewhere)."""
        return None

    def with_parse(self, spec: WorkloadSpec, doc: dict[str, Any]) -> WorkloadSpec | None:
        """The spec with what the engine's --parse-only said, when the kind keeps more than its
        `bounds` (a fio job file keeps its jobs); None: the facts of the bounds (facts.with_facts)."""
        return None

    def policy_facts(self, spec: WorkloadSpec) -> dict[str, Any] | None:
        """check_run's file_facts for this workload: the engine's bounds the server got."""
        return spec.facts.model_dump(mode="json") if spec.facts is not None else None

    def facts(self, spec: WorkloadSpec) -> FileFacts | None:
        """Facts the server knows without the engine (TPC-H's bound); None: ask parse_only."""
        return None

    def default_name(self, spec: WorkloadSpec) -> str:
        raise NotImplementedError

    def host_refusal(self, spec: WorkloadSpec, tpch_dbms: list[str]) -> tuple[str, str] | None:
        """What this run needs of the host beyond running its kind ((field below the workload,
        message) when the agent's capabilities lack it), given the DBMS servers it reported."""
        return None
