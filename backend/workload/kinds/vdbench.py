"""vdbench file sets (the kind `vdbench`): a vdbench parameter file (fsd/fwd/rd), read only by
the engine's parser (ADR 0022), run by its --vdbench in a directory target. A run's scale
multiplies the engine's --scale."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from iowatt_workload import KiB
from pydantic import Field, field_validator

from backend.kit.messages import human_bytes
from backend.kit.schema import InputSchema
from backend.workload.engine_limits import section
from backend.workload.kinds.base import SCALE_MAX, Family, Kind, ParseOnly, bad, scale_text, scaled_factor

if TYPE_CHECKING:
    from backend.workload.schemas import WorkloadSpec

VDBENCH_MAX_TEXT = 64 * KiB
ELAPSED_MAX_S: int = section("vdbench")["elapsed"]["max"]  # the engine's --elapsed bound (--limits)


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
            raise bad(f"the parameter file is {human_bytes(len(v.encode()))}: at most 64 KiB")
        return v


class Vdbench(Kind):
    name = "vdbench"
    label = "a vdbench file set"
    parameters_model = VdbenchSpec
    family: ClassVar[Family] = "file"
    scaled_parameter = "scale"

    def engine_job(self, spec: WorkloadSpec) -> dict[str, object]:
        """{"mode": "vdbench", "parameters": TEXT, "scale": "X", "elapsed"?: "S"} (strings, as
        the engine's flags)."""
        v = spec.vdbench
        assert v is not None
        job: dict[str, object] = {"mode": "vdbench", "parameters": v.parameters, "scale": scale_text(v.scale)}
        if v.elapsed_s is not None:
            job["elapsed"] = str(v.elapsed_s)
        return job

    def scaled(self, spec: WorkloadSpec, factor: float) -> dict[str, object]:
        assert spec.vdbench is not None
        scale = scaled_factor(spec.vdbench.scale, factor, "workload's scale", "the engine takes")
        return {"vdbench": spec.vdbench.model_copy(update={"scale": scale})}

    def parse_only(self, spec: WorkloadSpec) -> ParseOnly:
        v = spec.vdbench
        assert v is not None
        argv = [f"--scale={scale_text(v.scale)}"]
        if v.elapsed_s is not None:
            argv.append(f"--elapsed={v.elapsed_s}")
        return ParseOnly("--vdbench", argv, v.parameters, "vdbench.parameters")

    def default_name(self, spec: WorkloadSpec) -> str:
        return "vdbench file set"
