import uuid
from datetime import datetime
from typing import Literal

from pydantic import Field

from backend.kit.schema import InputSchema, OutputSchema

Kind = Literal["local", "das", "san", "nas", "raid", "cloud", "other"]


class EnvironmentCreate(InputSchema):
    team_id: uuid.UUID
    name: str = Field(min_length=1, max_length=120)
    kind: Kind
    description: str = Field("", max_length=2000)


class EnvironmentRead(OutputSchema):
    id: uuid.UUID
    team_id: uuid.UUID
    name: str
    kind: str
    description: str
    created_at: datetime
