"""transactional outbox for Celery tasks (docs/adr/0012-outbox.md)

- `outbox_tasks`: one row per task a transaction wants sent, written in that transaction;
  `backend.outbox` publishes unsent rows and sets `sent_at`. A partial index keeps the sender's
  look-up of unsent rows cheap however many sent rows remain. Downgrading drops the table (tasks
  not yet sent are lost; the beat repair job recomputes missing energy).

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-22 20:10:00.000000+00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0008"
down_revision: str | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "outbox_tasks",
        sa.Column("id", sa.BigInteger(), sa.Identity(always=False), nullable=False),
        sa.Column("name", sa.String(length=100), nullable=False),
        sa.Column("kwargs", postgresql.JSONB(astext_type=sa.Text()), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), server_default=sa.text("now()"), nullable=False),
        sa.Column("sent_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("attempts", sa.Integer(), server_default=sa.text("0"), nullable=False),
        sa.Column("last_error", sa.Text(), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_outbox_tasks")),
    )
    op.create_index(
        "ix_outbox_tasks_unsent", "outbox_tasks", ["id"], postgresql_where=sa.text("sent_at IS NULL")
    )


def downgrade() -> None:
    op.drop_index("ix_outbox_tasks_unsent", table_name="outbox_tasks")
    op.drop_table("outbox_tasks")
