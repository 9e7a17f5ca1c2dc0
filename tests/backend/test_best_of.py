"""libs/workload's rules where the server uses them: the run detail and the compare show the
same pass of a multi-pass test, the one best_of_passes picks (before issue 10 the run detail
ranked a mixed test by its reads and the compare by read + write, so the two pages showed
different passes); a lease's timeout counts the agent's default idle time."""

from __future__ import annotations

from typing import Any

from fastapi.testclient import TestClient
from iowatt_workload import DEFAULT_IDLE_S
from sqlalchemy.orm import Session

from backend.run import service as run_service
from backend.workload.schemas import JobSpec, WorkloadSpec, load_spec, stored_spec
from tests.factories import MiB, create_agent, create_result, create_run, create_user


def _spec(tests: dict[str, str], passes: int, discard: int) -> dict[str, Any]:
    jobs = [
        JobSpec(name=f"{test}.p{k}", rw=rw, bs_bytes=4096, size_bytes=64 * MiB, runtime_s=1, time_based=True)
        for test, rw in tests.items()
        for k in range(discard + passes)
    ]
    return stored_spec(WorkloadSpec(jobs=jobs, passes=passes, discard_passes=discard))


def test_run_detail_and_compare_pick_the_same_pass_per_test(client: TestClient, session: Session) -> None:
    u = create_user(session)
    a = create_agent(session, team=u.team)
    spec = _spec({"MIX": "randrw", "W": "randwrite"}, passes=2, discard=1)
    run = create_run(session, agent=a.agent)
    run.workload_spec = spec
    MB = 1_000_000
    create_result(
        session,
        run=run,
        jobs=[
            # the discarded pass is the fastest: it never counts
            {
                "name": "MIX.p0",
                "rw": "randrw",
                "bs_bytes": 4096,
                "read_bw_bytes": 900 * MB,
                "write_bw_bytes": 900 * MB,
            },
            # p1 reads most, p2 moves most in total: a mixed test is ranked by read + write
            {
                "name": "MIX.p1",
                "rw": "randrw",
                "bs_bytes": 4096,
                "read_bw_bytes": 300 * MB,
                "write_bw_bytes": 10 * MB,
            },
            {
                "name": "MIX.p2",
                "rw": "randrw",
                "bs_bytes": 4096,
                "read_bw_bytes": 200 * MB,
                "write_bw_bytes": 200 * MB,
            },
            {"name": "W.p0", "rw": "randwrite", "bs_bytes": 4096, "write_bw_bytes": 999 * MB},
            {"name": "W.p1", "rw": "randwrite", "bs_bytes": 4096, "write_bw_bytes": 100 * MB},
            {"name": "W.p2", "rw": "randwrite", "bs_bytes": 4096, "write_bw_bytes": 150 * MB},
        ],
    )

    detail = client.get(f"/api/v1/runs/{run.id}", headers=u.headers)
    assert detail.status_code == 200, detail.text
    passes = {p["test"]: p for p in detail.json()["passes"]}
    assert passes["MIX"]["direction"] == "mixed" and passes["MIX"]["best_job"] == "MIX.p2"
    assert passes["MIX"]["best_bw_bytes"] == 400 * MB and passes["MIX"]["discarded"] == 1
    assert passes["W"]["direction"] == "write" and passes["W"]["best_job"] == "W.p2"
    assert passes["W"]["bw_bytes"] == [100 * MB, 150 * MB]

    cmp = client.get(f"/api/v1/compare?runs={run.id}", headers=u.headers)
    assert cmp.status_code == 200, cmp.text
    jobs = {j["name"]: {m["key"]: m["values"][0] for m in j["metrics"]} for j in cmp.json()["jobs"]}
    assert set(jobs) == {"MIX", "W"}  # per test, passes folded
    assert (jobs["MIX"]["read_bw_bytes"], jobs["MIX"]["write_bw_bytes"]) == (200 * MB, 200 * MB)
    assert jobs["W"]["write_bw_bytes"] == 150 * MB


def test_a_lease_sizes_its_timeout_with_the_agents_default_idle_time(
    client: TestClient, session: Session
) -> None:
    """A run without idle_s idles DEFAULT_IDLE_S before and after the load on the agent; the lease's
    timeout counts exactly that (it assumed 60 s while the agent waited 30 s)."""
    u = create_user(session)
    timeouts = {}
    for idle_s in (None, 5.0):
        a = create_agent(session, team=u.team)  # one agent per run: each is leased at once
        run = create_run(session, agent=a.agent, idle_s=idle_s)
        assert run_service.dispatch(session, run_id=run.id) == a.agent.id
        r = client.post(f"/api/v1/agents/{a.agent.id}/lease?wait_s=0", headers=a.headers)
        assert r.status_code == 200, r.text
        lease = r.json()["lease"]
        assert lease["run_id"] == str(run.id) and lease["idle_s"] == idle_s
        timeouts[idle_s] = lease["timeout_s"] - load_spec(run.workload_spec).timeout_s()
    assert timeouts == {None: int(2 * DEFAULT_IDLE_S), 5.0: 10}
