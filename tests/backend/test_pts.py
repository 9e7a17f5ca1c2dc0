"""SNIA PTS runs on the server (the kind `pts`; docs/pts.md), in process: queueing checks the
host's two keys and every engine job the run makes; a stored PTS result gives the run its verdict
(RunRead.pts), its validity flags, the report (GET /runs/{id}/pts, CSV), and a procurement
review's steady-state figure. The result is a document the agent's child printed on a loop device
(tests/data/pts/iops-trial.json, recorded from tests/agent/test_pts.py's trial), with a copy
edited not to reach steady state; Host Idle Recovery's, tests/data/pts/hir-trial.json (a trial of
every wait state on a throttled loop device, recorded the same way); Write Saturation's,
tests/data/pts/wsat-trial.json. Three trials end to end with the real engine on a loop device
(tests/agent/test_pts.py's fixtures), each queued with both keys, leased, run, uploaded and
reported, each behind a blkio write throttle (the engine's CPU small): the IOPS test at its
smallest scale through the agent's own loop (AgentLoop against this app), Write Saturation and Host
Idle Recovery by the agent's child."""

from __future__ import annotations

import contextlib
import copy
import hashlib
import io
import json
import os
import uuid
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from hypothesis import given, settings
from hypothesis import strategies as st
from sqlalchemy.orm import Session

from backend.run import service as run_service
from backend.workload.schemas import WorkloadSpec, stored_spec
from tests.agent.test_pts import loop_device, throttled_loop  # noqa: F401 (fixtures of the trial below)
from tests.backend.test_energy import upload
from tests.factories import INVENTORY, create_agent, create_run, create_user

DEVICE = "/dev/disk/by-id/nvme-TEST_SSD_0001"
RECORDED: dict[str, Any] = json.loads(
    (Path(__file__).resolve().parents[1] / "data" / "pts" / "iops-trial.json").read_text()
)
WSAT_RECORDED: dict[str, Any] = json.loads(
    (Path(__file__).resolve().parents[1] / "data" / "pts" / "wsat-trial.json").read_text()
)
HIR_RECORDED: dict[str, Any] = json.loads(
    (Path(__file__).resolve().parents[1] / "data" / "pts" / "hir-trial.json").read_text()
)

INVENTORY_PTS: dict[str, Any] = {
    **INVENTORY,
    "policy": {
        **INVENTORY["policy"],
        "targets": [
            *INVENTORY["policy"]["targets"],
            {"path": DEVICE, "kind": "device", "writable": True, "destructive": True, "size_bytes": 64 << 20},
            {
                "path": "/dev/disk/by-id/ro",
                "kind": "device",
                "writable": False,
                "destructive": False,
                "size_bytes": 64 << 20,
            },
        ],
    },
    "capabilities": {
        **INVENTORY["capabilities"],
        "workload_kinds": [*INVENTORY["capabilities"]["workload_kinds"], "pts"],
    },
}

TRIAL = {
    "kind": "pts",
    "pts": {
        "test": "iops",
        "round_s": 1,
        "max_rounds": 5,
        "block_sizes": [4096],
        "mixes": [0],
        "threads": 1,
        "iodepth": 1,
        "ioengine": "psync",
        "purge": "blkdiscard",
    },
}


def _queue(client: TestClient, u: Any, a: Any, **body: Any) -> Any:
    return client.post(
        "/api/v1/runs",
        json={
            "agent_id": str(a.agent.id),
            "target_path": DEVICE,
            "workload": TRIAL,
            "destructive": True,
            **body,
        },
        headers=u.headers,
    )


def test_a_pts_run_is_queued_on_a_destructive_device_with_both_keys(
    client: TestClient, session: Session
) -> None:
    u = create_user(session)
    a = create_agent(session, team=u.team, inventory=INVENTORY_PTS)
    r = _queue(client, u, a)
    assert r.status_code == 201, r.text
    run = r.json()
    assert run["name"].startswith("SNIA PTS iops (short trial)")
    assert run["workload"]["pts"]["round_s"] == 1 and run["destructive"] is True
    # refusals name the field: the run's key, a directory, a read-only device, a matrix outside the test's
    r = _queue(client, u, a, destructive=False)
    assert r.status_code == 422 and "destructive" in r.text
    r = _queue(client, u, a, target_path="/srv/bench", destructive=False)
    assert r.status_code == 422 and "whole raw device" in r.text
    r = _queue(client, u, a, target_path="/dev/disk/by-id/ro")
    assert r.status_code == 422 and "device.not_destructive" in r.text
    bad = {"kind": "pts", "pts": {"test": "latency", "block_sizes": [1048576]}}
    r = _queue(client, u, a, workload=bad)
    assert r.status_code == 422
    assert r.json()["detail"][0]["field"] == "workload.pts.block_sizes", r.text
    # a run's scale makes a short trial of the specification's run
    r = _queue(client, u, a, workload={"kind": "pts", "pts": {"test": "iops"}}, scale=0.05)
    assert r.status_code == 201, r.text
    p = r.json()["workload"]["pts"]
    assert (p["round_s"], p["capacity_fraction"]) == (3, 0.05)


