"""The run's lifecycle in the run domain: one transition table, an agent's own word that it lost
its run (issue 11), and `finished_at` as the engine's end rather than the upload time."""

import uuid
from datetime import datetime, timedelta
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select
from sqlalchemy.engine import Connection
from sqlalchemy.orm import Session

from backend.agent import service as agent_service
from backend.auth.principal import AgentPrincipal
from backend.errors import Conflict
from backend.kit.time import utcnow
from backend.models import FINAL_STATUSES, OutboxTask, Run, RunResult, RunStatus
from backend.run import service as run_service
from tests.factories import AgentCtx, create_agent, create_run, create_user, engine_document
from tests.sql import captured_sql

# --- the transition table --------------------------------------------------------------------


def test_no_transition_leaves_a_final_status_except_a_late_result_for_a_reaped_run() -> None:
    leaving_final = {
        (name, status)
        for name, (sources, _) in run_service.TRANSITIONS.items()
        for status in sources
        if status in FINAL_STATUSES
    }
    assert leaving_final == {("succeed", RunStatus.failed)}
    reachable = {to for _, to in run_service.TRANSITIONS.values()}
    assert reachable == set(RunStatus)  # queued again through requeue


@pytest.mark.parametrize("status", [RunStatus.succeeded, RunStatus.cancelled, RunStatus.running])
def test_a_transition_from_a_status_the_table_does_not_allow_is_a_409(
    session: Session, status: RunStatus
) -> None:
    u = create_user(session)
    a = create_agent(session, team=u.team)
    run = create_run(session, agent=a.agent, status=status)
    with pytest.raises(Conflict) as exc:
        run_service._move(run, "start")
    assert exc.value.status_code == 409 and run.status == status


# --- helpers --------------------------------------------------------------------------------------


def _poll(client: TestClient, a: AgentCtx, boot_id: uuid.UUID | None = None) -> dict[str, Any] | None:
    """One lease poll; with `boot_id` as an agent process that sends it does (none: an older agent)."""
    body = {"boot_id": str(boot_id)} if boot_id is not None else None
    r = client.post(f"/api/v1/agents/{a.agent.id}/lease?wait_s=0", json=body, headers=a.headers)
    assert r.status_code == 200, r.text
    lease: dict[str, Any] | None = r.json()["lease"]
    return lease


def _running(
    client: TestClient, session: Session, a: AgentCtx, target: str = "/srv/bench"
) -> tuple[Run, str]:
    """A run leased and started through the API, as an agent does it."""
    run = create_run(session, agent=a.agent, target_path=target)
    assert run_service.dispatch(session, run_id=run.id) == a.agent.id
    lease = _poll(client, a)
    assert lease is not None and lease["run_id"] == str(run.id)
    r = client.post(f"/api/v1/runs/{run.id}/start", json={"lease_id": lease["lease_id"]}, headers=a.headers)
    assert r.status_code == 200, r.text
    session.refresh(run)
    assert run.status == RunStatus.running
    return run, lease["lease_id"]


def _status(session: Session, run: Run) -> RunStatus:
    """The run's status as stored now (a request or a service call may have changed it)."""
    session.flush()
    session.refresh(run)
    return run.status


def _dispatch_pending_queued(session: Session) -> int:
    return len(session.scalars(select(OutboxTask).where(OutboxTask.name == "run.dispatch_pending")).all())


# --- a restarted agent's own report (issue 11) ----------------------------------------------------


def test_a_restarted_agents_lease_poll_fails_its_running_run_at_once_and_the_next_run_goes(
    client: TestClient, session: Session
) -> None:
    u = create_user(session)
    a = create_agent(session, team=u.team)
    lost, _ = _running(client, session, a)
    following = create_run(session, agent=a.agent, target_path="/srv/bench2")
    assert run_service.dispatch(session, run_id=following.id) is None  # the agent is busy
    before = _dispatch_pending_queued(session)

    assert _poll(client, a) is None  # the new process asks for work: it runs nothing

    session.refresh(lost)
    assert lost.status == RunStatus.failed and lost.error == run_service.AGENT_RESTARTED
    assert lost.finished_at is not None and lost.lease_expires_at is None
    assert _dispatch_pending_queued(session) == before + 1  # the queue moves without waiting 120 s
    assert run_service.dispatch(session, run_id=following.id) == a.agent.id
    lease = _poll(client, a)
    assert lease is not None and lease["run_id"] == str(following.id)


