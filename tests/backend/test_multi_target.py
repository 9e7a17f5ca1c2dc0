"""Multi-target runs: one run on several targets of one agent at once. The request's checks
(422 naming the field), the host policy on every target with the host-wide limits shared, one
run holding each device, the lease's targets, and the stored per-target results with the
combined figure (bytes summed, rates over the longest runtime, percentiles from merged bins)."""

import copy
import uuid
from typing import Any

import pytest
from fastapi.testclient import TestClient
from iowatt_policy import MAX_TARGETS
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from backend.models import RunTarget
from backend.result.combine import combine
from backend.run import repository as run_repo
from backend.run import service as run_service
from tests.factories import INVENTORY, MiB, UserCtx, create_agent, create_run, create_user, engine_document

MULTI = {**INVENTORY, "capabilities": {**INVENTORY["capabilities"], "multi_target": True}}


def _body(agent_id: uuid.UUID, targets: list[Any], **over: Any) -> dict[str, Any]:
    job = {"name": "j", "rw": "randread", "bs_bytes": 4096, "size_bytes": 4 * MiB, "runtime_s": 1}
    return {
        "agent_id": str(agent_id),
        "targets": [t if isinstance(t, dict) else {"target_path": t} for t in targets],
        "workload": {"jobs": [job]},
        **over,
    }


def _field(r: Any) -> str:
    assert r.status_code == 422, r.text
    return str(r.json()["detail"][0]["field"])


@pytest.fixture
def user(session: Session) -> UserCtx:
    return create_user(session)


def test_a_request_names_the_field_it_refuses(client: TestClient, session: Session, user: UserCtx) -> None:
    a = create_agent(session, team=user.team, inventory=MULTI)
    other = create_agent(session, team=user.team, inventory=MULTI)
    post = lambda b: client.post("/api/v1/runs", json=b, headers=user.headers)  # noqa: E731
    assert _field(post(_body(a.agent.id, ["/srv/a", "/dev/shm/x", "/srv/a"]))) == "targets.2.target_path"
    mixed = [{"target_path": "/srv/a"}, {"target_path": "/dev/shm/x", "agent_id": str(other.agent.id)}]
    assert _field(post(_body(a.agent.id, mixed))) == "targets.1.agent_id"
    many = [f"/srv/t{i}" for i in range(MAX_TARGETS + 1)]
    assert _field(post(_body(a.agent.id, many))).startswith("targets")
    assert _field(post({**_body(a.agent.id, ["/srv/a"]), "target_path": "/srv/a"})) == "targets"
    neither = _body(a.agent.id, ["/srv/a"])
    del neither["targets"]
    assert _field(post(neither)) == "target_path"
    postmark = _body(
        a.agent.id, ["/srv/a", "/dev/shm/x"], workload={"kind": "postmark", "jobs": [], "postmark": {}}
    )
    assert _field(post(postmark)) == "workload.kind"
    old = create_agent(session, team=user.team)  # reports no multi_target capability
    assert _field(post(_body(old.agent.id, ["/srv/a", "/dev/shm/x"]))) == "targets"
    # the single-target shape is unchanged and answers no targets
    single = {k: v for k, v in _body(a.agent.id, ["/srv/a"]).items() if k != "targets"}
    r = post({**single, "target_path": "/srv/a"})
    assert r.status_code == 201, r.text
    assert r.json()["targets"] == [] and r.json()["combined"] is None


def test_the_host_policy_judges_every_target_with_shared_limits(
    client: TestClient, session: Session, user: UserCtx
) -> None:
    inv = copy.deepcopy(MULTI)
    inv["policy"]["limits"] = {"max_threads": 8}
    a = create_agent(session, team=user.team, inventory=inv)
    post = lambda b: client.post("/api/v1/runs", json=b, headers=user.headers)  # noqa: E731
    r = post(_body(a.agent.id, ["/srv/a", "/srv/nowhere"]))
    assert _field(r) == "targets.1.target_path"
    assert r.json()["error"] == "host_policy_refused"
    b = _body(a.agent.id, ["/srv/a", "/dev/shm/x"])
    b["workload"]["jobs"][0]["numjobs"] = 5  # 5 threads on each: 10 at once, over the host's 8
    r = post(b)
    assert r.status_code == 422 and "numjobs" in _field(r), r.text
    single = {k: v for k, v in b.items() if k != "targets"} | {"target_path": "/srv/a"}
    assert post(single).status_code == 201  # 5 on one target is within 8
    b["workload"]["jobs"][0]["numjobs"] = 4
    assert post(b).status_code == 201


