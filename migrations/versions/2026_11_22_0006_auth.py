"""auth hardening (issue 9): a token's kind is one of two

- `api_tokens.kind` may only be `session` (a browser login, ended by logout) or `personal` (an
  API token for scripts, ended by revoking it): logout and the token list rely on it. Any other
  value (none was ever written) becomes `personal`, the kind that logout does not end.
- Passwords need no migration: scrypt hashes from before Argon2id still verify and are rehashed
  with Argon2id at the user's next successful login (backend/kit/security.py).

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-22 19:00:00.000000+00:00
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0006"
down_revision: str | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.execute("UPDATE api_tokens SET kind = 'personal' WHERE kind NOT IN ('session', 'personal')")
    op.create_check_constraint("kind", "api_tokens", "kind IN ('session', 'personal')")


def downgrade() -> None:
    op.drop_constraint("kind", "api_tokens", type_="check")
