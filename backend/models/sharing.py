import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import CheckConstraint, ForeignKey, String
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import Mapped, mapped_column

from backend.models.base import Base, created_at, uuid_pk

SHARE_KINDS = ("run", "comparison", "campaign", "review")


class ShareLink(Base):
    """A read-only link to one frozen view of a team's results, opened without login.

    `target` freezes what the view shows at creation (a run id; a comparison's exact runs,
    baseline, grouping and view options; a campaign id). The data is read when the link is opened,
    so what was deleted since is gone from it too. Revoked or expired: 404."""

    __tablename__ = "share_links"
    __table_args__ = (CheckConstraint("kind IN ('run', 'comparison', 'campaign', 'review')", name="kind"),)
    id: Mapped[uuid.UUID] = uuid_pk()
    team_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("teams.id", ondelete="CASCADE"), index=True)
    kind: Mapped[str] = mapped_column(String(20))
    target: Mapped[dict[str, Any]] = mapped_column(JSONB)
    title: Mapped[str] = mapped_column(String(300), default="")
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    created_by: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("users.id", ondelete="SET NULL"))
    created_at: Mapped[datetime] = created_at()
    expires_at: Mapped[datetime | None]
    revoked_at: Mapped[datetime | None]
    views: Mapped[int] = mapped_column(default=0, server_default="0")
    last_viewed_at: Mapped[datetime | None]
