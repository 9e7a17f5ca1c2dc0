"""Thin tasks: take ids, open one transaction, call the run service, act after commit."""

import uuid

from backend.agent import wake
from backend.counters import count
from backend.db import unit_of_work
from backend.logs import log
from backend.run import service as run_service
from worker.app import celery_app
from worker.observe import retry_transient


def dispatch(run_id: str) -> bool:
    with unit_of_work() as session:
        agent_id = run_service.dispatch(session, run_id=uuid.UUID(run_id))
    if agent_id is None:
        return False
    # after the commit: the agent's long-poll now finds the assigned run (best-effort: when Redis
    # is down the long-poll's re-check finds it within seconds; raising would re-run a done task)
    wake.wake_best_effort(agent_id)
    log.info("run.assigned", run_id=run_id, agent_id=str(agent_id))
    return True


def dispatch_pending() -> int:
    with unit_of_work() as session:
        ids = run_service.queued_ids(session)
    return sum(1 for rid in ids if dispatch(str(rid)))


def expire_stale_leases() -> tuple[int, int]:
    with unit_of_work() as session:
        requeued, failed = run_service.expire_stale_leases(session)
    if requeued:
        count("lease_expiries", "requeued", len(requeued))
    if failed:
        count("lease_expiries", "failed", len(failed))
    for rid in requeued:
        log.warning("run.requeued", run_id=str(rid), reason="lease expired before start")
        dispatch(str(rid))
    for rid in failed:
        log.warning("run.failed", run_id=str(rid), reason="lease expired")
    return len(requeued), len(failed)


celery_app.task(name="run.dispatch")(retry_transient(dispatch))
celery_app.task(name="run.dispatch_pending")(retry_transient(dispatch_pending))
celery_app.task(name="run.expire_stale_leases")(retry_transient(expire_stale_leases))
