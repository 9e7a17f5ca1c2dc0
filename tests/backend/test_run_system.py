"""GET /runs/{id}/system: what a run ran on and its validity flags, for the run page (issue 12)."""

import copy

from fastapi.testclient import TestClient
from sqlalchemy.orm import Session

from backend.run import service as run_service
from backend.workload.builtin import QUICK
from tests.factories import INVENTORY, create_agent, create_result, create_run, create_user


def _inventory(**extra: object) -> dict[str, object]:
    inv = copy.deepcopy(INVENTORY)
    inv.update({"os": {"kernel": "6.1.0-42-amd64", "distro": "Debian 12"}, "mem_bytes": 8 * 1024**3})
    inv.update(extra)
    return inv


def test_a_directory_run_names_host_device_fs_and_flags(client: TestClient, session: Session) -> None:
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
    assert [f.model_dump() for f in run_service.validity(session, run=run)] == s["validity"]


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
    # what a run's series judges (backend/series: run_service.validity, without the whole header)
    assert [f.model_dump() for f in run_service.validity(session, run=run)] == s["validity"]


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


def _running(
    client: TestClient, session: Session, workload: dict[str, object] | None = None
) -> tuple[str, dict[str, str], str, dict[str, str]]:
    from backend.run import service as run_service

    u = create_user(session)
    a = create_agent(session, team=u.team)
    run = create_run(session, agent=a.agent)
    if workload is not None:
        run.workload_spec = workload
    assert run_service.dispatch(session, run_id=run.id) == a.agent.id
    r = client.post(f"/api/v1/agents/{a.agent.id}/lease?wait_s=0", headers=a.headers)
    assert r.status_code == 200, r.text
    lid = r.json()["lease"]["lease_id"]
    assert (
        client.post(f"/api/v1/runs/{run.id}/start", json={"lease_id": lid}, headers=a.headers).status_code
        == 200
    )
    return str(run.id), u.headers, lid, a.headers


def test_progress_names_the_phase_and_keeps_the_engines_reports_for_the_live_chart(
    client: TestClient, session: Session
) -> None:
    run_id, user, lid, agent = _running(client, session)

    def report(job_index: int, job_name: str, iops: float) -> dict[str, object]:
        body = {"lease_id": lid, "job_index": job_index, "job_name": job_name, "percent": 50.0}
        body |= {"elapsed_ns": 10**9, "read_iops": iops, "read_bw_bytes": int(iops * 4096)}
        r = client.post(f"/api/v1/runs/{run_id}/progress", json=body, headers=agent)
        assert r.status_code == 200, r.text
        return dict(client.get(f"/api/v1/runs/{run_id}", headers=user).json()["progress"])

    p = report(0, "idle_before", 0.0)
    assert p["phase"] == "idle_before" and p["samples"] == []  # idle ticks carry no rates
    for k in range(3):
        p = report(0, "randread-4k", 1000.0 + k)
    assert p["phase"] == "job" and p["job_name"] == "randread-4k"
    assert [s["read_iops"] for s in p["samples"]] == [1000.0, 1001.0, 1002.0]
    assert [s["read_bw_bytes"] for s in p["samples"]] == [4096000, 4100096, 4104192]
    t = [s["t_s"] for s in p["samples"]]
    assert t == sorted(t) and t[0] >= 0
    p = report(1, "seqread-1m", 7.0)
    assert p["samples"][-1]["job_index"] == 1 and len(p["samples"]) == 4
    assert report(2, "idle_after", 0.0)["phase"] == "idle_after"


def test_progress_keeps_only_the_last_samples(client: TestClient, session: Session) -> None:
    from backend.run.schemas import PROGRESS_SAMPLES

    run_id, user, lid, agent = _running(client, session)
    body = {"lease_id": lid, "job_index": 0, "job_name": "randread-4k", "percent": 1.0, "elapsed_ns": 1}
    for k in range(PROGRESS_SAMPLES + 5):
        body["read_iops"] = float(k)
        assert client.post(f"/api/v1/runs/{run_id}/progress", json=body, headers=agent).status_code == 200
    samples = client.get(f"/api/v1/runs/{run_id}", headers=user).json()["progress"]["samples"]
    assert len(samples) == PROGRESS_SAMPLES and samples[0]["read_iops"] == 5.0
    assert samples[-1]["read_iops"] == float(PROGRESS_SAMPLES + 4)