def test_a_run_started_after_the_poll_arrived_is_not_failed(session: Session) -> None:
    """A poll received before the run started (a long-poll still open, say) is no evidence."""
    u = create_user(session)
    a = create_agent(session, team=u.team)
    run = create_run(
        session,
        agent=a.agent,
        status=RunStatus.running,
        lease_id=uuid.uuid4(),
        started_at=utcnow(),
        attempt=1,
    )
    principal = AgentPrincipal(agent_id=a.agent.id, team_id=u.team.id)
    assert run.started_at is not None
    earlier = run.started_at - timedelta(milliseconds=1)
    assert (
        agent_service.try_lease(session, principal=principal, agent_id=a.agent.id, polled_at=earlier) is None
    )
    assert _status(session, run) == RunStatus.running
    later = run.started_at + timedelta(milliseconds=1)
    assert agent_service.try_lease(session, principal=principal, agent_id=a.agent.id, polled_at=later) is None
    assert _status(session, run) == RunStatus.failed


def test_an_assigned_run_is_handed_to_the_restarted_agent_not_failed(
    client: TestClient, session: Session
) -> None:
    """Leased by the old process but never started: nothing was lost, the new process runs it."""
    u = create_user(session)
    a = create_agent(session, team=u.team)
    run = create_run(session, agent=a.agent)
    assert run_service.dispatch(session, run_id=run.id) == a.agent.id
    first = _poll(client, a)
    r = client.post(f"/api/v1/agents/{a.agent.id}/heartbeat", json={"state": "idle"}, headers=a.headers)
    assert r.status_code == 200
    again = _poll(client, a)
    assert first is not None and again is not None
    assert again["run_id"] == first["run_id"] and again["lease_id"] == first["lease_id"]
    session.refresh(run)
    assert run.status == RunStatus.assigned


def _beat(client: TestClient, a: AgentCtx, **body: Any) -> None:
    r = client.post(f"/api/v1/agents/{a.agent.id}/heartbeat", json=body, headers=a.headers)
    assert r.status_code == 200, r.text


def test_an_idle_heartbeat_fails_a_run_that_started_well_before_it(
    client: TestClient, session: Session
) -> None:
    u = create_user(session)
    a = create_agent(session, team=u.team)
    run, _ = _running(client, session, a)
    long_ago = utcnow() - timedelta(seconds=agent_service.IDLE_HEARTBEAT_GRACE_S + 5)

    run.started_at = long_ago
    session.flush()
    _beat(client, a, state="busy")
    _beat(client, a, state="draining")
    _beat(client, a, state="idle", current_run_id=str(run.id))
    assert _status(session, run) == RunStatus.running  # none of these says the run is gone

    _beat(client, a, state="idle")
    assert _status(session, run) == RunStatus.failed and run.error == run_service.AGENT_RESTARTED


def test_an_idle_heartbeat_built_just_before_the_lease_arrived_fails_nothing(
    client: TestClient, session: Session
) -> None:
    """The agent's heartbeat thread may send "idle" while the lease answer is on its way; that
    heartbeat can arrive after the run started. Within the grace it does not count."""
    u = create_user(session)
    a = create_agent(session, team=u.team)
    run, lease_id = _running(client, session, a)
    _beat(client, a, state="idle")
    session.refresh(run)
    assert run.status == RunStatus.running
    prog = {"lease_id": lease_id, "job_index": 0, "job_name": "j", "percent": 10.0, "elapsed_ns": 1}
    assert client.post(f"/api/v1/runs/{run.id}/progress", json=prog, headers=a.headers).status_code == 200


