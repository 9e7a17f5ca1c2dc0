"""runs of one agent (issue 30): `ix_runs_agent_created (agent_id, created_at) INCLUDE (team_id)` replaces `ix_runs_agent_id`

The runs list filtered to one agent (`agent_id = X ORDER BY created_at DESC, id LIMIT 50`) had only
the agent's id to go by: PostgreSQL read the newest runs of every agent backwards and kept one
agent's (17,865 rows and 4,169 pages for one page of 50 at a million runs; a cold cache made it the
list's slowest case, docs/benchmarks.md § A million runs, session 24). With the creation time after
the agent's id the page is the index's first 50 entries. The team, included, lets the list's bounded
count (up to 1,001 runs of the agent in the caller's teams) be an index-only scan: 12 pages
instead of 1,007. The old one-column index goes: the new one serves every lookup by agent (the
dispatcher's, the agent deletion's cascade) as its leading column.

Plain CREATE INDEX (inside the upgrade's transaction): writes to runs wait while it is built,
seconds at a million runs.

Revision ID: 0025
Revises: 0024
Create Date: 2026-12-07 12:40:00.000000+00:00
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0025"
down_revision: str | None = "0024"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_index(
        "ix_runs_agent_created", "runs", ["agent_id", "created_at"], postgresql_include=["team_id"]
    )
    op.drop_index("ix_runs_agent_id", table_name="runs")


def downgrade() -> None:
    op.create_index("ix_runs_agent_id", "runs", ["agent_id"])
    op.drop_index("ix_runs_agent_created", table_name="runs")
