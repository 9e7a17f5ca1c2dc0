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
