"""The short-run flag judges a job by its measured runtime; an imported job whose file states no
runtime (stored as 0: Bonnie++, CrystalDiskMark) is not judged, a measured one of 0 ns still is."""

from types import SimpleNamespace
from typing import Any

from backend.compare.validity import short_jobs


def _read(origin: Any, *runtimes_ns: int) -> Any:
    jobs = [SimpleNamespace(name=f"j{i}", runtime_ns=r) for i, r in enumerate(runtimes_ns)]
    return SimpleNamespace(jobs=jobs, origin=origin)


def test_an_imported_jobs_unstated_runtime_is_not_short() -> None:
    imported = SimpleNamespace(kind="imported")
    assert short_jobs([], _read(imported, 0, 0)) == []
    # a runtime the file did state is judged as any
    assert short_jobs([], _read(imported, 0, 350_000_000, 30_000_000_000)) == ["j1"]
    # measured here: 0 ns is a (very) short job, not an unknown one
    assert short_jobs([], _read(None, 0, 30_000_000_000)) == ["j0"]
