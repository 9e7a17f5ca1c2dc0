import uuid
from datetime import datetime
from typing import Any

from backend.kit.schema import OutputSchema


class DeviceRead(OutputSchema):
    id: uuid.UUID
    team_id: uuid.UUID
    agent_id: uuid.UUID
    key: str
    name: str
    kind: str
    facts: dict[str, Any]
    created_at: datetime
