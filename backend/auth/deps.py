"""Authorization dependencies: every route names who may call it."""

from typing import Annotated

from fastapi import Depends
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from sqlalchemy.orm import Session

from backend.auth import service
from backend.auth.principal import AgentPrincipal, UserPrincipal
from backend.db import get_session
from backend.errors import Forbidden, Unauthorized

SessionDep = Annotated[Session, Depends(get_session)]
bearer = HTTPBearer(auto_error=False)


def get_principal(
    session: SessionDep, creds: Annotated[HTTPAuthorizationCredentials | None, Depends(bearer)]
) -> UserPrincipal | AgentPrincipal:
    if creds is None or creds.scheme.lower() != "bearer" or not creds.credentials:
        raise Unauthorized("missing bearer token", code="no_token")
    return service.authenticate(session, raw_token=creds.credentials)


def get_user(principal: Annotated[UserPrincipal | AgentPrincipal, Depends(get_principal)]) -> UserPrincipal:
    if not isinstance(principal, UserPrincipal):
        raise Forbidden("this needs a user token, not an agent token", code="user_only")
    return principal


def get_agent(principal: Annotated[UserPrincipal | AgentPrincipal, Depends(get_principal)]) -> AgentPrincipal:
    if not isinstance(principal, AgentPrincipal):
        raise Forbidden("this needs an agent token", code="agent_only")
    return principal


UserDep = Annotated[UserPrincipal, Depends(get_user)]
AgentDep = Annotated[AgentPrincipal, Depends(get_agent)]
