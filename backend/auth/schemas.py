import uuid
from datetime import datetime
from typing import Literal

from pydantic import Field

from backend.kit.schema import InputSchema, OutputSchema
from backend.models import Role


class LoginRequest(InputSchema):
    email: str = Field(min_length=3, max_length=320)
    password: str = Field(min_length=1, max_length=1000)


class TeamRole(OutputSchema):
    id: uuid.UUID
    name: str
    role: Role


class UserRead(OutputSchema):
    id: uuid.UUID
    email: str
    display_name: str
    teams: list[TeamRole]
    password_set: bool = Field(description="false for an account that signs in only with single sign-on")
    email_verified: bool = Field(
        description="the owner proved they receive mail at this address; only then is it linked to a "
        "single sign-on identity by e-mail"
    )
    is_instance_admin: bool = Field(description="may issue password reset links for any account")
    can_create_teams: bool = Field(description="may create teams (IOWATT_TEAM_CREATORS)")


class LoginResponse(OutputSchema):
    access_token: str
    token_type: str
    expires_at: datetime | None
    user: UserRead


# a personal token lives at most two years (a larger ttl_s is a 422, never a date overflow)
MAX_TOKEN_TTL_S = 2 * 366 * 24 * 3600

TokenKind = Literal["session", "personal"]
TokenScope = Literal["read", "write", "upload"]
SCOPE_HELP = (
    "read: only reads; write: all the user's roles allow; upload: only adds results "
    "(POST /api/v1/results), for a CI pipeline"
)


class TokenCreate(InputSchema):
    name: str = Field(min_length=1, max_length=200)
    ttl_s: int | None = Field(
        None,
        gt=0,
        le=MAX_TOKEN_TTL_S,
        description=f"lifetime in seconds, at most {MAX_TOKEN_TTL_S} (two years); none = until revoked",
    )
    scope: TokenScope = Field("write", description=SCOPE_HELP)


class TokenRead(OutputSchema):
    """A user's token as listed: never the secret (it is shown once, at creation)."""

    id: uuid.UUID
    name: str
    kind: TokenKind = Field(description="session: a browser login; personal: an API token for scripts")
    scope: TokenScope = Field(description=SCOPE_HELP)
    created_at: datetime
    expires_at: datetime | None
    last_used_at: datetime | None
    revoked_at: datetime | None
    current: bool = Field(description="the token this request was made with (this browser's session)")


class TokenCreated(OutputSchema):
    id: uuid.UUID
    name: str
    scope: TokenScope
    token: str
    expires_at: datetime | None
