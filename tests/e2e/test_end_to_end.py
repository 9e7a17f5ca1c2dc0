"""Real API + real Celery worker + real agent + real engine, through the public REST API."""

from collections.abc import Callable

import pytest

from tests.stack import Stack

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("stack-a")]


def test_a_queued_run_is_dispatched_run_and_its_result_returned(
    live: Stack, var_tmp: Callable[[str], str]
) -> None:
    target = var_tmp("iowatt-e2e-target-")
    run_id = live.queue(target, name="e2e quick")
    run = live.wait(run_id)
    assert run["status"] == "succeeded", run["error"]
    jobs = {j["name"]: j for j in run["jobs"]}
    assert set(jobs) == {"randread-4k", "seqread-1m", "seqwrite-1m"}
    rr = jobs["randread-4k"]["read"]
    assert rr["total_ios"] > 0 and rr["io_bytes"] == rr["total_ios"] * 4096
    assert rr["clat_p50_ns"] <= rr["clat_p99_ns"] <= rr["clat_max_ns"]
    assert jobs["seqwrite-1m"]["write"]["io_bytes"] == jobs["seqwrite-1m"]["write"]["total_ios"] * 1024 * 1024
    assert jobs["seqwrite-1m"]["read"] is None
    with live.api() as api:
        result = api.get(f"/runs/{run_id}/result").json()
        assert [j["jobname"] for j in result["engine_result"]["jobs"]] == [
            "randread-4k",
            "seqread-1m",
            "seqwrite-1m",
        ]
        series = api.get(f"/runs/{run_id}/series").json()
        assert all(len(j["points"]) >= 2 for j in series["jobs"])
        health = api.get("/health").json()
        assert health["database"]["ok"] and health["redis"]["ok"] and health["worker"]["ok"], health
        # the stack's own agent (tests sharing the stack may add external hosts by uploading results)
        agent = api.get(f"/agents/{live.agent_id}").json()
        assert agent["inventory"]["mounts"], "the agent uploads its inventory"


def test_an_engine_failure_fails_the_run_with_the_engines_message(live: Stack) -> None:
    # /proc is not a place the engine can create its data file in: it exits non-zero with a message
    run_id = live.queue("/proc", name="e2e failure")
    run = live.wait(run_id)
    assert run["status"] == "failed"
    assert run["error"] and "engine" in run["error"].lower()
