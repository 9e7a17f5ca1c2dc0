"""A file imported from another tool (backend/imports): its original bytes, kept byte for byte."""

import uuid
from datetime import datetime

from sqlalchemy import BigInteger, ForeignKey, LargeBinary, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from backend.models.base import Base, created_at, uuid_pk


class ImportFile(Base):
    """One imported file of a team; its runs name it in `runs.origin.file_id`. `data` is the file
    gzip-compressed (`encoding`), so a 200 MB json+ file is a few tens of MB here; downloading it
    answers the original bytes, whose SHA-256 is `sha256` (unique per team: re-importing is a no-op)."""

    __tablename__ = "import_files"
    __table_args__ = (UniqueConstraint("team_id", "sha256", name="uq_import_files_team_sha256"),)

    id: Mapped[uuid.UUID] = uuid_pk()
    team_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("teams.id", ondelete="CASCADE"))
    sha256: Mapped[str] = mapped_column(String(64))
    file_name: Mapped[str] = mapped_column(String(255))
    content_type: Mapped[str] = mapped_column(String(100))
    format: Mapped[str] = mapped_column(String(40))
    tool: Mapped[str] = mapped_column(String(60))
    version: Mapped[str | None] = mapped_column(String(100))
    size_bytes: Mapped[int] = mapped_column(BigInteger)
    encoding: Mapped[str] = mapped_column(String(10))
    data: Mapped[bytes] = mapped_column(LargeBinary)
    created_by: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("users.id", ondelete="SET NULL"))
    created_at: Mapped[datetime] = created_at()
