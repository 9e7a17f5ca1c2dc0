"""runs text search (issue 30): a trigram index on the tags for the runs list's `q=`

`q=` matches each word with ILIKE '%word%' against the run's name and its tags (and its device's,
workload's and agent's names: small tables). PostgreSQL finds the matching tags' runs once per
query (a hashed subplan), but a B-tree cannot serve a pattern with a leading wildcard: every tag
row was read (150,000 at a million runs, most of the page's and the count's time). pg_trgm's GIN
index serves ILIKE for words of three characters or more (docs/benchmarks.md § A million runs).
The run's own name is tested on the runs the list walks in its order (an index on it would not
be used beside the other ORed conditions).

pg_trgm ships with PostgreSQL (contrib) and is a trusted extension: the database's owner may
create it. The downgrade drops the index and leaves the extension (another object may use it).

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
        "ix_run_tags_tag_trgm",
        "run_tags",
        ["tag"],
        postgresql_using="gin",
        postgresql_ops={"tag": "gin_trgm_ops"},
    )


def downgrade() -> None:
    op.drop_index("ix_run_tags_tag_trgm", table_name="run_tags")
