"""share links to procurement reviews (issue 16): `share_links.kind` may be 'review'

A review link's `target` is `{"review": "<id>"}` (a JSONB object, as the other kinds). Downgrading
deletes the review links (the older schema cannot hold them) and restores the three kinds.

Revision ID: 0012
Revises: 0011
Create Date: 2026-11-23 04:00:00.000000+00:00
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0012"
down_revision: str | None = "0011"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.drop_constraint(op.f("ck_share_links_kind"), "share_links", type_="check")
    op.create_check_constraint(
        op.f("ck_share_links_kind"), "share_links", "kind IN ('run', 'comparison', 'campaign', 'review')"
    )


def downgrade() -> None:
    op.execute("DELETE FROM share_links WHERE kind = 'review'")
    op.drop_constraint(op.f("ck_share_links_kind"), "share_links", type_="check")
    op.create_check_constraint(
        op.f("ck_share_links_kind"), "share_links", "kind IN ('run', 'comparison', 'campaign')"
    )
