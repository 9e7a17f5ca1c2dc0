"""SNIA PTS runs (the kind `pts`; docs/pts.md, ADR 0046): purge, workload-independent
preconditioning and the test's rounds until steady state, on a raw device the host marked
destructive, with the run's typed confirmation (`destructive: true`). The agent's child runs each
round as one engine run of a block job file; libs/workload's `pts` module owns the rule, the
matrices and the jobs (the host judges each job by its block rules before anything runs). A
run's scale shortens the rounds and tests a fraction of the capacity: such a run says it is not
PTS-compliant."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, ClassVar, Literal

from iowatt_workload.pts import (
    HIR_BURST_S,
    HIR_BURST_S_MAX,
    HIR_BURSTS,
    HIR_WAIT_STATES,
    IODEPTH_MAX,
    MAX_ROUNDS,
    ROUND_S,
    ROUND_S_MAX,
    TESTS,
    THREADS_MAX,
    THROUGHPUT_BLOCK_SIZES,
    WINDOW_ROUNDS,
    PtsParams,
    parse_job,
    run_seconds_max,
)
from pydantic import Field, ValidationInfo, field_validator

from backend.kit.schema import InputSchema
from backend.workload.kinds.base import Family, Kind, Sizing, TargetKind, bad

if TYPE_CHECKING:
    from backend.workload.schemas import WorkloadSpec

# the purge and preconditioning of a whole device, before the rounds: a secure erase takes hours,
# writing a large SSD twice too (8 TB at 1 GB/s: 4.4 h); scaled by the capacity fraction
PREPARE_ALLOWANCE_S = 24 * 3600


class PtsSpec(InputSchema):
    """A SNIA PTS test (Enterprise/Client v2.0.x) on a raw device: what to run, and how far a short
    trial departs from the specification (any of round_s, capacity_fraction, max_rounds,
    block_sizes, mixes or purge none: the result says "not PTS-compliant")."""

    test: Literal["iops", "throughput", "latency", "wsat", "hir"] = Field(
        description="iops: random, block size x R/W mix matrix; throughput: sequential 100/0 and 0/100 "
        "at one block size (128 KiB or 1024 KiB); latency: random 0.5/4/8 KiB x 100/0, 65/35, 0/100 at one "
        "thread and one outstanding I/O; wsat: write saturation, 4 KiB random writes over time (no "
        "workload-independent preconditioning: from the purged state); hir: host idle recovery, "
        "preconditioned to steady state with 4 KiB random writes, then bursts of them separated by "
        "host idle times of 1, 2, 3, 5 and 10 bursts' length, each wait state followed by a return to "
        "baseline without idle"
    )
    profile: Literal["enterprise", "client"] = Field(
        "enterprise",
        description="the specification's profile: enterprise, or client (Throughput 1024 KiB only; its "
        "ActiveRange, outstanding I/O and preconditioning are not stated in the sources at hand, so a "
        "client run uses the enterprise ones, lists them in its deviations and is never PTS "
        "Client-compliant: docs/pts.md)",
    )
    purge: Literal["auto", "blkdiscard", "none"] = Field(
        "auto",
        description="auto: NVMe Format (user data erase), ATA secure erase, or a discard of every block, "
        "whichever the device has; blkdiscard: a discard; none: no purge (not PTS-compliant)",
    )
    ioengine: Literal["libaio", "io_uring", "psync"] = Field("libaio", description="the engine's ioengine")
    threads: int = Field(4, ge=1, le=THREADS_MAX, description="threads per element (latency: always 1)")
    iodepth: int = Field(
        32, ge=1, le=IODEPTH_MAX, description="outstanding I/Os per thread (latency: always 1)"
    )
    round_s: int = Field(
        ROUND_S, ge=1, le=ROUND_S_MAX, description=f"seconds per element per round (PTS: {ROUND_S})"
    )
    capacity_fraction: float = Field(
        1.0, gt=0, le=1, description="the tested share of the device's capacity, from its start (PTS: 1)"
    )
    max_rounds: int = Field(
        MAX_ROUNDS,
        ge=WINDOW_ROUNDS,
        le=MAX_ROUNDS,
        description=f"rounds at most before steady state is declared not reached (PTS: {MAX_ROUNDS})",
    )
    block_sizes: list[int] | None = Field(
        None,
        description="the block sizes of the matrix, bytes (a subset of the test's; throughput: one of "
        "131072, 1048576); null = the test's own",
    )
    mixes: list[int] | None = Field(
        None,
        description="the R/W mixes of the matrix as read % (a subset of the test's); null = the test's own",
    )
    burst_s: int | None = Field(
        None,
        ge=1,
        le=HIR_BURST_S_MAX,
        description=f"hir only: seconds of 4 KiB random writes per burst (PTS: {HIR_BURST_S}); a wait "
        "state N idles N bursts' length after each burst; null = the specification's",
    )
    bursts: int | None = Field(
        None,
        ge=1,
        le=HIR_BURSTS,
        description=f"hir only: bursts per wait state, and bursts' lengths of its return to baseline "
        f"(PTS: {HIR_BURSTS}); null = the specification's",
    )
    wait_states: list[int] | None = Field(
        None,
        description="hir only: the wait states run, a subset of "
        f"{', '.join(map(str, HIR_WAIT_STATES))} (idle = N x burst_s); null = all of them",
    )

    @field_validator("block_sizes")
    @classmethod
    def _sizes(cls, v: list[int] | None, info: ValidationInfo) -> list[int] | None:
        test = info.data.get("test")
        if v is None or test not in TESTS:
            return v
        allowed = THROUGHPUT_BLOCK_SIZES if test == "throughput" else TESTS[test].block_sizes
        if not v or any(x not in allowed for x in v) or len(set(v)) != len(v):
            raise bad(f"each of {', '.join(map(str, allowed))} at most once (the {test} test's block sizes)")
        if test == "throughput" and len(v) != 1:
            raise bad("a throughput test runs one block size: 131072 or 1048576 (queue two runs for both)")
        return v

    @field_validator("mixes")
    @classmethod
    def _mixes(cls, v: list[int] | None, info: ValidationInfo) -> list[int] | None:
        test = info.data.get("test")
        if v is None or test not in TESTS:
            return v
        allowed = TESTS[test].mixes
        if not v or any(x not in allowed for x in v) or len(set(v)) != len(v):
            raise bad(f"each of {', '.join(map(str, allowed))} at most once (the {test} test's read %)")
        return v

    @field_validator("burst_s", "bursts", "wait_states")
    @classmethod
    def _hir_only(cls, v: object, info: ValidationInfo) -> object:
        test = info.data.get("test")
        if v is not None and test is not None and test != "hir":
            raise bad("only a Host Idle Recovery test (test hir) has bursts and wait states")
        if (
            info.field_name == "wait_states"
            and isinstance(v, list)
            and (not v or any(x not in HIR_WAIT_STATES for x in v) or len(set(v)) != len(v))
        ):
            raise bad(f"each of {', '.join(map(str, HIR_WAIT_STATES))} at most once (the wait states)")
        return v

    @field_validator("iodepth")
    @classmethod
    def _depth(cls, v: int, info: ValidationInfo) -> int:
        if info.data.get("ioengine") == "psync" and v > 1 and info.data.get("test") != "latency":
            raise bad("psync has one outstanding I/O per thread: iodepth 1, or ioengine libaio/io_uring")
        return v

    def params(self) -> PtsParams:
        """libs/workload's reading of the same parameters (the lease job read back)."""
        return parse_job(self.lease_job())

    def lease_job(self) -> dict[str, object]:
        job: dict[str, object] = {
            "mode": "pts",
            "test": self.test,
            "profile": self.profile,
            "purge": self.purge,
            "threads": self.threads,
            "iodepth": self.iodepth,
            "ioengine": self.ioengine,
            "round_s": self.round_s,
            "capacity_fraction": self.capacity_fraction,
            "max_rounds": self.max_rounds,
        }
        if self.block_sizes is not None:
            job["block_sizes"] = list(self.block_sizes)
        if self.mixes is not None:
            job["mixes"] = list(self.mixes)
        if self.test == "hir":
            job["burst_s"] = self.burst_s if self.burst_s is not None else HIR_BURST_S
            job["bursts"] = self.bursts if self.bursts is not None else HIR_BURSTS
            if self.wait_states is not None:
                job["wait_states"] = list(self.wait_states)
        return job


