import uuid
from datetime import datetime
from typing import Any, Literal

from pydantic import Field

from backend.kit.schema import InputSchema, OutputSchema


class EnrollmentTokenCreate(InputSchema):
    team_id: uuid.UUID
    ttl_s: int | None = Field(7 * 24 * 3600, gt=0, description="lifetime in seconds; null = until revoked")


class EnrollmentTokenCreated(OutputSchema):
    id: uuid.UUID
    team_id: uuid.UUID
    token: str
    expires_at: datetime | None


class AgentEnroll(InputSchema):
    enrollment_token: str = Field(min_length=1, max_length=200)
    name: str = Field(min_length=1, max_length=120, pattern=r"^[A-Za-z0-9_.\-]+$")
    hostname: str = Field(min_length=1, max_length=255)
    agent_version: str = Field("", max_length=50)
    inventory: dict[str, Any] | None = None
    replace: bool = False


class AgentEnrolled(OutputSchema):
    agent_id: uuid.UUID
    agent_token: str
    team_id: uuid.UUID
    heartbeat_interval_s: int


class Heartbeat(InputSchema):
    state: Literal["idle", "busy", "draining"]
    current_run_id: uuid.UUID | None = None
    agent_version: str = Field("", max_length=50)


class HeartbeatAck(OutputSchema):
    server_time: datetime
    heartbeat_interval_s: int


class Lease(OutputSchema):
    run_id: uuid.UUID
    lease_id: uuid.UUID
    lease_expires_at: datetime
    target_path: str
    engine_job: dict[str, Any]
    timeout_s: int
    meter: str | None  # wattmeter spec for this run; null = the agent's configured meter
    idle_s: float | None  # idle baseline before and after the load; null = the agent's default


class LeaseResponse(OutputSchema):
    lease: Lease | None


class AgentRead(OutputSchema):
    id: uuid.UUID
    team_id: uuid.UUID
    name: str
    hostname: str
    online: bool
    state: str
    last_heartbeat_at: datetime | None
    enrolled_at: datetime
    agent_version: str
    inventory: dict[str, Any] | None
    current_run_id: uuid.UUID | None
