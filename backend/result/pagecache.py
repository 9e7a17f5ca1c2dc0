"""The host's page cache and write-back as a run's agent measured them (issue 29, seed 004): the
uploaded document's top-level `page_cache` (agent/src/iowatt_agent/pagecache.py writes it), read
for the run page's system facts (`RunSystem.page_cache`) and series (`RunSeries.memory`).

`PageCacheDoc` is what an upload may carry (bounded: a 422 names the field inside it); the read
models are what the API answers. docs/writeback.md."""

from collections.abc import Sequence
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from backend.kit.schema import OutputSchema

BIGINT = 2**63 - 1
MAX_SAMPLES = 100_000  # about 28 h at one a second (the agent stops sampling there)
MAX_POINTS = 2000  # served: bucket means, as the engine's series
Bytes = Annotated[int, Field(ge=0, le=BIGINT)]
Text = Annotated[str, Field(max_length=64)]


class _Doc(BaseModel):
    # later agents may add keys: kept in the stored document, not read here
    model_config = ConfigDict(extra="allow", allow_inf_nan=False)


class PageCacheSettingsDoc(_Doc):
    dirty_ratio_pct: int | None = Field(None, ge=0, le=100)
    dirty_background_ratio_pct: int | None = Field(None, ge=0, le=100)
    dirty_bytes: Bytes | None = None
    dirty_background_bytes: Bytes | None = None
    dirty_expire_ns: Bytes | None = None
    dirty_writeback_ns: Bytes | None = None
    mem_total_bytes: Bytes | None = None


class PageCacheDeviceDoc(_Doc):
    name: Text
    read_ahead_bytes: Bytes | None = None
    scheduler: Text | None = None
    write_cache: Text | None = None


class PageCacheSamplesDoc(_Doc):
    t_ns: list[Bytes] = Field(max_length=MAX_SAMPLES)
    dirty_bytes: list[Bytes] = Field(max_length=MAX_SAMPLES)
    writeback_bytes: list[Bytes] = Field(max_length=MAX_SAMPLES)
    dirty_threshold_bytes: list[Bytes | None] = Field(max_length=MAX_SAMPLES)
    background_threshold_bytes: list[Bytes | None] = Field(max_length=MAX_SAMPLES)

    @model_validator(mode="after")
    def _aligned(self) -> "PageCacheSamplesDoc":
        n = len(self.t_ns)
        for name in ("dirty_bytes", "writeback_bytes", "dirty_threshold_bytes", "background_threshold_bytes"):
            if len(getattr(self, name)) != n:
                raise ValueError(f"{name} must have one value per t_ns ({n})")
        if any(b < a for a, b in zip(self.t_ns, self.t_ns[1:], strict=False)):
            raise ValueError("t_ns must not decrease")
        return self


class PageCacheDoc(_Doc):
    source: Text = "iowatt-agent"
    settings: PageCacheSettingsDoc
    device: PageCacheDeviceDoc | None = None
    samples: PageCacheSamplesDoc | None = None
    truncated: bool = False


# --- what the API answers ---------------------------------------------------------------------


class PageCacheRead(OutputSchema):
    """The kernel's write-back settings and the target device's queue settings when the run
    started, as its agent read them (/proc/sys/vm, /sys/block/DEV/queue); null figures were
    unreadable there."""

    dirty_ratio_pct: int | None = Field(
        description="vm.dirty_ratio, % of dirtyable memory (0: dirty_bytes rules)"
    )
    dirty_background_ratio_pct: int | None = Field(description="vm.dirty_background_ratio, %")
    dirty_bytes: int | None = Field(description="vm.dirty_bytes, B (0: the ratio rules)")
    dirty_background_bytes: int | None = Field(description="vm.dirty_background_bytes, B (0: the ratio)")
    dirty_expire_ns: int | None = Field(
        description="vm.dirty_expire_centisecs as ns: the age at which dirty data is written"
    )
    dirty_writeback_ns: int | None = Field(
        description="vm.dirty_writeback_centisecs as ns: the flusher's period"
    )
    mem_total_bytes: int | None = Field(description="MemTotal when the run started, B")
    device_name: str | None = Field(description="the disk under the target (null: none, e.g. tmpfs)")
    read_ahead_bytes: int | None = Field(description="the disk's queue/read_ahead_kb as B")
    scheduler: str | None = Field(description="the disk's I/O scheduler in use")
    write_cache: str | None = Field(
        description="the disk's write cache mode: 'write back' or 'write through'"
    )
    sampled: bool = Field(description="Dirty and Writeback were sampled (a run with buffered I/O)")


class MemoryPoint(OutputSchema):
    t_s: float = Field(description="seconds since the engine started")
    dirty_bytes: int
    writeback_bytes: int
    dirty_threshold_bytes: int | None = Field(
        description="the kernel's dirty limit then (nr_dirty_threshold)"
    )
    background_threshold_bytes: int | None = Field(
        description="where background write-back starts (nr_dirty_background_threshold)"
    )


class MemorySeries(OutputSchema):
    """/proc/meminfo's Dirty and Writeback each second while the engine ran, with the limits."""

    points: list[MemoryPoint]
    truncated: bool = Field(description="the agent stopped sampling at its limit (about 28 h)")


def read_doc(raw: Any) -> PageCacheDoc | None:
    """A stored `page_cache` (repository.page_cache), or None: none stored (an older agent, an
    import, a multi-target run's combined document) or one a later bound refuses (not shown rather
    than a 500)."""
    if not isinstance(raw, dict):
        return None
    try:
        return PageCacheDoc.model_validate(raw)
    except ValidationError:
        return None


def facts(doc: PageCacheDoc | None) -> PageCacheRead | None:
    if doc is None:
        return None
    s, d = doc.settings, doc.device
    return PageCacheRead(
        dirty_ratio_pct=s.dirty_ratio_pct,
        dirty_background_ratio_pct=s.dirty_background_ratio_pct,
        dirty_bytes=s.dirty_bytes,
        dirty_background_bytes=s.dirty_background_bytes,
        dirty_expire_ns=s.dirty_expire_ns,
        dirty_writeback_ns=s.dirty_writeback_ns,
        mem_total_bytes=s.mem_total_bytes,
        device_name=d.name if d else None,
        read_ahead_bytes=d.read_ahead_bytes if d else None,
        scheduler=d.scheduler if d else None,
        write_cache=d.write_cache if d else None,
        sampled=doc.samples is not None and len(doc.samples.t_ns) > 0,
    )


def series(doc: PageCacheDoc | None, points: int = MAX_POINTS) -> MemorySeries | None:
    """Bucket means of at most `points` points (the limits: their mean too)."""
    if doc is None or doc.samples is None or not doc.samples.t_ns:
        return None
    s = doc.samples
    n = len(s.t_ns)
    step = max(1, -(-n // points))
    out = []
    for k in range(0, n, step):
        sl = slice(k, min(n, k + step))

        def mean(xs: Sequence[int | None], sl: slice = sl) -> int | None:
            vals = [v for v in xs[sl] if v is not None]
            return sum(vals) // len(vals) if vals else None

        out.append(
            MemoryPoint(
                t_s=s.t_ns[sl][-1] / 1e9,
                dirty_bytes=mean(s.dirty_bytes) or 0,
                writeback_bytes=mean(s.writeback_bytes) or 0,
                dirty_threshold_bytes=mean(s.dirty_threshold_bytes),
                background_threshold_bytes=mean(s.background_threshold_bytes),
            )
        )
    return MemorySeries(points=out, truncated=doc.truncated)
