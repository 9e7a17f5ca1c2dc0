"""Sign-in with OpenID Connect: start the flow, finish it, match the account, hand the browser
its session (docs/adr/0017).

- start: a fresh state, nonce and PKCE verifier, kept in a short-lived HttpOnly cookie signed
  with the server's secret (bound to the browser that started, so a sign-in started elsewhere
  cannot be finished here), and the provider's authorization URL.
- callback: the cookie's state must equal the one the provider sends back; the code is exchanged
  with the verifier and the ID token checked (oidc_client). The account: the one linked to
  (issuer, subject) if any; else the one whose e-mail the provider says is VERIFIED, which is
  then linked; else a new one when IOWATT_OIDC_AUTO_CREATE is on; else refused.
- the session: the callback stores a one-time code in Redis for 60 s and sends the browser to
  the SPA with it in the URL fragment (never sent to a server, so in no access log); the SPA
  trades it with POST /auth/oidc/session for a session token, as /auth/login answers.
"""

import base64
import hashlib
import hmac
import json
import secrets
import time
import uuid
from dataclasses import dataclass

import redis
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from backend.auth import oidc_client, oidc_repository, repository, service
from backend.auth.oidc_client import Identity, OidcError
from backend.auth.throttle import get_redis
from backend.config import Settings
from backend.errors import AppError, NotFound, Unauthorized
from backend.models import ApiToken, User

FLOW_COOKIE = "iowatt_oidc_flow"
FLOW_TTL_S = 600
HANDOFF_TTL_S = 60
_HANDOFF_PREFIX = "iowatt:oidc-handoff:"
CALLBACK_PATH = "/api/v1/auth/oidc/callback"


class OidcNotConfigured(NotFound):
    def __init__(self) -> None:
        super().__init__(
            "sign-in with OpenID Connect is not configured on this server (IOWATT_OIDC_ISSUER)",
            code="oidc_not_configured",
        )


class SignInUnavailable(AppError):
    status_code = 503
    code = "oidc_unavailable"


def configured(settings: Settings) -> bool:
    return bool(settings.oidc_issuer and settings.oidc_client_id)


def require_configured(settings: Settings) -> None:
    if not configured(settings):
        raise OidcNotConfigured()


def redirect_uri(settings: Settings) -> str:
    return settings.oidc_redirect_uri or settings.public_url.rstrip("/") + CALLBACK_PATH


# --- the flow cookie ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Flow:
    state: str
    nonce: str
    code_verifier: str
    issuer: str
    expires_at: float


def _mac(settings: Settings, payload: bytes) -> bytes:
    key = hashlib.sha256(b"iowatt oidc flow\0" + settings.secret_key.encode()).digest()
    return hmac.new(key, payload, hashlib.sha256).digest()


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def seal_flow(settings: Settings, flow: Flow) -> str:
    payload = json.dumps(
        {"s": flow.state, "n": flow.nonce, "v": flow.code_verifier, "i": flow.issuer, "e": flow.expires_at},
        separators=(",", ":"),
    ).encode()
    return f"{_b64(payload)}.{_b64(_mac(settings, payload))}"


def open_flow(settings: Settings, sealed: str | None) -> Flow:
    """The flow this browser started, if the cookie is ours, unexpired and for this issuer."""
    missing = OidcError(
        "flow_missing",
        "this sign-in was not started in this browser or took more than 10 minutes: start it again",
    )
    if not sealed or "." not in sealed:
        raise missing
    body, _, mac = sealed.partition(".")
    try:
        payload = _unb64(body)
        ok = hmac.compare_digest(_unb64(mac), _mac(settings, payload))
        if not ok:
            raise missing
        data = json.loads(payload)
        flow = Flow(
            state=str(data["s"]),
            nonce=str(data["n"]),
            code_verifier=str(data["v"]),
            issuer=str(data["i"]),
            expires_at=float(data["e"]),
        )
    except (ValueError, TypeError, KeyError) as exc:
        raise missing from exc
    if flow.expires_at < time.time() or flow.issuer != settings.oidc_issuer:
        raise missing
    return flow


def start(settings: Settings) -> tuple[str, str]:
    """(the provider's authorization URL, the sealed flow cookie)."""
    require_configured(settings)
    flow = Flow(
        state=secrets.token_urlsafe(32),
        nonce=secrets.token_urlsafe(32),
        code_verifier=secrets.token_urlsafe(64),  # 86 characters: within RFC 7636's 43..128
        issuer=settings.oidc_issuer,
        expires_at=time.time() + FLOW_TTL_S,
    )
    url = oidc_client.authorization_url(
        settings,
        redirect_uri=redirect_uri(settings),
        state=flow.state,
        nonce=flow.nonce,
        code_verifier=flow.code_verifier,
    )
    return url, seal_flow(settings, flow)


# --- the account ---------------------------------------------------------------------------------


