from datetime import timedelta

from backend.agent import repository
from backend.config import get_settings
from backend.db import unit_of_work
from backend.kit.time import utcnow
from backend.logs import log
from worker.app import celery_app
from worker.observe import retry_transient


def mark_silent_offline() -> int:
    before = utcnow() - timedelta(seconds=get_settings().agent_offline_after_s)
    with unit_of_work() as session:
        ids = repository.mark_silent_offline(session, before)
    for agent_id in ids:
        log.warning("agent.offline", agent_id=str(agent_id))
    return len(ids)


celery_app.task(name="agent.mark_silent_offline")(retry_transient(mark_silent_offline))