def test_the_lease_job_is_libs_workloads_pts_job() -> None:
    spec = WorkloadSpec.model_validate(TRIAL)
    job = spec.engine_job()
    assert job["mode"] == "pts" and job["block_sizes"] == [4096]
    full = WorkloadSpec.model_validate({"kind": "pts", "pts": {"test": "iops"}})
    # 25 rounds of 56 one-minute elements, x 1.5, plus a day for purge and preconditioning
    assert full.timeout_s() == int(25 * 56 * 60 * 1.5 + 24 * 3600 + 600)


def _stored(client: TestClient, session: Session, u: Any, a: Any, doc: dict[str, Any]) -> uuid.UUID:
    spec = WorkloadSpec.model_validate(TRIAL)
    run = create_run(session, agent=a.agent, target_path=DEVICE, destructive=True)
    run.workload_spec = stored_spec(spec)
    session.flush()
    run_service.dispatch(session, run_id=run.id)
    lease = client.post(f"/api/v1/agents/{a.agent.id}/lease?wait_s=0", headers=a.headers).json()["lease"]
    assert lease["engine_job"]["mode"] == "pts"
    client.post(f"/api/v1/runs/{run.id}/start", json={"lease_id": lease["lease_id"]}, headers=a.headers)
    r = client.put(
        f"/api/v1/runs/{run.id}/result",
        json={
            "lease_id": lease["lease_id"],
            "upload_id": str(uuid.uuid4()),
            "engine_result": doc,
            "engine_exit_code": 0,
            "started_at": "2026-12-06T06:00:00Z",
            "finished_at": "2026-12-06T06:00:20Z",
        },
        headers=a.headers,
    )
    assert r.status_code == 201, r.text
    return run.id


