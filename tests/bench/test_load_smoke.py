"""Smoke test of the load benchmark (bench/load): 5 simulated agents, 3 runs queued by users, on
the real stack in the Helm chart's topology on this machine (issue 30): two API processes on two
ports behind Caddy, two Celery workers, one beat, one PostgreSQL and Redis; every run succeeds
exactly once with one result, its jobs and its power samples stored once, and both API processes
served requests. The numbers are not checked: speed is measured by `bench/load/run.py`, never in
a test."""

import asyncio
from typing import Any

import pytest

from bench.load import loadsim
from tests.services import Postgres

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("bench-load")]


def test_load_smoke_5_agents_3_runs_nothing_lost_or_duplicated(pg: Postgres, redis_url: str) -> None:
    cfg = loadsim.Config(
        agents=5,
        users=2,
        seconds=6,
        max_runs=3,
        run_s=0.5,
        idle_s=0.2,
        think_s=0.2,
        queue_share=0.7,
        start_spread_s=0.2,
        drain_timeout_s=30,
    )
    redis_db = redis_url.rsplit("/", 1)[0] + "/5"  # a database of its own: no other test's tasks

    async def simulate(p: loadsim.Platform) -> tuple[dict[str, Any], dict[str, Any]]:
        async with loadsim.running(p, cfg) as sim:
            rd = await sim.round()  # users queue 3 runs within 6 s, then every run is awaited
            ingest = await loadsim.ingest_bench(sim, samples=2000, repeats=1)
        return rd, ingest

    with loadsim.platform(
        pg.port, redis_db, users=cfg.users, api_processes=2, workers=2, worker_concurrency=1
    ) as p:
        rd, ingest = asyncio.run(simulate(p))
        check = loadsim.check_database(p.conninfo, [rd], settle_s=20)
        served = {k: (p.logs / f"api-{k}.log").read_text().count('"http.request"') for k in range(2)}
        tasks = {k: (p.logs / f"worker-{k}.log").read_text().count('"task.done"') for k in range(2)}

    assert rd["runs_queued"] == 3, rd["errors"]
    assert rd["runs_stored"] == 3, rd["errors"]
    assert len(rd["dispatch_ms"]) == 3 and all(ms > 0 for ms in rd["dispatch_ms"])
    assert check["lost"] == [] and check["duplicated"] == [], check
    assert check["leased_more_than_once"] == {} and check["agent_uploads_not_one"] == {}, check
    assert check["energy_missing"] == [], check
    assert check["runs_in_database"] == 3 + 1  # the users' runs and the ingest comparison's one
    assert ingest["repeats"][0]["api_rows_per_s"] > 0 and ingest["repeats"][0]["copy_rows_per_s"] > 0
    assert not [e for e in rd["errors"] if "HTTP 5" in e], rd["errors"]
    # the proxy spread the requests over both API processes, and both workers took tasks
    assert all(n > 0 for n in served.values()), served
    assert all(n > 0 for n in tasks.values()), tasks