def test_a_multi_target_run_holds_each_device(client: TestClient, session: Session, user: UserCtx) -> None:
    a = create_agent(session, team=user.team, inventory=MULTI)
    r = client.post("/api/v1/runs", json=_body(a.agent.id, ["/srv/a", "/dev/shm/x"]), headers=user.headers)
    assert r.status_code == 201, r.text
    run_id = uuid.UUID(r.json()["id"])
    targets = run_repo.targets_of(session, [run_id])[run_id]
    assert [t.target_path for t in targets] == ["/srv/a", "/dev/shm/x"]
    assert len({t.device_id for t in targets}) == 2 and not any(t.held for t in targets)
    shm = targets[1].device_id
    assert run_service.dispatch(session, run_id=run_id) == a.agent.id
    assert all(t.held for t in targets)
    # another agent's run on the device the multi-target run's second target holds waits for it
    b = create_agent(session, team=user.team, inventory=MULTI)
    other = create_run(session, agent=b.agent, target_path="/dev/shm/b")
    other.device_id = shm
    session.flush()
    assert run_service.dispatch(session, run_id=other.id) is None
    # the database refuses a second holder of the device too
    with pytest.raises(IntegrityError), session.begin_nested():
        session.add(
            RunTarget(run_id=other.id, target_index=0, target_path="/dev/shm/b", device_id=shm, held=True)
        )
        session.flush()
    lease = client.post(f"/api/v1/agents/{a.agent.id}/lease?wait_s=0", headers=a.headers).json()["lease"]
    assert lease["target_path"] == "/srv/a" and lease["targets"] == ["/srv/a", "/dev/shm/x"]
    assert client.post(f"/api/v1/runs/{run_id}/cancel", headers=user.headers).status_code == 200
    assert not any(t.held for t in run_repo.targets_of(session, [run_id])[run_id])
    assert run_service.dispatch(session, run_id=other.id) == b.agent.id


