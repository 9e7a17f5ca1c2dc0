"""group runs: one workload on targets of several agents, started at one instant

- `run_groups`: the parent of a group run: its start tolerance and prepare timeout, the instant
  the server set for every member to start (`start_at`, server time), why it stopped early
  (`stop_reason`: the first member that failed or was lost, or the user's cancel), whether a
  member missed the start (`unsynchronized`) and the one store the members' targets are when
  they share it (`shared_store`).
- `runs.group_id` and each member's barrier facts: when it reported ready, its clock offset from
  the server and the round trip that bounds it, and its start's skew from `start_at`.

Downgrading drops the table and the columns: the members stay as ordinary runs.

Revision ID: 0020
Revises: 0019
Create Date: 2026-12-06 02:45:00.000000+00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0020"
down_revision: str | None = "0019"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "run_groups",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("team_id", sa.Uuid(), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("created_by", sa.Uuid(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), server_default=sa.text("now()"), nullable=False),
        sa.Column("start_tolerance_ns", sa.BigInteger(), nullable=False),
        sa.Column("prepare_timeout_s", sa.Float(), nullable=False),
        sa.Column("start_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("stop_reason", sa.String(length=4000), nullable=True),
        sa.Column("cancelled", sa.Boolean(), server_default=sa.false(), nullable=False),
        sa.Column("unsynchronized", sa.Boolean(), server_default=sa.false(), nullable=False),
        sa.Column("shared_store", sa.String(length=200), nullable=True),
        sa.ForeignKeyConstraint(["team_id"], ["teams.id"], ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["created_by"], ["users.id"], ondelete="SET NULL"),
        sa.PrimaryKeyConstraint("id"),
    )
    op.add_column("runs", sa.Column("group_id", sa.Uuid(), nullable=True))
    op.add_column("runs", sa.Column("ready_at", sa.DateTime(timezone=True), nullable=True))
    op.add_column("runs", sa.Column("clock_offset_ns", sa.BigInteger(), nullable=True))
    op.add_column("runs", sa.Column("clock_round_trip_ns", sa.BigInteger(), nullable=True))
    op.add_column("runs", sa.Column("start_skew_ns", sa.BigInteger(), nullable=True))
    op.create_foreign_key(None, "runs", "run_groups", ["group_id"], ["id"], ondelete="SET NULL")
    op.create_index(op.f("ix_runs_group_id"), "runs", ["group_id"])


def downgrade() -> None:
    op.drop_index(op.f("ix_runs_group_id"), table_name="runs")
    op.drop_constraint(op.f("fk_runs_group_id_run_groups"), "runs", type_="foreignkey")
    for col in ("start_skew_ns", "clock_round_trip_ns", "clock_offset_ns", "ready_at", "group_id"):
        op.drop_column("runs", col)
    op.drop_table("run_groups")
