import uuid
from datetime import datetime
from typing import Literal

from pydantic import Field

from backend.kit.schema import InputSchema, OutputSchema

TargetKind = Literal["run", "comparison", "campaign"]
BodyFormat = Literal["text", "markdown"]

# A comparison's key lists its run ids: at most this many (the key column holds 2,000 characters)
MAX_COMPARISON_RUNS = 50
MAX_BODY = 20_000


class CommentCreate(InputSchema):
    team_id: uuid.UUID | None = Field(
        None,
        description="the team the comment belongs to; needed only for a comparison whose runs "
        "belong to several of the caller's teams (otherwise the target's team)",
    )
    target_kind: TargetKind
    target_key: str = Field(
        min_length=1,
        max_length=2000,
        description="a run's or campaign's id; for a comparison its run ids, comma-separated in any "
        "order (stored sorted: the canonical key)",
    )
    body: str = Field(min_length=1, max_length=MAX_BODY)
    body_format: BodyFormat = "text"


class CommentUpdate(InputSchema):
    body: str | None = Field(None, min_length=1, max_length=MAX_BODY)
    body_format: BodyFormat | None = None


class CommentRead(OutputSchema):
    id: uuid.UUID
    team_id: uuid.UUID
    target_kind: TargetKind
    target_key: str
    author_id: uuid.UUID | None
    # the author's display name, or "deleted user" once their account is deleted
    author_name: str
    body: str
    body_format: BodyFormat
    created_at: datetime
    edited_at: datetime | None