def _not_steady(doc: dict[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(doc)
    ss = out["pts"]["steady_state"]
    ss.update(reached=False, round=None)
    ss["window"].update(data_ok=False)
    out["pts"]["deviations"].append("steady state not reached in 5 rounds")
    return out


def test_a_stored_pts_result_gives_verdict_flags_and_report(client: TestClient, session: Session) -> None:
    u = create_user(session)
    a = create_agent(session, team=u.team, inventory=INVENTORY_PTS)
    steady_id = _stored(client, session, u, a, RECORDED)
    run = client.get(f"/api/v1/runs/{steady_id}", headers=u.headers).json()
    v = run["pts"]
    assert v["test"] == "iops" and v["compliant"] is False and v["rounds"] == 5
    assert v["steady_state_reached"] is RECORDED["pts"]["steady_state"]["reached"]
    assert run["jobs"][0]["name"] == "4k-r0"  # the last round's engine job
    flags = [
        f["flag"]
        for f in client.get(f"/api/v1/runs/{steady_id}/system", headers=u.headers).json()["validity"]
    ]
    assert "not_pts_compliant" in flags and "unconditioned_ssd" not in flags

    rep = client.get(f"/api/v1/runs/{steady_id}/pts", headers=u.headers)
    assert rep.status_code == 200, rep.text
    body = rep.json()
    assert body["tracking_element"] == "4k-r0" and body["metric"] == "iops"
    assert [r["round"] for r in body["rounds"]] == [1, 2, 3, 4, 5]
    [e] = body["elements"]
    assert len(e["per_round"]) == 5
    w = body["window"]
    assert (w["first_round"], w["last_round"]) == (1, 5) and len(w["points"]) == 5
    assert w["data_excursion_limit"] == pytest.approx(0.2 * w["average"])
    assert e["iops"] == pytest.approx(
        w["average"], rel=1e-9
    )  # one element: its window average is the tracking average
    csv = client.get(f"/api/v1/runs/{steady_id}/pts?format=csv", headers=u.headers)
    assert csv.status_code == 200 and csv.headers["content-type"].startswith("text/csv")
    assert "section,measurement window" in csv.text and "4k-r0" in csv.text

    not_steady = _stored(client, session, u, a, _not_steady(RECORDED))
    flags = [
        f["flag"]
        for f in client.get(f"/api/v1/runs/{not_steady}/system", headers=u.headers).json()["validity"]
    ]
    assert "not_steady_state" in flags
    # a comparison of the two shows each run's verdict beside its figures, as the run page does
    c = client.get(f"/api/v1/compare?runs={steady_id},{not_steady}", headers=u.headers)
    assert c.status_code == 200, c.text
    got = {rid: {f["flag"] for f in fs} for rid, fs in c.json()["validity"].items()}
    reached = RECORDED["pts"]["steady_state"]["reached"]
    assert "not_pts_compliant" in got[str(steady_id)]
    assert ("not_steady_state" in got[str(steady_id)]) is not reached
    assert {"not_pts_compliant", "not_steady_state"} <= got[str(not_steady)]
    # a run without a PTS section has no report
    other = create_run(session, agent=a.agent)
    assert client.get(f"/api/v1/runs/{other.id}/pts", headers=u.headers).status_code == 404


def test_a_review_prefers_the_steady_state_figure_and_says_when_there_is_none(
    client: TestClient, session: Session
) -> None:
    from tests.backend.test_reviews import make_review

    u = create_user(session)
    a = create_agent(session, team=u.team, inventory=INVENTORY_PTS)
    doc = copy.deepcopy(RECORDED)
    doc["pts"]["steady_state"].update(reached=True, round=5)
    doc["pts"]["window_averages"][0]["write_iops"] = 12345.0  # the window's average, not the last round's
    steady = _stored(client, session, u, a, doc)
    not_steady = _stored(client, session, u, a, _not_steady(RECORDED))
    rv = make_review(client, u)

    def candidate(run_id: uuid.UUID) -> dict[str, Any]:
        r = client.post(
            f"/api/v1/reviews/{rv['id']}/candidates",
            json={
                "name": str(run_id)[:8],
                "device": {"model": "ssd", "capacity_bytes": 10**12, "unit_price": "100", "media": "ssd"},
                "count": 1,
                "protection": "jbod",
                "performance": {"source": "run", "run_id": str(run_id)},
            },
            headers=u.headers,
        )
        assert r.status_code == 201, r.text
        return r.json()

    c = candidate(steady)
    assert Decimal(c["performance_value"]) == Decimal("12345.0")
    assert "steady-state average of rounds 1–5" in c["performance_reference"]
    assert "no_steady_state" not in [v["flag"] for v in c["validity"]]
    c = candidate(not_steady)
    assert Decimal(c["performance_value"]) == Decimal(str(RECORDED["jobs"][0]["write"]["iops"]))
    assert "not_steady_state" in [v["flag"] for v in c["validity"]]
    assert "no_steady_state" not in [v["flag"] for v in c["validity"]]  # said once, as the run says it
    # a run that is no PTS run, on something other than a hard disk: no steady-state figure, said
    plain, r = upload(client, session, u, a, None, target="/dev/shm/x")
    assert r.status_code == 201, r.text
    assert "no_steady_state" in [v["flag"] for v in candidate(plain)["validity"]]
    # the review's PDF prints the PTS report pages of both PTS candidates' runs (real Chromium)
    from pypdf import PdfReader

    from backend.review import pdf

    if pdf.chromium() is None:
        pytest.skip("no Chromium to print the review's PDF with")
    r = client.get(f"/api/v1/reviews/{rv['id']}/pdf", headers=u.headers)
    assert r.status_code == 200, r.text
    text = " ".join((p.extract_text() or "") for p in PdfReader(io.BytesIO(r.content)).pages)
    for run_id in (steady, not_steady):
        assert f"SNIA PTS report: {str(run_id)[:8]}" in text
    assert "steady state reached in round 5" in text and "steady state not reached in 5 rounds" in text
    for heading in ("Steady-state convergence", "Measurement window: rounds 1–5", "IOPS by block size"):
        assert text.count(heading) == 2, heading
    assert "least-squares fit" in text and "data band ±10 %" in text
    assert text.count("Profile Enterprise") == 2  # recorded before profiles: Enterprise's


def _report(doc: dict[str, Any], **changes: Any) -> Any:
    from backend.pts import service

    d = copy.deepcopy(doc["pts"])
    d.update(changes)
    parsed = service.read_doc(d)
    assert parsed is not None
    return service.report(uuid.uuid4(), parsed)


@pytest.fixture
def throttled_device(request: pytest.FixtureRequest) -> Any:
    """tests/agent/test_pts.py's loop device (16 MiB in /dev/shm, a /dev/disk/by-id link) behind a
    cgroup-v1 blkio write throttle of 500 IOPS: (link, device, cgroup)."""
    import tests.agent.test_pts as agent_pts

    if agent_pts.needs_loop.args[0]:  # the skipif's condition: root, losetup, blkdiscard, engine
        pytest.skip("needs root, losetup, blkdiscard and the real engine")
    return request.getfixturevalue("throttled_loop")


def _queued_on_device(
    client: TestClient, session: Session, state: Path, link: Path, pts: dict[str, Any]
) -> tuple[Any, Any, uuid.UUID]:
    """A PTS run queued with both keys on `link`: the host's (its saved policy marks the device
    destructive, the agent's inventory reports that policy) and the run's; dispatched.
    Returns (user, agent, run id)."""
    from iowatt_agent.policy import load_report, save_policy
    from iowatt_policy import Policy, Target

    save_policy(state, Policy(targets=(Target.device(str(link), destructive=True),)))
    u = create_user(session)
    inventory = {
        **{k: v for k, v in INVENTORY_PTS.items() if k != "policy"},
        "policy": load_report(state).to_dict(),
    }
    a = create_agent(session, team=u.team, inventory=inventory)
    body = {"agent_id": str(a.agent.id), "target_path": str(link), "workload": {"kind": "pts", "pts": pts}}
    r = client.post("/api/v1/runs", json={**body, "destructive": True}, headers=u.headers)
    assert r.status_code == 201, r.text
    run_id = uuid.UUID(r.json()["id"])
    run_service.dispatch(session, run_id=run_id)
    return u, a, run_id


def _run_in_throttled_child(
    client: TestClient, a: Any, run_id: uuid.UUID, test: str, link: Path, cg: Path, tmp_path: Path
) -> dict[str, Any]:
    """The lease taken, the run started, the agent's child run as PtsRunner starts it in the
    throttled cgroup (tests/agent/test_pts.py throttled_child), its document uploaded."""
    from tests.agent.test_pts import throttled_child

    lease = client.post(f"/api/v1/agents/{a.agent.id}/lease?wait_s=0", headers=a.headers).json()["lease"]
    assert lease["engine_job"]["mode"] == "pts" and lease["engine_job"]["test"] == test
    lid = lease["lease_id"]
    assert (
        client.post(f"/api/v1/runs/{run_id}/start", json={"lease_id": lid}, headers=a.headers).status_code
        == 200
    )
    doc = throttled_child(lease["engine_job"], link, cg, tmp_path)
    up = {
        "lease_id": lid,
        "upload_id": str(uuid.uuid4()),
        "engine_result": doc,
        "engine_exit_code": 0,
        "started_at": "2026-12-07T06:00:00Z",
        "finished_at": "2026-12-07T06:01:00Z",
    }
    assert client.put(f"/api/v1/runs/{run_id}/result", json=up, headers=a.headers).status_code == 201
    return doc


@pytest.mark.early  # ~4 s: three or so throttled 1-second rounds
def test_a_write_saturation_trial_end_to_end_on_a_throttled_loop_device(
    client: TestClient, session: Session, tmp_path: Path, throttled_device: Any
) -> None:
    """Queued on a loop device the host marked destructive (both keys), leased, run by the agent's
    child as PtsRunner starts it with the real engine (purge by discard, no preconditioning,
    one-second rounds of RND 4 KiB writes until 4 x the tested region is written: its other limit,
    24 hours, is 1,440 rounds, which libs/workload's unit tests judge), uploaded, and reported:
    the rule that stopped it, its figures from its last rounds, no steady-state window."""
    link, _dev, cg = throttled_device
    pts = {"test": "wsat", "purge": "blkdiscard", "threads": 1, "iodepth": 4, "ioengine": "libaio"}
    # 1-second rounds over 1 MiB of the 16 MiB device: 4 x is 4 MiB, ~2 s at the throttle
    pts |= {"round_s": 1, "capacity_fraction": 1 / 16}
    u, a, run_id = _queued_on_device(client, session, tmp_path / "state", link, pts)
    doc = _run_in_throttled_child(client, a, run_id, "wsat", link, cg, tmp_path)
    p = doc["pts"]
    assert p["purge"]["method"] == "blkdiscard" and p["preconditioning"]["applies"] is False
    body = client.get(f"/api/v1/runs/{run_id}/pts", headers=u.headers).json()
    region = 1 << 20
    assert body["region_bytes"] == region and body["preconditioning_bytes"] == 0
    rounds = body["rounds"]
    assert body["stop"] == {
        "rule": "capacity",
        "round": len(rounds),
        "round_limit": 1440,
        "round_s": 1,
        "bytes_written": rounds[-1]["bytes_written"],
        "bytes_limit": 4 * region,
    }
    # it stopped in the first round that reached 4 x the region, not before and not later
    assert rounds[-1]["bytes_written"] >= 4 * region > (rounds[-2]["bytes_written"] if len(rounds) > 1 else 0)
    assert 2 <= len(rounds) <= 6, [x["bytes_written"] for x in rounds]  # ~2 MB/s at the throttle
    assert body["window"] is None
    assert (body["averaged_first_round"], body["averaged_last_round"]) == (
        max(1, len(rounds) - 4),
        len(rounds),
    )
    v = client.get(f"/api/v1/runs/{run_id}", headers=u.headers).json()["pts"]
    assert not v["steady_state_applies"] and not v["steady_state_reached"] and not v["compliant"]
    assert v["deviations"] == [
        "rounds of 1 s per element, not 60 s",
        "0.0625 of the capacity tested, not all of it",
    ]
    csv = client.get(f"/api/v1/runs/{run_id}/pts?format=csv", headers=u.headers).text
    assert f"stopped_by,capacity,round,{len(rounds)},round_limit,1440" in csv and "window averages" not in csv


@pytest.fixture
def throttled_with_original(request: pytest.FixtureRequest, throttled_device: Any) -> Any:
    """The throttled loop device with its original bytes: (link, device, original, cgroup)."""
    link, dev, cg = throttled_device
    return link, dev, request.getfixturevalue("loop_device")[2], cg


@contextlib.contextmanager
def in_cgroup(cg: Path) -> Iterator[None]:
    """This process (and what it starts meanwhile) in the blkio cgroup `cg`, then back in its own."""
    own = next(
        line.split(":", 2)[2]
        for line in Path("/proc/self/cgroup").read_text().splitlines()
        if ":blkio:" in line
    )
    (cg / "cgroup.procs").write_text(f"{os.getpid()}\n")
    try:
        yield
    finally:
        (Path("/sys/fs/cgroup/blkio") / own.lstrip("/") / "cgroup.procs").write_text(f"{os.getpid()}\n")


@pytest.mark.early  # ~6 s: the preconditioning and five 1-second rounds
def test_a_short_iops_trial_end_to_end_through_the_agent_on_a_loop_device(
    client: TestClient, session: Session, tmp_path: Path, throttled_with_original: Any
) -> None:
    """The IOPS test at its smallest scale (one element, RND 4 KiB writes, 1-second rounds, at
    most 5): queued with both keys, leased and run by the agent's own loop (AgentLoop: the host's
    policy judged, PtsRunner's child, the real engine; this process in the device's 500 IOPS write
    throttle meanwhile, so the child and its engines are too) against this app, uploaded by it and
    reported: purge by discard, workload-independent preconditioning (2 x the region), every round
    kept, the verdict libs/workload's rule gives over them, the report's window and the CSV."""
    from iowatt_agent.client import ApiClient
    from iowatt_agent.credentials import AgentConfig
    from iowatt_agent.loop import AgentLoop, LoopSettings
    from iowatt_workload.pts import steady_state

    from backend.models import RunResult
    from tests.agent.test_loop import REAL_ENGINE
    from tests.agent.test_real_server import bridge

    link, dev, original, cg = throttled_with_original
    size = len(original)
    state = tmp_path / "state"
    u, a, run_id = _queued_on_device(client, session, state, link, dict(TRIAL["pts"]))
    transport = bridge(client)
    config = AgentConfig(server_url="http://testserver", agent_id=a.agent.id, agent_token=a.token, name="pts")
    loop = AgentLoop(
        config,
        state_dir=state,
        engine=REAL_ENGINE,
        client_factory=lambda: ApiClient("http://testserver", a.token, transport=transport),
        settings=LoopSettings(lease_wait_s=0, progress_interval_s=0.2, kill_grace_s=0.3),
        send_inventory=False,
    )
    lease = loop.lease_once()
    assert lease is not None and str(lease.run_id) == str(run_id)
    with in_cgroup(cg):  # the agent's child and its engines behind the write throttle
        assert loop.execute(lease) == "result"
    stored = session.get(RunResult, run_id)
    assert stored is not None
    doc = stored.engine_result
    p = doc["pts"]
    assert p["purge"]["method"] == "blkdiscard" and p["purge"]["commands"] == [
        f"blkdiscard {os.path.realpath(dev)}"
    ]
    assert p["region_bytes"] == size == p["capacity_bytes"]
    assert p["preconditioning"]["bytes_written"] == 2 * size  # the region written twice, SEQ 128 KiB
    rounds = p["rounds"]
    assert len(rounds) == 5 and [r["round"] for r in rounds] == list(range(1, len(rounds) + 1))
    assert all(r["cells"][0]["name"] == "4k-r0" and r["cells"][0]["write_iops"] > 0 for r in rounds)
    # the verdict is libs/workload's rule over the rounds kept
    again = steady_state([r["tracking"] for r in rounds], max_rounds=5)
    assert p["steady_state"]["reached"] is again.reached and p["steady_state"]["round"] == again.round
    assert p["steady_state"]["window"]["first_round"] == 1
    assert p["compliant"] is False and any("rounds of 1 s" in d for d in p["deviations"])
    # the run's jobs are the last round's, as the engine reported them
    assert [j["jobname"] for j in doc["jobs"]] == ["4k-r0"]
    assert doc["jobs"][0]["write"]["iops"] == rounds[-1]["cells"][0]["write_iops"]
    assert hashlib.sha256(dev.read_bytes()).digest() != hashlib.sha256(original).digest()
    # the server's reading of it: the run's verdict, the report's rounds and window, the CSV
    run = client.get(f"/api/v1/runs/{run_id}", headers=u.headers).json()
    assert run["status"] == "succeeded"
    v = run["pts"]
    assert v["test"] == "iops" and v["steady_state_applies"] and not v["compliant"]
    assert v["steady_state_reached"] is again.reached
    body = client.get(f"/api/v1/runs/{run_id}/pts", headers=u.headers).json()
    assert [r["round"] for r in body["rounds"]] == [1, 2, 3, 4, 5]
    assert body["region_bytes"] == size and body["preconditioning_bytes"] == 2 * size
    assert body["window"]["first_round"] == 1 and body["window"]["last_round"] == 5
    csv = client.get(f"/api/v1/runs/{run_id}/pts?format=csv", headers=u.headers).text
    assert "purge,blkdiscard" in csv and "4k-r0" in csv


@pytest.mark.early  # ~3 s: the preconditioning and five throttled 1-second rounds
def test_a_short_iops_trial_end_to_end_on_a_zram_device(
    client: TestClient, session: Session, tmp_path: Path
) -> None:
    """The IOPS test at its smallest scale on a zram device of its own (zram-control's hot_add,
    16 MiB of random bytes, behind the 500 IOPS write throttle), as PTS Client: queued with both
    keys, leased, run by the agent's child as PtsRunner starts it, uploaded and reported. The
    purge is a discard, and the run says it is zram's (no erase command: the discard frees its
    pages); the verdict is libs/workload's rule over the rounds kept; the profile is in the
    result, the verdict, the report, the CSV and the validity flag, with what the sources do not
    state of the Client; the device is removed after (hot_remove), its /dev node and link gone."""
    from iowatt_workload.pts import steady_state

    from tests.agent.test_pts import throttled_zram, zram_devices

    before = zram_devices()
    with throttled_zram() as (link, dev, original, cg):
        real = os.path.realpath(dev)
        assert dev.name in zram_devices() - before
        client_trial = {**TRIAL["pts"], "profile": "client"}
        u, a, run_id = _queued_on_device(client, session, tmp_path / "state", link, client_trial)
        p = _run_in_throttled_child(client, a, run_id, "iops", link, cg, tmp_path)["pts"]
        with dev.open("rb") as f:  # written over: the preconditioning covered the whole device
            after = f.read()
    # its device removed, its link too (the others', if another process adds or removes one
    # meanwhile, are theirs: only this test's device is compared)
    assert dev.name not in zram_devices() and not link.exists() and not dev.exists()
    assert p["purge"]["method"] == "blkdiscard" and p["purge"]["commands"] == [f"blkdiscard {real}"]
    assert "zram" in p["purge"]["note"] and "discard" in p["purge"]["note"]
    assert p["preconditioning"]["applies"] is True
    assert p["preconditioning"]["bytes_written"] == 2 * len(original)
    assert after != original
    rounds = p["rounds"]
    assert [r["round"] for r in rounds] == [1, 2, 3, 4, 5]
    again = steady_state([r["tracking"] for r in rounds], max_rounds=5)
    assert again.window is not None
    v = p["steady_state"]
    assert v["applies"] is True and v["reached"] is again.reached and v["round"] == again.round
    assert v["window"]["first_round"] == 1 and v["window"]["last_round"] == 5
    assert v["window"]["data_ok"] is again.window.data_ok and v["window"]["slope_ok"] is again.window.slope_ok
    assert p["stop"]["rule"] == ("steady_state" if again.reached else "round_limit")
    assert (p["spec"], p["profile"], p["params"]["profile"]) == (
        "SNIA SSS PTS v2.0.x Client",
        "client",
        "client",
    )
    assert p["deviations"][-1].startswith("PTS Client: the sources at hand do not state its ActiveRange")
    # the server's reading: the verdict, the report's purge note, the CSV, the validity flag
    run = client.get(f"/api/v1/runs/{run_id}", headers=u.headers).json()
    assert run["status"] == "succeeded" and run["pts"]["steady_state_reached"] is again.reached
    assert run["pts"]["profile"] == "client" and not run["pts"]["compliant"]
    body = client.get(f"/api/v1/runs/{run_id}/pts", headers=u.headers).json()
    assert body["spec"] == "SNIA SSS PTS v2.0.x Client" and body["verdict"]["profile"] == "client"
    assert body["purge"]["method"] == "blkdiscard" and "zram" in body["purge"]["note"]
    assert body["window"]["average"] == pytest.approx(again.window.average)
    csv = client.get(f"/api/v1/runs/{run_id}/pts?format=csv", headers=u.headers).text
    assert 'purge,blkdiscard,"zram (a compressed RAM disk)' in csv
    assert "profile,client\n" in csv and "pts_compliant,no,PTS Client-compliant\n" in csv
    validity = client.get(f"/api/v1/runs/{run_id}/system", headers=u.headers).json()["validity"]
    flag = next(f for f in validity if f["flag"] == "not_pts_compliant")
    assert flag["message"].startswith("not PTS Client-compliant: rounds of 1 s per element")


@pytest.mark.early  # ~10 s, mostly the trial's own host idle and throttled bursts
def test_a_host_idle_recovery_trial_end_to_end_on_a_throttled_loop_device(
    client: TestClient, session: Session, tmp_path: Path, throttled_device: Any
) -> None:
    """Queued with both keys, leased, run by the agent's child as PtsRunner starts it: purge, no
    workload-independent preconditioning (the test starts from the purged state), RND 4 KiB
    rounds judged by the steady-state rule, then wait state 1's bursts each followed by its host
    idle, and its return to baseline; uploaded, and reported: every burst's IOPS with when it
    started and the idle measured before it, in the report and the CSV."""
    from tests.agent.test_pts import HIR_THROTTLE_IOPS, HIR_TRIAL

    link, _dev, cg = throttled_device
    pts = {k: v for k, v in HIR_TRIAL.items() if k != "mode"}
    u, a, run_id = _queued_on_device(client, session, tmp_path / "state", link, pts)
    p = _run_in_throttled_child(client, a, run_id, "hir", link, cg, tmp_path)["pts"]
    assert p["test"] == "hir" and p["purge"]["method"] == "blkdiscard"
    assert p["preconditioning"]["applies"] is False and p["preconditioning"]["bytes_written"] == 0
    assert len(p["rounds"]) == 5 and p["steady_state"]["applies"] is True
    assert [c["name"] for c in p["rounds"][0]["cells"]] == ["4k-r0"]
    h = p["hir"]
    assert (h["burst_s"], h["bursts"]) == (1, 2)
    wait, base = h["segments"]
    assert (wait["kind"], wait["wait_state"], wait["idle_s"]) == ("wait", 1, 1)
    assert (base["kind"], base["wait_state"]) == ("baseline", 1)
    assert [x["burst"] for x in wait["points"]] == [1, 2] == [x["burst"] for x in base["points"]]
    first, second = wait["points"]
    assert first["idle_s"] is None and second["idle_s"] >= 1.0  # the host idle, and the engine's start
    assert second["t_s"] >= 2.0 and base["points"][0]["t_s"] >= second["t_s"] + 2.0
    for x in (*wait["points"], *base["points"]):  # the throttle's rate, give or take a slice
        assert 0.3 * HIR_THROTTLE_IOPS <= x["iops"] <= 1.5 * HIR_THROTTLE_IOPS, h
    assert p["compliant"] is False and "bursts of 1 s, not 5 s" in p["deviations"]
    assert p["bytes_written"] > p["rounds"][-1]["bytes_written"]  # the rounds' and the bursts'
    # the server's report: every burst, in the API and the CSV
    v = client.get(f"/api/v1/runs/{run_id}", headers=u.headers).json()["pts"]
    assert v["test"] == "hir" and not v["compliant"]
    body = client.get(f"/api/v1/runs/{run_id}/pts", headers=u.headers).json()
    assert body["preconditioning_applies"] is False and body["preconditioning_bytes"] == 0
    r = body["hir"]
    assert [(s["kind"], s["wait_state"]) for s in r["segments"]] == [("wait", 1), ("baseline", 1)]
    assert [pt["iops"] for pt in r["segments"][0]["points"]] == [x["iops"] for x in wait["points"]]
    if body["window"] is not None:
        assert r["preconditioned_iops"] == body["window"]["average"]
    csv = client.get(f"/api/v1/runs/{run_id}/pts?format=csv", headers=u.headers).text
    assert "section,host idle recovery" in csv and "none (from the purged state)" in csv
    assert csv.count("\nwait,1,") == 1 + 2  # its average, then every burst


def test_write_saturation_reports_its_stop_rule_and_no_measurement_window() -> None:
    """A Write Saturation trial recorded on a throttled loop device (tests/agent/test_pts.py's
    pattern, 1-second rounds over 128 MiB): stopped in round 27 by 4 x the region written; its
    figures are its last five rounds' and it has no steady-state window in the report or the CSV.
    A run recorded before the stop rule was (a first steady window, no `stop`) reads too."""
    from backend.pts import service

    rep = _report(WSAT_RECORDED)
    assert rep.stop is not None and rep.stop.rule == "capacity" and rep.stop.round == 27 == len(rep.rounds)
    assert rep.stop.bytes_limit == 4 * rep.region_bytes <= rep.stop.bytes_written
    assert rep.rounds[-2].bytes_written < rep.stop.bytes_limit  # the first round past it
    assert rep.window is None and (rep.averaged_first_round, rep.averaged_last_round) == (23, 27)
    v = rep.verdict
    assert not v.steady_state_applies and not v.steady_state_reached and v.window_first_round is None
    assert service.validity_flags(v) == [
        {"flag": "not_pts_compliant", "message": "not PTS-compliant: rounds of 1 s per element, not 60 s"}
    ]
    [e] = rep.elements
    assert e.iops == pytest.approx(sum(r.tracking for r in rep.rounds[22:]) / 5, rel=1e-9)
    csv = service.to_csv(rep)
    assert "stopped_by,capacity,round,27,round_limit,1440\n" in csv
    assert f"bytes_written_by_rounds,{rep.stop.bytes_written},bytes_limit,{4 * rep.region_bytes}\n" in csv
    assert "section,last rounds averages,rounds=23-27\n" in csv
    assert "measurement window" not in csv and "window averages" not in csv
    old = copy.deepcopy(WSAT_RECORDED["pts"])
    del old["stop"]
    old["steady_state"].update(
        reached=True, round=5, window={**old["steady_state"]["window"], "first_round": 1}
    )
    before = service.report(uuid.uuid4(), service.read_doc(old))  # type: ignore[arg-type]
    assert before.stop is None and before.window is None and not before.verdict.steady_state_reached
    assert "stopped_by" not in service.to_csv(before)


def test_the_pdf_pages_of_each_test_are_the_report_views() -> None:
    """backend/review/pts_pages.py, pure: each test's pages as the run's report view shows them,
    every text escaped; a candidate without a PTS run prints none."""
    from types import SimpleNamespace

    from backend.review import pts_pages

    def section(rep: Any, name: str = "A <b>", run: bool = True) -> str:
        c = SimpleNamespace(name=name, model="ssd & co", run_id=rep.run_id if run else None)
        return pts_pages.section([c], {rep.run_id: rep})  # type: ignore[list-item]

    iops = _report(RECORDED)
    html = section(iops)
    assert "SNIA PTS report: A &lt;b&gt;" in html and "ssd &amp; co" in html and "<b>" not in html
    assert html.count("<svg") == 2 and "least-squares fit" in html and "slope band ±5 %" in html
    assert "hsl(212 80%" in html  # the IOPS heat map
    assert "<th>Profile</th><td>Enterprise</td>" in html  # recorded before profiles: Enterprise's
    client = section(_report(RECORDED, profile="client", spec="SNIA SSS PTS v2.0.x Client"))
    assert "<th>Profile</th><td>Client</td>" in client and "not PTS Client-compliant: rounds of 1 s" in client
    wsat = section(_report(WSAT_RECORDED))
    # its two plots, and neither a convergence plot nor a measurement window: no steady state applies
    assert "IOPS over time" in wsat and "IOPS over total GB written" in wsat and wsat.count("<svg") == 2
    assert "no steady-state rule" in wsat and "window" not in wsat.lower().replace("pts-window", "")
    assert "Stopped by</th><td>4 × the tested region written (541 MB of 537 MB) in round 27" in wsat
    assert "IOPS by block size and R/W mix (the average of rounds 23–27, the last ones run)" in wsat
    latency = section(_report(RECORDED, test="latency"))
    assert "Latency (window averages" in latency and "hsl(" not in latency
    throughput = section(_report(RECORDED, test="throughput"))
    assert "Throughput by block size" in throughput
    assert section(iops, run=False) == ""
    assert pts_pages.ns_text(1500) == "1.5 µs" and pts_pages.bs_label(512) == "0.5 KiB"


def test_host_idle_recovery_is_queued_reported_and_printed(client: TestClient, session: Session) -> None:
    """`test: hir`: bursts and wait states are its own (422 naming the field on another test), a
    scale shortens and thins its bursts, a host whose runtime limit is shorter than a return to
    baseline refuses it naming that phase; its stored result reports every burst (API, CSV, the
    review PDF's page)."""
    u = create_user(session)
    a = create_agent(session, team=u.team, inventory=INVENTORY_PTS)
    bad = {"kind": "pts", "pts": {"test": "iops", "bursts": 10}}
    r = _queue(client, u, a, workload=bad)
    assert r.status_code == 422 and r.json()["detail"][0]["field"] == "workload.pts.bursts", r.text
    r = _queue(client, u, a, workload={"kind": "pts", "pts": {"test": "hir", "wait_states": [4]}})
    assert r.status_code == 422 and r.json()["detail"][0]["field"] == "workload.pts.wait_states", r.text
    r = _queue(client, u, a, workload={"kind": "pts", "pts": {"test": "hir"}}, scale=0.05)
    assert r.status_code == 201, r.text
    p = r.json()["workload"]["pts"]
    assert (p["round_s"], p["burst_s"], p["bursts"]) == (3, 1, 18)
    assert r.json()["name"].startswith("SNIA PTS hir (short trial)")
    limited = {
        **INVENTORY_PTS,
        "policy": {**INVENTORY_PTS["policy"], "limits": {"max_runtime_s": 600}},
    }
    b = create_agent(session, team=u.team, inventory=limited)
    r = _queue(client, u, b, workload={"kind": "pts", "pts": {"test": "hir"}})
    assert r.status_code == 422 and "return to baseline" in r.text, r.text  # 1,800 s > 600 s

    run_id = _stored(client, session, u, a, HIR_RECORDED)
    assert client.get(f"/api/v1/runs/{run_id}", headers=u.headers).json()["pts"]["test"] == "hir"
    body = client.get(f"/api/v1/runs/{run_id}/pts", headers=u.headers).json()
    assert body["preconditioning_applies"] is False and body["preconditioning_bytes"] == 0
    h = body["hir"]
    stored = HIR_RECORDED["pts"]["hir"]
    assert [(s["kind"], s["wait_state"]) for s in h["segments"]] == [
        (s["kind"], s["wait_state"]) for s in stored["segments"]
    ]
    assert [s["wait_state"] for s in h["segments"] if s["kind"] == "wait"] == [1, 2, 3, 5, 10]
    first = h["segments"][0]
    assert [pt["iops"] for pt in first["points"]] == [pt["iops"] for pt in stored["segments"][0]["points"]]
    assert h["preconditioned_iops"] == body["window"]["average"]
    csv = client.get(f"/api/v1/runs/{run_id}/pts?format=csv", headers=u.headers).text
    assert "section,host idle recovery" in csv and "none (from the purged state)" in csv
    assert csv.count("\nwait,1,") == 1 + stored["bursts"]  # its average, then every burst

    from types import SimpleNamespace

    from backend.review import pts_pages

    rep = _report(HIR_RECORDED)
    c = SimpleNamespace(name="hir", model="ssd", run_id=rep.run_id)
    html = pts_pages.section([c], {rep.run_id: rep})  # type: ignore[list-item]
    assert "Host Idle Recovery" in html and "IOPS per burst over time" in html
    assert "WS10: 10 s idle" in html and "baseline after WS1" in html
    assert "none: the test starts from the purged state" in html
    assert "preconditioning: steady state" in html


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=10,
)
_SEGMENT_KEYS = st.sampled_from(["kind", "wait_state", "idle_s", "points", "average_iops", "x"])


@given(
    st.dictionaries(st.sampled_from(["burst_s", "bursts", "segments", "x"]), _JSON, max_size=4),
    st.lists(
        st.dictionaries(_SEGMENT_KEYS, _JSON | st.sampled_from(["wait", "baseline", 1, 5.0]), max_size=6),
        max_size=3,
    ),
)
@settings(max_examples=40, deadline=None)
def test_a_stored_hir_section_reads_or_is_left_out_never_an_error(
    hir: dict[str, Any], segments: list[Any]
) -> None:
    """The `hir` section is the agent's text: whatever it holds, the server reads the section
    (and reports it) or reads no PTS result at all (read_doc: None), never an error."""
    from backend.pts import service

    d = copy.deepcopy(HIR_RECORDED["pts"])
    d["hir"] = {**hir, **({"segments": segments} if segments else {})}
    doc = service.read_doc(d)
    if doc is not None:
        service.to_csv(service.report(uuid.uuid4(), doc))
