"""series: what a team tracks over time, and the changes found in it

- `series`: a workload (its fingerprint) on a target (a device, or a path of an agent without a
  known device, or a group of targets run together) in an environment, optionally narrowed to one
  metric and one job; found from runs when their result is stored (`key` is sha256 over canonical
  JSON of those parts, unique per team), nameable, pinnable, archivable, with optional thresholds.
- `series_runs`: which runs belong to which series, with what was judged when the result was
  stored: the validity flags that leave the run out of change detection (`excluded`), the host
  facts it ran with (`facts`) and the segment those facts and its conditions put it in (`segment`,
  sha256: runs of different segments are never compared).
- `series_detections`: each change found (a change point in the history or a new run's test
  against its lookback window): metric, job, size with its interval, the runs before and after,
  method and parameters, and what a person said about it (acknowledged or dismissed, a comment).
- `series_team_settings`: a team's default thresholds (a series' own win).

Revision ID: 0018
Revises: 0017
Create Date: 2026-12-06 02:30:00.000000+00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0018"
down_revision: str | None = "0017"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

JSON = postgresql.JSONB(astext_type=sa.Text())


def upgrade() -> None:
    op.create_table(
        "series",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("team_id", sa.Uuid(), nullable=False),
        sa.Column("key", sa.String(length=64), nullable=False),
        sa.Column("workload_fingerprint", sa.String(length=64), nullable=False),
        sa.Column("target_kind", sa.String(length=16), nullable=False),
        sa.Column("agent_id", sa.Uuid(), nullable=True),
        sa.Column("device_id", sa.Uuid(), nullable=True),
        sa.Column("target_path", sa.String(length=4096), nullable=True),
        sa.Column("environment_id", sa.Uuid(), nullable=True),
        sa.Column("workload_id", sa.Uuid(), nullable=True),
        sa.Column("metric", sa.String(length=40), nullable=True),
        sa.Column("job_index", sa.Integer(), nullable=True),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("pinned", sa.Boolean(), server_default=sa.false(), nullable=False),
        sa.Column("archived_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("thresholds", JSON, server_default=sa.text("'{}'::jsonb"), nullable=False),
        sa.Column("run_count", sa.Integer(), server_default="0", nullable=False),
        sa.Column("last_run_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), server_default=sa.func.now(), nullable=False),
        sa.ForeignKeyConstraint(
            ["team_id"], ["teams.id"], name=op.f("fk_series_team_id_teams"), ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(
            ["agent_id"], ["agents.id"], name=op.f("fk_series_agent_id_agents"), ondelete="SET NULL"
        ),
        sa.ForeignKeyConstraint(
            ["device_id"], ["devices.id"], name=op.f("fk_series_device_id_devices"), ondelete="SET NULL"
        ),
        sa.ForeignKeyConstraint(
            ["environment_id"],
            ["environments.id"],
            name=op.f("fk_series_environment_id_environments"),
            ondelete="SET NULL",
        ),
        sa.ForeignKeyConstraint(
            ["workload_id"],
            ["workloads.id"],
            name=op.f("fk_series_workload_id_workloads"),
            ondelete="SET NULL",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_series")),
        sa.UniqueConstraint("team_id", "key", name="uq_series_team_key"),
    )
    op.create_index("ix_series_device_id", "series", ["device_id"])
    op.create_index("ix_series_agent_id", "series", ["agent_id"])
    op.create_index("ix_series_workload_id", "series", ["workload_id"])
    op.create_table(
        "series_runs",
        sa.Column("series_id", sa.Uuid(), nullable=False),
        sa.Column("run_id", sa.Uuid(), nullable=False),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("excluded", JSON, server_default=sa.text("'[]'::jsonb"), nullable=False),
        sa.Column("segment", sa.String(length=64), nullable=False),
        sa.Column("facts", JSON, server_default=sa.text("'{}'::jsonb"), nullable=False),
        sa.ForeignKeyConstraint(
            ["series_id"], ["series.id"], name=op.f("fk_series_runs_series_id_series"), ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(
            ["run_id"], ["runs.id"], name=op.f("fk_series_runs_run_id_runs"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("series_id", "run_id", name=op.f("pk_series_runs")),
    )
    op.create_index("ix_series_runs_series_at", "series_runs", ["series_id", "at"])
    op.create_index("ix_series_runs_run_id", "series_runs", ["run_id"])
    op.create_table(
        "series_detections",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("series_id", sa.Uuid(), nullable=False),
        sa.Column("metric", sa.String(length=40), nullable=False),
        sa.Column("job_index", sa.Integer(), nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("direction", sa.String(length=16), nullable=False),
        sa.Column("run_id", sa.Uuid(), nullable=True),
        sa.Column("previous_run_id", sa.Uuid(), nullable=True),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("mean_before", sa.Float(), nullable=False),
        sa.Column("mean_after", sa.Float(), nullable=False),
        sa.Column("change_pct", sa.Float(), nullable=False),
        sa.Column("change_pct_low", sa.Float(), nullable=True),
        sa.Column("change_pct_high", sa.Float(), nullable=True),
        sa.Column("runs_before", sa.Integer(), nullable=False),
        sa.Column("runs_after", sa.Integer(), nullable=False),
        sa.Column("method", sa.String(length=40), nullable=False),
        sa.Column("parameters", JSON, nullable=False),
        sa.Column("p_value", sa.Float(), nullable=True),
        sa.Column("excluded", JSON, server_default=sa.text("'[]'::jsonb"), nullable=False),
        sa.Column("status", sa.String(length=16), server_default="open", nullable=False),
        sa.Column("comment", sa.Text(), server_default="", nullable=False),
        sa.Column("status_by", sa.Uuid(), nullable=True),
        sa.Column("status_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), server_default=sa.func.now(), nullable=False),
        sa.ForeignKeyConstraint(
            ["series_id"],
            ["series.id"],
            name=op.f("fk_series_detections_series_id_series"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["run_id"], ["runs.id"], name=op.f("fk_series_detections_run_id_runs"), ondelete="SET NULL"
        ),
        sa.ForeignKeyConstraint(
            ["previous_run_id"],
            ["runs.id"],
            name=op.f("fk_series_detections_previous_run_id_runs"),
            ondelete="SET NULL",
        ),
        sa.ForeignKeyConstraint(
            ["status_by"],
            ["users.id"],
            name=op.f("fk_series_detections_status_by_users"),
            ondelete="SET NULL",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_series_detections")),
        sa.UniqueConstraint(
            "series_id", "metric", "job_index", "kind", "run_id", name="uq_series_detections_change"
        ),
    )
    op.create_index("ix_series_detections_series_at", "series_detections", ["series_id", "at"])
    op.create_table(
        "series_team_settings",
        sa.Column("team_id", sa.Uuid(), nullable=False),
        sa.Column("thresholds", JSON, server_default=sa.text("'{}'::jsonb"), nullable=False),
        sa.ForeignKeyConstraint(
            ["team_id"], ["teams.id"], name=op.f("fk_series_team_settings_team_id_teams"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("team_id", name=op.f("pk_series_team_settings")),
    )


def downgrade() -> None:
    op.drop_table("series_team_settings")
    op.drop_index("ix_series_detections_series_at", table_name="series_detections")
    op.drop_table("series_detections")
    op.drop_index("ix_series_runs_run_id", table_name="series_runs")
    op.drop_index("ix_series_runs_series_at", table_name="series_runs")
    op.drop_table("series_runs")
    op.drop_index("ix_series_workload_id", table_name="series")
    op.drop_index("ix_series_agent_id", table_name="series")
    op.drop_index("ix_series_device_id", table_name="series")
    op.drop_table("series")
