"""TPC-H-derived runs (the kind `tpch`; TPC-H-derived, not audited: docs/tpch.md): the agent
generates the data, loads it into a private DBMS on the target and runs the power and throughput
tests. Its facts are libs/workload's one TPC-H bound; a run's scale multiplies the scale factor;
the host must have the DBMS's server (and its owner's consent: `allowed_dbms`, checked by
libs/policy)."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar, Literal

from iowatt_workload import (
    TPCH_BUFFER_POOL_BYTES_MAX,
    TPCH_BUFFER_POOL_BYTES_MIN,
    TPCH_DEFAULT_BUFFER_POOL_BYTES,
    TPCH_QUERY_TIMEOUT_S_MAX,
    TPCH_QUERY_TIMEOUT_S_MIN,
    TPCH_SCALE_FACTOR_MAX,
    TPCH_STREAMS_MAX,
    tpch_facts,
)
from pydantic import Field

from backend.kit.schema import InputSchema
from backend.workload.kinds.base import SLOW_BYTES_PER_S, Family, FileFacts, Kind, scale_text, scaled_factor

if TYPE_CHECKING:
    from backend.workload.schemas import WorkloadSpec

Dbms = Literal["postgresql", "mariadb"]
# the agent's default (libs/workload, which the agent's DBMS and the policy's memory bound use):
# small, so the device serves reads
TPCH_DEFAULT_BUFFER_POOL = TPCH_DEFAULT_BUFFER_POOL_BYTES
TPCH_MAX_STREAMS = TPCH_STREAMS_MAX  # libs/workload's, as libs/policy and the agent's bench have it
TPCH_TIMEOUT_MAX_S = 7 * 86400


class TpchSpec(InputSchema):
    """A TPC-H-derived run (TPC-H-derived, not audited: docs/tpch.md): the agent generates the data,
    loads it into a private DBMS on the target and runs the power and throughput tests."""

    dbms: Dbms = Field(description="the DBMS the agent starts on the target (the host must allow it)")
    scale_factor: float = Field(
        gt=0,
        le=TPCH_SCALE_FACTOR_MAX,
        description="TPC-H scale factor SF (1 ≈ 1 GB of raw data; 0.01 for a smoke run)",
    )
    streams: int | None = Field(
        None,
        ge=1,
        le=TPCH_MAX_STREAMS,
        description="query streams in the throughput test; null = the spec's minimum for SF (2 below 10)",
    )
    query_timeout_s: float = Field(
        3600,
        ge=TPCH_QUERY_TIMEOUT_S_MIN,
        le=TPCH_QUERY_TIMEOUT_S_MAX,
        description="seconds per query; a query past it is cancelled and marked",
    )
    buffer_pool_bytes: int = Field(
        TPCH_DEFAULT_BUFFER_POOL,
        ge=TPCH_BUFFER_POOL_BYTES_MIN,
        le=TPCH_BUFFER_POOL_BYTES_MAX,
        description="the DBMS's cache (default 16 MiB, small on purpose so the device serves reads)",
    )

    def scaled(self, factor: float) -> TpchSpec:
        sf = scaled_factor(self.scale_factor, factor, "scale factor", "TPC-H runs take")
        return self.model_copy(update={"scale_factor": sf})


class Tpch(Kind):
    name = "tpch"
    label = "a TPC-H workload"
    parameters_model = TpchSpec
    family: ClassVar[Family] = "database"
    scaled_parameter = "scale_factor"

    def engine_job(self, spec: WorkloadSpec) -> dict[str, object]:
        """{"mode": "tpch", "dbms", "scale_factor", "streams"?, "query_timeout_s",
        "buffer_pool_bytes"} (strings, as the bench's flags)."""
        t = spec.tpch
        assert t is not None
        job: dict[str, object] = {"mode": "tpch", "dbms": t.dbms, "scale_factor": scale_text(t.scale_factor)}
        if t.streams is not None:
            job["streams"] = str(t.streams)
        job["query_timeout_s"] = scale_text(t.query_timeout_s)
        job["buffer_pool_bytes"] = str(t.buffer_pool_bytes)
        return job

    def timeout_s(self, spec: WorkloadSpec) -> int:
        """A TPC-H run is not bounded by its size (queries run to their timeout): the agent's hard
        limit is generating, loading and writing the bound's bytes at a slow 20 MB/s, plus every
        query and refresh function of the power test and of the longest throughput stream at the
        query timeout, times 1.5 and 10 minutes of slack; at most TPCH_TIMEOUT_MAX_S."""
        t = spec.tpch
        assert t is not None
        facts = tpch_facts(t.scale_factor, t.streams)
        streams = facts["threads"] - 1
        statements = (22 + 2) + 22 + 2 * streams  # power; a throughput stream; the refresh stream
        seconds = facts["bytes_written_max"] / SLOW_BYTES_PER_S + statements * t.query_timeout_s
        return int(min(TPCH_TIMEOUT_MAX_S, seconds * 1.5 + 600))

    def scaled(self, spec: WorkloadSpec, factor: float) -> dict[str, object]:
        assert spec.tpch is not None
        return {"tpch": spec.tpch.scaled(factor)}

    def facts(self, spec: WorkloadSpec) -> FileFacts:
        """libs/workload's one TPC-H bound, not the engine's."""
        assert spec.tpch is not None
        return FileFacts.model_validate(dict(tpch_facts(spec.tpch.scale_factor, spec.tpch.streams)))

    def default_name(self, spec: WorkloadSpec) -> str:
        assert spec.tpch is not None
        return f"tpch {spec.tpch.dbms} SF {spec.tpch.scale_factor:g}"

    def host_refusal(self, spec: WorkloadSpec, tpch_dbms: list[str]) -> tuple[str, str] | None:
        """The DBMS's server must be installed on the host (the agent's capabilities.tpch_dbms)."""
        assert spec.tpch is not None
        dbms = spec.tpch.dbms
        if dbms in tpch_dbms:
            return None
        package = "postgresql" if dbms == "postgresql" else "mariadb-server"
        return (
            "tpch.dbms",
            f"has no {dbms} server installed (it has: {', '.join(tpch_dbms) or 'none'}): "
            f"apt-get install -y {package} on the host",
        )
