import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import ForeignKey, Index, String, false, text
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import Mapped, mapped_column

from backend.models.base import Base, created_at, uuid_pk


class EnrollmentToken(Base):
    """Lets a host enrol as an agent of one team: `max_uses` times (once by default) until it
    expires or is revoked. `operator`: made on the server host (`iowatt-server enrollment-token`);
    only such a token or one made by a current team admin may replace an existing agent."""

    __tablename__ = "enrollment_tokens"
    id: Mapped[uuid.UUID] = uuid_pk()
    team_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("teams.id", ondelete="CASCADE"), index=True)
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    created_by: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("users.id", ondelete="SET NULL"))
    created_at: Mapped[datetime] = created_at()
    expires_at: Mapped[datetime | None]
    revoked_at: Mapped[datetime | None]
    uses: Mapped[int] = mapped_column(default=0)
    max_uses: Mapped[int] = mapped_column(default=1, server_default="1")
    operator: Mapped[bool] = mapped_column(default=False, server_default=false())


class Agent(Base):
    """An enrolled host. Revoked: its token is refused, its name stays taken. Deleted (by an
    admin): also hidden and its name free again; its runs and results stay. Its token expires
    (`token_expires_at`); the agent rotates it before then (docs/adr/0011)."""

    __tablename__ = "agents"
    __table_args__ = (
        Index(
            "uq_agents_team_name_live",
            "team_id",
            "name",
            unique=True,
            postgresql_where=text("deleted_at IS NULL"),
        ),
    )
    id: Mapped[uuid.UUID] = uuid_pk()
    team_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("teams.id", ondelete="CASCADE"), index=True)
    name: Mapped[str] = mapped_column(String(120))
    hostname: Mapped[str] = mapped_column(String(255))
    # "agent": runs iowatt-agent; "external": a host whose results are only uploaded (a CI runner
    # with an uploader token): it is never dispatched to and holds no usable agent token
    kind: Mapped[str] = mapped_column(String(16), default="agent", server_default="agent")
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    token_expires_at: Mapped[datetime]
    # the token before the last rotation (docs/adr/0011): valid until previous_token_expires_at,
    # which the first use of the current token brings forward to a short overlap
    previous_token_hash: Mapped[str | None] = mapped_column(String(64), unique=True)
    previous_token_expires_at: Mapped[datetime | None]
    agent_version: Mapped[str] = mapped_column(String(50), default="")
    state: Mapped[str] = mapped_column(String(20), default="idle")
    inventory: Mapped[dict[str, Any] | None] = mapped_column(JSONB)
    online: Mapped[bool] = mapped_column(default=False)
    last_heartbeat_at: Mapped[datetime | None]
    # the agent process that sent the latest heartbeat (new at every agent start); null = too old
    boot_id: Mapped[uuid.UUID | None]
    enrolled_at: Mapped[datetime] = created_at()
    revoked_at: Mapped[datetime | None]
    deleted_at: Mapped[datetime | None]
