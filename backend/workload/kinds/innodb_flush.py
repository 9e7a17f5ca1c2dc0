"""The InnoDB flushing-policy matrix (the kind `innodb_flush`, docs/innodb-flush.md): the agent
starts a private MariaDB on the target with the binary log on, as TPC-H's (the host must have
consented to MariaDB: `allowed_dbms`, checked by libs/policy), and runs sysbench's
`oltp_write_only` once per setting of innodb_flush_log_at_trx_commit x sync_binlog. Its facts are
libs/workload's innodb_facts; a run's scale multiplies the seconds per setting (at least 1). The
agent lists the kind among its capabilities only when MariaDB's server and sysbench are installed
(and a root agent can hand the run to the DBMS user), so the server's kinds check is the host check:
the DBMS's server alone (capabilities.tpch_dbms, TPC-H's) does not say sysbench is there."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from iowatt_workload.innodb import (
    ALL_SETTINGS,
    INNODB_BUFFER_POOL_BYTES_MAX,
    INNODB_BUFFER_POOL_BYTES_MIN,
    INNODB_DEFAULT_BUFFER_POOL_BYTES,
    INNODB_SECONDS_MAX,
    INNODB_SECONDS_MIN,
    INNODB_TABLE_SIZE_MAX,
    INNODB_TABLES_MAX,
    INNODB_THREADS_MAX,
    INNODB_WARMUP_S_MAX,
    innodb_facts,
    settings_text,
)
from pydantic import Field, field_validator

from backend.kit.schema import InputSchema
from backend.workload.kinds.base import Family, FileFacts, Kind, bad

if TYPE_CHECKING:
    from backend.workload.schemas import WorkloadSpec


class InnodbFlushSetting(InputSchema):
    """One cell of the matrix."""

    innodb_flush_log_at_trx_commit: int = Field(
        ge=0,
        le=2,
        description="0: the log written and flushed once a second; 1: at every commit; "
        "2: written at every commit, flushed once a second",
    )
    sync_binlog: int = Field(
        ge=0, le=1, description="1: the binary log fsynced at every commit group; 0: never"
    )


def _all_settings() -> list[InnodbFlushSetting]:
    return [InnodbFlushSetting(innodb_flush_log_at_trx_commit=f, sync_binlog=s) for f, s in ALL_SETTINGS]


class InnodbFlushSpec(InputSchema):
    """The InnoDB flushing-policy matrix: a private MariaDB (binary log on) on the target under
    sysbench's oltp_write_only, once per setting."""

    settings: list[InnodbFlushSetting] = Field(
        default_factory=_all_settings,
        min_length=1,
        max_length=len(ALL_SETTINGS),
        description="the settings to run, each once, in this order (default all six, the strictest "
        "first: 1/1, 1/0, 2/1, 2/0, 0/1, 0/0)",
    )
    tables: int = Field(4, ge=1, le=INNODB_TABLES_MAX, description="sysbench's tables")
    table_size: int = Field(100_000, ge=1, le=INNODB_TABLE_SIZE_MAX, description="rows per table")
    threads: int = Field(8, ge=1, le=INNODB_THREADS_MAX, description="sysbench's client threads")
    seconds: int = Field(
        60, ge=INNODB_SECONDS_MIN, le=INNODB_SECONDS_MAX, description="measured seconds per setting"
    )
    warmup_s: int = Field(
        10,
        ge=0,
        le=INNODB_WARMUP_S_MAX,
        description="seconds of load before each setting's measurement (discarded)",
    )
    buffer_pool_bytes: int = Field(
        INNODB_DEFAULT_BUFFER_POOL_BYTES,
        ge=INNODB_BUFFER_POOL_BYTES_MIN,
        le=INNODB_BUFFER_POOL_BYTES_MAX,
        description="InnoDB's buffer pool (default 128 MiB: the tables fit, the log's flushing is measured)",
    )

    @field_validator("settings")
    @classmethod
    def _once(cls, v: list[InnodbFlushSetting]) -> list[InnodbFlushSetting]:
        pairs = [(s.innodb_flush_log_at_trx_commit, s.sync_binlog) for s in v]
        if len(set(pairs)) != len(pairs):
            raise bad("each setting once")
        return v

    def pairs(self) -> list[tuple[int, int]]:
        return [(s.innodb_flush_log_at_trx_commit, s.sync_binlog) for s in self.settings]

    def facts(self) -> dict[str, object]:
        return dict(
            innodb_facts(
                tables=self.tables,
                table_size=self.table_size,
                threads=self.threads,
                seconds=self.seconds,
                warmup_s=self.warmup_s,
                settings=len(self.settings),
            )
        )


class InnodbFlush(Kind):
    name = "innodb_flush"
    label = "an InnoDB flushing-policy matrix"
    parameters_model = InnodbFlushSpec
    family: ClassVar[Family] = "database"
    scaled_parameter = "seconds"

    def engine_job(self, spec: WorkloadSpec) -> dict[str, object]:
        """{"mode": "innodb-flush", "settings": "F:S,...", "tables", "table_size", "threads",
        "seconds", "warmup_s", "buffer_pool_bytes"} (strings, as command-line values)."""
        p = spec.innodb_flush
        assert p is not None
        return {
            "mode": "innodb-flush",
            "settings": settings_text(p.pairs()),
            "tables": str(p.tables),
            "table_size": str(p.table_size),
            "threads": str(p.threads),
            "seconds": str(p.seconds),
            "warmup_s": str(p.warmup_s),
            "buffer_pool_bytes": str(p.buffer_pool_bytes),
        }

    def timeout_s(self, spec: WorkloadSpec) -> int:
        """The facts' run time (every setting, the set-up) x 1.5 plus the dirty pages' settling
        (60 s a setting at most) and 10 minutes."""
        p = spec.innodb_flush
        assert p is not None
        runtime = float(p.facts()["runtime_s_max"] or 0.0)  # type: ignore[arg-type]
        return int(runtime * 1.5 + 60 * len(p.settings) + 600)

    def scaled(self, spec: WorkloadSpec, factor: float) -> dict[str, object]:
        """Seconds per setting and warm-up `factor` times (at least 1 s measured)."""
        p = spec.innodb_flush
        assert p is not None
        seconds = round(p.seconds * factor)
        if seconds > INNODB_SECONDS_MAX:
            raise ValueError(f"{p.seconds} s times {factor:g} is above {INNODB_SECONDS_MAX} s per setting")
        warmup = min(INNODB_WARMUP_S_MAX, round(p.warmup_s * factor))
        return {
            "innodb_flush": p.model_copy(
                update={"seconds": max(INNODB_SECONDS_MIN, seconds), "warmup_s": warmup}
            )
        }

    def facts(self, spec: WorkloadSpec) -> FileFacts:
        assert spec.innodb_flush is not None
        return FileFacts.model_validate(spec.innodb_flush.facts())

    def default_name(self, spec: WorkloadSpec) -> str:
        p = spec.innodb_flush
        assert p is not None
        return f"innodb flushing {len(p.settings)} settings, {p.threads} threads, {p.seconds} s"
