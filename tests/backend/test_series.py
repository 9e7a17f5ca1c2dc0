"""Series against PostgreSQL: runs join their series once their result is stored, validity and
host facts judged then, changes stored once and queued for notification, and the API."""

import re
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np
import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select
from sqlalchemy.orm import Session

from backend.kit.time import utcnow
from backend.models import (
    Agent,
    Campaign,
    Environment,
    OutboxTask,
    ResultJob,
    Role,
    Run,
    RunResult,
    RunStatus,
    Series,
    SeriesDetection,
    SeriesRun,
)
from backend.series import repository, service
from backend.workload.builtin import QUICK
from tests.factories import UserCtx, create_agent, create_run, create_user
from tests.sql import captured_sql

T0 = datetime(2026, 11, 1, tzinfo=UTC)


def _run(
    session: Session,
    agent: Any,
    i: int,
    iops: float,
    *,
    kernel: str = "6.1.0",
    runtime_s: float = 60.0,
    **columns: Any,
) -> Run:
    """A succeeded run with its result: one read job at `iops`, on `kernel`."""
    run = create_run(session, agent=agent, status=RunStatus.succeeded, name=f"nightly {i}", **columns)
    at = T0 + timedelta(hours=i)
    doc = {
        "fio version": "iowatt-engine-0.1.0",
        "jobs": [{"jobname": "randread"}],
        "iowatt": {"version": "0.1.0", "host": {"kernel": kernel}, "target": {"fs": {"type": "ext4"}}},
    }
    session.add(
        RunResult(
            run_id=run.id,
            upload_id=uuid.uuid4(),
            engine_result=doc,
            engine_exit_code=0,
            agent_version="test",
            started_at=at,
            finished_at=at + timedelta(seconds=runtime_s),
            uploaded_at=at,
        )
    )
    session.add(
        ResultJob(
            run_id=run.id,
            job_index=0,
            name="randread",
            rw="randread",
            bs_bytes=4096,
            runtime_ns=int(runtime_s * 1e9),
            usr_cpu_pct=1.0,
            sys_cpu_pct=2.0,
            read_iops=iops,
            read_bw_bytes=int(iops * 4096),
            read_lat_mean_ns=1e9 / iops,
        )
    )
    session.flush()
    return run


def _history(session: Session, values: list[float], **kw: Any) -> tuple[UserCtx, list[Run]]:
    u = create_user(session)
    agent = create_agent(session, team=u.team).agent
    runs = []
    for i, v in enumerate(values):
        runs.append(_run(session, agent, i, v, **kw.get("per_run", {}).get(i, {})))
        service.track_run(session, run_id=runs[-1].id)
    return u, runs


def _noise(n: int, seed: int, mean: float = 20000.0) -> list[float]:
    return list(np.random.default_rng(seed).normal(mean, mean * 0.02, n))


def test_runs_join_one_series_and_a_regression_is_stored_once_and_queued(session: Session) -> None:
    u, runs = _history(session, _noise(12, 1) + _noise(4, 2, mean=17000.0))
    series = session.scalars(select(Series).where(Series.team_id == u.team.id)).all()
    assert len(series) == 1 and series[0].run_count == 16 and series[0].target_kind == "device"
    found = session.scalars(
        select(SeriesDetection).where(
            SeriesDetection.series_id == series[0].id,
            SeriesDetection.kind == "new_run",
            SeriesDetection.metric == "read_iops",
        )
    ).all()
    assert len(found) == 1, [(d.run_id, d.change_pct) for d in found]
    d = found[0]
    assert d.direction == "regression" and d.run_id in {runs[12].id, runs[13].id}
    assert -20 < d.change_pct < -10 and d.previous_run_id in {runs[11].id, runs[12].id}
    # latency went up with it: a regression of a lower-is-better metric
    lat = session.scalars(
        select(SeriesDetection).where(
            SeriesDetection.metric == "read_lat_mean_ns", SeriesDetection.kind == "new_run"
        )
    ).all()
    assert [x.direction for x in lat if x.series_id == series[0].id] == ["regression"]
    queued = session.scalars(
        select(OutboxTask.kwargs).where(OutboxTask.name == "series.detection_stored")
    ).all()
    ids = {
        str(x.id)
        for x in session.scalars(select(SeriesDetection).where(SeriesDetection.series_id == series[0].id))
    }
    assert ids <= {k["detection_id"] for k in queued}
    assert service.track_run(session, run_id=runs[-1].id) == [series[0].id]  # again: nothing new
    assert session.get(Series, series[0].id).run_count == 16  # type: ignore[union-attr]


