import uuid
from typing import Annotated, Literal

from fastapi import APIRouter, Query, Response

from backend.auth.deps import SessionDep, UserDep
from backend.environment.schemas import Facet
from backend.environment.topology import parse_filters
from backend.errors import Invalid
from backend.kit.lanes import BULK
from backend.views import service
from backend.views.schemas import ViewCatalog, ViewName, ViewTable

router = APIRouter(prefix="/views", tags=["views"], dependencies=[BULK])


def _ids(runs: str) -> list[uuid.UUID]:
    try:
        return [uuid.UUID(x.strip()) for x in runs.split(",") if x.strip()]
    except ValueError as exc:
        raise Invalid("runs", "must be comma-separated UUIDs") from exc


@router.get("", response_model=ViewCatalog)
def catalog(
    principal: UserDep,
    session: SessionDep,
    runs: Annotated[
        str, Query(description="comma-separated run ids: answers which views can show them")
    ] = "",
) -> ViewCatalog:
    return service.catalog(session, principal=principal, run_ids=_ids(runs))


@router.get(
    "/table",
    response_model=ViewTable,
    responses={
        200: {
            "description": "The view; with format=csv the same columns as text/csv (a download)",
            "content": {"text/csv": {"schema": {"type": "string"}}},
        }
    },
)
def table(
    principal: UserDep,
    session: SessionDep,
    view: Annotated[ViewName, Query(description="the view's name (GET /views lists them)")],
    runs: Annotated[str, Query(description="comma-separated run ids, in the order of the view's columns")],
    baseline: Annotated[
        uuid.UUID | None, Query(description="the Ratio column's denominator (default: the next-to-last run)")
    ] = None,
    format: Annotated[
        Literal["json", "csv"], Query(description="csv: the same columns as text/csv")
    ] = "json",
    group_by: Annotated[
        Facet | None,
        Query(
            description="name the view's environment groups by this field of the runs' recorded environments"
        ),
    ] = None,
    env: Annotated[
        list[Annotated[str, Query(max_length=300)]] | None,
        Query(
            max_length=20, description="FIELD:VALUE of the runs' recorded environments; only matching runs"
        ),
    ] = None,
) -> ViewTable | Response:
    t = service.show(
        session,
        principal=principal,
        view=view,
        run_ids=_ids(runs),
        baseline=baseline,
        env_group=group_by,
        env_filters=parse_filters(env or []),
    )
    if format == "csv":
        return Response(
            service.to_csv(t),
            media_type="text/csv",
            headers={"Content-Disposition": f'attachment; filename="iowatt-{view}.csv"'},
        )
    return t