def test_a_busy_agents_run_reports_keep_it_online_whatever_its_heartbeats_pace(
    client: TestClient, session: Session, connection: Connection
) -> None:
    """An idle agent's heartbeats may be minutes apart (ADR 0051), so the agent that leased a run
    just after one is kept online by its start and progress reports: each stamps it as a heartbeat
    does, writing only when the stamp is due (a report within LIVENESS_STAMP_S of the last one
    reads the agent's row no more than authentication did and writes nothing to it)."""
    u = create_user(session)
    a = create_agent(session, team=u.team)
    run = create_run(session, agent=a.agent)
    assert run_service.dispatch(session, run_id=run.id) == a.agent.id
    lease = _poll(client, a)
    assert lease is not None

    def silent_for(seconds: float) -> datetime:
        at = utcnow() - timedelta(seconds=seconds)
        a.agent.last_heartbeat_at = at
        session.flush()
        return at

    stale = silent_for(40)  # its last heartbeat was an idle one, 40 s ago: offline at 45
    r = client.post(f"/api/v1/runs/{run.id}/start", json={"lease_id": lease["lease_id"]}, headers=a.headers)
    assert r.status_code == 200, r.text
    session.refresh(a.agent)
    assert a.agent.online and a.agent.last_heartbeat_at is not None and a.agent.last_heartbeat_at > stale

    prog = {"lease_id": lease["lease_id"], "job_index": 0, "job_name": "j", "percent": 10.0, "elapsed_ns": 1}
    url = f"/api/v1/runs/{run.id}/progress"
    a.agent.online = False  # beat's agent.mark_silent_offline marked it meanwhile
    stale = silent_for(60)
    assert client.post(url, json=prog, headers=a.headers).status_code == 200
    session.refresh(a.agent)
    assert a.agent.online and a.agent.last_heartbeat_at is not None and a.agent.last_heartbeat_at > stale

    with captured_sql(connection) as statements:
        assert client.post(url, json=prog, headers=a.headers).status_code == 200  # the stamp is fresh
    assert not any(s.startswith("UPDATE AGENTS") for s in statements), statements
    reads = [s for s in statements if s.startswith("SELECT") and "FROM AGENTS" in s]
    assert len(reads) == 1, reads  # authentication's: the stamp's check reads the row it brought


def test_the_start_answer_reads_what_a_started_run_can_have(
    client: TestClient, session: Session, connection: Connection
) -> None:
    """A run gets a result only while it runs, so the run a start moves to running has no result
    jobs, energy or result documents: the answer does not read them (docs/benchmarks.md § Session
    28). Its tags, which a member may set while it waits, are read; its agent's name is the row its
    authentication read."""
    u = create_user(session)
    a = create_agent(session, team=u.team)
    run = create_run(session, agent=a.agent)
    assert (
        client.put(f"/api/v1/runs/{run.id}/tags", json={"tags": ["nightly"]}, headers=u.headers).status_code
        == 200
    )
    assert run_service.dispatch(session, run_id=run.id) == a.agent.id
    with captured_sql(connection) as statements:
        lease = _poll(client, a)
    assert lease is not None and lease["run_id"] == str(run.id) and lease["targets"] is None
    # the look that finds it reads the agent's runs (lost ones to fail, the assigned one to hand
    # out, its targets) in one statement
    runs_read = [s for s in statements if s.startswith(("SELECT RUNS.", "SELECT RUN_TARGETS."))]
    assert len(runs_read) == 1, [s[:120] for s in runs_read]
    with captured_sql(connection) as statements:
        r = client.post(
            f"/api/v1/runs/{run.id}/start", json={"lease_id": lease["lease_id"]}, headers=a.headers
        )
    assert r.status_code == 200, r.text
    started = r.json()
    assert started["status"] == "running" and started["tags"] == ["nightly"]
    assert started["agent_name"] == a.agent.name and started["device_name"]
    assert (
        started["jobs"] == [] and started["energy"]["status"] == "none" and started["file_workload"] is None
    )
    reads = [s for s in statements if s.startswith("SELECT")]
    for table in ("RESULT_JOBS", "RUN_POWER", "RUN_RESULTS"):
        assert not any(f"FROM {table}" in s for s in reads), [s[:120] for s in reads]
    assert sum("FROM AGENTS" in s for s in reads) == 1, [s[:120] for s in reads]  # authentication's


