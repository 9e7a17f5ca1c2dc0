from backend.agent import service as agent_service
from backend.db import unit_of_work
from backend.logs import log
from worker.app import celery_app
from worker.observe import retry_transient


def mark_silent_offline() -> int:
    with unit_of_work() as session:
        ids = agent_service.mark_silent_offline(session)
    for agent_id in ids:
        log.warning("agent.offline", agent_id=str(agent_id))
    return len(ids)


celery_app.task(name="agent.mark_silent_offline")(retry_transient(mark_silent_offline))
