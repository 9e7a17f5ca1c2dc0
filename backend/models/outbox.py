from datetime import datetime
from typing import Any

from sqlalchemy import BigInteger, Identity, Index, String, Text, text
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import Mapped, mapped_column

from backend.models.base import Base, created_at


class OutboxTask(Base):
    """A Celery task written in its producer's transaction and sent by `backend.outbox`.

    A row exists only if the transaction that wanted the task committed; `sent_at` is set once the
    broker accepted the message (at-least-once: a crash between the two sends it again).
    """

    __tablename__ = "outbox_tasks"
    id: Mapped[int] = mapped_column(BigInteger, Identity(), primary_key=True)
    name: Mapped[str] = mapped_column(String(100))
    kwargs: Mapped[dict[str, Any]] = mapped_column(JSONB)
    created_at: Mapped[datetime] = created_at()
    sent_at: Mapped[datetime | None]
    attempts: Mapped[int] = mapped_column(server_default=text("0"))
    last_error: Mapped[str | None] = mapped_column(Text)

    __table_args__ = (Index("ix_outbox_tasks_unsent", "id", postgresql_where=text("sent_at IS NULL")),)
