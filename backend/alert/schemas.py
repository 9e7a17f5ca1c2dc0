import uuid
from datetime import datetime
from typing import Any, Literal

from pydantic import Field

from backend.kit.schema import InputSchema, OutputSchema

AlertKind = Literal["regression", "run_failed", "run_expired", "agent_offline", "schedule_missed"]
ALERT_KINDS: tuple[str, ...] = ("regression", "run_failed", "run_expired", "agent_offline", "schedule_missed")
ChannelKind = Literal["webhook", "apprise"]


class ChannelCreate(InputSchema):
    team_id: uuid.UUID
    name: str = Field(min_length=1, max_length=120)
    kind: ChannelKind = Field(
        description="webhook: a JSON POST signed with HMAC-SHA256 (X-Iowatt-Signature); apprise: an "
        "Apprise URL (mailto://, slack://, msteams://, matrix://, ...)"
    )
    url: str = Field(min_length=8, max_length=2000)
    events: list[AlertKind] = Field(min_length=1, max_length=len(ALERT_KINDS))
    agent_offline_min: int = Field(
        10, ge=1, le=7 * 24 * 60, description="an agent offline this long raises agent_offline"
    )
    enabled: bool = True


class ChannelUpdate(InputSchema):
    name: str | None = Field(None, min_length=1, max_length=120)
    url: str | None = Field(None, min_length=8, max_length=2000)
    events: list[AlertKind] | None = Field(None, min_length=1, max_length=len(ALERT_KINDS))
    agent_offline_min: int | None = Field(None, ge=1, le=7 * 24 * 60)
    enabled: bool | None = None


class ChannelRead(OutputSchema):
    id: uuid.UUID
    team_id: uuid.UUID
    name: str
    kind: ChannelKind
    url: str = Field(description="scheme and host only: tokens and passwords are never shown again")
    events: list[AlertKind]
    agent_offline_min: int
    enabled: bool
    created_by: uuid.UUID | None
    created_at: datetime


class ChannelCreated(ChannelRead):
    secret: str | None = Field(
        description="a webhook's signing key, shown this once: X-Iowatt-Signature is "
        "sha256=HEX(HMAC-SHA256(secret, X-Iowatt-Timestamp + '.' + body))"
    )


class ChannelPage(OutputSchema):
    items: list[ChannelRead]
    total: int


class DeliveryRead(OutputSchema):
    id: uuid.UUID
    channel_id: uuid.UUID
    channel_name: str
    status: Literal["pending", "sent", "failed"]
    attempts: int
    next_attempt_at: datetime
    last_error: str | None
    response_status: int | None
    sent_at: datetime | None


class AlertRead(OutputSchema):
    id: uuid.UUID
    team_id: uuid.UUID
    kind: str = Field(description="one of the channel events, or test")
    title: str
    text: str
    link: str = Field(description="where in the UI the alert points (absolute, on IOWATT_PUBLIC_URL)")
    details: dict[str, Any]
    created_at: datetime
    deliveries: list[DeliveryRead]


class AlertPage(OutputSchema):
    items: list[AlertRead]
    total: int


class TestSent(OutputSchema):
    alert_id: uuid.UUID
    delivery_id: uuid.UUID
