"""Best-of-passes over stored result rows: iowatt_workload's one rule (libs/workload, the same
code the agent's `bench` uses), fed from `ResultJob` rows or from the same columns read as plain
tuples (run/figures.py: a runs list). The run detail (run/service.py) and the compare
(compare/service.py) both read passes through here."""

from collections.abc import Iterable
from typing import Any

from iowatt_workload import BestOf, PassResult, best_of_passes, is_multi_pass

from backend.models import ResultJob

__all__ = ["PASS_COLUMNS", "BestOf", "best_of_jobs", "best_of_results", "is_multi_pass", "pass_result"]

# the ResultJob columns a pass is ranked by, in pass_result_of's order
PASS_COLUMNS = (
    "name",
    "read_bw_bytes",
    "read_iops",
    "read_total_ios",
    "write_bw_bytes",
    "write_iops",
    "write_total_ios",
)


def pass_result_of(
    name: str,
    read_bw_bytes: int | None,
    read_iops: float | None,
    read_total_ios: int | None,
    write_bw_bytes: int | None,
    write_iops: float | None,
    write_total_ios: int | None,
) -> PassResult:
    """A job's PASS_COLUMNS as the rule reads them (a side without figures: 0)."""
    return PassResult(
        name=name,
        read_bw_bytes=float(read_bw_bytes or 0),
        read_iops=float(read_iops or 0.0),
        read_ios=int(read_total_ios or 0),
        write_bw_bytes=float(write_bw_bytes or 0),
        write_iops=float(write_iops or 0.0),
        write_ios=int(write_total_ios or 0),
    )


def pass_result(j: ResultJob) -> PassResult:
    return pass_result_of(
        j.name,
        j.read_bw_bytes,
        j.read_iops,
        j.read_total_ios,
        j.write_bw_bytes,
        j.write_iops,
        j.write_total_ios,
    )


def best_of_results(spec: dict[str, Any], results: Iterable[PassResult]) -> list[BestOf]:
    """Per test of a multi-pass workload (the stored spec's passes/discard_passes), its passes and
    the pass CrystalDiskMark would show; [] for a single-pass workload (`results` not iterated)."""
    passes, discard = int(spec.get("passes", 1)), int(spec.get("discard_passes", 0))
    return best_of_passes(results, passes=passes, discard=discard)


def best_of_jobs(spec: dict[str, Any], jobs: list[ResultJob]) -> list[BestOf]:
    """best_of_results over the runs' result rows."""
    return best_of_results(spec, (pass_result(j) for j in jobs))
