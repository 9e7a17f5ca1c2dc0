"""The OpenID Connect protocol, client side (docs/adr/0017), on Authlib and joserfc.

Authorization-code flow with PKCE (S256), state and nonce. The provider's endpoints and keys come
from its discovery document (`ISSUER/.well-known/openid-configuration`, whose `issuer` must be the
configured one) and its JWKS; both are kept for an hour per issuer, and the JWKS is fetched again
at once when an ID token names a key it does not hold (the provider rotated its keys). An ID
token is accepted only with a valid signature by an asymmetric key of that set, `iss` = the
issuer, `aud` holding our client id (`azp` too when there are several audiences), `exp` in the
future and `nonce` = the one this browser's sign-in sent (60 s leeway for clocks).

Every failure is an `OidcError` with a short code and a message for people: the router turns it
into the sign-in error page, never a 500.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from backend.config import Settings

if TYPE_CHECKING:
    from authlib.integrations.httpx_client import OAuth2Client
    from joserfc.jwk import KeySet

# httpx, Authlib and joserfc (with cryptography's ciphers) are imported by the functions that use
# them: about a tenth of the API's start-up CPU, paid now only by a server that signs someone in
# (tests/backend/test_startup_imports.py)

DISCOVERY_TTL_S = 3600
LEEWAY_S = 60
# ID tokens signed with a key of the provider's JWKS only: no "none", no HMAC with the client secret
ASYMMETRIC_ALGS = ("RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA")


class OidcError(Exception):
    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


@dataclass
class _Provider:
    metadata: dict[str, Any]
    jwks: dict[str, Any] | None
    fetched_at: float


_lock = threading.Lock()
_providers: dict[str, _Provider] = {}


def _get_json(url: str, *, timeout_s: float, what: str) -> dict[str, Any]:
    import httpx

    try:
        r = httpx.get(url, timeout=timeout_s, headers={"Accept": "application/json"})
        r.raise_for_status()
        doc = r.json()
    except (httpx.HTTPError, ValueError) as exc:
        raise OidcError("provider_unreachable", f"the sign-in provider's {what} could not be read") from exc
    if not isinstance(doc, dict):
        raise OidcError("provider_error", f"the sign-in provider's {what} is not a JSON object")
    return doc


def _provider(settings: Settings) -> _Provider:
    issuer = settings.oidc_issuer
    with _lock:
        known = _providers.get(issuer)
        if known is not None and time.monotonic() - known.fetched_at < DISCOVERY_TTL_S:
            return known
    url = issuer.rstrip("/") + "/.well-known/openid-configuration"
    meta = _get_json(url, timeout_s=settings.oidc_timeout_s, what="discovery document")
    if meta.get("issuer") != issuer:
        raise OidcError(
            "provider_error",
            f"the provider's discovery document names issuer {str(meta.get('issuer'))[:200]!r}, "
            f"not the configured {issuer!r}",
        )
    for key in ("authorization_endpoint", "token_endpoint", "jwks_uri"):
        if not isinstance(meta.get(key), str):
            raise OidcError("provider_error", f"the provider's discovery document has no {key}")
    found = _Provider(metadata=meta, jwks=None, fetched_at=time.monotonic())
    with _lock:
        _providers[issuer] = found
    return found


def _jwks(settings: Settings, provider: _Provider, *, force: bool) -> KeySet:
    from joserfc.errors import JoseError
    from joserfc.jwk import KeySet

    if provider.jwks is None or force:
        provider.jwks = _get_json(
            provider.metadata["jwks_uri"], timeout_s=settings.oidc_timeout_s, what="signing keys (JWKS)"
        )
    try:
        return KeySet.import_key_set(provider.jwks)  # type: ignore[arg-type]
    except (JoseError, ValueError, TypeError, KeyError) as exc:
        raise OidcError("provider_error", "the provider's signing keys (JWKS) cannot be read") from exc


def _client(settings: Settings, redirect_uri: str) -> OAuth2Client:
    from authlib.integrations.httpx_client import OAuth2Client

    return OAuth2Client(
        client_id=settings.oidc_client_id,
        client_secret=settings.oidc_client_secret or None,
        token_endpoint_auth_method="client_secret_basic" if settings.oidc_client_secret else "none",
        scope=settings.oidc_scopes,
        redirect_uri=redirect_uri,
        code_challenge_method="S256",
        timeout=settings.oidc_timeout_s,
    )


def authorization_url(
    settings: Settings, *, redirect_uri: str, state: str, nonce: str, code_verifier: str
) -> str:
    """The provider's authorization endpoint with our client, scopes, state, nonce and the PKCE
    challenge of `code_verifier`."""
    provider = _provider(settings)
    with _client(settings, redirect_uri) as client:
        url, _ = client.create_authorization_url(
            provider.metadata["authorization_endpoint"],
            state=state,
            code_verifier=code_verifier,
            nonce=nonce,
        )
    return str(url)


@dataclass(frozen=True)
class Identity:
    """Who the provider says signed in: the ID token's claims, completed from userinfo."""

    issuer: str
    subject: str
    email: str | None
    # None: the provider does not say (no email_verified claim)
    email_verified: bool | None
    name: str | None


