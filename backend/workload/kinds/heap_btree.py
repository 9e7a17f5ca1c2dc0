"""The heap-file and B+tree sweep (the kind `heap_btree`; the engine's mode and flag, and the
preset, are spelled `heap-btree`), run by the engine's --heap-btree in a directory target. A run's
scale multiplies the records."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar, Literal

from pydantic import Field, field_validator

from backend.kit.schema import InputSchema
from backend.workload.engine_limits import section
from backend.workload.kinds.base import MAX_RANDSEED, Family, Kind, ParseOnly, bad

if TYPE_CHECKING:
    from backend.workload.schemas import WorkloadSpec

# the engine's flags' bounds and defaults (its --limits "heap_btree")
_HB = section("heap_btree")
HB_MAX_RECORDS: int = _HB["records"]["max"]
HB_MAX_QUERIES: int = _HB["queries"]["max"]
HB_MAX_FRACTIONS: int = _HB["cache_fraction"]["max_count"]
HB_DEFAULT_FRACTIONS: list[float] = [float(f) for f in _HB["cache_fraction"]["default"]]


def _fraction_text(value: float) -> str:
    return f"{value:.6f}".rstrip("0").rstrip(".")


class HeapBtreeSpec(InputSchema):
    """The P3608 report's heap-file and B+tree sweep (its Table 3), run by the engine's --heap-btree."""

    records: int = Field(
        ge=1, le=HB_MAX_RECORDS, description="records inserted per structure and fraction (N)"
    )
    queries: int | None = Field(
        None,
        ge=1,
        le=HB_MAX_QUERIES,
        description=f"B+tree point queries; null = the engine's min(N, {_HB['queries']['default_cap']})",
    )
    cache_fractions: list[float] = Field(
        default_factory=lambda: list(HB_DEFAULT_FRACTIONS),
        min_length=1,
        max_length=HB_MAX_FRACTIONS,
        description="buffer pool sizes as fractions of the data pages, each above 0 and at most 1 "
        "(default the P3608 report's ten: 0.1 … 1.0)",
    )
    randseed: int = Field(
        _HB["randseed"]["default"],
        ge=0,
        le=MAX_RANDSEED,
        description="records and queries (the engine's --randseed)",
    )
    structure: Literal["both", "heap", "btree"] = Field("both", description="heap, btree or both")

    @field_validator("cache_fractions")
    @classmethod
    def _fractions(cls, v: list[float]) -> list[float]:
        for f in v:
            if not 0 < f <= 1:
                raise bad(f"a cache fraction is above 0 and at most 1, not {f:g}")
        if len(set(v)) != len(v):
            raise bad("each cache fraction once")
        return v

    def scaled(self, factor: float) -> HeapBtreeSpec:
        records = max(1, round(self.records * factor))
        if records > HB_MAX_RECORDS:
            raise ValueError(
                f"the scaled sweep has {records} records: the engine takes at most {HB_MAX_RECORDS}"
            )
        return self.model_copy(update={"records": records})

    def engine_options(self) -> list[str]:
        """The engine's --heap-btree options (without --directory)."""
        argv = [
            f"--records={self.records}",
            f"--cache-fraction={self.fractions_text()}",
            f"--randseed={self.randseed}",
            f"--structure={self.structure}",
        ]
        if self.queries is not None:
            argv.append(f"--queries={self.queries}")
        return argv

    def fractions_text(self) -> str:
        return ",".join(_fraction_text(f) for f in self.cache_fractions)


class HeapBtree(Kind):
    name = "heap_btree"
    label = "a heap/B-tree sweep"
    parameters_model = HeapBtreeSpec
    family: ClassVar[Family] = "database"
    scaled_parameter = "records"

    def engine_job(self, spec: WorkloadSpec) -> dict[str, object]:
        """{"mode": "heap-btree", "records", "queries"?, "cache_fractions", "randseed",
        "structure"} (strings, as the engine's flags)."""
        h = spec.heap_btree
        assert h is not None
        job: dict[str, object] = {"mode": "heap-btree", "records": str(h.records)}
        if h.queries is not None:
            job["queries"] = str(h.queries)
        job["cache_fractions"] = h.fractions_text()
        job["randseed"] = str(h.randseed)
        job["structure"] = h.structure
        return job

    def scaled(self, spec: WorkloadSpec, factor: float) -> dict[str, object]:
        assert spec.heap_btree is not None
        return {"heap_btree": spec.heap_btree.scaled(factor)}

    def parse_only(self, spec: WorkloadSpec) -> ParseOnly:
        """Options only: the text file is unused."""
        assert spec.heap_btree is not None
        return ParseOnly(None, ["--heap-btree", *spec.heap_btree.engine_options()], "", "heap_btree.records")

    def default_name(self, spec: WorkloadSpec) -> str:
        assert spec.heap_btree is not None
        return f"heap-btree N {spec.heap_btree.records}"
