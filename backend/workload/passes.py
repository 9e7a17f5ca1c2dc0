"""Best-of-passes over stored result rows: iowatt_workload's one rule (libs/workload, the same
code the agent's `bench` uses), fed from `ResultJob` rows. The run detail (run/service.py) and the
compare (compare/service.py) both read passes through here."""

from typing import Any

from iowatt_workload import BestOf, PassResult, best_of_passes, is_multi_pass

from backend.models import ResultJob

__all__ = ["BestOf", "best_of_jobs", "is_multi_pass", "pass_result"]


def pass_result(j: ResultJob) -> PassResult:
    return PassResult(
        name=j.name,
        read_bw_bytes=float(j.read_bw_bytes or 0),
        read_iops=float(j.read_iops or 0.0),
        read_ios=int(j.read_total_ios or 0),
        write_bw_bytes=float(j.write_bw_bytes or 0),
        write_iops=float(j.write_iops or 0.0),
        write_ios=int(j.write_total_ios or 0),
    )


def best_of_jobs(spec: dict[str, Any], jobs: list[ResultJob]) -> list[BestOf]:
    """Per test of a multi-pass workload (the stored spec's passes/discard_passes), its passes and
    the pass CrystalDiskMark would show; [] for a single-pass workload."""
    passes, discard = int(spec.get("passes", 1)), int(spec.get("discard_passes", 0))
    return best_of_passes((pass_result(j) for j in jobs), passes=passes, discard=discard)
