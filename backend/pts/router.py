"""GET /runs/{id}/pts: a SNIA PTS run's report (JSON, or its tables as CSV)."""

import uuid
from typing import Annotated, Literal

from fastapi import APIRouter, Query, Response

from backend.auth.deps import SessionDep, UserDep
from backend.kit.disposition import attachment
from backend.kit.lanes import BULK
from backend.pts import service
from backend.pts.schemas import PtsReport
from backend.run import service as run_service

router = APIRouter(prefix="/runs", tags=["runs"], dependencies=[BULK])


@router.get(
    "/{run_id}/pts",
    response_model=PtsReport,
    responses={
        200: {
            "description": "The run's SNIA PTS report; with format=csv its tables (verdict, rounds, window, "
            "window averages per element)",
            "content": {"text/csv": {"schema": {"type": "string"}}},
        },
        404: {"description": "`no_pts_result`: not a pts run, or no result yet"},
    },
)
def get_pts_report(
    run_id: uuid.UUID,
    principal: UserDep,
    session: SessionDep,
    format: Annotated[
        Literal["json", "csv"], Query(description="csv: the report's tables (a download)")
    ] = "json",
) -> PtsReport | Response:
    """A SNIA PTS run's report pages as data: the verdict (steady state reached, in which round,
    PTS-compliant or why not), per-round figures, the measurement window with its least-squares
    fit and excursion limits, and every element's window averages (any role of the run's team)."""
    run = run_service.get(session, principal=principal, run_id=run_id)
    r = service.get_report(session, run=run)
    if format == "csv":
        return Response(
            service.to_csv(r),
            media_type="text/csv",
            headers={"Content-Disposition": attachment(f"iowatt-pts-{run.id}.csv", "iowatt-pts.csv")},
        )
    return Response(r.model_dump_json(), media_type="application/json")
