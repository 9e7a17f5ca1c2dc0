"""The run state machine's server-side transitions (what the worker's tasks call)."""

import uuid
from datetime import timedelta

from fastapi.testclient import TestClient
from sqlalchemy import create_engine
from sqlalchemy.engine import Connection
from sqlalchemy.orm import Session

from backend.agent import repository as agent_repo
from backend.kit.time import utcnow
from backend.models import RunStatus
from backend.run import service as run_service
from tests.factories import create_agent, create_run, create_user, engine_document
from tests.services import Postgres
from tests.sql import captured_sql


def test_dispatch_needs_an_online_idle_agent(session: Session) -> None:
    u = create_user(session)
    offline = create_agent(session, team=u.team, online=False)
    run = create_run(session, agent=offline.agent)
    assert run_service.dispatch(session, run_id=run.id) is None
    assert run.status == RunStatus.queued
    offline.agent.online = True
    assert run_service.dispatch(session, run_id=run.id) == offline.agent.id
    assert run.status == RunStatus.assigned and run.attempt == 1 and run.lease_id is not None
    assert run_service.dispatch(session, run_id=run.id) is None  # idempotent: already assigned


def test_one_run_at_a_time_per_agent_and_device(session: Session) -> None:
    u = create_user(session)
    a = create_agent(session, team=u.team)
    first = create_run(session, agent=a.agent, target_path="/srv/x")
    second = create_run(session, agent=a.agent, target_path="/srv/y")  # same device (vda)
    assert run_service.dispatch(session, run_id=first.id) is not None
    assert run_service.dispatch(session, run_id=second.id) is None
    first.status = RunStatus.succeeded
    session.flush()
    assert run_service.dispatch(session, run_id=second.id) is not None


def test_stale_assigned_runs_requeue_then_fail_and_running_runs_fail(session: Session) -> None:
    u = create_user(session)
    a = create_agent(session, team=u.team)
    run = create_run(session, agent=a.agent)
    past = utcnow() - timedelta(seconds=1)
    for attempt in (1, 2):
        assert run_service.dispatch(session, run_id=run.id) is not None
        run.lease_expires_at = past
        requeued, failed = run_service.expire_stale_leases(session)
        assert (requeued, failed) == ([run.id], [])
        assert run.status == RunStatus.queued and run.attempt == attempt
    assert run_service.dispatch(session, run_id=run.id) is not None
    run.lease_expires_at = past
    assert run_service.expire_stale_leases(session) == ([], [run.id])
    assert run.status == RunStatus.failed and "3 attempts" in (run.error or "")

    running = create_run(
        session,
        agent=a.agent,
        target_path="/dev/shm/r",
        status=RunStatus.running,
        lease_id=uuid.uuid4(),
        lease_expires_at=past,
        attempt=1,
    )
    assert run_service.expire_stale_leases(session) == ([], [running.id])
    assert running.status == RunStatus.failed and "stopped reporting" in (running.error or "")


