"""The seeds' block workloads as presets: definitions, engine options, pass summaries."""

import pytest
from fastapi.testclient import TestClient
from sqlalchemy.orm import Session

from backend.run import service as run_service
from backend.workload.builtin import BS_SWEEP, BUILTINS, KH_SIZES, THREADS
from backend.workload.schemas import WorkloadSpec
from tests.factories import create_agent, create_result, create_run, create_user


def test_every_preset_is_served_and_valid(client: TestClient, session: Session) -> None:
    u = create_user(session)
    items = {w["name"]: w for w in client.get("/api/v1/workloads", headers=u.headers).json()["items"]}
    assert set(BUILTINS) <= set(items)
    for name in BUILTINS:
        WorkloadSpec.model_validate(items[name]["spec"])  # what the server serves is valid input again
    cdm = items["crystaldiskmark"]["spec"]
    assert (cdm["passes"], cdm["discard_passes"], len(cdm["jobs"])) == (3, 1, 5 * 2 * 4)
    assert len(items["diskspd-bs-sweep"]["spec"]["jobs"]) == 13 and BS_SWEEP[-1] == 16 * 1024 * 1024
    assert [j["numjobs"] for j in items["threads-latency"]["spec"]["jobs"]] == THREADS
    assert KH_SIZES[0] == 4096 and KH_SIZES[-1] == 4 * 1024 * 1024


def test_preset_engine_options() -> None:
    cdm = BUILTINS["crystaldiskmark"][1].engine_job()["jobs"]
    q32t16 = next(j for j in cdm if j["name"] == "RND4K_Q32T16-read.p1")
    assert (q32t16["iodepth"], q32t16["numjobs"], q32t16["ioengine"], q32t16["direct"]) == (
        "32",
        "16",
        "io_uring",
        "1",
    )
    assert q32t16["size"] == str(1024**3) and q32t16["runtime"] == "5000ms" and q32t16["stonewall"] == "1"
    kh = {j["name"]: j for j in BUILTINS["kernel-help"][1].engine_job()["jobs"]}
    assert (
        kh["read-4k-cache-nora"]["fadvise_hint"] == "random"
        and kh["read-4k-cache-ra"]["fadvise_hint"] == "sequential"
    )
    assert kh["read-4k-cache-ra"]["invalidate"] == "1" and "fadvise_hint" not in kh["read-4k-nocache"]
    offsets = {j["offset"] for j in kh.values()}
    assert len(offsets) == 16 and max(int(o) for o in offsets) + 64 * 1024**2 <= 1024**3  # within 1 GiB


def test_pass_names_are_checked() -> None:
    job = {"name": "x.p5", "rw": "read", "bs_bytes": 4096, "size_bytes": 8192}
    with pytest.raises(ValueError, match=r"\.p0 … \.p3"):
        WorkloadSpec.model_validate({"jobs": [job], "passes": 3, "discard_passes": 1})


def test_crystaldiskmark_best_of_median_and_spread(client: TestClient, session: Session) -> None:
    u = create_user(session)
    a = create_agent(session, team=u.team)
    spec = {
        "passes": 3,
        "discard_passes": 1,
        "jobs": [
            {
                "name": f"SEQ1M_Q8T1-read.p{k}",
                "rw": "read",
                "bs_bytes": 1048576,
                "size_bytes": 1 << 30,
                "runtime_s": 5,
                "time_based": True,
                "direct": True,
                "iodepth": 8,
            }
            for k in range(4)
        ],
    }
    runs = []
    for target, mbs in (("/srv/a", [900, 500, 520, 480]), ("/dev/shm/b", [3000, 2000, 2100, 1900])):
        run = create_run(session, agent=a.agent, target_path=target)
        run.workload_spec = spec
        create_result(
            session,
            run=run,
            jobs=[
                {
                    "name": f"SEQ1M_Q8T1-read.p{k}",
                    "rw": "read",
                    "bs_bytes": 1048576,
                    "read_bw_bytes": v * 10**6,
                }
                for k, v in enumerate(mbs)
            ],
        )
        runs.append(run)
    read = run_service.to_read(session, [runs[0]])[0]
    (p,) = read.passes
    assert (p.test, p.direction, p.passes, p.discarded) == ("SEQ1M_Q8T1-read", "read", 3, 1)
    assert (
        p.best_bw_bytes == 520 * 10**6 and p.median_bw_bytes == 500 * 10**6
    )  # the 900 warm-up pass is discarded
    assert p.spread_pct == pytest.approx((520 - 480) / 500 * 100) and p.best_job == "SEQ1M_Q8T1-read.p2"
    c = client.get(f"/api/v1/compare?runs={runs[0].id},{runs[1].id}", headers=u.headers).json()
    assert [j["name"] for j in c["jobs"]] == ["SEQ1M_Q8T1-read"]  # one row per test, best pass
    bw = next(m for m in c["jobs"][0]["metrics"] if m["key"] == "read_bw_bytes")
    assert bw["values"] == [520e6, 2100e6]


def test_agent_preset_file_matches_the_server_definitions() -> None:
    import json
    from pathlib import Path

    from backend.workload.export import presets
    from tests.conftest import REPO

    shipped = json.loads((Path(REPO) / "agent/src/iowatt_agent/presets.json").read_text())
    assert shipped == json.loads(json.dumps(presets())), (
        "run: .venv/bin/python -m backend.workload.export > agent/src/iowatt_agent/presets.json"
    )
