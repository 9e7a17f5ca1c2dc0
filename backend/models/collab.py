import uuid
from datetime import datetime

from sqlalchemy import CheckConstraint, ForeignKey, Index, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from backend.models.base import Base, created_at, uuid_pk

COMMENT_TARGETS = ("run", "comparison", "campaign")


class Comment(Base):
    """A comment on a run, a comparison or a campaign.

    `target_key`: the run's or campaign's id; for a comparison, its canonical key (the sorted run
    ids it compares, see backend/comment)."""

    __tablename__ = "comments"
    __table_args__ = (
        CheckConstraint("target_kind IN ('run', 'comparison', 'campaign')", name="target_kind"),
        CheckConstraint("body_format IN ('text', 'markdown')", name="body_format"),
        Index("ix_comments_target", "team_id", "target_kind", "target_key"),
    )
    id: Mapped[uuid.UUID] = uuid_pk()
    team_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("teams.id", ondelete="CASCADE"))
    target_kind: Mapped[str] = mapped_column(String(20))
    target_key: Mapped[str] = mapped_column(String(2000))
    author_id: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("users.id", ondelete="SET NULL"))
    body: Mapped[str] = mapped_column(Text)
    body_format: Mapped[str] = mapped_column(String(10), default="text", server_default="text")
    created_at: Mapped[datetime] = created_at()
    edited_at: Mapped[datetime | None]


class RunTag(Base):
    """A label on a run ("baseline", "fw-2.1"): the runs list filters by it."""

    __tablename__ = "run_tags"
    __table_args__ = (
        Index("ix_run_tags_tag", "tag"),
        # the runs list's text search (ILIKE '%word%'; migration 0023, pg_trgm)
        Index("ix_run_tags_tag_trgm", "tag", postgresql_using="gin", postgresql_ops={"tag": "gin_trgm_ops"}),
    )
    run_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"), primary_key=True)
    tag: Mapped[str] = mapped_column(String(64), primary_key=True)
    created_at: Mapped[datetime] = created_at()