class Pts(Kind):
    name = "pts"
    label = "a SNIA PTS run"
    parameters_model = PtsSpec
    family: ClassVar[Family] = "block"  # its result's jobs are block jobs (the last round's)
    sizing: ClassVar[Sizing] = "scale"
    scaled_parameter = None  # round_s and capacity_fraction
    targets: ClassVar[tuple[TargetKind, ...]] = ("device",)

    def engine_job(self, spec: WorkloadSpec) -> dict[str, object]:
        """{"mode": "pts", "test", "purge", "threads", "iodepth", "ioengine", "round_s",
        "capacity_fraction", "max_rounds", "block_sizes"?, "mixes"?} (JSON values: libs/workload's
        parse_job reads them)."""
        assert spec.pts is not None
        return spec.pts.lease_job()

    def timeout_s(self, spec: WorkloadSpec) -> int:
        """Every round at its limit and Host Idle Recovery's segments with their idle, x 1.5,
        plus the purge and the preconditioning of the tested share of a large device
        (PREPARE_ALLOWANCE_S x the capacity fraction) and 10 minutes."""
        assert spec.pts is not None
        p = spec.pts.params()
        return int(run_seconds_max(p) * 1.5 + PREPARE_ALLOWANCE_S * p.capacity_fraction + 600)

    def scaled(self, spec: WorkloadSpec, factor: float) -> dict[str, object]:
        """A short trial: rounds `factor` as long (at least 1 s) and `factor` of the capacity (at
        most all of it); Host Idle Recovery's bursts `factor` as long (at least 1 s) and `factor`
        as many (at least 2); not PTS-compliant unless all come back to the specification's."""
        assert spec.pts is not None
        p = spec.pts
        round_s = max(1, min(ROUND_S_MAX, round(p.round_s * factor)))
        fraction = float(f"{min(1.0, p.capacity_fraction * factor):.12g}")
        if fraction <= 0:
            raise ValueError(f"the capacity fraction {p.capacity_fraction:g} times {factor:g} is 0")
        update: dict[str, object] = {"round_s": round_s, "capacity_fraction": fraction}
        if p.test == "hir":
            burst_s = p.burst_s if p.burst_s is not None else HIR_BURST_S
            bursts = p.bursts if p.bursts is not None else HIR_BURSTS
            update["burst_s"] = max(1, min(HIR_BURST_S_MAX, round(burst_s * factor)))
            update["bursts"] = max(2, min(HIR_BURSTS, round(bursts * factor)))
        return {"pts": p.model_copy(update=update)}

    def default_name(self, spec: WorkloadSpec) -> str:
        assert spec.pts is not None
        p = spec.pts.params()
        client = " Client" if p.profile == "client" else ""
        # a Client run always has deviations (what the sources do not state): a trial is a scale
        trial = "" if not replace(p, profile="enterprise").deviations() else " (short trial)"
        return f"SNIA PTS{client} {p.test}{trial}"
