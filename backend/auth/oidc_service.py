"""Sign-in with OpenID Connect: start the flow, finish it, match the account, hand the browser
its session (docs/adr/0017).

- start: a fresh state, nonce and PKCE verifier, kept in a short-lived HttpOnly cookie signed
  with the server's secret (bound to the browser that started, so a sign-in started elsewhere
  cannot be finished here), and the provider's authorization URL.
- callback: the cookie's state must equal the one the provider sends back; the code is exchanged
  with the verifier and the ID token checked (oidc_client). The account: the one linked to
  (issuer, subject) if any; else the one whose e-mail the provider says is VERIFIED, linked only
  when the account's owner proved that e-mail too (docs/adr/0026); an account whose e-mail is
  unproven (made from an invitation: whoever held the link chose its password) is linked only in
  the link step, where the person gives the account's password; else a new account when
  IOWATT_OIDC_AUTO_CREATE is on; else refused.
- the session: the callback stores a one-time code in Redis for 60 s (a link code: 10 minutes)
  and sends the browser to the SPA with it in the URL fragment (never sent to a server, so in no
  access log); the SPA trades it with POST /auth/oidc/session (or /auth/oidc/link with the
  password) for a session token, as /auth/login answers. The code is bound to the flow cookie
  of the browser that started the sign-in: traded from another browser (an attacker's code
  planted in a victim's browser: login CSRF), it is refused.
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

from backend.auth import oidc_client, oidc_repository, proof, repository, service, throttle
from backend.auth.oidc_client import Identity, OidcError
from backend.auth.throttle import get_redis
from backend.config import Settings
from backend.errors import AppError, Conflict, NotFound, TooManyRequests, Unauthorized
from backend.kit.security import burn_password_check, verify_password
from backend.kit.time import utcnow
from backend.models import ApiToken, User

FLOW_COOKIE = "iowatt_oidc_flow"
FLOW_TTL_S = 600
HANDOFF_TTL_S = 60
LINK_TTL_S = 600
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


@dataclass(frozen=True)
class Match:
    """The account an identity signs in to; `link_needed`: it has this e-mail but its owner never
    proved it, so the identity is linked only once the person gives the account's password."""

    user: User
    link_needed: bool = False


def match_account(session: Session, settings: Settings, identity: Identity) -> Match:
    """The account this identity signs in to (linking it on first use), or a refusal."""
    user = oidc_repository.user_by_identity(session, issuer=identity.issuer, subject=identity.subject)
    if user is None:
        return _by_verified_email(session, settings, identity)
    if not user.is_active:
        raise OidcError("account_inactive", "this account is deactivated: ask a team admin")
    return Match(user)


def _by_verified_email(session: Session, settings: Settings, identity: Identity) -> Match:
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
    elif user.email_verified_at is None:
        # the account claims the address, but its owner never proved it: the person signing in
        # must show they own the account too (its password), or take it back by a reset
        if user.password_hash is None:  # cannot happen (SSO-made accounts are proven): refuse
            raise OidcError("identity_conflict", f"the account of {identity.email} cannot be linked")
        return Match(user, link_needed=True)
    _link(session, user, identity.issuer, identity.subject)
    return Match(user)


def _link(session: Session, user: User, issuer: str, subject: str) -> None:
    user.oidc_issuer = issuer
    user.oidc_subject = subject
    proof.prove(user)  # the provider vouches for the address, and so did the account's owner
    session.flush()


def _create(session: Session, identity: Identity, email: str) -> User:
    user = User(
        email=email,
        display_name=identity.name or email.partition("@")[0],
        password_hash=None,
        email_verified_at=utcnow(),  # the provider verified it, and nobody else holds the account
    )
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
) -> "Handoff":
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
    match = match_account(session, settings, identity)
    handoff = secrets.token_urlsafe(32)
    value: dict[str, str] = {"u": str(match.user.id), "b": _binding(flow)}
    if match.link_needed:
        value |= {"k": "link", "i": identity.issuer, "s": identity.subject}
    try:
        get_redis().set(
            _handoff_key(handoff), json.dumps(value), ex=LINK_TTL_S if match.link_needed else HANDOFF_TTL_S
        )
    except redis.RedisError as exc:
        raise OidcError("unavailable", "sign-in is unavailable right now (Redis): try again shortly") from exc
    return Handoff(code=handoff, link_email=match.user.email if match.link_needed else None)


@dataclass(frozen=True)
class Handoff:
    code: str
    link_email: str | None  # set: the SPA asks for this account's password (the link step)


