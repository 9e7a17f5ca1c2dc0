"""Authorization dependencies: every route names who may call it."""

from typing import Annotated

from fastapi import Depends, Request, Response
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from sqlalchemy.orm import Session

from backend.agent import protocol
from backend.auth import service
from backend.auth.principal import AgentPrincipal, UserPrincipal
from backend.db import get_session
from backend.errors import Forbidden, Unauthorized

# The request's unit of work ends (commits) before the response is sent: scope="function". A yield
# dependency otherwise ends after the client has its answer (FastAPI >= 0.118): a 201 for a row not
# committed yet, or never.
SessionDep = Annotated[Session, Depends(get_session, scope="function")]
bearer = HTTPBearer(auto_error=False)


def get_principal(
    session: SessionDep, creds: Annotated[HTTPAuthorizationCredentials | None, Depends(bearer)]
) -> UserPrincipal | AgentPrincipal:
    if creds is None or creds.scheme.lower() != "bearer" or not creds.credentials:
        raise Unauthorized("missing bearer token", code="no_token")
    return service.authenticate(session, raw_token=creds.credentials)


SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


def _user(principal: UserPrincipal | AgentPrincipal) -> UserPrincipal:
    if not isinstance(principal, UserPrincipal):
        raise Forbidden("this needs a user token, not an agent token", code="user_only")
    return principal


def get_user(
    request: Request, principal: Annotated[UserPrincipal | AgentPrincipal, Depends(get_principal)]
) -> UserPrincipal:
    """A user, within the token's scope: a `read` token only reads, an `upload` token reaches only
    the routes that take UploaderDep."""
    user = _user(principal)
    if user.scope == "upload":
        raise Forbidden(
            "this token's scope is upload: it can only add results (POST /api/v1/results)",
            code="scope_upload",
        )
    if user.scope == "read" and request.method not in SAFE_METHODS:
        raise Forbidden("this token's scope is read: it cannot change anything", code="scope_read")
    return user


def get_uploader(
    principal: Annotated[UserPrincipal | AgentPrincipal, Depends(get_principal)],
) -> UserPrincipal:
    """A user whose token may add results: scope `upload` or `write` (never `read`)."""
    user = _user(principal)
    if user.scope == "read":
        raise Forbidden("this token's scope is read: it cannot add results", code="scope_read")
    return user


def get_agent(
    request: Request,
    response: Response,
    principal: Annotated[UserPrincipal | AgentPrincipal, Depends(get_principal)],
) -> AgentPrincipal:
    if not isinstance(principal, AgentPrincipal):
        raise Forbidden("this needs an agent token", code="agent_only")
    protocol.check(request, response)  # a version more than one step away: 403
    return principal


# The routes' dependencies are coroutines over the checks above: they only look at the principal and
# the request, so they run on the event loop instead of a hop to the threadpool and back each (a
# sync dependency is one: two to three per authenticated request, a share of every request's CPU).
async def _user_dep(
    request: Request, principal: Annotated[UserPrincipal | AgentPrincipal, Depends(get_principal)]
) -> UserPrincipal:
    return get_user(request, principal)


async def _uploader_dep(
    principal: Annotated[UserPrincipal | AgentPrincipal, Depends(get_principal)],
) -> UserPrincipal:
    return get_uploader(principal)


async def _agent_dep(
    request: Request,
    response: Response,
    principal: Annotated[UserPrincipal | AgentPrincipal, Depends(get_principal)],
) -> AgentPrincipal:
    return get_agent(request, response, principal)


UserDep = Annotated[UserPrincipal, Depends(_user_dep)]
UploaderDep = Annotated[UserPrincipal, Depends(_uploader_dep)]
AgentDep = Annotated[AgentPrincipal, Depends(_agent_dep)]