def test_a_page_follows_a_run_with_only_the_reports_it_does_not_hold(
    client: TestClient, session: Session
) -> None:
    """GET /runs/{id}/progress: the status and latest report, the samples after since_t_s only."""
    from backend.run.schemas import PROGRESS_SAMPLES

    u = create_user(session)
    queued = create_run(session, agent=create_agent(session, team=u.team).agent)
    r = client.get(f"/api/v1/runs/{queued.id}/progress", headers=u.headers)
    assert r.status_code == 200, r.text
    assert r.json() == {
        "status": "queued",
        "cancel_requested": False,
        "progress": None,
        "samples_kept": PROGRESS_SAMPLES,
    }
    run_id, user, lid, agent = _running(client, session)
    body = {"lease_id": lid, "job_index": 0, "job_name": "randread-4k", "elapsed_ns": 10**9}
    for k in range(3):
        body |= {"percent": 10.0 * (k + 1), "read_iops": 1000.0 + k, "read_bw_bytes": 4096 * (1000 + k)}
        assert client.post(f"/api/v1/runs/{run_id}/progress", json=body, headers=agent).status_code == 200
    whole = client.get(f"/api/v1/runs/{run_id}", headers=user).json()["progress"]
    live = client.get(f"/api/v1/runs/{run_id}/progress", headers=user).json()
    assert live["status"] == "running" and live["cancel_requested"] is False
    assert live["progress"] == whole  # without since_t_s: every kept sample, as the run has them
    t = [s["t_s"] for s in whole["samples"]]
    later = client.get(f"/api/v1/runs/{run_id}/progress?since_t_s={t[1]}", headers=user).json()
    assert later["progress"]["samples"] == whole["samples"][2:]
    assert {k: v for k, v in later["progress"].items() if k != "samples"} == {
        k: v for k, v in whole.items() if k != "samples"
    }
    assert later["progress"]["percent"] == 30.0 and later["progress"]["phase"] == "job"
    none = client.get(f"/api/v1/runs/{run_id}/progress?since_t_s={t[2] + 0.5}", headers=user).json()
    assert none["progress"]["samples"] == [] and none["progress"]["read_iops"] == 1002.0
    client.post(f"/api/v1/runs/{run_id}/cancel", headers=user)
    assert client.get(f"/api/v1/runs/{run_id}/progress", headers=user).json()["cancel_requested"] is True


def test_a_list_that_draws_only_the_bar_gets_no_samples(client: TestClient, session: Session) -> None:
    """GET /runs?samples=false: each running item's progress without its live chart's reports."""
    run_id, user, lid, agent = _running(client, session)
    body = {"lease_id": lid, "job_index": 0, "job_name": "randread-4k", "percent": 5.0, "elapsed_ns": 1}
    for _ in range(3):
        assert client.post(f"/api/v1/runs/{run_id}/progress", json=body, headers=agent).status_code == 200

    def listed(**params: object) -> dict[str, object]:
        items = client.get("/api/v1/runs", params=params, headers=user).json()["items"]
        return dict(next(i for i in items if i["id"] == run_id)["progress"])

    assert len(listed()["samples"]) == 3  # type: ignore[arg-type]
    bare = listed(jobs="false", samples="false")
    assert bare["samples"] == [] and bare["percent"] == 5.0 and bare["job_name"] == "randread-4k"


