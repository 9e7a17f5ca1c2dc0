"""multi-target runs: a run on several targets of one agent at once

- `run_targets`: one row per target of a multi-target run (none for a single-target run): its
  path, device, whether the run holds the device now (`held`, with a partial unique index: one
  run holds a device at a time, as `uq_runs_active_device` does for the runs' own device), and
  once the result is stored that target's engine document and key figures per job.

Downgrading drops the table: multi-target runs stay as runs of their first target with the
combined result.

Revision ID: 0017
Revises: 0016
Create Date: 2026-12-05 23:55:00.000000+00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0017"
down_revision: str | None = "0016"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "run_targets",
        sa.Column("run_id", sa.Uuid(), nullable=False),
        sa.Column("target_index", sa.SmallInteger(), nullable=False),
        sa.Column("target_path", sa.String(length=4096), nullable=False),
        sa.Column("device_id", sa.Uuid(), nullable=True),
        sa.Column("held", sa.Boolean(), server_default=sa.false(), nullable=False),
        sa.Column("engine_exit_code", sa.Integer(), nullable=True),
        sa.Column("engine_result", postgresql.JSONB(astext_type=sa.Text()), nullable=True),
        sa.Column("jobs", postgresql.JSONB(astext_type=sa.Text()), nullable=True),
        sa.ForeignKeyConstraint(["run_id"], ["runs.id"], ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["device_id"], ["devices.id"], ondelete="SET NULL"),
        sa.PrimaryKeyConstraint("run_id", "target_index"),
    )
    op.create_index(
        "uq_run_targets_held_device",
        "run_targets",
        ["device_id"],
        unique=True,
        postgresql_where=sa.text("held AND device_id IS NOT NULL"),
    )


def downgrade() -> None:
    op.drop_index("uq_run_targets_held_device", table_name="run_targets")
    op.drop_table("run_targets")
