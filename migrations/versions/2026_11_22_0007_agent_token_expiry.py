"""agent token expiry and rotation (docs/adr/0011)

- `agents.token_expires_at`: when the agent's token stops working. Agents enrolled before get
  30 days from the upgrade (the default `agent_token_ttl_s`), so none is locked out by it; a
  current agent rotates its token before then (`POST /agents/{id}/token`).
- `agents.previous_token_hash` / `.previous_token_expires_at`: the token before the last rotation,
  kept so a rotation whose answer was lost never locks the agent out. Empty for every agent now.
  Downgrading drops them (the current token stays, without expiry).

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-22 19:30:00.000000+00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0007"
down_revision: str | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("agents", sa.Column("token_expires_at", sa.DateTime(timezone=True), nullable=True))
    op.execute("UPDATE agents SET token_expires_at = now() + interval '30 days'")
    op.alter_column("agents", "token_expires_at", nullable=False)
    op.add_column("agents", sa.Column("previous_token_hash", sa.String(length=64), nullable=True))
    op.add_column("agents", sa.Column("previous_token_expires_at", sa.DateTime(timezone=True), nullable=True))
    op.create_unique_constraint("uq_agents_previous_token_hash", "agents", ["previous_token_hash"])


def downgrade() -> None:
    op.drop_constraint("uq_agents_previous_token_hash", "agents", type_="unique")
    op.drop_column("agents", "previous_token_expires_at")
    op.drop_column("agents", "previous_token_hash")
    op.drop_column("agents", "token_expires_at")