def _running_by(client: TestClient, session: Session, a: AgentCtx, boot: uuid.UUID) -> tuple[Run, str]:
    """A run started by the agent process `boot` (its heartbeat came before the start)."""
    _beat(client, a, state="idle", boot_id=str(boot))
    run, lease_id = _running(client, session, a)
    assert run.started_boot_id == boot
    return run, lease_id


@pytest.mark.parametrize("state", ["idle", "busy", "draining"])
def test_a_heartbeat_of_another_agent_process_fails_the_run_it_does_not_hold_at_once(
    client: TestClient, session: Session, state: str
) -> None:
    """The restarted agent's first heartbeat (a new boot id, not holding the run's lease) fails
    the run the dead process started, whatever state it reports and without the grace."""
    u = create_user(session)
    a = create_agent(session, team=u.team)
    old, new = uuid.uuid4(), uuid.uuid4()
    run, _ = _running_by(client, session, a, old)
    before = _dispatch_pending_queued(session)
    other_lease = str(uuid.uuid4()) if state != "idle" else None
    _beat(client, a, state=state, boot_id=str(new), current_lease_id=other_lease)
    assert _status(session, run) == RunStatus.failed and run.error == run_service.AGENT_RESTARTED
    assert _dispatch_pending_queued(session) == before + 1  # the next run goes at once
    session.refresh(a.agent)
    assert a.agent.boot_id == new


def test_a_heartbeat_of_the_process_that_started_the_run_fails_nothing_at_once(
    client: TestClient, session: Session
) -> None:
    """The same process saying idle (a heartbeat built before the lease reached it, or a result
    waiting in its spool) or holding the lease is no evidence of a loss: the grace stays."""
    u = create_user(session)
    a = create_agent(session, team=u.team)
    boot = uuid.uuid4()
    run, lease_id = _running_by(client, session, a, boot)
    _beat(client, a, state="busy", boot_id=str(boot), current_run_id=str(run.id), current_lease_id=lease_id)
    _beat(client, a, state="idle", boot_id=str(boot))
    assert _status(session, run) == RunStatus.running
    run.started_at = utcnow() - timedelta(seconds=agent_service.IDLE_HEARTBEAT_GRACE_S + 5)
    session.flush()
    _beat(client, a, state="idle", boot_id=str(boot))  # past the grace: still its own run
    assert _status(session, run) == RunStatus.running  # the lease's expiry is the backstop


def test_a_lease_poll_of_the_process_that_started_the_run_fails_nothing(
    client: TestClient, session: Session
) -> None:
    """Scenario 7 of issue 11: the process spooled its result in a network cut and asks for work
    before the spool delivers it. Same boot id: the run stays running, the result lands on it,
    and it never shows failed."""
    u = create_user(session)
    a = create_agent(session, team=u.team)
    boot = uuid.uuid4()
    run, lease_id = _running_by(client, session, a, boot)
    before = _dispatch_pending_queued(session)
    assert _poll(client, a, boot) is None
    assert _status(session, run) == RunStatus.running and run.error is None
    assert _dispatch_pending_queued(session) == before  # nothing was freed
    run.started_at = utcnow() - timedelta(seconds=agent_service.IDLE_HEARTBEAT_GRACE_S + 5)
    session.flush()
    _beat(client, a, state="idle", boot_id=str(boot))  # its idle heartbeat, past the grace
    assert _status(session, run) == RunStatus.running
    r = client.put(f"/api/v1/runs/{run.id}/result", json=_upload(lease_id, utcnow()), headers=a.headers)
    assert r.status_code == 201, r.text
    assert _status(session, run) == RunStatus.succeeded and run.error is None


@pytest.mark.parametrize("started_by", ["another process", "an agent without boot ids"])
def test_a_lease_poll_of_another_process_fails_the_run_at_once(
    client: TestClient, session: Session, started_by: str
) -> None:
    """A restarted agent polls with its new boot id: the run the dead process started (or one an
    older agent started, whose boot id is unknown) was lost and fails at once."""
    u = create_user(session)
    a = create_agent(session, team=u.team)
    if started_by == "another process":
        run, _ = _running_by(client, session, a, uuid.uuid4())
    else:
        run, _ = _running(client, session, a)
        assert run.started_boot_id is None
    before = _dispatch_pending_queued(session)
    new = uuid.uuid4()
    assert _poll(client, a, new) is None
    assert _status(session, run) == RunStatus.failed and run.error == run_service.AGENT_RESTARTED
    assert _dispatch_pending_queued(session) == before + 1  # the next run goes at once
    session.refresh(a.agent)
    assert a.agent.boot_id == new  # the next run it starts records it


