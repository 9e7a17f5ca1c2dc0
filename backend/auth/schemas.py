import uuid
from datetime import datetime

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


class LoginResponse(OutputSchema):
    access_token: str
    token_type: str
    expires_at: datetime | None
    user: UserRead


class TokenCreate(InputSchema):
    name: str = Field(min_length=1, max_length=200)
    ttl_s: int | None = Field(None, gt=0, description="lifetime in seconds; none = until revoked")


class TokenCreated(OutputSchema):
    id: uuid.UUID
    name: str
    token: str
    expires_at: datetime | None
