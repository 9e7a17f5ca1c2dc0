"""Schedules: recurring campaigns claimed slot by slot by the worker's tick.

The tick is called with a chosen `now` (no test waits for a clock); the double-claim test runs two
ticks at once on two real connections to PostgreSQL."""

import itertools
import threading
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from fastapi.testclient import TestClient
from sqlalchemy import Engine, delete, func, select
from sqlalchemy.orm import Session

from backend.models import Campaign, Role, Run, RunStatus, Schedule, ScheduleSlot, Team
from backend.schedule import repository
from backend.schedule import service as schedule_service
from tests.factories import create_agent, create_run, create_user

JOB = {"name": "r", "rw": "read", "size_bytes": 1 << 20, "bs_bytes": 4096}


def _body(agent_ids: list[uuid.UUID], **rule: Any) -> dict[str, Any]:
    return {
        "name": "nightly",
        **(rule or {"cron": "0 2 * * *", "timezone": "Europe/Berlin"}),
        "campaign": {
            "name": "nightly",
            "workload": {"jobs": [JOB]},
            "targets": [{"agent_id": str(a), "target_path": "/srv/bench"} for a in agent_ids],
        },
    }


def test_cron_instants_follow_the_time_zone_across_daylight_saving() -> None:
    after = datetime(2026, 3, 28, 12, tzinfo=UTC)
    got = list(
        itertools.islice(
            schedule_service.instants(
                cron="30 2 * * *", every_hours=None, timezone="Europe/Berlin", after=after
            ),
            3,
        )
    )
    # 02:30 does not exist on 29 March in Berlin (clocks go 02:00 -> 03:00): cronsim moves it to 03:00
    assert [t.astimezone(ZoneInfo("Europe/Berlin")).strftime("%d %H:%M %z") for t in got] == [
        "29 03:00 +0200",
        "30 02:30 +0200",
        "31 02:30 +0200",
    ]
    assert all(t.tzinfo is not None and t.utcoffset() == timedelta(0) for t in got)
    hourly = schedule_service.instants(cron=None, every_hours=6, timezone="UTC", after=after)
    assert next(hourly) == after + timedelta(hours=6)


def test_create_read_and_the_422s_name_the_field(client: TestClient, session: Session) -> None:
    u = create_user(session, role=Role.member)
    a = create_agent(session, team=u.team)
    r = client.post("/api/v1/schedules", json=_body([a.agent.id]), headers=u.headers)
    assert r.status_code == 201, r.text
    s = r.json()
    assert s["team_id"] == str(u.team.id) and s["runs_per_slot"] == 1 and s["enabled"]
    berlin = [datetime.fromisoformat(t).astimezone(ZoneInfo("Europe/Berlin")) for t in s["upcoming"]]
    assert len(berlin) == 3 and {(t.hour, t.minute) for t in berlin} == {(2, 0)}
    assert datetime.fromisoformat(s["next_slot_at"]) == datetime.fromisoformat(s["upcoming"][0])
    assert session.scalar(select(func.count()).select_from(Run).where(Run.agent_id == a.agent.id)) == 0

    cases: list[tuple[dict[str, Any], str]] = [
        ({"cron": "61 * * * *"}, "cron"),
        ({"cron": "0 0 2 * * *"}, "cron"),
        ({"cron": "0 2 * * *", "timezone": "Mars/Olympus"}, "timezone"),
        ({"cron": "0 2 * * *", "every_hours": 3}, "body"),
        ({"every_hours": 0}, "every_hours"),
    ]
    for rule, field in cases:
        r = client.post("/api/v1/schedules", json=_body([a.agent.id], **rule), headers=u.headers)
        assert r.status_code == 422, (rule, r.text)
        assert any(d["field"].startswith(field) for d in r.json()["detail"]), (rule, r.json())
    # the campaign is checked as POST /campaigns checks it, its fields under campaign.*
    bad = _body([a.agent.id])
    bad["campaign"]["targets"][0]["target_path"] = "/not/allowed"
    r = client.post("/api/v1/schedules", json=bad, headers=u.headers)
    assert r.status_code == 422, r.text
    assert r.json()["detail"][0]["field"].startswith("campaign.targets.0"), r.json()
    assert session.scalar(select(func.count()).select_from(Run).where(Run.agent_id == a.agent.id)) == 0
    viewer = create_user(session, role=Role.viewer, team=u.team)
    assert (
        client.post("/api/v1/schedules", json=_body([a.agent.id]), headers=viewer.headers).status_code == 403
    )


