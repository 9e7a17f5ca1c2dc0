"""schedules: recurring campaigns, and each due slot claimed once

- `schedules`: a team's recurring campaign (a CampaignCreate body), due by a cron expression in a
  time zone or every N hours; `next_slot_at` is when it is next due.
- `schedule_slots`: one row per due instant, unique per (schedule, instant), so two periodic
  ticks (two beat processes) never queue one slot twice; queued with its campaign or skipped
  with the reason.

Revision ID: 0019
Revises: 0018
Create Date: 2026-12-06 02:40:00.000000+00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0019"
down_revision: str | None = "0018"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "schedules",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("team_id", sa.Uuid(), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("cron", sa.String(length=200), nullable=True),
        sa.Column("every_hours", sa.Integer(), nullable=True),
        sa.Column("timezone", sa.String(length=64), nullable=False),
        sa.Column("campaign", postgresql.JSONB(astext_type=sa.Text()), nullable=False),
        sa.Column("enabled", sa.Boolean(), nullable=False),
        sa.Column("next_slot_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("created_by", sa.Uuid(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), server_default=sa.text("now()"), nullable=False),
        sa.ForeignKeyConstraint(
            ["team_id"], ["teams.id"], name=op.f("fk_schedules_team_id_teams"), ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(
            ["created_by"], ["users.id"], name=op.f("fk_schedules_created_by_users"), ondelete="SET NULL"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_schedules")),
    )
    op.create_index(op.f("ix_schedules_team_id"), "schedules", ["team_id"])
    op.create_index(op.f("ix_schedules_next_slot_at"), "schedules", ["next_slot_at"])
    op.create_table(
        "schedule_slots",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("schedule_id", sa.Uuid(), nullable=False),
        sa.Column("slot_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("reason", sa.String(length=500), nullable=True),
        sa.Column("campaign_id", sa.Uuid(), nullable=True),
        sa.Column("skipped_targets", postgresql.JSONB(astext_type=sa.Text()), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), server_default=sa.text("now()"), nullable=False),
        sa.ForeignKeyConstraint(
            ["schedule_id"],
            ["schedules.id"],
            name=op.f("fk_schedule_slots_schedule_id_schedules"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["campaign_id"],
            ["campaigns.id"],
            name=op.f("fk_schedule_slots_campaign_id_campaigns"),
            ondelete="SET NULL",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_schedule_slots")),
        sa.UniqueConstraint("schedule_id", "slot_at", name="uq_schedule_slots_slot"),
    )


def downgrade() -> None:
    op.drop_table("schedule_slots")
    op.drop_index(op.f("ix_schedules_next_slot_at"), table_name="schedules")
    op.drop_index(op.f("ix_schedules_team_id"), table_name="schedules")
    op.drop_table("schedules")
