"""GET /runs/{id}/system: what a run ran on and its validity flags, for the run page (issue 12)."""

import copy

from fastapi.testclient import TestClient
from sqlalchemy.orm import Session

from backend.workload.builtin import QUICK
from tests.factories import INVENTORY, create_agent, create_result, create_run, create_user


def _inventory(**extra: object) -> dict[str, object]:
    inv = copy.deepcopy(INVENTORY)
    inv.update({"os": {"kernel": "6.1.0-42-amd64", "distro": "Debian 12"}, "mem_bytes": 8 * 1024**3})
    inv.update(extra)
    return inv


def test_a_directory_run_names_host_device_fs_and_flags(
    client: TestClient, session: Session
) -> None:
    u = create_user(session)
    a = create_agent(session, team=u.team, inventory=_inventory(virtualization="kvm"))
    run = create_run(session, agent=a.agent)  # quick: 3 s jobs, direct I/O, on / (ext4 on vda)
    create_result(session, run=run, jobs=[{"name": "randread-4k", "rw": "randread", "bs_bytes": 4096}])
    r = client.get(f"/api/v1/runs/{run.id}/system", headers=u.headers)
    assert r.status_code == 200, r.text
    s = r.json()
    assert s["hostname"] == "host-a" and s["kernel"] == "6.1.0-42-amd64" and s["virtualization"] == "kvm"
    assert s["device_model"] == "virtio disk" and s["fstype"] == "ext4"
    assert s["mountpoint"] == "/" and s["mount_options"] == "rw,relatime"
    assert s["cache"] == "direct"
    flags = [f["flag"] for f in s["validity"]]
    assert "virtualized" in flags and "short_run" in flags
    assert "buffered_device" not in flags and "working_set_below_ram" not in flags
    # the same rules as the compare page: one place computes them
    c = client.get(f"/api/v1/compare?runs={run.id}", headers=u.headers).json()
    assert [f["flag"] for f in c["validity"][str(run.id)]] == flags


def test_buffered_io_on_a_block_device_is_flagged_first(client: TestClient, session: Session) -> None:
    u = create_user(session)
    a = create_agent(session, team=u.team, inventory=_inventory(virtualization="none"))
    spec = QUICK.model_dump(mode="json")
    for j in spec["jobs"]:
        j["direct"] = False
    run = create_run(session, agent=a.agent, target_path="/dev/vda")
    run.workload_spec = spec
    session.flush()
    s = client.get(f"/api/v1/runs/{run.id}/system", headers=u.headers).json()
    assert s["cache"] == "buffered"
    assert s["validity"][0]["flag"] == "buffered_device"
    assert "virtualized" not in [f["flag"] for f in s["validity"]]


def test_mixed_cache_and_an_empty_inventory(client: TestClient, session: Session) -> None:
    u = create_user(session)
    a = create_agent(session, team=u.team, inventory={})
    spec = QUICK.model_dump(mode="json")
    spec["jobs"][0]["direct"] = False
    run = create_run(session, agent=a.agent)
    run.workload_spec = spec
    session.flush()
    s = client.get(f"/api/v1/runs/{run.id}/system", headers=u.headers).json()
    assert s["cache"] == "mixed"
    assert s["hostname"] is None and s["kernel"] is None and s["mem_bytes"] is None


def test_another_teams_run_is_not_found(client: TestClient, session: Session) -> None:
    u, stranger = create_user(session), create_user(session)
    run = create_run(session, agent=create_agent(session, team=u.team).agent)
    assert client.get(f"/api/v1/runs/{run.id}/system", headers=stranger.headers).status_code == 404
    assert client.get(f"/api/v1/runs/{run.id}/system").status_code == 401
