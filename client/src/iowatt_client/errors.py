"""The client's exceptions. An answer of 4xx/5xx becomes the `ApiError` subclass of its status,
carrying the server's error body (docs/contracts.md § Errors): `code` (its "error"), `message`,
`detail` (for a 422, the fields and why) and the request id that names it in the server's log."""

from __future__ import annotations

from typing import Any


class IowattError(Exception):
    """Anything the client raises."""


class TransportError(IowattError):
    """The server could not be reached (connection refused, DNS, TLS, timeout)."""


class ApiError(IowattError):
    status: int = 0

    def __init__(
        self,
        status: int,
        code: str,
        message: str,
        detail: Any = None,
        request_id: str | None = None,
        method: str = "",
        url: str = "",
    ) -> None:
        super().__init__(f"{status} {code}: {message}")
        self.status, self.code, self.message, self.detail = status, code, message, detail
        self.request_id, self.method, self.url = request_id, method, url

    @property
    def body(self) -> dict[str, Any]:
        return {
            "error": self.code,
            "message": self.message,
            "detail": self.detail,
            "request_id": self.request_id,
        }


class AuthError(ApiError):
    """401 (no, a bad or an expired token) or 403 (the token may not do this)."""


class NotFoundError(ApiError):
    """404: no such object, or not visible to this token."""


class ConflictError(ApiError):
    """409: conflicts with the object's state (a run already finished...)."""


class ValidationFailed(ApiError):
    """422 (or 400/413/415): the request was refused as it was written; `detail` says why."""


class RateLimitedError(ApiError):
    """429 after the client's bounded retries."""


class ServerError(ApiError):
    """5xx (503 after the client's bounded retries)."""


def error_class(status: int) -> type[ApiError]:
    if status in (401, 403):
        return AuthError
    if status == 404:
        return NotFoundError
    if status == 409:
        return ConflictError
    if status == 429:
        return RateLimitedError
    if status >= 500:
        return ServerError
    return ValidationFailed