def test_each_report_carries_the_whole_runs_share_which_never_goes_back(
    client: TestClient, session: Session
) -> None:
    """progress.run_percent: the whole run's share (backend/run/share.py, its cases in
    test_run_share.py), computed at each report for every reader, the CLI's bar included."""
    jobs = [
        dict(QUICK.model_dump(mode="json")["jobs"][0], name=n, runtime_s=s, ramp_time_s=0)
        for n, s in (("a", 10), ("sized", None), ("c", 10))
    ]
    run_id, user, lid, agent = _running(client, session, {**QUICK.model_dump(mode="json"), "jobs": jobs})

    def report(job_index: int, percent: float, elapsed_s: float) -> dict[str, object]:
        body = {"lease_id": lid, "job_index": job_index, "job_name": jobs[job_index]["name"]}
        body |= {"percent": percent, "elapsed_ns": int(elapsed_s * 1e9)}
        assert client.post(f"/api/v1/runs/{run_id}/progress", json=body, headers=agent).status_code == 200
        live = client.get(f"/api/v1/runs/{run_id}/progress", headers=user).json()["progress"]
        return {k: live[k] for k in ("percent", "run_percent", "run_eta_s", "run_eta_at_least")}

    # a half done: 5 of 20 s known, the size-bound job's length unknown (the time left at least 15 s)
    assert report(0, 50.0, 5) == {
        "percent": 50.0,
        "run_percent": 25.0,
        "run_eta_s": 15.0,
        "run_eta_at_least": True,
    }
    assert report(1, 0.0, 0)["run_percent"] == 50.0
    # 10 % of the size-bound job in 5 s: 50 s long, so 15 of 70 s; the bar holds at 50 % meanwhile
    held = report(1, 10.0, 5)
    assert held["run_percent"] == 50.0 and held["run_eta_s"] == 55.0 and held["percent"] == 10.0
    listed = client.get("/api/v1/runs", params={"samples": "false", "jobs": "false"}, headers=user).json()
    assert next(i for i in listed["items"] if i["id"] == run_id)["progress"]["run_percent"] == 50.0
    # a row stored before the field: the report's own percent, the time left unknown
    old = run_service.progress_read(
        {
            "job_index": 0,
            "job_name": "a",
            "percent": 40.0,
            "elapsed_ns": 1,
            "read_iops": 0,
            "read_bw_bytes": 0,
            "write_iops": 0,
            "write_bw_bytes": 0,
            "updated_at": "2026-12-08T00:00:00+00:00",
        }
    )
    assert (old.run_percent, old.run_eta_s, old.run_eta_at_least) == (40.0, None, False)


def test_a_bad_since_is_refused_and_another_teams_run_is_not_found(
    client: TestClient, session: Session
) -> None:
    run_id, user, _, agent = _running(client, session)
    for bad in ("-1", "nan", "inf", "1e999", "yesterday", ""):
        r = client.get(f"/api/v1/runs/{run_id}/progress", params={"since_t_s": bad}, headers=user)
        assert r.status_code == 422, (bad, r.text)
        assert r.json()["detail"][0]["field"] == "since_t_s", (bad, r.text)
    stranger = create_user(session)
    assert client.get(f"/api/v1/runs/{run_id}/progress", headers=stranger.headers).status_code == 404
    assert client.get(f"/api/v1/runs/{run_id}/progress").status_code == 401
    assert client.get(f"/api/v1/runs/{run_id}/progress", headers=agent).status_code == 403


def test_compare_groups_by_target_two_directories_on_one_disk_apart(
    client: TestClient, session: Session
) -> None:
    u = create_user(session)
    a = create_agent(session, team=u.team)
    runs = []
    for target in ("/srv/a", "/srv/a", "/srv/b"):  # both directories on / (vda): one device
        run = create_run(session, agent=a.agent, target_path=target)
        create_result(session, run=run, jobs=[{"name": "randread-4k", "rw": "randread", "bs_bytes": 4096}])
        runs.append(run)
    assert runs[0].device_id == runs[2].device_id
    ids = ",".join(str(r.id) for r in runs)
    by_device = client.get(f"/api/v1/compare?runs={ids}&group_by=device", headers=u.headers).json()
    assert len(by_device["columns"]) == 1
    r = client.get(f"/api/v1/compare?runs={ids}&group_by=target", headers=u.headers)
    assert r.status_code == 200, r.text
    cols = r.json()["columns"]
    assert [c["label"] for c in cols] == [f"/srv/a on {a.agent.name}", f"/srv/b on {a.agent.name}"]
    assert [len(c["run_ids"]) for c in cols] == [2, 1]
    assert cols[0]["key"] == f"{a.agent.id}:/srv/a"