def test_a_lease_poll_without_a_boot_id_fails_even_the_same_processs_run(
    client: TestClient, session: Session
) -> None:
    """An older agent polls with no body: today's behaviour, every running run started before the
    poll fails at once (it cannot say it is the same process)."""
    u = create_user(session)
    a = create_agent(session, team=u.team)
    run, _ = _running_by(client, session, a, uuid.uuid4())
    assert _poll(client, a) is None
    assert _status(session, run) == RunStatus.failed and run.error == run_service.AGENT_RESTARTED


def test_a_run_leased_by_a_poll_records_that_polls_boot_id(client: TestClient, session: Session) -> None:
    """The poll carries the boot id, so a run started before the process's first heartbeat reached
    the server still knows its process."""
    u = create_user(session)
    a = create_agent(session, team=u.team)
    boot = uuid.uuid4()
    run = create_run(session, agent=a.agent)
    assert run_service.dispatch(session, run_id=run.id) == a.agent.id
    lease = _poll(client, a, boot)
    assert lease is not None and lease["run_id"] == str(run.id)
    session.expire(a.agent)  # the poll wrote it in its own session; the test's session kept the old row
    r = client.post(f"/api/v1/runs/{run.id}/start", json={"lease_id": lease["lease_id"]}, headers=a.headers)
    assert r.status_code == 200, r.text
    session.refresh(run)
    assert run.status == RunStatus.running and run.started_boot_id == boot


def test_a_lease_polls_boot_id_is_checked(client: TestClient, session: Session) -> None:
    u = create_user(session)
    a = create_agent(session, team=u.team)
    for body in ({"boot_id": "x"}, {"boot_id": str(uuid.uuid4()), "other": 1}):
        r = client.post(f"/api/v1/agents/{a.agent.id}/lease?wait_s=0", json=body, headers=a.headers)
        assert r.status_code == 422, r.text
        assert ("boot_id" if "other" not in body else "other") in r.text, r.text


def test_a_new_process_that_holds_the_runs_lease_takes_the_run_over(
    client: TestClient, session: Session
) -> None:
    """A process that leased and started the run before its first heartbeat reached the server
    (the run carries the previous boot id) holds the lease: its run stays and becomes its own."""
    u = create_user(session)
    a = create_agent(session, team=u.team)
    old, new = uuid.uuid4(), uuid.uuid4()
    run, lease_id = _running_by(client, session, a, old)
    _beat(client, a, state="busy", boot_id=str(new), current_lease_id=lease_id)
    assert _status(session, run) == RunStatus.running and run.started_boot_id == new
    _beat(client, a, state="busy", boot_id=str(old))  # a late heartbeat of the old process now
    assert _status(session, run) == RunStatus.failed


def test_an_old_agent_without_boot_ids_keeps_the_grace(client: TestClient, session: Session) -> None:
    """A run an agent without boot ids started has none; a new agent's heartbeat cannot tell
    who started it, so only the idle-heartbeat grace applies."""
    u = create_user(session)
    a = create_agent(session, team=u.team)
    run, _ = _running(client, session, a)
    assert run.started_boot_id is None
    _beat(client, a, state="idle", boot_id=str(uuid.uuid4()))
    assert _status(session, run) == RunStatus.running
    run.started_at = utcnow() - timedelta(seconds=agent_service.IDLE_HEARTBEAT_GRACE_S + 5)
    session.flush()
    _beat(client, a, state="idle")
    assert _status(session, run) == RunStatus.failed


def test_a_heartbeats_boot_and_lease_ids_are_checked(client: TestClient, session: Session) -> None:
    u = create_user(session)
    a = create_agent(session, team=u.team)
    for field in ("boot_id", "current_lease_id"):
        r = client.post(
            f"/api/v1/agents/{a.agent.id}/heartbeat", json={"state": "idle", field: "x"}, headers=a.headers
        )
        assert r.status_code == 422 and field in r.text, r.text