def test_a_tick_queues_a_due_slot_once_and_skips_busy_and_offline_agents(
    client: TestClient, session: Session
) -> None:
    u = create_user(session, role=Role.member)
    free, busy, gone = (create_agent(session, team=u.team) for _ in range(3))
    gone.agent.online = False
    create_run(session, agent=busy.agent, status=RunStatus.running)
    body = _body([free.agent.id, busy.agent.id, gone.agent.id], every_hours=6)
    sid = uuid.UUID(client.post("/api/v1/schedules", json=body, headers=u.headers).json()["id"])
    s = session.get(Schedule, sid)
    assert s is not None
    first = s.next_slot_at
    assert schedule_service.tick(session, now=first - timedelta(seconds=1)) == []  # not due yet

    done = schedule_service.tick(session, now=first + timedelta(seconds=5))
    assert [(d.slot_at, d.status) for d in done] == [(first, "queued")]
    slot = done[0]
    reasons = {d["agent_id"]: d["reason"] for d in slot.skipped_targets}
    assert reasons == {
        str(busy.agent.id): "the agent is busy with another run",
        str(gone.agent.id): "the agent is offline",
    }
    runs = session.scalars(select(Run).where(Run.campaign_id == slot.campaign_id)).all()
    assert [(r.agent_id, r.status) for r in runs] == [(free.agent.id, RunStatus.queued)]
    assert s.next_slot_at == first + timedelta(hours=6)
    # the same instant again (a late second tick): nothing more
    assert schedule_service.tick(session, now=first + timedelta(seconds=6)) == []

    # every target taken: the slot is skipped with the reasons
    create_run(session, agent=free.agent, status=RunStatus.assigned)
    done = schedule_service.tick(session, now=s.next_slot_at)
    assert [d.status for d in done] == ["skipped"]
    assert done[0].reason is not None and "no target was free" in done[0].reason
    assert "offline" in done[0].reason and "busy" in done[0].reason
    r = client.get(f"/api/v1/schedules/{sid}/slots", headers=u.headers)
    assert [x["status"] for x in r.json()["items"]] == ["skipped", "queued"]
    assert (
        client.get(f"/api/v1/schedules/{sid}", headers=u.headers).json()["last_slot"]["status"] == "skipped"
    )


def test_missed_slots_are_recorded_and_only_the_latest_runs(client: TestClient, session: Session) -> None:
    u = create_user(session, role=Role.member)
    a = create_agent(session, team=u.team)
    sid = uuid.UUID(
        client.post("/api/v1/schedules", json=_body([a.agent.id], every_hours=1), headers=u.headers).json()[
            "id"
        ]
    )
    s = session.get(Schedule, sid)
    assert s is not None
    first = s.next_slot_at
    done = schedule_service.tick(session, now=first + timedelta(hours=3, minutes=1))  # the worker was down
    assert [(d.slot_at - first, d.status) for d in done] == [
        (timedelta(hours=0), "skipped"),
        (timedelta(hours=1), "skipped"),
        (timedelta(hours=2), "skipped"),
        (timedelta(hours=3), "queued"),
    ]
    assert all(d.reason and d.reason.startswith("missed") for d in done[:3])
    assert s.next_slot_at == first + timedelta(hours=4)


