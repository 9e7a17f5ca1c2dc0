"""teams, people and sharing (issue 13): invitations, token scopes, audit log, share links,
comments, run tags, notes, OpenID Connect identities, external hosts and imported runs

- `api_tokens.scope` (read / write / upload; every existing token keeps `write`, what it could do).
- `users.password_hash` may be null (an account that signs in only with OpenID Connect);
  `users.oidc_issuer`, `users.oidc_subject`: the linked identity, unique together.
- `invitations`, `audit_events`, `share_links`, `comments`, `run_tags`: new tables.
- `devices.notes`, `environments.notes`: free text, empty for existing rows.
- `agents.kind` ("agent" for every existing row; "external" = a host that only uploads results) and
  `runs.source` ("agent" for every existing row; "import" = a result uploaded with an uploader token).
Downgrading drops all of them; it fails if a user has no password (set one first).

Revision ID: 0010
Revises: 0009
Create Date: 2026-11-23 00:10:00.000000+00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0010"
down_revision: str | None = "0009"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

UUID = postgresql.UUID(as_uuid=True)
TS = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.add_column("api_tokens", sa.Column("scope", sa.String(10), server_default="write", nullable=False))
    op.create_check_constraint("scope", "api_tokens", "scope IN ('read', 'write', 'upload')")

    op.alter_column("users", "password_hash", existing_type=sa.String(200), nullable=True)
    op.add_column("users", sa.Column("oidc_issuer", sa.String(500), nullable=True))
    op.add_column("users", sa.Column("oidc_subject", sa.String(255), nullable=True))
    op.create_unique_constraint("uq_users_oidc_identity", "users", ["oidc_issuer", "oidc_subject"])

    op.add_column("devices", sa.Column("notes", sa.Text(), server_default="", nullable=False))
    op.add_column("environments", sa.Column("notes", sa.Text(), server_default="", nullable=False))
    op.add_column("agents", sa.Column("kind", sa.String(16), server_default="agent", nullable=False))
    op.add_column("runs", sa.Column("source", sa.String(16), server_default="agent", nullable=False))

    op.create_table(
        "invitations",
        sa.Column("id", UUID, nullable=False),
        sa.Column("team_id", UUID, nullable=False),
        sa.Column("email", sa.String(320), nullable=False),
        sa.Column("role", postgresql.ENUM(name="role", create_type=False), nullable=False),
        sa.Column("token_hash", sa.String(64), nullable=False),
        sa.Column("created_by", UUID, nullable=True),
        sa.Column("created_at", TS, server_default=sa.func.now(), nullable=False),
        sa.Column("expires_at", TS, nullable=False),
        sa.Column("accepted_at", TS, nullable=True),
        sa.Column("accepted_by", UUID, nullable=True),
        sa.Column("revoked_at", TS, nullable=True),
        sa.ForeignKeyConstraint(["team_id"], ["teams.id"], ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["created_by"], ["users.id"], ondelete="SET NULL"),
        sa.ForeignKeyConstraint(["accepted_by"], ["users.id"], ondelete="SET NULL"),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("token_hash"),
    )
    op.create_index("ix_invitations_team_id", "invitations", ["team_id"])

    op.create_table(
        "audit_events",
        sa.Column("id", UUID, nullable=False),
        sa.Column("team_id", UUID, nullable=False),
        sa.Column("at", TS, server_default=sa.func.now(), nullable=False),
        sa.Column("actor_user_id", UUID, nullable=True),
        sa.Column("actor", sa.String(400), nullable=False),
        sa.Column("action", sa.String(60), nullable=False),
        sa.Column("target_kind", sa.String(40), nullable=False),
        sa.Column("target_id", sa.String(200), nullable=True),
        sa.Column("details", postgresql.JSONB(), nullable=False),
        sa.ForeignKeyConstraint(["team_id"], ["teams.id"], ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["actor_user_id"], ["users.id"], ondelete="SET NULL"),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_audit_events_team_at", "audit_events", ["team_id", "at"])

    op.create_table(
        "share_links",
        sa.Column("id", UUID, nullable=False),
        sa.Column("team_id", UUID, nullable=False),
        sa.Column("kind", sa.String(20), nullable=False),
        sa.Column("target", postgresql.JSONB(), nullable=False),
        sa.Column("title", sa.String(300), nullable=False),
        sa.Column("token_hash", sa.String(64), nullable=False),
        sa.Column("created_by", UUID, nullable=True),
        sa.Column("created_at", TS, server_default=sa.func.now(), nullable=False),
        sa.Column("expires_at", TS, nullable=True),
        sa.Column("revoked_at", TS, nullable=True),
        sa.Column("views", sa.Integer(), server_default="0", nullable=False),
        sa.Column("last_viewed_at", TS, nullable=True),
        sa.CheckConstraint("kind IN ('run', 'comparison', 'campaign')", name="kind"),
        sa.ForeignKeyConstraint(["team_id"], ["teams.id"], ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["created_by"], ["users.id"], ondelete="SET NULL"),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("token_hash"),
    )
    op.create_index("ix_share_links_team_id", "share_links", ["team_id"])

    op.create_table(
        "comments",
        sa.Column("id", UUID, nullable=False),
        sa.Column("team_id", UUID, nullable=False),
        sa.Column("target_kind", sa.String(20), nullable=False),
        sa.Column("target_key", sa.String(2000), nullable=False),
        sa.Column("author_id", UUID, nullable=True),
        sa.Column("body", sa.Text(), nullable=False),
        sa.Column("body_format", sa.String(10), server_default="text", nullable=False),
        sa.Column("created_at", TS, server_default=sa.func.now(), nullable=False),
        sa.Column("edited_at", TS, nullable=True),
        sa.CheckConstraint("target_kind IN ('run', 'comparison', 'campaign')", name="target_kind"),
        sa.CheckConstraint("body_format IN ('text', 'markdown')", name="body_format"),
        sa.ForeignKeyConstraint(["team_id"], ["teams.id"], ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["author_id"], ["users.id"], ondelete="SET NULL"),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_comments_target", "comments", ["team_id", "target_kind", "target_key"])

    op.create_table(
        "run_tags",
        sa.Column("run_id", UUID, nullable=False),
        sa.Column("tag", sa.String(64), nullable=False),
        sa.Column("created_at", TS, server_default=sa.func.now(), nullable=False),
        sa.ForeignKeyConstraint(["run_id"], ["runs.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("run_id", "tag"),
    )
    op.create_index("ix_run_tags_tag", "run_tags", ["tag"])


def downgrade() -> None:
    op.drop_table("run_tags")
    op.drop_table("comments")
    op.drop_table("share_links")
    op.drop_table("audit_events")
    op.drop_table("invitations")
    op.drop_column("runs", "source")
    op.drop_column("agents", "kind")
    op.drop_column("environments", "notes")
    op.drop_column("devices", "notes")
    op.drop_constraint("uq_users_oidc_identity", "users", type_="unique")
    op.drop_column("users", "oidc_subject")
    op.drop_column("users", "oidc_issuer")
    op.alter_column("users", "password_hash", existing_type=sa.String(200), nullable=False)
    op.drop_constraint("scope", "api_tokens", type_="check")
    op.drop_column("api_tokens", "scope")
