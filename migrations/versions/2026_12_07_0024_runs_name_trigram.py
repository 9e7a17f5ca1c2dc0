"""runs text search (issue 30): a trigram index on the runs' names for the runs list's `q=`

A word of `q=` matches a run's name, its tags, or its device's, workload's or agent's name. The
list now finds a word few runs match through indexes (backend/run/repository.py `_text_matches`:
the tags' trigram index of 0023, the small tables' matches as id lists, and this index for the
names, one bitmap OR), instead of testing every run of the caller's teams in the list's order
(docs/benchmarks.md § A million runs). Built inside the upgrade's transaction: writes to runs wait
while it is built (about a minute at a million runs).

Revision ID: 0024
Revises: 0023
Create Date: 2026-12-07 10:20:00.000000+00:00
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0024"
down_revision: str | None = "0023"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.execute("CREATE EXTENSION IF NOT EXISTS pg_trgm")
    op.create_index(
        "ix_runs_name_trgm", "runs", ["name"], postgresql_using="gin", postgresql_ops={"name": "gin_trgm_ops"}
    )


def downgrade() -> None:
    op.drop_index("ix_runs_name_trgm", table_name="runs")
