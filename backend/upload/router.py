from fastapi import APIRouter, Response, status

from backend.auth.deps import SessionDep, UploaderDep
from backend.kit.lanes import BULK
from backend.upload import service
from backend.upload.schemas import ResultImport, ResultImported

router = APIRouter(prefix="/results", tags=["results"], dependencies=[BULK])


@router.post(
    "",
    response_model=ResultImported,
    status_code=status.HTTP_201_CREATED,
    responses={200: {"model": ResultImported, "description": "this upload_id was stored before"}},
)
def upload_result(
    body: ResultImport, principal: UploaderDep, session: SessionDep, response: Response
) -> ResultImported:
    """Add a finished result from outside (a CI pipeline): an iowatt-engine or fio JSON document
    run on `host`, stored as a succeeded run of source "import". Takes a token of scope upload
    (or write) of a member of the team. Idempotent by upload_id."""
    stored = service.import_result(session, principal=principal, body=body)
    if stored.duplicate:
        response.status_code = status.HTTP_200_OK
    return stored
