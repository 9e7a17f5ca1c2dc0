"""A multi-target run on the real stack: one run, two target directories of the stack's agent,
one engine per target started together; each target's result kept and the combined figure
beside them (bytes and I/Os summed, percentiles from the merged json+ histograms)."""

import os
import shutil
import tempfile

import pytest

from tests.stack import Stack

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("stack-b")]

MiB = 1024 * 1024


def test_a_run_on_two_targets_keeps_each_result_and_combines_them(live: Stack) -> None:
    dirs = [tempfile.mkdtemp(prefix=f"iowatt-mt-{i}-", dir="/dev/shm") for i in range(2)]
    try:
        for d in dirs:
            live.allow(d)
        # size-bound: 4 MiB of 4 KiB random writes on each target (1,024 I/Os), well under a second
        job = {
            "name": "randwrite-4k",
            "rw": "randwrite",
            "bs_bytes": 4096,
            "size_bytes": 4 * MiB,
            "direct": False,
        }
        body = {
            "agent_id": live.agent_id,
            "targets": [{"target_path": d} for d in dirs],
            "workload": {"jobs": [job]},
            "name": "e2e multi-target",
            "idle_s": 0,
        }
        with live.api() as api:
            r = api.post("/runs", json=body)
            assert r.status_code == 201, r.text
            run_id = r.json()["id"]
        run = live.wait(run_id)
        assert run["status"] == "succeeded", run["error"]
        assert [t["target_path"] for t in run["targets"]] == dirs and run["target_path"] == dirs[0]
        per_target = [t["jobs"][0]["write"] for t in run["targets"]]
        assert [w["total_ios"] for w in per_target] == [1024, 1024]
        assert all(t["engine_exit_code"] == 0 for t in run["targets"])
        combined = run["jobs"][0]["write"]
        assert combined["total_ios"] == 2048 and combined["io_bytes"] == 2 * 4 * MiB
        # rates over the longest target's runtime (fio's group aggregate): at most the targets' rates
        # summed, at least the rate of the target that ran longest (never the faster one's: a target
        # that ends in 1.5 ms beside one of 12 ms is faster than the two together)
        summed = sum(w["bw_bytes"] for w in per_target)
        longest = max(run["targets"], key=lambda t: t["jobs"][0]["runtime_ns"])["jobs"][0]
        assert run["jobs"][0]["runtime_ns"] == longest["runtime_ns"]
        # (the combined rate divides by whole milliseconds, as fio's per-direction runtime: up to one
        # millisecond short of the longest target's runtime)
        ms = max(1, longest["runtime_ns"] // 1_000_000)
        assert longest["write"]["bw_bytes"] * 0.99 <= combined["bw_bytes"] <= summed * 1.01 * (ms + 1) / ms
        assert run["combined"]["targets"] == 2 and run["combined"]["latency"] == "merged"
        assert combined["clat_p50_ns"] <= combined["clat_p99_ns"] <= combined["clat_max_ns"]
        assert min(w["clat_p99_ns"] for w in per_target) <= combined["clat_p99_ns"]
        assert combined["clat_p99_ns"] <= max(w["clat_p99_ns"] for w in per_target)
        with live.api() as api:
            doc = api.get(f"/runs/{run_id}/result").json()["engine_result"]
        assert doc["iowatt"]["combined"]["targets"] == 2
        assert not any(f.startswith("iowatt-") for d in dirs for f in os.listdir(d))  # data files removed
    finally:
        for d in dirs:
            shutil.rmtree(d, ignore_errors=True)