def test_paused_schedules_and_departed_creators_queue_nothing(client: TestClient, session: Session) -> None:
    u = create_user(session, role=Role.member)
    admin = create_user(session, role=Role.admin, team=u.team)
    a = create_agent(session, team=u.team)
    sid = client.post("/api/v1/schedules", json=_body([a.agent.id], every_hours=2), headers=u.headers).json()[
        "id"
    ]
    r = client.patch(f"/api/v1/schedules/{sid}", json={"enabled": False}, headers=u.headers)
    assert r.status_code == 200 and r.json()["enabled"] is False
    s = session.get(Schedule, uuid.UUID(sid))
    assert s is not None
    assert schedule_service.tick(session, now=s.next_slot_at + timedelta(days=1)) == []
    assert (
        client.patch(f"/api/v1/schedules/{sid}", json={"enabled": True}, headers=admin.headers).status_code
        == 200
    )
    u.user.is_active = False  # deactivated: the schedule must not act in their name
    session.flush()
    done = schedule_service.tick(session, now=s.next_slot_at)
    assert [d.status for d in done] == ["skipped"] and "no longer in its team" in (done[0].reason or "")
    assert (
        session.scalar(select(func.count()).select_from(Campaign).where(Campaign.team_id == u.team.id)) == 0
    )
    # a member deletes only their own schedules; an admin any of the team's
    other = create_user(session, role=Role.member, team=u.team)
    assert client.delete(f"/api/v1/schedules/{sid}", headers=other.headers).status_code == 403
    assert client.delete(f"/api/v1/schedules/{sid}", headers=admin.headers).status_code == 204
    # the slot history goes with it
    assert (
        session.scalar(select(func.count()).select_from(ScheduleSlot).where(ScheduleSlot.id == done[0].id))
        == 0
    )


def test_two_ticks_at_once_queue_one_slot_once(engine: Engine) -> None:
    """Two beat processes (two workers running the tick at the same instant): one campaign."""
    with Session(engine) as setup:
        u = create_user(setup, role=Role.member)
        a = create_agent(setup, team=u.team)
        from backend.campaign.schemas import CampaignCreate

        s = Schedule(
            team_id=u.team.id,
            name="race",
            every_hours=1,
            timezone="UTC",
            campaign=CampaignCreate.model_validate(_body([a.agent.id])["campaign"]).model_dump(mode="json"),
            enabled=True,
            next_slot_at=datetime(2026, 1, 1, tzinfo=UTC),
            created_by=u.user.id,
        )
        setup.add(s)
        setup.commit()
        sid, team_id = s.id, u.team.id
    try:
        barrier = threading.Barrier(2)
        results: list[int] = []
        errors: list[BaseException] = []

        def one_tick() -> None:
            try:
                with Session(engine) as session:
                    barrier.wait(timeout=10)
                    results.append(
                        len(schedule_service.tick(session, now=datetime(2026, 1, 1, 0, 0, 30, tzinfo=UTC)))
                    )
                    session.commit()
            except BaseException as exc:  # noqa: BLE001 - reported below
                errors.append(exc)

        threads = [threading.Thread(target=one_tick) for _ in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=30)
        assert not errors, errors
        assert sorted(results) == [0, 1]
        with Session(engine) as check:
            slots = check.scalars(select(ScheduleSlot).where(ScheduleSlot.schedule_id == sid)).all()
            assert [(x.slot_at, x.status) for x in slots] == [(datetime(2026, 1, 1, tzinfo=UTC), "queued")]
            assert (
                check.scalar(select(func.count()).select_from(Campaign).where(Campaign.team_id == team_id))
                == 1
            )
            # and the slot's unique key holds on its own, whatever locks a tick took
            again = repository.claim_slot(
                check, sid, datetime(2026, 1, 1, tzinfo=UTC), status="queued", skipped_targets=[]
            )
            assert again is None
            check.rollback()
    finally:
        with Session(engine) as cleanup:
            cleanup.execute(delete(Team).where(Team.id == team_id))
            cleanup.commit()