def test_the_lost_runs_late_result_is_still_kept(client: TestClient, session: Session) -> None:
    """An agent that finished, spooled its upload and asked for work looked like a restart; its
    result arriving afterwards is kept (the run was never re-run)."""
    u = create_user(session)
    a = create_agent(session, team=u.team)
    run, lease_id = _running(client, session, a)
    assert _poll(client, a) is None
    assert _status(session, run) == RunStatus.failed
    r = client.put(f"/api/v1/runs/{run.id}/result", json=_upload(lease_id, utcnow()), headers=a.headers)
    assert r.status_code == 201, r.text
    assert _status(session, run) == RunStatus.succeeded and run.error is None


def test_a_failure_report_delivered_after_the_restart_tells_the_real_reason(
    client: TestClient, session: Session
) -> None:
    u = create_user(session)
    a = create_agent(session, team=u.team)
    run, lease_id = _running(client, session, a)
    assert _poll(client, a) is None
    assert _status(session, run) == RunStatus.failed and run.error == run_service.AGENT_RESTARTED
    report = {
        "lease_id": lease_id,
        "upload_id": str(uuid.uuid4()),
        "reason": "engine crashed",
        "exit_code": 1,
    }
    assert client.post(f"/api/v1/runs/{run.id}/failure", json=report, headers=a.headers).status_code == 200
    assert _status(session, run) == RunStatus.failed and run.error == "engine crashed (engine exit 1)"
    report["reason"] = "a second report"
    assert client.post(f"/api/v1/runs/{run.id}/failure", json=report, headers=a.headers).status_code == 200
    session.refresh(run)
    assert run.error == "engine crashed (engine exit 1)"  # only the presumed reason is replaced


# --- finished_at is the engine's end (issue 11) ---------------------------------------------------


def _upload(lease_id: str, end: datetime, duration: timedelta = timedelta(seconds=6)) -> dict[str, Any]:
    return {
        "lease_id": lease_id,
        "upload_id": str(uuid.uuid4()),
        "engine_result": engine_document(),
        "engine_exit_code": 0,
        "started_at": (end - duration).isoformat(),
        "finished_at": end.isoformat(),
    }


def test_finished_at_is_the_engines_end_not_the_upload_time(client: TestClient, session: Session) -> None:
    """A result spooled on the host and delivered minutes later still says when the run ended."""
    u = create_user(session)
    a = create_agent(session, team=u.team)
    run, lease_id = _running(client, session, a)
    run.started_at = utcnow() - timedelta(minutes=10)
    session.flush()
    end = utcnow() - timedelta(minutes=9)
    r = client.put(f"/api/v1/runs/{run.id}/result", json=_upload(lease_id, end), headers=a.headers)
    assert r.status_code == 201, r.text
    session.refresh(run)
    stored = session.get(RunResult, run.id)
    assert stored is not None
    assert run.status == RunStatus.succeeded and run.finished_at == end
    assert stored.uploaded_at - end > timedelta(minutes=8)  # the upload time is kept apart
    body = client.get(f"/api/v1/runs/{run.id}", headers=u.headers).json()
    assert datetime.fromisoformat(body["finished_at"]) == end


@pytest.mark.parametrize("skew", [timedelta(minutes=-10), timedelta(minutes=10)])
def test_an_agent_clock_that_disagrees_is_not_trusted(
    client: TestClient, session: Session, skew: timedelta
) -> None:
    """Engine end before the run started or after now (agent clock ±10 min): the server's start
    plus the engine's duration, never later than now."""
    u = create_user(session)
    a = create_agent(session, team=u.team)
    run, lease_id = _running(client, session, a)
    run.started_at = utcnow() - timedelta(seconds=30)
    session.flush()
    started = run.started_at
    r = client.put(
        f"/api/v1/runs/{run.id}/result",
        json=_upload(lease_id, utcnow() + skew, duration=timedelta(seconds=6)),
        headers=a.headers,
    )
    assert r.status_code == 201, r.text
    session.refresh(run)
    assert run.finished_at == started + timedelta(seconds=6)
