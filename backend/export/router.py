import uuid

from fastapi import APIRouter
from fastapi.responses import StreamingResponse

from backend.auth.deps import SessionDep, UserDep
from backend.export import service
from backend.kit.disposition import attachment
from backend.kit.lanes import BULK

router = APIRouter(prefix="/teams", tags=["export"], dependencies=[BULK])


@router.post(
    "/{team_id}/export",
    response_class=StreamingResponse,
    responses={
        200: {
            "description": "a zip of JSON and CSV files (format: docs/teams.md § Export)",
            "content": {"application/zip": {"schema": {"type": "string", "format": "binary"}}},
        }
    },
)
def export_team(team_id: uuid.UUID, principal: UserDep, session: SessionDep) -> StreamingResponse:
    """Everything of the team as a zip (team admins; audited as team.exported): members, agents,
    devices, environments with their grid series, workloads, campaigns, runs with every engine
    document, series, power samples, energy, comments, share links, invitations and the audit log.
    No token, token hash or password hash is in it."""
    name, f = service.export_team(session, principal=principal, team_id=team_id)
    return StreamingResponse(
        service.chunks(f),
        media_type="application/zip",
        headers={"Content-Disposition": attachment(name, "iowatt-team-export.zip")},
    )