def _set_body(team_id: uuid.UUID, **target_set: Any) -> dict[str, Any]:
    return {
        "name": "nightly everywhere",
        "every_hours": 24,
        "campaign": {
            "name": "nightly everywhere",
            "workload": {"jobs": [JOB]},
            "target_set": {"team_id": str(team_id), **target_set},
        },
    }


def _inventory(*targets: dict[str, Any]) -> dict[str, Any]:
    from tests.factories import INVENTORY

    return {**INVENTORY, "policy": {**INVENTORY["policy"], "targets": list(targets)}}


def test_a_target_set_chooses_every_agents_targets_at_each_slot(client: TestClient, session: Session) -> None:
    """ "Nightly on every agent's targets": the targets are those the hosts list when the slot comes
    (an agent enrolled after the schedule is in its next slot), of the kinds asked; offline and
    busy agents are left out with the reason, as for a list of targets."""
    u = create_user(session, role=Role.member)
    one = create_agent(
        session,
        team=u.team,
        name="a-one",
        inventory=_inventory(
            {"path": "/srv/bench", "kind": "directory", "writable": True},
            {"path": "/dev/disk/by-id/nvme-X", "kind": "device", "writable": False},
        ),
    )
    off = create_agent(session, team=u.team, name="b-off", online=False)
    r = client.post("/api/v1/schedules", json=_set_body(u.team.id), headers=u.headers)
    assert r.status_code == 201, r.text
    assert r.json()["runs_per_slot"] is None  # chosen per slot
    sid = uuid.UUID(r.json()["id"])
    s = session.get(Schedule, sid)
    assert s is not None
    assert session.scalar(select(func.count()).select_from(Run).where(Run.team_id == u.team.id)) == 0

    slot = schedule_service.tick(session, now=s.next_slot_at)[0]
    runs = session.scalars(select(Run).where(Run.campaign_id == slot.campaign_id)).all()
    # directories only (the default kind): the device stays out; the offline agent's targets too
    assert [(r.agent_id, r.target_path) for r in runs] == [(one.agent.id, "/srv/bench")]
    assert slot.skipped_targets == [
        {"agent_id": str(off.agent.id), "target_path": p, "reason": "the agent is offline"}
        for p in ("/srv/bench", "/srv/a", "/srv/b", "/dev/shm/x", "/dev/shm/b")
    ]
    assert slot.reason == "5 of 6 targets left out"

    # the next slot sees what the hosts list then: a new agent, the old one back online, and
    # the first one busy with the run the last slot queued
    off.agent.online = True
    new = create_agent(
        session,
        team=u.team,
        name="c-new",
        inventory=_inventory({"path": "/srv/new", "kind": "directory", "writable": True}),
    )
    runs[0].status = RunStatus.running
    session.flush()
    slot = schedule_service.tick(session, now=s.next_slot_at)[0]
    runs = session.scalars(select(Run).where(Run.campaign_id == slot.campaign_id)).all()
    assert sorted((r.agent_id == new.agent.id, r.target_path) for r in runs) == sorted(
        [(False, p) for p in ("/srv/bench", "/srv/a", "/srv/b", "/dev/shm/x", "/dev/shm/b")]
        + [(True, "/srv/new")]
    )
    assert slot.skipped_targets == [
        {
            "agent_id": str(one.agent.id),
            "target_path": "/srv/bench",
            "reason": "the agent is busy with another run",
        }
    ]

    # narrowed to one agent and to devices: its read-only device is read (a read workload)
    body = _set_body(u.team.id, agent_ids=[str(one.agent.id)], kinds=["device"])
    sid2 = uuid.UUID(client.post("/api/v1/schedules", json=body, headers=u.headers).json()["id"])
    runs[0].status = RunStatus.succeeded
    for r in session.scalars(select(Run).where(Run.agent_id == one.agent.id)):
        r.status = RunStatus.succeeded
    session.flush()
    s2 = session.get(Schedule, sid2)
    assert s2 is not None
    slot = schedule_service.tick(session, now=s2.next_slot_at)[-1]
    runs = session.scalars(select(Run).where(Run.campaign_id == slot.campaign_id)).all()
    assert [(r.agent_id, r.target_path) for r in runs] == [(one.agent.id, "/dev/disk/by-id/nvme-X")]


