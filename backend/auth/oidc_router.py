"""Sign-in with OpenID Connect (docs/adr/0017). Off (404 `oidc_not_configured`, and
`GET /auth/oidc` says enabled: false) unless IOWATT_OIDC_ISSUER is set.

The browser opens /auth/oidc/login, signs in at the provider, comes back to /auth/oidc/callback
and is sent on to the SPA's /login/oidc: with `#code=...` (a one-time code the SPA trades with
POST /auth/oidc/session for a session token), with `#link=...&email=...` (an account claims the
address but its owner never proved it: the SPA asks for that account's password and posts it
with the code to POST /auth/oidc/link), or with `#error=<code>&message=...` (refused: the page
says why). Nothing secret is ever in a URL a server sees. The flow cookie stays until the code
is traded: the code works only from the browser holding it (docs/adr/0026)."""

from typing import Annotated, Any
from urllib.parse import urlencode

from fastapi import APIRouter, Cookie, Query, Request, Response
from fastapi.responses import RedirectResponse

from backend.auth import oidc_service, service
from backend.auth.deps import SessionDep
from backend.auth.oidc_client import OidcError
from backend.auth.oidc_schemas import OidcConfig, OidcLinkRequest, OidcSessionRequest
from backend.auth.schemas import LoginResponse
from backend.config import get_settings
from backend.kit.http import client_address, is_tls
from backend.kit.lanes import BULK
from backend.logs import log

router = APIRouter(prefix="/auth/oidc", tags=["auth"], dependencies=[BULK])

SPA_PAGE = "/login/oidc"
COOKIE_PATH = "/api/v1/auth/oidc"
NOT_CONFIGURED: dict[int | str, dict[str, Any]] = {
    404: {"description": "Sign-in with OpenID Connect is not configured on this server"}
}
REDIRECT: dict[int | str, dict[str, Any]] = {
    303: {"description": "To the provider, or to the SPA's /login/oidc with a code or an error"}
}
Param = Annotated[str | None, Query(max_length=4096)]
FlowCookie = Annotated[str | None, Cookie(max_length=4096)]


def _to_spa(**fragment: str) -> RedirectResponse:
    # a 303 turns the provider's GET into the SPA page's GET; the fragment stays in the browser
    return RedirectResponse(f"{SPA_PAGE}#{urlencode(fragment)}", status_code=303)


def _refused(exc: OidcError, where: str) -> RedirectResponse:
    log.info("oidc.refused", step=where, reason=exc.code)
    return _to_spa(error=exc.code, message=exc.message)


@router.get("", response_model=OidcConfig)
def config() -> OidcConfig:
    """Is sign-in with OpenID Connect offered here, and what the login page's button says."""
    settings = get_settings()
    if not oidc_service.configured(settings):
        return OidcConfig(enabled=False, display_name=None, login_url=None)
    return OidcConfig(
        enabled=True, display_name=settings.oidc_display_name, login_url="/api/v1/auth/oidc/login"
    )


@router.get(
    "/login", response_class=RedirectResponse, status_code=303, responses={**NOT_CONFIGURED, **REDIRECT}
)
def login(request: Request) -> RedirectResponse:
    """Start a sign-in: sends the browser to the provider (authorization code with PKCE, state and
    nonce, kept for 10 minutes in an HttpOnly cookie of this browser)."""
    settings = get_settings()
    oidc_service.require_configured(settings)
    try:
        url, sealed = oidc_service.start(settings)
    except OidcError as exc:
        return _refused(exc, "login")
    response = RedirectResponse(url, status_code=303)
    response.set_cookie(
        oidc_service.FLOW_COOKIE,
        sealed,
        max_age=oidc_service.FLOW_TTL_S,
        path=COOKIE_PATH,
        httponly=True,
        samesite="lax",  # sent on the provider's top-level redirect back to the callback
        secure=is_tls(request.scope),
    )
    return response


@router.get(
    "/callback", response_class=RedirectResponse, status_code=303, responses={**NOT_CONFIGURED, **REDIRECT}
)
def callback(
    session: SessionDep,
    code: Param = None,
    state: Param = None,
    iss: Param = None,
    error: Param = None,
    error_description: Param = None,
    iowatt_oidc_flow: FlowCookie = None,
) -> RedirectResponse:
    """Where the provider sends the browser back: verifies the answer, matches the account (linked
    identity, else a verified e-mail its owner proved too) and sends the browser to the SPA with a
    one-time code, a link code (the account's password is needed), or the reason it was refused."""
    settings = get_settings()
    oidc_service.require_configured(settings)
    try:
        handoff = oidc_service.callback(
            session,
            settings,
            sealed_flow=iowatt_oidc_flow,
            code=code,
            state=state,
            iss=iss,
            error=error,
            error_description=error_description,
        )
    except OidcError as exc:
        response = _refused(exc, "callback")
        response.delete_cookie(oidc_service.FLOW_COOKIE, path=COOKIE_PATH)
        return response
    if handoff.link_email is not None:
        return _to_spa(link=handoff.code, email=handoff.link_email)
    return _to_spa(code=handoff.code)  # the flow cookie stays: the code is traded with it


BAD_CODE: dict[int | str, dict[str, Any]] = {
    401: {
        "description": "`bad_oidc_code`: the code is unknown, used, expired, or this browser did not "
        "start its sign-in (no flow cookie, or another one)"
    },
    503: {"description": "Redis, which holds the codes, cannot be reached"},
    **NOT_CONFIGURED,
}


def _signed_in(session: SessionDep, response: Response, raw: str, row: Any, user: Any) -> LoginResponse:
    response.delete_cookie(oidc_service.FLOW_COOKIE, path=COOKIE_PATH)
    return LoginResponse(
        access_token=raw,
        token_type="bearer",
        expires_at=row.expires_at,
        user=service.user_read(session, user=user),
    )


@router.post("/session", response_model=LoginResponse, responses=BAD_CODE)
def create_session(
    body: OidcSessionRequest, session: SessionDep, response: Response, iowatt_oidc_flow: FlowCookie = None
) -> LoginResponse:
    """Trade the callback's one-time code (valid once, for a minute, and only with the flow cookie
    of the browser that started the sign-in) for a browser session token, as POST /auth/login
    answers."""
    raw, row, user = oidc_service.exchange(
        session, get_settings(), code=body.code, sealed_flow=iowatt_oidc_flow
    )
    return _signed_in(session, response, raw, row, user)


@router.post(
    "/link",
    response_model=LoginResponse,
    responses={
        **BAD_CODE,
        409: {"description": "`identity_conflict`: the account or the identity is linked elsewhere"},
        429: {"description": "`login_throttled`: too many wrong passwords (the login's throttle)"},
    },
)
def link_account(
    body: OidcLinkRequest,
    session: SessionDep,
    request: Request,
    response: Response,
    iowatt_oidc_flow: FlowCookie = None,
) -> LoginResponse:
    """The link step (`#link=` in /login/oidc): an account uses the provider's address but its
    owner never proved it. With that account's password (counted like a login), the identity is
    linked, the address proven, and a browser session answered. Without it, take the account back
    by a password reset."""
    raw, row, user = oidc_service.link(
        session,
        get_settings(),
        code=body.code,
        password=body.password,
        sealed_flow=iowatt_oidc_flow,
        client=client_address(request.scope),
    )
    return _signed_in(session, response, raw, row, user)
