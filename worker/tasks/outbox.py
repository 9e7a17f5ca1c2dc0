"""The outbox sender and the derived-data repair, driven by beat (ADR 0012)."""

from backend import outbox
from backend.db import unit_of_work
from backend.logs import log
from backend.outbox.repair import repair_missing_energy
from worker.app import celery_app
from worker.observe import retry_transient


def send() -> int:
    """Publish every unsent outbox row (the immediate send after a commit is best-effort)."""
    total = 0
    while True:
        with unit_of_work() as session:
            sent = outbox.send_pending(session)
        total += sent
        if sent < outbox.BATCH:
            return total


def repair() -> int:
    with unit_of_work() as session:
        ids = repair_missing_energy(session)
        outbox.purge_sent(session)
    for run_id in ids:
        log.warning("energy.repair", run_id=str(run_id), reason="energy missing after the run finished")
    return len(ids)


celery_app.task(name="outbox.send")(retry_transient(send))
celery_app.task(name="outbox.repair")(retry_transient(repair))
