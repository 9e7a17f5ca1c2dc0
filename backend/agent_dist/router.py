"""GET /api/v1/agent-dist: the agent bundles, their SHA-256 and the install script.

Anonymous on purpose: a host being installed has no credential yet but its enrolment token, which
never leaves the host except to enrol. Nothing served is secret (the agent is open source; the
script is the same text for every caller, filled only with the bundles' names and hashes).
"""

from fastapi import APIRouter, Depends
from fastapi.responses import FileResponse, PlainTextResponse, Response

from backend.agent_dist import service, throttle
from backend.agent_dist.schemas import AgentDist
from backend.kit.lanes import BULK

# counted per client address before anything else (backend/agent_dist/throttle.py)
router = APIRouter(
    prefix="/agent-dist",
    tags=["agent-dist"],
    dependencies=[Depends(throttle.check), BULK],
    responses={429: {"description": throttle.DESCRIPTION}},
)


@router.get("", response_model=AgentDist)
def get_agent_dist() -> AgentDist:
    """The bundles this server serves (tarball, .deb, .rpm per architecture) with their SHA-256,
    and the server certificate's fingerprint and public-key pin when it is configured."""
    return service.describe()


@router.get(
    "/install.sh",
    response_class=PlainTextResponse,
    responses={200: {"content": {"text/x-shellscript": {}}, "description": "the POSIX sh installer"}},
)
def get_install_script() -> PlainTextResponse:
    """The installer: `curl -fsSL .../install.sh | sudo sh -s -- --server URL --token-file FILE`."""
    return PlainTextResponse(service.install_script(), media_type="text/x-shellscript; charset=utf-8")


@router.get(
    "/ca.pem",
    response_class=Response,
    responses={
        200: {"content": {"application/x-pem-file": {}}, "description": "the CA certificate(s), PEM"},
        404: {"description": "`agent_ca_not_configured`: the server names no CA"},
    },
)
def get_agent_ca() -> Response:
    """The CA that signs the server's certificates (IOWATT_AGENT_TLS_CA_FILE), for hosts to trust
    after checking its SHA-256 (`tls_ca.sha256` of the manifest, which the install line carries)."""
    return Response(
        service.ca_pem(),
        media_type="application/x-pem-file",
        headers={"X-Content-Type-Options": "nosniff", "Cache-Control": "no-store"},
    )


@router.get(
    "/files/{file_name}",
    response_class=FileResponse,
    responses={200: {"content": {"application/octet-stream": {}}, "description": "the file"}, 404: {}},
)
def get_agent_bundle(file_name: str) -> FileResponse:
    """A bundle, or its `NAME.sha256` (sha256sum's format)."""
    f = service.bundle_file(file_name)
    return FileResponse(
        f.path, media_type=f.media_type, filename=file_name, headers={"X-Content-Type-Options": "nosniff"}
    )
