import uuid
from datetime import datetime
from typing import Any

from pydantic import Field

from backend.kit.schema import OutputSchema


class AuditEventRead(OutputSchema):
    id: uuid.UUID
    team_id: uuid.UUID
    at: datetime
    actor_user_id: uuid.UUID | None = Field(
        description="null: not a user (an agent, the operator) or deleted"
    )
    actor: str = Field(description="who, as they were named when they did it (e-mail, agent name, operator)")
    action: str = Field(description='what, as "<kind>.<verb>": run.deleted, member.role_changed, ...')
    target_kind: str
    target_id: str | None
    details: dict[str, Any]