def match_account(session: Session, settings: Settings, identity: Identity) -> User:
    """The account this identity signs in to (linking it on first use), or a refusal."""
    user = oidc_repository.user_by_identity(session, issuer=identity.issuer, subject=identity.subject)
    if user is None:
        user = _by_verified_email(session, settings, identity)
    if not user.is_active:
        raise OidcError("account_inactive", "this account is deactivated: ask a team admin")
    return user


def _by_verified_email(session: Session, settings: Settings, identity: Identity) -> User:
    if identity.email is None:
        raise OidcError(
            "email_missing",
            "the provider gave no e-mail address: allow the email scope for this application",
        )
    trusted = identity.email_verified is None and settings.oidc_trust_email
    if not (identity.email_verified or trusted):
        raise OidcError(
            "email_unverified",
            f"the provider has not verified {identity.email}: verify it there, then sign in again",
        )
    domain = identity.email.rpartition("@")[2]
    if settings.oidc_allowed_domains and domain not in settings.oidc_allowed_domains:
        raise OidcError("domain_not_allowed", f"addresses at {domain} may not sign in to this server")
    user = oidc_repository.user_by_email_for_update(session, identity.email)
    if user is None:
        if not settings.oidc_auto_create:
            raise OidcError(
                "unknown_account",
                f"no account uses {identity.email}: ask a team admin for an invitation, accept it, "
                "then sign in with single sign-on",
            )
        user = _create(session, identity, identity.email)
    elif not user.is_active:
        raise OidcError("account_inactive", "this account is deactivated: ask a team admin")
    elif user.oidc_subject is not None:
        # already linked to another identity (another subject, or another provider): a second
        # person at the provider with a recycled address must not take the account over
        raise OidcError(
            "identity_conflict",
            f"the account of {identity.email} is linked to another single sign-on identity",
        )
    user.oidc_issuer = identity.issuer
    user.oidc_subject = identity.subject
    session.flush()
    return user


def _create(session: Session, identity: Identity, email: str) -> User:
    user = User(email=email, display_name=identity.name or email.partition("@")[0], password_hash=None)
    try:
        with session.begin_nested():  # two first sign-ins at once: one creates, the other retries
            session.add(user)
            session.flush()
    except IntegrityError as exc:
        raise OidcError(
            "unavailable", "this account was being created at the same moment: sign in again"
        ) from exc
    return user


# --- the callback and the handoff ----------------------------------------------------------------


def callback(
    session: Session,
    settings: Settings,
    *,
    sealed_flow: str | None,
    code: str | None,
    state: str | None,
    iss: str | None,
    error: str | None,
    error_description: str | None,
) -> str:
    """Finish the sign-in the provider sent the browser back from: the one-time handoff code."""
    require_configured(settings)
    flow = open_flow(settings, sealed_flow)
    if state is None or not hmac.compare_digest(state.encode(), flow.state.encode()):
        raise OidcError(
            "state_mismatch", "the sign-in answer does not belong to this sign-in: start it again"
        )
    if iss is not None and iss != settings.oidc_issuer:  # RFC 9207: an answer from another provider
        raise OidcError("issuer_mismatch", "the sign-in answer comes from another provider")
    if error is not None:
        raise OidcError("provider_denied", f"the provider refused: {(error_description or error)[:300]}")
    if not code:
        raise OidcError("provider_error", "the provider sent no authorization code")
    identity = oidc_client.finish(
        settings,
        redirect_uri=redirect_uri(settings),
        code=code,
        code_verifier=flow.code_verifier,
        nonce=flow.nonce,
    )
    user = match_account(session, settings, identity)
    handoff = secrets.token_urlsafe(32)
    try:
        get_redis().set(_handoff_key(handoff), str(user.id), ex=HANDOFF_TTL_S)
    except redis.RedisError as exc:
        raise OidcError("unavailable", "sign-in is unavailable right now (Redis): try again shortly") from exc
    return handoff


def _handoff_key(code: str) -> str:
    return _HANDOFF_PREFIX + hashlib.sha256(code.encode()).hexdigest()


def exchange(session: Session, settings: Settings, *, code: str) -> tuple[str, ApiToken, User]:
    """Trade a handoff code (once, within a minute) for a browser session token."""
    require_configured(settings)
    try:
        raw_user_id: bytes | None = get_redis().getdel(_handoff_key(code))  # type: ignore[assignment]
    except redis.RedisError as exc:
        raise SignInUnavailable("sign-in is unavailable right now (Redis): try again shortly") from exc
    user = None
    if raw_user_id is not None:
        user = repository.user_by_id(session, uuid.UUID(raw_user_id.decode()))
    if user is None or not user.is_active:
        raise Unauthorized(
            "this sign-in code is unknown, used or older than a minute: sign in again", code="bad_oidc_code"
        )
    raw, row = service.issue_token(
        session,
        user_id=user.id,
        name="browser session (single sign-on)",
        kind="session",
        ttl_s=settings.session_token_ttl_s,
    )
    return raw, row, user
