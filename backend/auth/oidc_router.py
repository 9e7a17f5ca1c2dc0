"""Sign-in with OpenID Connect (docs/adr/0017). Off (404 `oidc_not_configured`, and
`GET /auth/oidc` says enabled: false) unless IOWATT_OIDC_ISSUER is set.

The browser opens /auth/oidc/login, signs in at the provider, comes back to /auth/oidc/callback
and is sent on to the SPA's /login/oidc: with `#code=...` (a one-time code the SPA trades with
POST /auth/oidc/session for a session token) or with `#error=<code>&message=...` (refused: the
page says why). Nothing secret is ever in a URL a server sees."""

from typing import Annotated, Any
from urllib.parse import urlencode

from fastapi import APIRouter, Cookie, Query, Request
from fastapi.responses import RedirectResponse

from backend.auth import oidc_service, service
from backend.auth.deps import SessionDep
from backend.auth.oidc_client import OidcError
from backend.auth.oidc_schemas import OidcConfig, OidcSessionRequest
from backend.auth.schemas import LoginResponse
from backend.config import get_settings
from backend.kit.http import is_tls
from backend.logs import log

router = APIRouter(prefix="/auth/oidc", tags=["auth"])

SPA_PAGE = "/login/oidc"
COOKIE_PATH = "/api/v1/auth/oidc"
NOT_CONFIGURED: dict[int | str, dict[str, Any]] = {
    404: {"description": "Sign-in with OpenID Connect is not configured on this server"}
}
REDIRECT: dict[int | str, dict[str, Any]] = {
    303: {"description": "To the provider, or to the SPA's /login/oidc with a code or an error"}
}
Param = Annotated[str | None, Query(max_length=4096)]


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
    iowatt_oidc_flow: Annotated[str | None, Cookie(max_length=4096)] = None,
) -> RedirectResponse:
    """Where the provider sends the browser back: verifies the answer, matches the account (linked
    identity, else verified e-mail) and sends the browser to the SPA with a one-time code, or with
    the reason it was refused."""
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
        response = _to_spa(code=handoff)
    except OidcError as exc:
        response = _refused(exc, "callback")
    response.delete_cookie(oidc_service.FLOW_COOKIE, path=COOKIE_PATH)
    return response


@router.post(
    "/session",
    response_model=LoginResponse,
    responses={
        401: {"description": "The code is unknown, used or older than a minute"},
        503: {"description": "Redis, which holds the codes, cannot be reached"},
        **NOT_CONFIGURED,
    },
)
def create_session(body: OidcSessionRequest, session: SessionDep) -> LoginResponse:
    """Trade the callback's one-time code (valid once, for a minute) for a browser session token,
    as POST /auth/login answers."""
    raw, row, user = oidc_service.exchange(session, get_settings(), code=body.code)
    return LoginResponse(
        access_token=raw,
        token_type="bearer",
        expires_at=row.expires_at,
        user=service.user_read(session, user=user),
    )
