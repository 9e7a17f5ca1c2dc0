import enum
import uuid
from datetime import datetime

from sqlalchemy import CheckConstraint, Enum, ForeignKey, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column, relationship

from backend.models.base import Base, created_at, uuid_pk


class Role(str, enum.Enum):
    viewer = "viewer"
    member = "member"
    admin = "admin"

    @property
    def rank(self) -> int:
        return {"viewer": 0, "member": 1, "admin": 2}[self.value]


class Team(Base):
    """A team. Its name is unique among the teams of each member (checked by the team service),
    not on the server: a refusal must never tell a stranger that another team uses a name
    (docs/adr/0026)."""

    __tablename__ = "teams"
    id: Mapped[uuid.UUID] = uuid_pk()
    name: Mapped[str] = mapped_column(String(120), index=True)
    created_at: Mapped[datetime] = created_at()


class User(Base):
    __tablename__ = "users"
    __table_args__ = (UniqueConstraint("oidc_issuer", "oidc_subject", name="uq_users_oidc_identity"),)
    id: Mapped[uuid.UUID] = uuid_pk()
    email: Mapped[str] = mapped_column(String(320), unique=True)
    display_name: Mapped[str] = mapped_column(String(200))
    # null: no password (an account that signs in only with OpenID Connect)
    password_hash: Mapped[str | None] = mapped_column(String(200))
    is_active: Mapped[bool] = mapped_column(default=True)
    created_at: Mapped[datetime] = created_at()
    # the OpenID Connect identity linked to this account (issuer URL and subject), if any
    oidc_issuer: Mapped[str | None] = mapped_column(String(500))
    oidc_subject: Mapped[str | None] = mapped_column(String(255))
    # when the account's owner proved they receive mail at `email` (a verification mail confirmed
    # while signed in, a password reset by mail, an admin's reset link, a password given while
    # linking single sign-on, or an account made by single sign-on); null: unproven, e.g. an account
    # made by accepting an invitation. Only a proven e-mail is linked to an SSO identity (ADR 0026).
    email_verified_at: Mapped[datetime | None]
    # an instance administrator: may create teams (IOWATT_TEAM_CREATORS) and issue reset links
    is_instance_admin: Mapped[bool] = mapped_column(default=False, server_default="false")

    memberships: Mapped[list["Membership"]] = relationship(
        lazy="raise", back_populates="user", passive_deletes=True
    )


class Membership(Base):
    __tablename__ = "memberships"
    __table_args__ = (UniqueConstraint("user_id", "team_id"),)
    id: Mapped[uuid.UUID] = uuid_pk()
    user_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    team_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("teams.id", ondelete="CASCADE"), index=True)
    role: Mapped[Role] = mapped_column(Enum(Role, name="role"))
    created_at: Mapped[datetime] = created_at()

    user: Mapped[User] = relationship(lazy="raise", back_populates="memberships")
    team: Mapped[Team] = relationship(lazy="raise")


TOKEN_SCOPES = ("read", "write", "upload")


class ApiToken(Base):
    """A user's bearer token: `session` from a browser login, `personal` for scripts.

    `scope` narrows what the user's roles allow: `read` only reads, `write` does all the roles
    allow, `upload` only adds results (a CI pipeline's token)."""

    __tablename__ = "api_tokens"
    __table_args__ = (
        CheckConstraint("kind IN ('session', 'personal')", name="kind"),
        CheckConstraint("scope IN ('read', 'write', 'upload')", name="scope"),
    )
    id: Mapped[uuid.UUID] = uuid_pk()
    user_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    name: Mapped[str] = mapped_column(String(200))
    kind: Mapped[str] = mapped_column(String(20))
    scope: Mapped[str] = mapped_column(String(10), default="write", server_default="write")
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    created_at: Mapped[datetime] = created_at()
    expires_at: Mapped[datetime | None]
    last_used_at: Mapped[datetime | None]
    revoked_at: Mapped[datetime | None]


class Invitation(Base):
    """A one-use, expiring, revocable link that lets a person join a team with a role."""

    __tablename__ = "invitations"
    id: Mapped[uuid.UUID] = uuid_pk()
    team_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("teams.id", ondelete="CASCADE"), index=True)
    email: Mapped[str] = mapped_column(String(320))
    role: Mapped[Role] = mapped_column(Enum(Role, name="role"))
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    created_by: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("users.id", ondelete="SET NULL"))
    created_at: Mapped[datetime] = created_at()
    expires_at: Mapped[datetime]
    accepted_at: Mapped[datetime | None]
    accepted_by: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("users.id", ondelete="SET NULL"))
    revoked_at: Mapped[datetime | None]


ACCOUNT_TOKEN_PURPOSES = ("verify_email", "password_reset")


class AccountToken(Base):
    """A one-use, expiring secret proving something about an account: `verify_email` (mailed to
    the account's address) or `password_reset` (mailed, or a link an instance admin hands over).
    Only the sha256 of the token is kept; `email` is the address it was issued for, so a token
    is void once the account's address changes (docs/adr/0026)."""

    __tablename__ = "account_tokens"
    __table_args__ = (CheckConstraint("purpose IN ('verify_email', 'password_reset')", name="purpose"),)
    id: Mapped[uuid.UUID] = uuid_pk()
    user_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    purpose: Mapped[str] = mapped_column(String(20))
    email: Mapped[str] = mapped_column(String(320))
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    # the instance admin who issued a reset link; null: mailed on the account owner's request
    issued_by: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("users.id", ondelete="SET NULL"))
    created_at: Mapped[datetime] = created_at()
    expires_at: Mapped[datetime]
    used_at: Mapped[datetime | None]
