import uuid
from typing import Annotated

from fastapi import APIRouter, Query

from backend.auth.deps import SessionDep, UserDep
from backend.compare import service
from backend.compare.schemas import Comparison
from backend.errors import Invalid

router = APIRouter(prefix="/compare", tags=["compare"])


@router.get("", response_model=Comparison)
def compare(
    principal: UserDep,
    session: SessionDep,
    runs: Annotated[str, Query(description="comma-separated run ids, the first is the baseline")],
) -> Comparison:
    try:
        ids = [uuid.UUID(x.strip()) for x in runs.split(",") if x.strip()]
    except ValueError as exc:
        raise Invalid("runs", "must be comma-separated UUIDs") from exc
    return service.compare(session, principal=principal, run_ids=ids)