def _binding(flow: Flow) -> str:
    """What ties a handoff code to the browser that started the flow: a hash of its state (the
    flow cookie holds the state; the code alone does not)."""
    return hashlib.sha256(b"iowatt oidc handoff\0" + flow.state.encode()).hexdigest()


def _handoff_key(code: str) -> str:
    return _HANDOFF_PREFIX + hashlib.sha256(code.encode()).hexdigest()


BAD_CODE = (
    "this sign-in code is unknown, used, older than its time, or was started in another browser: "
    "sign in again"
)


def _take(
    settings: Settings, *, code: str, sealed_flow: str | None, kind: str, consume: bool
) -> dict[str, str]:
    """The handoff behind a code, if this browser started its flow; consumed when `consume`."""
    require_configured(settings)
    try:
        flow = open_flow(settings, sealed_flow)
    except OidcError:
        flow = None
    try:
        r = get_redis()
        raw: bytes | None = r.get(_handoff_key(code))  # type: ignore[assignment]
    except redis.RedisError as exc:
        raise SignInUnavailable("sign-in is unavailable right now (Redis): try again shortly") from exc
    value: dict[str, str] | None = None
    if raw is not None:
        try:
            loaded = json.loads(raw)
            value = loaded if isinstance(loaded, dict) else None
        except ValueError:
            value = None
    if (
        value is None
        or value.get("k", "session") != kind
        or flow is None
        or not hmac.compare_digest(str(value.get("b", "")), _binding(flow))
    ):
        raise Unauthorized(BAD_CODE, code="bad_oidc_code")
    if consume:
        try:
            if not r.delete(_handoff_key(code)):  # another request took it first
                raise Unauthorized(BAD_CODE, code="bad_oidc_code")
        except redis.RedisError as exc:
            raise SignInUnavailable("sign-in is unavailable right now (Redis): try again shortly") from exc
    return value


def _session_for(session: Session, settings: Settings, user: User) -> tuple[str, ApiToken, User]:
    raw, row = service.issue_token(
        session,
        user_id=user.id,
        name="browser session (single sign-on)",
        kind="session",
        ttl_s=settings.session_token_ttl_s,
    )
    return raw, row, user


def exchange(
    session: Session, settings: Settings, *, code: str, sealed_flow: str | None
) -> tuple[str, ApiToken, User]:
    """Trade a handoff code (once, within a minute, from the browser that started the flow) for
    a browser session token."""
    value = _take(settings, code=code, sealed_flow=sealed_flow, kind="session", consume=True)
    user = repository.user_by_id(session, uuid.UUID(value["u"]))
    if user is None or not user.is_active:
        raise Unauthorized(BAD_CODE, code="bad_oidc_code")
    return _session_for(session, settings, user)


def link(
    session: Session, settings: Settings, *, code: str, password: str, sealed_flow: str | None, client: str
) -> tuple[str, ApiToken, User]:
    """The link step: the person the provider vouches for gives the password of the account that
    claims their address. Right: the identity is linked, the address proven, a session answered.
    Wrong: counted by the login throttle (ADR 0010); the code stays usable until it expires."""
    value = _take(settings, code=code, sealed_flow=sealed_flow, kind="link", consume=False)
    user = oidc_repository.user_by_id_for_update(session, uuid.UUID(value["u"]))
    if user is None or not user.is_active:
        raise Unauthorized(BAD_CODE, code="bad_oidc_code")
    blocked = throttle.check(user.email, client)
    if blocked is not None:
        raise TooManyRequests(
            f"too many failed logins from this {blocked.scope}: try again in {blocked.retry_after_s} s",
            retry_after_s=blocked.retry_after_s,
            code="login_throttled",
        )
    if user.password_hash is None:
        burn_password_check(password)
        ok = False
    else:
        ok, _ = verify_password(password, user.password_hash)
    if not ok:
        throttle.record_failure(user.email, client)
        raise Unauthorized(
            "that is not this account's password. If the account is not yours, take it back with a "
            "password reset (by mail, or a link from an instance administrator)",
            code="bad_credentials",
        )
    throttle.record_success(user.email, client)
    if user.oidc_subject is not None and (user.oidc_issuer, user.oidc_subject) != (value["i"], value["s"]):
        raise Conflict(
            f"the account of {user.email} is linked to another single sign-on identity",
            code="identity_conflict",
        )
    if oidc_repository.user_by_identity(session, issuer=value["i"], subject=value["s"]) not in (None, user):
        raise Conflict("this single sign-on identity is linked to another account", code="identity_conflict")
    _take(settings, code=code, sealed_flow=sealed_flow, kind="link", consume=True)
    _link(session, user, value["i"], value["s"])
    return _session_for(session, settings, user)
