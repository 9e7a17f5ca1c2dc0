"""runs text search (issue 30): trigram indexes for the runs list's `q=` at a million runs

`q=` matches each word with ILIKE '%word%' against the run's name and its tags (and its device's,
workload's and agent's names: small tables). A B-tree cannot serve a pattern with a leading
wildcard: every tag row was read to find the matching ones (150,000 rows at a million runs, a
third of the query), and a rare word read every run's name. pg_trgm's GIN indexes serve ILIKE
for words of three characters or more (docs/benchmarks.md § A million runs).

pg_trgm ships with PostgreSQL (contrib) and is a trusted extension: the database's owner may
create it. The downgrade drops the indexes and leaves the extension (another object may use it).

Revision ID: 0023
Revises: 0022
Create Date: 2026-12-06 09:20:00.000000+00:00
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0023"
down_revision: str | None = "0022"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.execute("CREATE EXTENSION IF NOT EXISTS pg_trgm")
    op.create_index(
        "ix_runs_name_trgm", "runs", ["name"], postgresql_using="gin", postgresql_ops={"name": "gin_trgm_ops"}
    )
    op.create_index(
        "ix_run_tags_tag_trgm",
        "run_tags",
        ["tag"],
        postgresql_using="gin",
        postgresql_ops={"tag": "gin_trgm_ops"},
    )


def downgrade() -> None:
    op.drop_index("ix_run_tags_tag_trgm", table_name="run_tags")
    op.drop_index("ix_runs_name_trgm", table_name="runs")
