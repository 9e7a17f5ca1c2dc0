import re
import uuid
from datetime import datetime
from typing import Literal

from pydantic import Field, field_validator

from backend.kit.schema import InputSchema, OutputSchema
from backend.models import Role

InvitationState = Literal["pending", "accepted", "revoked", "expired"]

# one @, something on each side, a dot in the domain, no spaces: what a mail server needs to try
EMAIL_RE = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")


class InvitationCreate(InputSchema):
    email: str = Field(min_length=3, max_length=320, description="who is invited: the account's e-mail")
    role: Role
    ttl_s: int | None = Field(
        None,
        gt=0,
        description="how long the link stays usable, in seconds (default IOWATT_INVITATION_TTL_S, 7 days; "
        "at most IOWATT_INVITATION_MAX_TTL_S, 30 days)",
    )

    @field_validator("email")
    @classmethod
    def _email(cls, value: str) -> str:
        if not EMAIL_RE.match(value):
            raise ValueError("is not an e-mail address")
        return value.lower()


class InvitationCreated(OutputSchema):
    """The link is in this answer only: the server keeps a hash of its token."""

    id: uuid.UUID
    url: str = Field(description="the one-use link to pass on: <public URL>/invite/<token>")
    expires_at: datetime
    email: str
    role: Role
    mailed: bool = Field(
        description="whether the server sent the link by mail (SMTP configured and accepted)"
    )


class InvitationRead(OutputSchema):
    id: uuid.UUID
    team_id: uuid.UUID
    email: str
    role: Role
    state: InvitationState
    invited_by: str | None = Field(description="the inviter's e-mail; null once that account is deleted")
    created_at: datetime
    expires_at: datetime
    accepted_at: datetime | None
    revoked_at: datetime | None


class InvitationPreview(OutputSchema):
    """What the accept page shows before anyone signs in: never whether the address has an
    account (the page offers both: sign in and accept, or create the account)."""

    team_id: uuid.UUID
    team_name: str
    inviter: str | None = Field(description="the inviter's display name; null once that account is deleted")
    email: str
    role: Role
    state: InvitationState
    expires_at: datetime


class InvitationAccept(InputSchema):
    display_name: str | None = Field(
        None, min_length=1, max_length=200, description="for a new account (ignored for an existing one)"
    )
    password: str | None = Field(
        None, min_length=8, max_length=1000, description="for a new account, at least 8 characters"
    )
