"""What the server needs from an engine document (fio JSON + the `iowatt` extension).

Only the fields extracted into columns are modelled; the document itself is stored whole.
"""

import uuid
from datetime import datetime
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field

from backend.kit.schema import OutputSchema


class _Loose(BaseModel):
    # numbers land in bigint / float8 columns: finite and within bigint, or a 422 (never a 500)
    model_config = ConfigDict(extra="allow", populate_by_name=True, allow_inf_nan=False)


BIGINT = 2**63 - 1
MAX_RUNTIME_MS = BIGINT // 1_000_000  # stored as ns
Ns = Annotated[float, Field(ge=0, le=BIGINT)]
Count = Annotated[int, Field(ge=0, le=BIGINT)]
MAX_SERIES_POINTS = 200_000  # per job: 55 h at one point a second
MAX_JOBS = 4096


class LatStats(_Loose):
    min: Ns | None = None
    max: Ns | None = None
    mean: Ns | None = None
    percentile: dict[Annotated[str, Field(max_length=20)], Ns] = Field(default_factory=dict, max_length=200)


class DirStats(_Loose):
    io_bytes: Count
    bw_bytes: Count
    iops: float = Field(ge=0)
    runtime: int = Field(ge=0, le=MAX_RUNTIME_MS, description="ms, as fio")
    total_ios: Count
    clat_ns: LatStats = Field(default_factory=LatStats)
    lat_ns: LatStats = Field(default_factory=LatStats)


class SeriesPoint(_Loose):
    t_ns: Count
    read_iops: float = 0.0
    read_bw_bytes: Count = 0
    read_clat_p99_ns: Count | None = None
    write_iops: float = 0.0
    write_bw_bytes: Count = 0
    write_clat_p99_ns: Count | None = None


class IoUringExt(_Loose):
    """The engine's `iowatt.io_uring` (io_uring jobs only)."""

    target_nowait: bool | None = None
    kernel_worker_cpu_ns: int | None = Field(None, ge=0, description="ns over the measured time")
    kernel_worker_cpu: float | None = Field(None, ge=0, description="% of one CPU over the measured time")


class JobExt(_Loose):
    series: list[SeriesPoint] = Field(default_factory=list, max_length=MAX_SERIES_POINTS)
    options: dict[str, Any] = Field(default_factory=dict)
    io_uring: IoUringExt | None = None


class EngineJob(_Loose):
    jobname: str = Field(max_length=200)
    job_options: dict[str, Any] = Field(default_factory=dict, alias="job options")
    read: DirStats
    write: DirStats
    usr_cpu: float = 0.0
    sys_cpu: float = 0.0
    job_runtime: int = Field(0, ge=0, le=MAX_RUNTIME_MS, description="ms, as fio")
    iowatt: JobExt = Field(default_factory=JobExt)


class EngineDocument(_Loose):
    jobs: list[EngineJob] = Field(min_length=1, max_length=MAX_JOBS)


class ResultRead(OutputSchema):
    run_id: uuid.UUID
    upload_id: uuid.UUID
    uploaded_at: datetime
    engine_exit_code: int
    engine_result: dict[str, Any]


class SeriesPointRead(OutputSchema):
    t_s: float
    read_iops: float
    read_bw_bytes: int
    read_clat_p99_ns: int | None
    write_iops: float
    write_bw_bytes: int
    write_clat_p99_ns: int | None


class JobSeries(OutputSchema):
    job_index: int
    name: str
    points: list[SeriesPointRead]


class RunSeries(OutputSchema):
    run_id: uuid.UUID
    jobs: list[JobSeries]