def test_a_short_run_is_left_out_and_never_triggers(session: Session) -> None:
    u, runs = _history(session, [*_noise(10, 3), 2000.0], per_run={10: {"runtime_s": 2.0}})
    sid = session.scalars(select(Series.id).where(Series.team_id == u.team.id)).one()
    assert session.scalars(select(SeriesDetection).where(SeriesDetection.series_id == sid)).all() == []
    v = service.run_verdict(session, principal=_principal(u), series_id=sid, run_id=runs[10].id)
    assert v.status == "excluded"
    assert {m.reasons[0] for m in v.metrics} == {"left out: short_run"}


def test_a_kernel_change_starts_a_new_segment_shown_on_the_history(session: Session) -> None:
    values = _noise(8, 4) + _noise(3, 5, mean=14000.0)
    u, runs = _history(session, values, per_run={i: {"kernel": "6.8.0"} for i in range(8, 11)})
    sid = session.scalars(select(Series.id).where(Series.team_id == u.team.id)).one()
    assert session.scalars(select(SeriesDetection).where(SeriesDetection.series_id == sid)).all() == []
    h = service.history(session, principal=_principal(u), series_id=sid, metric="read_iops", job_index=0)
    assert [c.changes for c in h.host_changes] == [{"kernel": ["6.1.0", "6.8.0"]}]
    assert h.host_changes[0].run_id == runs[8].id and h.total_runs == 11 and not h.downsampled
    v = service.run_verdict(session, principal=_principal(u), series_id=sid, run_id=runs[8].id)
    assert v.status == "insufficient_history" and "they changed" in v.metrics[0].reasons[0]


def _principal(u: UserCtx) -> Any:
    from backend.auth.principal import UserPrincipal

    return UserPrincipal(user_id=u.user.id, roles={u.team.id: Role.admin})


def test_the_api_names_pins_archives_acknowledges_and_answers_the_verdict(
    client: TestClient, session: Session
) -> None:
    u, runs = _history(session, _noise(10, 6) + _noise(3, 7, mean=16000.0))
    h = u.headers
    page = client.get("/api/v1/series", headers=h).json()
    assert page["total"] == 1
    sid = page["items"][0]["id"]
    assert page["items"][0]["open_regressions"] >= 1
    assert page["items"][0]["effective_thresholds"]["alpha"] == 1e-5
    r = client.patch(
        f"/api/v1/series/{sid}",
        headers=h,
        json={"name": "nightly randread", "pinned": True, "archived": True},
    )
    assert r.status_code == 200 and r.json()["pinned"] and r.json()["archived_at"]
    assert client.get("/api/v1/series", headers=h).json()["total"] == 0  # archived: not listed by default
    assert (
        client.get("/api/v1/series?archived=true", headers=h).json()["items"][0]["name"] == "nightly randread"
    )
    bad = client.patch(
        f"/api/v1/series/{sid}", headers=h, json={"thresholds": {"lookback": 5, "min_window": 8}}
    )
    assert bad.status_code == 422 and bad.json()["detail"][0]["field"] == "thresholds.min_window"
    bad = client.patch(f"/api/v1/series/{sid}", headers=h, json={"thresholds": {"alpha": 2}})
    assert bad.status_code == 422 and "alpha" in bad.text
    v = client.get(f"/api/v1/series/{sid}/verdict", headers=h, params={"run": str(runs[-1].id)}).json()
    assert v["status"] == "regression"
    iops = next(m for m in v["metrics"] if m["metric"] == "read_iops")
    assert iops["status"] == "regression" and iops["change_pct"] < -10
    det = next(
        d
        for d in client.get(f"/api/v1/series/{sid}/detections", headers=h).json()
        if d["metric"] == "read_iops"
    )
    r = client.patch(
        f"/api/v1/series/{sid}/detections/{det['id']}",
        headers=h,
        json={"status": "acknowledged", "comment": "new firmware"},
    )
    assert (
        r.status_code == 200
        and r.json()["status"] == "acknowledged"
        and r.json()["comment"] == "new firmware"
    )
    # acknowledged: a new baseline, so the run after the change has too little history to judge
    v = client.get(f"/api/v1/series/{sid}/verdict", headers=h, params={"run": str(runs[-1].id)}).json()
    assert next(m for m in v["metrics"] if m["metric"] == "read_iops")["status"] == "insufficient_history"
    hist = client.get(
        f"/api/v1/series/{sid}/history", headers=h, params={"metric": "read_iops", "max_points": 10}
    ).json()
    assert hist["total_runs"] == 13 and hist["downsampled"] and len(hist["points"]) <= 10 + 2
    assert sum(p["runs"] for p in hist["points"]) == 13
    other = create_user(session)
    assert client.get(f"/api/v1/series/{sid}", headers=other.headers).status_code == 404
    viewer = create_user(session, role=Role.viewer, team=u.team)
    assert (
        client.patch(f"/api/v1/series/{sid}", headers=viewer.headers, json={"pinned": False}).status_code
        == 403
    )
    assert (
        client.get(f"/api/v1/series/{sid}/verdict", headers=h, params={"run": str(uuid.uuid4())}).status_code
        == 422
    )
    t = client.put(f"/api/v1/series/thresholds?team_id={u.team.id}", headers=h, json={"min_change_pct": 8})
    assert t.status_code == 200 and t.json()["effective"]["min_change_pct"] == 8
    assert (
        client.get(f"/api/v1/series/{sid}", headers=h).json()["effective_thresholds"]["min_change_pct"] == 8
    )


