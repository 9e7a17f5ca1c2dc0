"""procurement reviews (issue 16): reviews, their candidates and comments

Money and rates are NUMERIC (never floats). A review's decision freezes it: `decided_snapshot`
keeps every computed figure as it stood; a new version is a new row naming its `parent_id`.
Downgrading drops the three tables.

Revision ID: 0011
Revises: 0010
Create Date: 2026-11-23 03:00:00.000000+00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0011"
down_revision: str | None = "0010"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

UUID = postgresql.UUID(as_uuid=True)
TS = sa.DateTime(timezone=True)
JSONB = postgresql.JSONB(astext_type=sa.Text())


def upgrade() -> None:
    op.create_table(
        "reviews",
        sa.Column("id", UUID, nullable=False),
        sa.Column("team_id", UUID, nullable=False),
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column("question", sa.Text(), server_default="", nullable=False),
        sa.Column("currency", sa.String(3), nullable=False),
        sa.Column("horizon_years", sa.Numeric(6, 2), nullable=False),
        sa.Column("duty_cycle", sa.Numeric(6, 5), nullable=False),
        sa.Column("tariff_per_kwh", sa.Numeric(12, 6), nullable=False),
        sa.Column("tariff_source", sa.String(500), nullable=False),
        sa.Column("grid_g_per_kwh", sa.Numeric(10, 3), nullable=False),
        sa.Column("grid_source", sa.String(500), nullable=False),
        sa.Column("pue", sa.Numeric(5, 3), nullable=False),
        sa.Column("environment_id", UUID, nullable=True),
        sa.Column("weights", JSONB, nullable=False),
        sa.Column("version", sa.Integer(), server_default="1", nullable=False),
        sa.Column("parent_id", UUID, nullable=True),
        sa.Column("decided_at", TS, nullable=True),
        sa.Column("decided_by", UUID, nullable=True),
        sa.Column("decided_by_name", sa.String(200), nullable=True),
        sa.Column("decision_candidate_id", UUID, nullable=True),
        sa.Column("decision_reason", sa.Text(), nullable=True),
        sa.Column("decided_snapshot", JSONB, nullable=True),
        sa.Column("created_by", UUID, nullable=True),
        sa.Column("created_at", TS, server_default=sa.func.now(), nullable=False),
        sa.Column("updated_at", TS, server_default=sa.func.now(), nullable=False),
        sa.CheckConstraint("duty_cycle >= 0 AND duty_cycle <= 1", name=op.f("ck_reviews_duty_cycle")),
        sa.CheckConstraint("horizon_years > 0", name=op.f("ck_reviews_horizon_years")),
        sa.CheckConstraint("pue >= 1", name=op.f("ck_reviews_pue")),
        sa.ForeignKeyConstraint(
            ["team_id"], ["teams.id"], name=op.f("fk_reviews_team_id_teams"), ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(
            ["environment_id"],
            ["environments.id"],
            name=op.f("fk_reviews_environment_id_environments"),
            ondelete="SET NULL",
        ),
        sa.ForeignKeyConstraint(
            ["parent_id"], ["reviews.id"], name=op.f("fk_reviews_parent_id_reviews"), ondelete="SET NULL"
        ),
        sa.ForeignKeyConstraint(
            ["decided_by"], ["users.id"], name=op.f("fk_reviews_decided_by_users"), ondelete="SET NULL"
        ),
        sa.ForeignKeyConstraint(
            ["created_by"], ["users.id"], name=op.f("fk_reviews_created_by_users"), ondelete="SET NULL"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_reviews")),
    )
    op.create_index("ix_reviews_team_created", "reviews", ["team_id", "created_at"])

    op.create_table(
        "review_candidates",
        sa.Column("id", UUID, nullable=False),
        sa.Column("review_id", UUID, nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column("model", sa.String(300), nullable=False),
        sa.Column("capacity_bytes", sa.BigInteger(), nullable=False),
        sa.Column("unit_price", sa.Numeric(18, 4), nullable=False),
        sa.Column("count", sa.Integer(), nullable=False),
        sa.Column("protection", sa.String(40), nullable=False),
        sa.Column("hot_spares", sa.Integer(), server_default="0", nullable=False),
        sa.Column("over_provisioning", sa.Numeric(6, 5), server_default="0", nullable=False),
        sa.Column("afr", sa.Numeric(7, 6), server_default="0", nullable=False),
        sa.Column("embodied_kg_per_drive", sa.Numeric(12, 3), nullable=True),
        sa.Column("embodied_source", sa.String(500), nullable=True),
        sa.Column("device_id", UUID, nullable=True),
        sa.Column("performance", JSONB, nullable=False),
        sa.Column("power", JSONB, nullable=True),
        sa.Column("job_points", JSONB, server_default="[]", nullable=False),
        sa.Column("reported", JSONB, server_default="{}", nullable=False),
        sa.Column("created_at", TS, server_default=sa.func.now(), nullable=False),
        sa.CheckConstraint("count >= 1", name=op.f("ck_review_candidates_count")),
        sa.CheckConstraint("unit_price >= 0", name=op.f("ck_review_candidates_unit_price")),
        sa.CheckConstraint("hot_spares >= 0", name=op.f("ck_review_candidates_hot_spares")),
        sa.ForeignKeyConstraint(
            ["review_id"],
            ["reviews.id"],
            name=op.f("fk_review_candidates_review_id_reviews"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["device_id"],
            ["devices.id"],
            name=op.f("fk_review_candidates_device_id_devices"),
            ondelete="SET NULL",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_review_candidates")),
    )
    op.create_index("ix_review_candidates_review", "review_candidates", ["review_id", "position"])

    op.create_table(
        "review_comments",
        sa.Column("id", UUID, nullable=False),
        sa.Column("review_id", UUID, nullable=False),
        sa.Column("author_id", UUID, nullable=True),
        sa.Column("body", sa.Text(), nullable=False),
        sa.Column("created_at", TS, server_default=sa.func.now(), nullable=False),
        sa.ForeignKeyConstraint(
            ["review_id"],
            ["reviews.id"],
            name=op.f("fk_review_comments_review_id_reviews"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["author_id"], ["users.id"], name=op.f("fk_review_comments_author_id_users"), ondelete="SET NULL"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_review_comments")),
    )
    op.create_index("ix_review_comments_review", "review_comments", ["review_id", "created_at"])


def downgrade() -> None:
    op.drop_table("review_comments")
    op.drop_table("review_candidates")
    op.drop_table("reviews")
