"""The query parameters every list route takes alike: a page (limit, offset) and a team."""

import uuid
from typing import Annotated

from fastapi import Query

# offset bounded so a huge one is a 422, not a bigint overflow in PostgreSQL
MAX_OFFSET = 1_000_000

Limit = Annotated[int, Query(ge=1, le=200)]
Offset = Annotated[int, Query(ge=0, le=MAX_OFFSET)]
TeamFilter = Annotated[uuid.UUID | None, Query(description="one of your teams; none: all of them")]
