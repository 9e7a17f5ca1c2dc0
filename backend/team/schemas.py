import uuid
from datetime import datetime

from pydantic import Field

from backend.kit.schema import InputSchema, OutputSchema
from backend.models import Role


class TeamCreate(InputSchema):
    name: str = Field(min_length=1, max_length=120, description="unique among your teams")


class TeamUpdate(InputSchema):
    name: str = Field(min_length=1, max_length=120, description="unique among your teams")


class TeamRead(OutputSchema):
    id: uuid.UUID
    name: str
    created_at: datetime
    member_count: int
    role: Role = Field(description="the caller's role in the team")


class MemberRead(OutputSchema):
    user_id: uuid.UUID
    email: str
    display_name: str
    role: Role
    joined_at: datetime


class MemberUpdate(InputSchema):
    role: Role