def test_repeats_are_one_point_with_their_band_and_new_thresholds_search_the_history(
    client: TestClient, session: Session
) -> None:
    """A campaign's repeats are one point of the history (their mean, their low and high); a change
    the thresholds of the time did not call one is found over the history once they change (the
    API queues `series.backfill`; its body runs here)."""
    u = create_user(session)
    agent = create_agent(session, team=u.team).agent
    values = _noise(10, 31) + _noise(8, 32, mean=17000.0)  # a 15 % drop at run 10
    campaigns = [Campaign(team_id=u.team.id, name=f"c{i}", spec={}, created_by=u.user.id) for i in (1, 2)]
    session.add_all(campaigns)
    session.flush()
    runs = []
    for i, v in enumerate(values):
        run = _run(session, agent, i, v)
        if i >= 12:  # runs 12-14 and 15-17: three repeats of one campaign each
            run.campaign_id = campaigns[(i - 12) // 3].id
        runs.append(run)
        service.track_run(session, run_id=run.id)
        if i == 0:  # a series that calls only a change of half its value one
            s = session.scalars(select(Series).where(Series.team_id == u.team.id)).one()
            s.thresholds = {"min_change_pct": 50.0}
            session.flush()
    assert session.scalars(select(SeriesDetection).where(SeriesDetection.series_id == s.id)).all() == []
    h = u.headers
    hist = client.get(f"/api/v1/series/{s.id}/history", headers=h, params={"metric": "read_iops"}).json()
    assert hist["total_runs"] == 18 and not hist["downsampled"]
    assert [p["runs"] for p in hist["points"]] == [1] * 12 + [3, 3]
    band = hist["points"][-1]
    repeats = values[15:]
    assert band["run_id"] == str(runs[15].id)
    assert band["low"] == min(repeats) and band["high"] == max(repeats)
    assert abs(band["value"] - sum(repeats) / 3) < 1e-6
    assert hist["points"][0]["low"] is None

    r = client.patch(f"/api/v1/series/{s.id}", headers=h, json={"thresholds": {"min_change_pct": 5.0}})
    assert r.status_code == 200, r.text
    queued = session.scalars(select(OutboxTask.kwargs).where(OutboxTask.name == "series.backfill")).all()
    assert [q["series_id"] for q in queued] == [str(s.id)]
    found = service.backfill(session, series_id=s.id)
    points = session.scalars(
        select(SeriesDetection).where(
            SeriesDetection.series_id == s.id,
            SeriesDetection.kind == "change_point",
            SeriesDetection.metric == "read_iops",
        )
    ).all()
    assert [d.run_id for d in points] == [runs[10].id] and points[0].direction == "regression"
    assert points[0].parameters["min_change_pct"] == 5.0
    assert service.backfill(session, series_id=s.id) == []  # each change stored once
    assert len(found) >= 1
    admin = create_user(session, role=Role.admin, team=u.team)
    r = client.put(
        "/api/v1/series/thresholds",
        headers=admin.headers,
        params={"team_id": str(u.team.id)},
        json={"z_min": 4},
    )
    assert r.status_code == 200 and r.json()["effective"]["z_min"] == 4
    queued = session.scalars(select(OutboxTask.kwargs).where(OutboxTask.name == "series.backfill")).all()
    assert [q["series_id"] for q in queued] == [str(s.id)] * 2  # the team's series searched again


def test_a_series_narrowed_to_one_metric_tests_and_judges_that_metric_alone(
    client: TestClient, session: Session
) -> None:
    """Narrowed (PATCH metric/job_index), a series' change detection, alerts and verdict consider
    that metric of that job alone; its history still holds every run."""
    u, runs = _history(session, _noise(10, 41))
    sid = session.scalars(select(Series.id).where(Series.team_id == u.team.id)).one()
    r = client.patch(f"/api/v1/series/{sid}", headers=u.headers, json={"metric": "read_lat_mean_ns"})
    assert r.status_code == 200, r.text
    assert r.json()["metric"] == "read_lat_mean_ns" and r.json()["job_index"] is None
    agent = session.get(Agent, runs[0].agent_id)
    for i, v in enumerate(_noise(3, 42, mean=16000.0), start=10):  # a 20 % drop: latency up 25 %
        runs.append(_run(session, agent, i, v))
        service.track_run(session, run_id=runs[-1].id)
    found = session.scalars(select(SeriesDetection.metric).where(SeriesDetection.series_id == sid)).all()
    assert found and set(found) == {"read_lat_mean_ns"}
    v = client.get(f"/api/v1/series/{sid}/verdict", headers=u.headers, params={"run": str(runs[-1].id)})
    assert v.json()["status"] == "regression"
    assert [m["metric"] for m in v.json()["metrics"]] == ["read_lat_mean_ns"]
    hist = client.get(f"/api/v1/series/{sid}/history", headers=u.headers, params={"metric": "read_iops"})
    assert hist.json()["total_runs"] == 13
    r = client.patch(f"/api/v1/series/{sid}", headers=u.headers, json={"job_index": 1})
    assert r.json()["metric"] == "read_lat_mean_ns" and r.json()["job_index"] == 1
    v = client.get(f"/api/v1/series/{sid}/verdict", headers=u.headers, params={"run": str(runs[-1].id)})
    assert v.json()["metrics"] == []  # the runs have no job 1
    r = client.patch(f"/api/v1/series/{sid}", headers=u.headers, json={"metric": None, "job_index": None})
    assert r.json()["metric"] is None and r.json()["job_index"] is None
    bad = client.patch(f"/api/v1/series/{sid}", headers=u.headers, json={"metric": "read_nothing"})
    assert bad.status_code == 422 and "metric" in bad.text


def test_a_series_made_late_gathers_the_runs_stored_before_it_in_batches(
    client: TestClient, session: Session, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Runs stored before their series existed (results kept before series were, say) join it
    when it comes into being, made by a person (POST /series) or by a new run: the first batch at
    once, the rest in `series.gather` tasks (their bodies run here), then `series.backfill` finds
    the step in the history they make. Other workloads, targets and environments stay out; doing
    it again joins nothing."""
    u = create_user(session)
    agent = create_agent(session, team=u.team).agent
    values = _noise(12, 51) + _noise(8, 52, mean=16000.0)  # a 20 % drop at run 12
    runs = [_run(session, agent, i, v) for i, v in enumerate(values)]  # never tracked
    san = Environment(team_id=u.team.id, name="SAN", kind="san")
    session.add(san)
    session.flush()
    spec = {**QUICK.model_dump(mode="json")}
    spec["jobs"] = [{**spec["jobs"][0], "bs_bytes": 8192}]
    strangers = [
        _run(session, create_agent(session, team=u.team).agent, 20, 20000.0),
        _run(session, agent, 21, 20000.0),
        _run(session, agent, 22, 20000.0, environment_id=san.id),
    ]
    strangers[1].workload_spec = spec
    session.flush()
    assert session.scalars(select(Series).where(Series.team_id == u.team.id)).all() == []

    # a person tracks an old run: 201, every earlier run of its identity joins at once (one batch)
    r = client.post("/api/v1/series", headers=u.headers, json={"run_id": str(runs[3].id), "name": "nightly"})
    assert r.status_code == 201, r.text
    for stranger in strangers:  # each its own identity: none of them in this series
        assert session.get(SeriesRun, (uuid.UUID(r.json()["id"]), stranger.id)) is None
    assert r.json()["name"] == "nightly" and r.json()["run_count"] == 20
    sid = uuid.UUID(r.json()["id"])
    assert _take(session, "series.backfill")["series_id"] == str(sid)  # type: ignore[index]  # after commit
    service.backfill(session, series_id=sid)
    assert _change_points(session, sid) == [runs[12].id]
    again = client.post("/api/v1/series", headers=u.headers, json={"run_id": str(runs[5].id), "pinned": True})
    assert again.status_code == 200 and again.json()["id"] == str(sid) and again.json()["pinned"]
    assert again.json()["run_count"] == 20  # nothing joined twice

    # a new run makes the series (dropped here) again, three runs examined per step
    session.delete(session.get(Series, sid))
    session.flush()
    monkeypatch.setattr(service, "GATHER_BATCH", 3)
    new = _run(session, agent, 23, 16100.0)
    (made,) = service.track_run(session, run_id=new.id)
    # the first batch: three runs examined (the other workload's run on this device may be one)
    assert 1 + 2 <= session.get(Series, made).run_count <= 1 + 3  # type: ignore[union-attr]
    steps = 0
    while step := _take(session, "series.gather"):
        after = (datetime.fromisoformat(step["after_at"]), uuid.UUID(step["after_id"]))
        service.gather_more(session, series_id=made, after=after)
        steps += 1
    assert steps >= 20 // 3 and session.get(Series, made).run_count == 21  # type: ignore[union-attr]
    assert _take(session, "series.backfill")["series_id"] == str(made)  # type: ignore[index]
    service.backfill(session, series_id=made)
    assert _change_points(session, made) == [runs[12].id]
    assert service.gather(session, series_id=made, after=None) == (0, None)  # idempotent

    # a run whose result is not stored yet, or another team's, is refused
    queued_run = create_run(session, agent=agent)
    r = client.post("/api/v1/series", headers=u.headers, json={"run_id": str(queued_run.id)})
    assert r.status_code == 422 and r.json()["detail"][0]["field"] == "run_id"
    body = {"run_id": str(new.id)}
    assert client.post("/api/v1/series", headers=create_user(session).headers, json=body).status_code == 404
    viewer = create_user(session, role=Role.viewer, team=u.team)
    assert client.post("/api/v1/series", headers=viewer.headers, json=body).status_code == 403


def test_the_bulk_backfill_joins_every_stored_run_once_without_testing_it_as_new(session: Session) -> None:
    """After an upgrade from a version without series (`iowatt-server series backfill`): the runs
    stored before join their series in batches, in their order, made as needed; none is tested as
    a new run (no `new_run` detection: an old regression pages no one); each series touched gets
    its change-point search, which finds the old step and raises no alert (older than a day). A
    pass stopped after a batch is finished by the next; a third joins nothing; other teams' runs
    stay out with --team."""
    from contextlib import nullcontext

    from backend.alert import repository as alert_repository

    u = create_user(session)
    agent, other = (create_agent(session, team=u.team).agent for _ in range(2))
    values = _noise(12, 61) + _noise(8, 62, mean=16000.0)  # a 20 % drop at run 12
    runs = [_run(session, agent, i, v) for i, v in enumerate(values)]  # stored, never tracked
    others = [_run(session, other, i, 20000.0, runtime_s=2.0 if i == 2 else 60.0) for i in range(3)]
    stranger = create_user(session)
    theirs = _run(session, create_agent(session, team=stranger.team).agent, 0, 20000.0)
    for i, r in enumerate([*runs, *others]):  # one transaction's rows share now(): their order set
        r.created_at = T0 + timedelta(hours=i)
    session.flush()
    seen: list[service.BulkProgress] = []

    def stop_after_one_batch(p: service.BulkProgress) -> None:
        seen.append(p)
        raise KeyboardInterrupt  # the operator's ^C after the first batch's commit

    def one_transaction() -> Any:
        return nullcontext(session)

    with pytest.raises(KeyboardInterrupt):
        service.backfill_stored(one_transaction, team_id=u.team.id, batch=9, progress=stop_after_one_batch)
    assert [(p.examined, p.joined, p.series) for p in seen] == [(9, 9, 1)]
    assert seen[0].up_to is not None
    assert [t["series_id"] for t in iter(lambda: _take(session, "series.backfill"), None)] == [
        str(session.scalars(select(SeriesRun.series_id).where(SeriesRun.run_id == runs[0].id)).one())
    ]  # stopped: what joined is searched all the same

    done = service.backfill_stored(one_transaction, team_id=u.team.id, batch=9, progress=seen.append)
    assert (done.examined, done.joined, done.series) == (14, 14, 2)
    assert [p.examined for p in seen[1:]] == [9, 14]  # progress after each batch
    series_ids = {
        r.id: session.scalars(select(SeriesRun.series_id).where(SeriesRun.run_id == r.id)).one()
        for r in [*runs, *others]
    }
    mine, theirs_series = series_ids[runs[0].id], series_ids[others[0].id]
    assert {series_ids[r.id] for r in runs} == {mine} and {series_ids[r.id] for r in others} == {
        theirs_series
    }
    assert session.get(Series, mine).run_count == 20  # type: ignore[union-attr]
    # validity judged per batch as for any run joining: the 2 s run is left out, the others are not
    excluded = {r.id: session.get(SeriesRun, (series_ids[r.id], r.id)).excluded for r in others}  # type: ignore[union-attr]
    assert [[f["flag"] for f in excluded[r.id]] for r in others] == [[], [], ["short_run"]]
    assert session.scalars(select(SeriesRun).where(SeriesRun.run_id == theirs.id)).all() == []  # --team
    detections = session.scalars(select(SeriesDetection).where(SeriesDetection.series_id == mine)).all()
    assert detections == []  # joined, not tested as new
    queued = sorted(t["series_id"] for t in iter(lambda: _take(session, "series.backfill"), None))
    assert queued == sorted([str(mine), str(theirs_series)])
    for sid in (mine, theirs_series):
        service.backfill(session, series_id=sid)  # the worker's part
    assert _change_points(session, mine) == [runs[12].id]
    assert alert_repository.regressions(session, [u.team.id], utcnow() - timedelta(days=1)) == []
    again = service.backfill_stored(one_transaction, team_id=u.team.id)
    assert (again.examined, again.joined) == (0, 0) and _take(session, "series.backfill") is None


def _change_points(session: Session, series_id: uuid.UUID) -> list[uuid.UUID | None]:
    return list(
        session.scalars(
            select(SeriesDetection.run_id).where(
                SeriesDetection.series_id == series_id,
                SeriesDetection.kind == "change_point",
                SeriesDetection.metric == "read_iops",
            )
        )
    )


def _take(session: Session, name: str) -> dict[str, Any] | None:
    """The oldest queued outbox task of that name, taken off the queue (a worker's part here)."""
    row = session.scalars(
        select(OutboxTask).where(OutboxTask.name == name).order_by(OutboxTask.id).limit(1)
    ).first()
    if row is None:
        return None
    session.delete(row)
    session.flush()
    return dict(row.kwargs)


@pytest.mark.parametrize(
    "doc",
    [
        {  # the engine's own shape, with what a series never reads
            "fio version": "iowatt-engine-0.1.0",
            "jobs": [{"jobname": "randread", "read": {"clat_ns": {"bins": {str(i): i for i in range(500)}}}}],
            "iowatt": {
                "version": "0.1.0",
                "host": {"kernel": "6.1.0", "cpus": 8},
                "target": {"fs": {"type": "xfs", "mount_options": "rw,noatime"}},
            },
        },
        {"fio version": "fio-3.33", "iowatt": {"version": "", "host": None}},  # fio's document
        {"iowatt": [{"host": {"kernel": "6.1.0"}}], "fio version": 3},  # a step that is a list
        {"iowatt": {"host": "6.1.0", "target": {"fs": ["xfs"]}, "version": 0}},
        {
            "iowatt": {
                "host": {"kernel": None},
                "target": {"fs": {"type": {"a": [1]}, "mount_options": ["rw"]}},
            }
        },
        {"iowatt": "0.1.0"},
        {},
    ],
)
def test_a_series_reads_the_facts_of_a_stored_document_as_the_whole_document_says(
    session: Session, doc: dict[str, Any]
) -> None:
    """A series reads only the few values of a stored engine document that its facts are made of
    (`repository.run_with_result`, by their JSON paths): the same facts as the whole document
    gives, whatever a step of the path is (missing, a list, a string, null)."""
    u = create_user(session)
    agent = create_agent(session, team=u.team).agent
    run = create_run(session, agent=agent, status=RunStatus.succeeded)
    session.add(
        RunResult(
            run_id=run.id,
            upload_id=uuid.uuid4(),
            engine_result=doc,
            engine_exit_code=0,
            agent_version="test",
            started_at=T0,
            finished_at=T0 + timedelta(seconds=1),
            uploaded_at=T0,
        )
    )
    session.flush()
    found = repository.run_with_result(session, run.id)
    assert found is not None and found[0] is run and found[1].started_at == T0
    whole = repository.StoredResult(started_at=T0, engine_result=doc)
    device_facts = {"firmware": "FW1"}
    assert service.run_facts(found[1], device_facts) == service.run_facts(whole, device_facts)
    assert repository.run_with_result(session, create_run(session, agent=agent).id) is None  # no result


def test_a_new_series_passes_over_other_workloads_runs_without_reading_them(
    session: Session, connection: Any
) -> None:
    """A series that comes into being examines the device's earlier runs: a run of another
    workload is passed over on its spec (its target and stored document are not read), so the
    statements do not grow with such runs; the runs of its own workload join it."""
    other = {**QUICK.model_dump(mode="json")}
    other["jobs"] = [{**other["jobs"][0], "bs_bytes": 8192}]

    def new_series(strangers: int) -> tuple[list[str], Series]:
        u = create_user(session)
        agent = create_agent(session, team=u.team).agent
        for i in range(2):
            _run(session, agent, i, 20000.0)
        for i in range(strangers):
            _run(session, agent, 10 + i, 20000.0).workload_spec = other
        new = _run(session, agent, 30, 20000.0)
        session.flush()
        with captured_sql(connection, savepoints=False) as statements:
            (made,) = service.track_run(session, run_id=new.id)
            session.flush()
        series = session.get(Series, made)
        assert series is not None
        return statements, series

    alone, series = new_series(0)
    beside, series_beside = new_series(6)
    assert series.run_count == series_beside.run_count == 3  # the new run and its two earlier ones
    assert len(beside) == len(alone), "\n".join(s[:160] for s in beside)
    # no statement reads a stored engine document whole, only values inside it (#>, [...]) or its keys (?)
    whole = [s for s in alone + beside if re.search(r"RUN_RESULTS\.ENGINE_RESULT(?!\s*(#>|->|\?|\[))", s)]
    assert not whole, "\n".join(whole)


def test_the_backfill_command_names_a_bad_team_and_reports_what_it_did(db_url: str) -> None:
    """`iowatt-server series backfill`'s own wiring (the service behind it is tested above): an
    unknown team is a usage error naming --team, a batch outside 1-5000 is refused, and a pass over
    nothing (every run is older than --since) says so on its last line and commits nothing."""
    from typer.testing import CliRunner

    from backend.cli import app

    runner = CliRunner(env={"COLUMNS": "200"})  # typer's error box wraps at the terminal's width
    r = runner.invoke(app, ["series", "backfill", "--team", f"no-such-team-{uuid.uuid4().hex[:8]}"])
    assert r.exit_code == 2 and "--team" in r.output and "no team named" in r.output, r.output
    r = runner.invoke(app, ["series", "backfill", "--batch", "0"])
    assert r.exit_code == 2 and "--batch" in r.output, r.output
    r = runner.invoke(app, ["series", "backfill", "--since", "2999-01-01"])
    assert r.exit_code == 0, r.output
    assert r.output.splitlines()[-1].startswith("done: 0 runs examined, 0 joined 0 series in "), r.output