def _verified(value: object) -> bool | None:
    # a JSON boolean; a few providers send the string "true"
    if value is None:
        return None
    return value is True or (isinstance(value, str) and value.lower() == "true")


def _decode_id_token(settings: Settings, provider: _Provider, raw: str) -> Any:
    from joserfc import jwt
    from joserfc.errors import InvalidKeyIdError, JoseError
    from joserfc.jws import JWSRegistry

    offered = provider.metadata.get("id_token_signing_alg_values_supported") or ["RS256"]
    algs = [a for a in offered if a in ASYMMETRIC_ALGS] or ["RS256"]
    registry = JWSRegistry(algorithms=algs)
    try:
        try:
            return jwt.decode(raw, _jwks(settings, provider, force=False), registry=registry)
        except InvalidKeyIdError:  # a key we do not hold yet: the provider rotated its keys
            return jwt.decode(raw, _jwks(settings, provider, force=True), registry=registry)
    except (JoseError, ValueError) as exc:
        raise OidcError("invalid_id_token", f"the ID token's signature does not verify ({exc})") from exc


def finish(settings: Settings, *, redirect_uri: str, code: str, code_verifier: str, nonce: str) -> Identity:
    """Exchange the authorization code (with the PKCE verifier) at the token endpoint and check
    the ID token; claims the ID token lacks (e-mail) come from the userinfo endpoint."""
    import httpx
    from authlib.oauth2 import OAuth2Error
    from authlib.oidc.core import CodeIDToken
    from joserfc.errors import JoseError

    provider = _provider(settings)
    with _client(settings, redirect_uri) as client:
        try:
            token = client.fetch_token(
                provider.metadata["token_endpoint"],
                grant_type="authorization_code",
                code=code,
                code_verifier=code_verifier,
            )
        except OAuth2Error as exc:
            raise OidcError(
                "token_refused", f"the provider refused the sign-in code: {exc.error} {exc.description or ''}"
            ) from exc
        except (httpx.HTTPError, ValueError) as exc:
            raise OidcError(
                "provider_unreachable", "the provider's token endpoint could not be reached"
            ) from exc
        raw = token.get("id_token")
        if not isinstance(raw, str):
            raise OidcError(
                "invalid_id_token", "the provider answered without an ID token (is openid a scope?)"
            )
        decoded = _decode_id_token(settings, provider, raw)
        claims = CodeIDToken(
            decoded.claims,
            decoded.header,
            {
                "iss": {"essential": True, "value": settings.oidc_issuer},
                "aud": {"essential": True, "value": settings.oidc_client_id},
                "sub": {"essential": True},
            },
            {"nonce": nonce, "client_id": settings.oidc_client_id, "access_token": token.get("access_token")},
        )
        try:
            claims.validate(leeway=LEEWAY_S)
        except (JoseError, ValueError) as exc:
            raise OidcError(
                "invalid_id_token", f"the ID token is not valid for this sign-in ({exc})"
            ) from exc
        found: dict[str, Any] = dict(claims)
        endpoint = provider.metadata.get("userinfo_endpoint")
        if "email" not in found and isinstance(endpoint, str) and token.get("access_token"):
            try:
                r = client.get(endpoint)
                r.raise_for_status()
                info = r.json()
            except (httpx.HTTPError, ValueError) as exc:
                raise OidcError("provider_unreachable", "the provider's userinfo could not be read") from exc
            # the userinfo answer must be about the same person (OpenID Connect Core 5.3.2)
            if isinstance(info, dict) and info.get("sub") == found["sub"]:
                found = {**info, **found}
    email = found.get("email")
    name = found.get("name")
    return Identity(
        issuer=settings.oidc_issuer,
        subject=str(found["sub"]),
        email=email.strip().lower() if isinstance(email, str) and email.strip() else None,
        email_verified=_verified(found.get("email_verified")),
        name=name.strip()[:200] if isinstance(name, str) and name.strip() else None,
    )


def forget_providers() -> None:
    """Drop the cached discovery documents and keys (tests that start another provider)."""
    with _lock:
        _providers.clear()
