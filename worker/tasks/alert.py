"""Thin tasks: raise what is new, send one delivery, re-queue the due ones (after commit)."""

import uuid

from backend.alert import service
from backend.db import unit_of_work
from worker.app import celery_app
from worker.observe import retry_transient


def scan() -> int:
    with unit_of_work() as session:
        return len(service.scan(session))


def deliver(delivery_id: str) -> str | None:
    with unit_of_work() as session:
        return service.deliver(session, delivery_id=uuid.UUID(delivery_id))


def retry_due() -> int:
    with unit_of_work() as session:
        ids = service.due(session)
    for d in ids:
        deliver(str(d))
    return len(ids)


celery_app.task(name="alert.scan")(retry_transient(scan))
celery_app.task(name="alert.deliver")(retry_transient(deliver))
celery_app.task(name="alert.retry_due")(retry_transient(retry_due))
