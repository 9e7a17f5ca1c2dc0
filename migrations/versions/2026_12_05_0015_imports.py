"""imports (issue 26): other tools' files imported as runs, their original bytes kept

- `import_files`: one imported file of a team (gzip-compressed bytes, SHA-256 of the original,
  unique per team, so re-importing the same file is a no-op), its name, content type, format,
  tool and version.
- `runs.origin`: an imported or published run's origin (kind, tool, version, format, the file's
  id, name and SHA-256); null for runs measured by an agent.

Downgrading drops both (the imported runs stay, as uploaded results without their origin).

Revision ID: 0015
Revises: 0014
Create Date: 2026-12-05 17:00:00.000000+00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0015"
down_revision: str | None = "0014"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "import_files",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("team_id", sa.Uuid(), nullable=False),
        sa.Column("sha256", sa.String(length=64), nullable=False),
        sa.Column("file_name", sa.String(length=255), nullable=False),
        sa.Column("content_type", sa.String(length=100), nullable=False),
        sa.Column("format", sa.String(length=40), nullable=False),
        sa.Column("tool", sa.String(length=60), nullable=False),
        sa.Column("version", sa.String(length=100), nullable=True),
        sa.Column("size_bytes", sa.BigInteger(), nullable=False),
        sa.Column("encoding", sa.String(length=10), nullable=False),
        sa.Column("data", sa.LargeBinary(), nullable=False),
        sa.Column("created_by", sa.Uuid(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), server_default=sa.text("now()"), nullable=False),
        sa.ForeignKeyConstraint(
            ["team_id"], ["teams.id"], name=op.f("fk_import_files_team_id_teams"), ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(
            ["created_by"], ["users.id"], name=op.f("fk_import_files_created_by_users"), ondelete="SET NULL"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_import_files")),
        sa.UniqueConstraint("team_id", "sha256", name="uq_import_files_team_sha256"),
    )
    op.add_column("runs", sa.Column("origin", postgresql.JSONB(astext_type=sa.Text()), nullable=True))


def downgrade() -> None:
    op.drop_column("runs", "origin")
    op.drop_table("import_files")
