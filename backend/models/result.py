import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import BigInteger, ForeignKey, String
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import Mapped, mapped_column

from backend.models.base import Base


class RunResult(Base):
    """The engine's JSON document stored whole; one per run (uploads are idempotent by upload_id)."""

    __tablename__ = "run_results"
    run_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"), primary_key=True)
    upload_id: Mapped[uuid.UUID] = mapped_column(unique=True)
    engine_result: Mapped[dict[str, Any]] = mapped_column(JSONB)
    engine_exit_code: Mapped[int]
    agent_version: Mapped[str] = mapped_column(String(50))
    started_at: Mapped[datetime]
    finished_at: Mapped[datetime]
    uploaded_at: Mapped[datetime]


class ResultJob(Base):
    """Key figures of one engine job, extracted into columns for listing and comparing."""

    __tablename__ = "result_jobs"
    run_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"), primary_key=True)
    job_index: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(200))
    rw: Mapped[str] = mapped_column(String(20))
    bs_bytes: Mapped[int | None] = mapped_column(BigInteger)
    runtime_ns: Mapped[int] = mapped_column(BigInteger)
    usr_cpu_pct: Mapped[float]
    sys_cpu_pct: Mapped[float]
    # io_uring only (null for other ioengines and for documents without the engine's `iowatt.io_uring`):
    # CPU of the io-wq kernel workers serving the job, % of one CPU, outside usr/sys as in fio
    kernel_worker_cpu_pct: Mapped[float | None]
    target_nowait: Mapped[bool | None]
    read_iops: Mapped[float | None]
    read_bw_bytes: Mapped[int | None] = mapped_column(BigInteger)
    read_io_bytes: Mapped[int | None] = mapped_column(BigInteger)
    read_total_ios: Mapped[int | None] = mapped_column(BigInteger)
    read_lat_mean_ns: Mapped[float | None]
    read_clat_p50_ns: Mapped[int | None] = mapped_column(BigInteger)
    read_clat_p99_ns: Mapped[int | None] = mapped_column(BigInteger)
    read_clat_p999_ns: Mapped[int | None] = mapped_column(BigInteger)
    read_clat_max_ns: Mapped[int | None] = mapped_column(BigInteger)
    write_iops: Mapped[float | None]
    write_bw_bytes: Mapped[int | None] = mapped_column(BigInteger)
    write_io_bytes: Mapped[int | None] = mapped_column(BigInteger)
    write_total_ios: Mapped[int | None] = mapped_column(BigInteger)
    write_lat_mean_ns: Mapped[float | None]
    write_clat_p50_ns: Mapped[int | None] = mapped_column(BigInteger)
    write_clat_p99_ns: Mapped[int | None] = mapped_column(BigInteger)
    write_clat_p999_ns: Mapped[int | None] = mapped_column(BigInteger)
    write_clat_max_ns: Mapped[int | None] = mapped_column(BigInteger)


class ResultSeriesPoint(Base):
    """One per-second point of one job's series (the engine's `iowatt.series`)."""

    __tablename__ = "result_series"
    run_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"), primary_key=True)
    job_index: Mapped[int] = mapped_column(primary_key=True)
    t_ns: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    read_iops: Mapped[float]
    read_bw_bytes: Mapped[int] = mapped_column(BigInteger)
    read_clat_p99_ns: Mapped[int | None] = mapped_column(BigInteger)
    write_iops: Mapped[float]
    write_bw_bytes: Mapped[int] = mapped_column(BigInteger)
    write_clat_p99_ns: Mapped[int | None] = mapped_column(BigInteger)