def test_a_late_result_for_a_reaped_run_is_kept_not_duplicated(
    client: TestClient, session: Session, connection: Connection
) -> None:
    u = create_user(session)
    a = create_agent(session, team=u.team)
    lease_id = uuid.uuid4()
    run = create_run(
        session,
        agent=a.agent,
        status=RunStatus.running,
        lease_id=lease_id,
        lease_expires_at=utcnow() - timedelta(seconds=1),
        attempt=1,
    )
    run_service.expire_stale_leases(session)
    assert run.status == RunStatus.failed
    up = {
        "lease_id": str(lease_id),
        "upload_id": str(uuid.uuid4()),
        "engine_result": engine_document(),
        "engine_exit_code": 0,
        "started_at": "2026-11-21T10:00:00Z",
        "finished_at": "2026-11-21T10:00:06Z",
    }
    with captured_sql(connection) as statements:
        assert client.put(f"/api/v1/runs/{run.id}/result", json=up, headers=a.headers).status_code == 201
    assert client.get(f"/api/v1/runs/{run.id}", headers=u.headers).json()["status"] == "succeeded"
    # whether a result is stored: its upload id alone (not the stored row), read after the run's lock
    # in a statement of its own (result/repository.py upload_id_of: a column of the locking read
    # would miss a concurrent upload's result); the run's targets read once (docs/benchmarks.md
    # § Session 28)
    reads = [s for s in statements if s.startswith("SELECT")]
    locked = next(i for i, s in enumerate(reads) if "FROM RUNS" in s and "FOR UPDATE" in s)
    stored = [i for i, s in enumerate(reads) if s.startswith("SELECT RUN_RESULTS.UPLOAD_ID")]
    assert stored and stored[0] > locked and "RUN_RESULTS" not in reads[locked], [s[:100] for s in reads]
    assert not any(s.startswith("SELECT RUN_RESULTS.RUN_ID") for s in reads), [s[:100] for s in reads]
    assert sum("FROM RUN_TARGETS" in s for s in reads) == 1, [s[:100] for s in reads]
    again = client.put(f"/api/v1/runs/{run.id}/result", json=up, headers=a.headers)
    assert again.status_code == 200 and again.json()["duplicate"] is True
    other = client.put(
        f"/api/v1/runs/{run.id}/result", json=up | {"upload_id": str(uuid.uuid4())}, headers=a.headers
    )
    assert other.status_code == 409 and other.json()["error"] == "result_exists", other.text


def test_silent_agents_go_offline(session: Session) -> None:
    u = create_user(session)
    a = create_agent(session, team=u.team)
    a.agent.last_heartbeat_at = utcnow() - timedelta(minutes=5)
    fresh = create_agent(session, team=u.team)
    session.flush()
    ids = agent_repo.mark_silent_offline(session, utcnow() - timedelta(seconds=45))
    assert a.agent.id in ids and fresh.agent.id not in ids


def test_runs_of_a_revoked_agent_are_never_dispatched(session: Session) -> None:
    u = create_user(session)
    a = create_agent(session, team=u.team)
    run = create_run(session, agent=a.agent)
    a.agent.revoked_at = utcnow()
    session.flush()
    assert run_service.dispatch(session, run_id=run.id) is None
    assert run.status == RunStatus.queued and run.lease_id is None


def test_revoking_through_the_service_fails_unfinished_runs_and_keeps_finished_ones(session: Session) -> None:
    from backend.agent import service as agent_service
    from backend.auth.principal import UserPrincipal
    from backend.models import Role

    u = create_user(session)
    a = create_agent(session, team=u.team)
    done = create_run(session, agent=a.agent, status=RunStatus.succeeded, target_path="/srv/a")
    queued = create_run(session, agent=a.agent, target_path="/srv/b")
    principal = UserPrincipal(user_id=u.user.id, roles={u.team.id: Role.admin})
    agent_service.delete(session, principal=principal, agent_id=a.agent.id)
    assert a.agent.deleted_at is not None and a.agent.revoked_at is not None and not a.agent.online
    assert (done.status, queued.status) == (RunStatus.succeeded, RunStatus.failed)
    assert queued.error == "the agent was deleted"


def test_a_second_dispatch_of_an_assigned_run_leaves_it_to_the_agents_look(pg: Postgres) -> None:
    """An assigned run is dispatched again (its own `run.dispatch` arriving after
    `run.dispatch_pending` assigned it): that dispatcher must not lock the row, since the agent's
    look, woken at the same moment, takes the assigned run with SKIP LOCKED and would miss it until
    the long-poll's re-check, seconds later (bench/load's trace found such runs: lease ~5 s late)."""
    eng = create_engine(pg.migrated_database("iowatt_dispatch_again"))
    try:
        with Session(eng, expire_on_commit=False) as s:
            u = create_user(s)
            a = create_agent(s, team=u.team)
            run = create_run(s, agent=a.agent)
            assert run_service.dispatch(s, run_id=run.id) == a.agent.id
            s.commit()
        with Session(eng) as dispatcher, Session(eng) as look:
            assert run_service.dispatch(dispatcher, run_id=run.id) is None  # its transaction still open
            taken = run_service.hand_out(look, agent_id=a.agent.id)
            assert taken is not None and taken.id == run.id
    finally:
        eng.dispose()
