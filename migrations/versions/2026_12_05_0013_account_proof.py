"""account proof (issue 22): who owns an e-mail, instance admins, one-use account tokens

- `users.email_verified_at`: when the account's owner proved its e-mail; only such an account is
  linked to a single sign-on identity by e-mail (docs/adr/0026). Existing accounts start unproven,
  except those already linked to an SSO identity (the provider vouched for the address).
- Accounts linked to SSO that also hold a password lose the password and every token: it may be
  the one a squatter set through an invitation before the link (the pre-hijack of issue 22). Their
  owner signs in with SSO as before and sets a password again by a reset, if they want one.
- `users.is_instance_admin`: the oldest account (the one `iowatt-server bootstrap` made) becomes
  one, so the server keeps someone who may create teams (IOWATT_TEAM_CREATORS).
- `account_tokens`: hashed, expiring, one-use e-mail verification and password reset tokens.
- `teams.name` is no longer unique on the server (unique among each member's teams instead).

Downgrading drops the tokens and the two columns; team names that became duplicates get a suffix.

Revision ID: 0013
Revises: 0012
Create Date: 2026-12-05 08:00:00.000000+00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0013"
down_revision: str | None = "0012"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("users", sa.Column("email_verified_at", sa.DateTime(timezone=True), nullable=True))
    op.add_column(
        "users",
        sa.Column("is_instance_admin", sa.Boolean(), server_default=sa.text("false"), nullable=False),
    )
    op.execute("UPDATE users SET email_verified_at = now() WHERE oidc_subject IS NOT NULL")
    op.execute(
        "DELETE FROM api_tokens WHERE user_id IN "
        "(SELECT id FROM users WHERE oidc_subject IS NOT NULL AND password_hash IS NOT NULL)"
    )
    op.execute("UPDATE users SET password_hash = NULL WHERE oidc_subject IS NOT NULL")
    op.execute(
        "UPDATE users SET is_instance_admin = true WHERE id = "
        "(SELECT id FROM users WHERE is_active ORDER BY created_at, id LIMIT 1)"
    )
    op.create_table(
        "account_tokens",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("user_id", sa.Uuid(), nullable=False),
        sa.Column("purpose", sa.String(length=20), nullable=False),
        sa.Column("email", sa.String(length=320), nullable=False),
        sa.Column("token_hash", sa.String(length=64), nullable=False),
        sa.Column("issued_by", sa.Uuid(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), server_default=sa.text("now()"), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("used_at", sa.DateTime(timezone=True), nullable=True),
        sa.CheckConstraint(
            "purpose IN ('verify_email', 'password_reset')", name=op.f("ck_account_tokens_purpose")
        ),
        sa.ForeignKeyConstraint(
            ["user_id"], ["users.id"], name=op.f("fk_account_tokens_user_id_users"), ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(
            ["issued_by"], ["users.id"], name=op.f("fk_account_tokens_issued_by_users"), ondelete="SET NULL"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_account_tokens")),
        sa.UniqueConstraint("token_hash", name=op.f("uq_account_tokens_token_hash")),
    )
    op.create_index(op.f("ix_account_tokens_user_id"), "account_tokens", ["user_id"], unique=False)
    op.drop_constraint(op.f("uq_teams_name"), "teams", type_="unique")
    op.create_index(op.f("ix_teams_name"), "teams", ["name"], unique=False)


def downgrade() -> None:
    op.drop_index(op.f("ix_teams_name"), table_name="teams")
    op.execute(
        "UPDATE teams t SET name = left(t.name, 111) || ' (' || left(t.id::text, 8) || ')' "
        "WHERE EXISTS (SELECT 1 FROM teams o WHERE o.name = t.name AND o.id < t.id)"
    )
    op.create_unique_constraint(op.f("uq_teams_name"), "teams", ["name"])
    op.drop_index(op.f("ix_account_tokens_user_id"), table_name="account_tokens")
    op.drop_table("account_tokens")
    op.drop_column("users", "is_instance_admin")
    op.drop_column("users", "email_verified_at")
