"""Celery tasks queued in the producer's transaction: see `backend.outbox` (ADR 0012).

Kept as the name the domain services import; `enqueue` writes an outbox row, nothing is sent
before the transaction commits and nothing written in a rolled-back transaction is ever sent.
"""

from backend.outbox import enqueue

__all__ = ["enqueue"]
