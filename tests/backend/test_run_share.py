"""backend/run/share.py: a running run's whole share and time left, the one rule the run page, the runs
list, the dashboard and `iowatt run` read (progress.run_percent). Pure: no database."""

from typing import Any

import pytest

from backend.run.share import run_share


def job(runtime_s: float | None, ramp_s: float = 0) -> dict[str, Any]:
    return {"name": "j", "runtime_s": runtime_s, "ramp_time_s": ramp_s}


THREE = [job(10), job(20, ramp_s=5), job(5)]  # 10 + 25 + 5 = 40 s


def share(jobs: list[dict[str, Any]] | None, idle_s: float | None = None, **report: Any) -> Any:
    at = {"phase": "job", "job_index": 0, "percent": 0.0, "elapsed_ns": 0, "run_s": None} | report
    return run_share(jobs, idle_s=idle_s, **at)


def test_counts_the_jobs_before_and_the_idle_baselines() -> None:
    v = share(THREE, 10, job_index=1, percent=40)
    # 10 idle + 10 (a) + 0.4 x 25 (b) = 30 of 10 + 40 + 10 = 60
    assert v.percent == pytest.approx(50) and v.eta_s == pytest.approx(30) and not v.eta_at_least
    assert share(THREE, 10, phase="idle_before", percent=50).percent == pytest.approx(100 * 5 / 60)
    after = share(THREE, 10, phase="idle_after", job_index=2, percent=50)
    assert after.percent == pytest.approx(100 * 55 / 60) and after.eta_s == pytest.approx(5)


def test_the_last_job_done_without_an_idle_baseline_is_the_upload() -> None:
    v = share(THREE, None, job_index=2, percent=100)
    assert (v.percent, v.eta_s, v.eta_at_least) == (100.0, 0.0, False)


def test_a_size_bound_job_by_its_own_percent_and_a_later_one_makes_the_eta_a_lower_bound() -> None:
    v = share([job(None), job(10), job(None)], percent=25, elapsed_ns=5 * 10**9)
    # sized: 5 s for 25 % -> 20 s planned; timed 10 s; sized-2 unknown
    assert v.percent == pytest.approx(100 * 5 / 30) and v.eta_s == pytest.approx(25) and v.eta_at_least


def test_a_done_size_bound_job_counts_by_the_runs_clock_not_as_zero() -> None:
    # a 10 s job, a size-bound one, a 10 s one: the last half done 65 s into the run, so the
    # size-bound one took 65 - 10 - 5 = 50 s: 65 of 70 s (counted as 0 it read 15 of 20: 75 %)
    jobs = [job(10), job(None), job(10)]
    v = share(jobs, job_index=2, percent=50, elapsed_ns=5 * 10**9, run_s=65.0)
    assert v.percent == pytest.approx(100 * 65 / 70)
    # just begun, its length unknown, counted as 0 of 20 s known; 5 s later, 10 % done: 50 s long
    assert share(jobs, job_index=1, percent=0, run_s=10.0).percent == pytest.approx(50)
    assert share(jobs, job_index=1, percent=10, elapsed_ns=5 * 10**9, run_s=15.0).percent == pytest.approx(
        100 * 15 / 70
    )


def test_a_workload_without_job_specs_is_one_load_of_unknown_length() -> None:
    # no idle baseline: the report's own share (a file or database workload)
    assert share([], percent=40, elapsed_ns=8 * 10**9).percent == pytest.approx(40)
    assert share(None, percent=0.5).percent == pytest.approx(0.5)
    # with one: the load's length from its percent (8 s for 40 % -> 20 s), between two 10 s baselines
    assert share([], 10, percent=40, elapsed_ns=8 * 10**9).percent == pytest.approx(100 * 18 / 40)


def test_a_share_out_of_range_or_a_job_index_past_the_plan_is_clamped() -> None:
    assert share(THREE, None, job_index=7, percent=250).percent == 100.0
    assert share(THREE, None, job_index=-3, percent=-5).percent == 0.0
