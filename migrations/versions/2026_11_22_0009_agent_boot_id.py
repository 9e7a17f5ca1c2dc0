"""boot ids: which agent process started a run (issue 11 follow-up)

- `agents.boot_id`: the per-process id the agent sent with its latest heartbeat (a new one at every
  agent start). Empty for every agent now, and for agents too old to send one.
- `runs.started_boot_id`: the agent process (boot id) that started the run, copied from the agent
  when the run starts. A heartbeat of another process that does not hold the run's lease fails the
  run at once (backend/run/service.py fail_lost). Empty for runs started before, which keep the
  idle-heartbeat grace. Downgrading drops both.

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-22 21:45:00.000000+00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0009"
down_revision: str | None = "0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("agents", sa.Column("boot_id", postgresql.UUID(as_uuid=True), nullable=True))
    op.add_column("runs", sa.Column("started_boot_id", postgresql.UUID(as_uuid=True), nullable=True))


def downgrade() -> None:
    op.drop_column("runs", "started_boot_id")
    op.drop_column("agents", "boot_id")