def test_a_target_set_leaves_out_what_the_host_refuses_and_its_422s(
    client: TestClient, session: Session
) -> None:
    """The host decides: a target its policy refuses for this workload (a read-only file, a write
    job) is left out with the host's reason, the rest queued; a set never writes raw devices."""
    u = create_user(session, role=Role.member)
    a = create_agent(
        session,
        team=u.team,
        inventory=_inventory(
            {"path": "/srv/bench", "kind": "directory", "writable": True},
            {"path": "/srv/data.bin", "kind": "file", "writable": False},
        ),
    )
    write = {**JOB, "rw": "write"}
    body: dict[str, Any] = {
        "name": "everywhere",
        "workload": {"jobs": [write]},
        "target_set": {"team_id": str(u.team.id), "kinds": ["directory", "file"]},
    }
    plan = client.post("/api/v1/campaigns/plan", json=body, headers=u.headers).json()
    assert plan["per_slot"] is True and plan["targets"] == 2 and plan["runs"] == 2, plan
    r = client.post("/api/v1/campaigns", json=body, headers=u.headers)
    assert r.status_code == 201, r.text
    c = r.json()
    assert len(c["run_ids"]) == 1
    (left,) = c["targets_left_out"]
    assert left["agent_id"] == str(a.agent.id) and left["target_path"] == "/srv/data.bin"
    assert "host policy" in left["reason"], left
    # nothing the host allows: a 422 naming target_set, nothing queued
    body["target_set"]["kinds"] = ["file"]
    before = session.scalar(select(func.count()).select_from(Run).where(Run.team_id == u.team.id))
    r = client.post("/api/v1/campaigns", json=body, headers=u.headers)
    assert r.status_code == 422 and r.json()["detail"][0]["field"] == "target_set", r.text
    assert session.scalar(select(func.count()).select_from(Run).where(Run.team_id == u.team.id)) == before

    stranger = create_user(session, role=Role.member)
    theirs = create_agent(session, team=stranger.team)
    viewer = create_user(session, role=Role.viewer, team=u.team)
    ok = _set_body(u.team.id)
    cases: list[tuple[dict[str, Any], str]] = [
        ({"targets": [{"agent_id": str(a.agent.id), "target_path": "/srv/bench"}]}, "campaign"),  # both
        ({"destructive": True}, "campaign"),
        ({"target_set": {"team_id": str(stranger.team.id)}}, "campaign.target_set.team_id"),
        (
            {"target_set": {"team_id": str(u.team.id), "agent_ids": [str(theirs.agent.id)]}},
            "campaign.target_set.agent_ids.0",
        ),
        ({"target_set": {"team_id": str(u.team.id), "kinds": ["tape"]}}, "campaign.target_set.kinds"),
    ]
    for change, field in cases:
        bad = {**ok, "campaign": {**ok["campaign"], **change}}
        r = client.post("/api/v1/schedules", json=bad, headers=u.headers)
        assert r.status_code == 422, (change, r.text)
        assert any(d["field"].startswith(field) for d in r.json()["detail"]), (change, r.json())
    assert client.post("/api/v1/schedules", json=ok, headers=viewer.headers).status_code == 403
    # a viewer sees what a set would take (the plan), queues nothing
    r = client.post("/api/v1/campaigns/plan", json=ok["campaign"], headers=viewer.headers)
    assert r.status_code == 200 and r.json()["per_slot"] is True, r.text