def _with_bins(doc: dict[str, Any], values: list[int]) -> dict[str, Any]:
    """The document's read latencies as json+ gives them: bins, with fio's percentiles of them."""
    clat = doc["jobs"][0]["read"]["clat_ns"]
    clat["bins"] = {str(v): 1 for v in values}
    clat["N"] = len(values)
    ordered = sorted(values)
    clat["percentile"] = {
        key: ordered[max(0, -(-int(float(key) * len(values)) // 100) - 1)]
        for key in ("50.000000", "99.000000")
    }
    return doc


def test_merged_bins_give_fios_percentiles() -> None:
    a = _with_bins(engine_document(ios=100), list(range(1000, 1100)))
    b = _with_bins(engine_document(ios=100), list(range(2000, 2100)))
    both = _with_bins(engine_document(ios=200), [*range(1000, 1100), *range(2000, 2100)])
    combined = combine([a, b])
    clat = combined["jobs"][0]["read"]["clat_ns"]
    assert clat["percentile"] == both["jobs"][0]["read"]["clat_ns"]["percentile"]  # as one histogram
    assert clat["percentile"]["50.000000"] == 1099 and clat["percentile"]["99.000000"] == 2097
    assert combined["iowatt"]["combined"]["latency"] == "merged"
    del b["jobs"][0]["read"]["clat_ns"]["bins"]
    assert combine([a, b])["jobs"][0]["read"]["clat_ns"]["percentile"] == {}
    assert combine([a, b])["iowatt"]["combined"]["latency"] == "not_combined"


def test_each_targets_result_is_kept_beside_the_combined_figure(
    client: TestClient, session: Session, user: UserCtx
) -> None:
    a = create_agent(session, team=user.team, inventory=MULTI)
    queued = _dispatched(client, session, a, user)
    run_id = queued["id"]
    lease = client.post(f"/api/v1/agents/{a.agent.id}/lease?wait_s=0", headers=a.headers).json()["lease"]
    lid = lease["lease_id"]
    assert (
        client.post(f"/api/v1/runs/{run_id}/start", json={"lease_id": lid}, headers=a.headers).status_code
        == 200
    )
    fast = engine_document(ios=3000, series_points=2)  # 3,000 I/Os in 2 s
    slow = engine_document(ios=1000, series_points=4)  # 1,000 I/Os in 4 s
    # what the second target's engine opened is a file on vda, not the tmpfs its path suggested
    slow["iowatt"] = {
        "target": {
            "path": "/dev/shm/x/iowatt-run.dat",
            "kind": "file",
            "device": {"name": "vda", "disk": "vda"},
            "fs": {"type": "ext4", "mount_point": "/", "source": "/dev/vda"},
        }
    }
    up: dict[str, Any] = {
        "lease_id": lid,
        "upload_id": str(uuid.uuid4()),
        "engine_exit_code": 0,
        "started_at": "2026-12-05T10:00:00Z",
        "finished_at": "2026-12-05T10:00:05Z",
    }
    url = f"/api/v1/runs/{run_id}/result"
    single = client.put(url, json={**up, "engine_result": fast}, headers=a.headers)
    assert _field(single) == "targets"
    one = client.put(
        url,
        json={**up, "targets": [{"target_index": 0, "engine_result": fast, "engine_exit_code": 0}]},
        headers=a.headers,
    )
    assert _field(one) == "targets"
    targets = [
        {"target_index": 1, "engine_result": slow, "engine_exit_code": 0},
        {"target_index": 0, "engine_result": fast, "engine_exit_code": 0},
    ]
    stored = client.put(url, json={**up, "targets": targets}, headers=a.headers)
    assert stored.status_code == 201, stored.text
    run = client.get(f"/api/v1/runs/{run_id}", headers=user.headers).json()
    assert run["status"] == "succeeded"
    assert [t["target_path"] for t in run["targets"]] == ["/srv/a", "/dev/shm/x"]
    assert run["targets"][1]["device_id"] == run["targets"][0]["device_id"] == run["device_id"]  # both vda
    assert run["targets"][0]["jobs"][0]["read"]["total_ios"] == 3000
    assert run["targets"][1]["jobs"][0]["read"]["total_ios"] == 1000
    read = run["jobs"][0]["read"]
    assert read["total_ios"] == 4000 and read["io_bytes"] == 4000 * 4096
    assert read["iops"] == pytest.approx(1000.0)  # 4,000 I/Os over the longest runtime, 4 s
    assert read["bw_bytes"] == 4000 * 4096 // 4
    assert read["lat_mean_ns"] == pytest.approx(5100.0)
    assert read["clat_p99_ns"] is None  # the documents carry no bins: percentiles not combined
    assert run["combined"]["targets"] == 2 and run["combined"]["latency"] == "not_combined"
    assert "host" in run["combined"]["energy"]
    # the runs page's list (jobs=false): no jobs, the same targets and combined
    (light,) = client.get(
        "/api/v1/runs", params={"jobs": "false", "q": run["name"]}, headers=user.headers
    ).json()["items"]
    assert light["jobs"] == [] and light["combined"] == run["combined"] and light["targets"] == run["targets"]
    doc = client.get(f"/api/v1/runs/{run_id}/result", headers=user.headers).json()["engine_result"]
    assert doc["iowatt"]["combined"]["targets"] == 2
    assert (
        client.put(url, json={**up, "targets": targets}, headers=a.headers).status_code == 200
    )  # idempotent
    rows = run_repo.targets_of(session, [uuid.UUID(run_id)])[uuid.UUID(run_id)]
    assert not any(t.held for t in rows) and rows[1].engine_result == slow


def _dispatched(client: TestClient, session: Session, a: Any, user: UserCtx) -> dict[str, Any]:
    """A multi-target run on /srv/a and /dev/shm/x queued and dispatched to `a`: POST /runs's answer."""
    r = client.post("/api/v1/runs", json=_body(a.agent.id, ["/srv/a", "/dev/shm/x"]), headers=user.headers)
    assert r.status_code == 201, r.text
    run_service.dispatch(session, run_id=uuid.UUID(r.json()["id"]))
    return dict(r.json())


def _stored(client: TestClient, session: Session, a: Any, user: UserCtx, docs: list[dict[str, Any]]) -> str:
    """A multi-target run on /srv/a and /dev/shm/x queued, leased, started and given `docs`."""
    queued = _dispatched(client, session, a, user)
    run_id = queued["id"]
    lease = client.post(f"/api/v1/agents/{a.agent.id}/lease?wait_s=0", headers=a.headers).json()["lease"]
    client.post(f"/api/v1/runs/{run_id}/start", json={"lease_id": lease["lease_id"]}, headers=a.headers)
    up = {
        "lease_id": lease["lease_id"],
        "upload_id": str(uuid.uuid4()),
        "engine_exit_code": 0,
        "started_at": "2026-12-05T10:00:00Z",
        "finished_at": "2026-12-05T10:00:05Z",
        "targets": [
            {"target_index": i, "engine_result": d, "engine_exit_code": 0} for i, d in enumerate(docs)
        ],
    }
    assert client.put(f"/api/v1/runs/{run_id}/result", json=up, headers=a.headers).status_code == 201
    return str(run_id)


def test_compare_can_pick_one_target_of_a_multi_target_run(
    client: TestClient, session: Session, user: UserCtx
) -> None:
    a = create_agent(session, team=user.team, inventory=MULTI)
    first = _stored(client, session, a, user, [engine_document(ios=3000), engine_document(ios=1200)])
    second = _stored(client, session, a, user, [engine_document(ios=3000), engine_document(ios=1200)])
    url = f"/api/v1/compare?runs={first},{second}"

    def read_iops(params: str) -> list[float | None]:
        r = client.get(url + params, headers=user.headers)
        assert r.status_code == 200, r.text
        metrics = r.json()["jobs"][0]["metrics"]
        return next(m["values"] for m in metrics if m["key"] == "read_iops")

    assert read_iops("") == [pytest.approx(1400.0), pytest.approx(1400.0)]  # 4,200 I/Os in 3 s, combined
    assert read_iops(f"&targets={first}:1") == [pytest.approx(400.0), pytest.approx(1400.0)]
    r = client.get(url + f"&targets={first}:1", headers=user.headers).json()
    assert "target 1: /dev/shm/x" in r["columns"][0]["label"]
    assert r["runs"][0]["jobs"][0]["read"]["total_ios"] == 1200
    bad = client.get(url + f"&targets={first}:2", headers=user.headers)
    assert _field(bad) == "targets"
    assert _field(client.get(url + "&targets=nonsense", headers=user.headers)) == "targets"


def test_a_device_a_later_target_uses_is_in_use_like_a_runs_own(
    client: TestClient, session: Session, user: UserCtx
) -> None:
    a = create_agent(session, team=user.team, inventory=MULTI)
    queued = _dispatched(client, session, a, user)
    run_id = queued["id"]
    shm = run_repo.targets_of(session, [uuid.UUID(run_id)])[uuid.UUID(run_id)][1].device_id
    assert shm is not None and str(shm) != queued["device_id"]
    url = f"/api/v1/devices/{shm}"
    for force in ("false", "true"):  # held by the running run's second target: refused even forced
        busy = client.delete(url, params={"force": force}, headers=user.headers)
        assert busy.status_code == 409 and busy.json()["error"] == "device_busy", busy.text
        assert busy.json()["detail"]["runs"] == [run_id]
    listed = client.get("/api/v1/runs", params={"device_id": str(shm)}, headers=user.headers).json()
    assert [x["id"] for x in listed["items"]] == [run_id]  # the runs list finds it by any target
    assert client.post(f"/api/v1/runs/{run_id}/cancel", headers=user.headers).status_code == 200
    used = client.delete(url, headers=user.headers)
    assert used.status_code == 409 and used.json()["error"] == "device_in_use", used.text
    assert used.json()["detail"] == {"run_count": 1, "runs": [run_id]}
    assert client.delete(url, params={"force": "true"}, headers=user.headers).status_code == 204
    run = client.get(f"/api/v1/runs/{run_id}", headers=user.headers).json()
    assert [t["device_id"] for t in run["targets"]] == [run["device_id"], None]  # the first keeps its own
