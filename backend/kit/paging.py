"""The query parameters every list route takes alike: a page (limit, offset) and a team."""

import uuid
from typing import Annotated

from fastapi import Query

from backend.kit.bounds import MAX_OFFSET

Limit = Annotated[int, Query(ge=1, le=200)]
Offset = Annotated[int, Query(ge=0, le=MAX_OFFSET)]
TeamFilter = Annotated[uuid.UUID | None, Query(description="one of your teams; none: all of them")]
