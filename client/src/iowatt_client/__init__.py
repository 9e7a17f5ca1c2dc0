"""iowatt's Python client (docs/scripting.md): `Client(url, token)` with one method per operation
the command uses, `client.call(operation_id, ...)` for every other operation of the OpenAPI
document, pagination, retries on 429/503 honouring Retry-After, and `ApiError`s carrying the
server's `{"error", "message", "detail"}`.

Names are imported lazily so `import iowatt_client` (and the `iowatt` command's start-up) costs
nothing until a name is used."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"
__all__ = [
    "ApiError",
    "AuthError",
    "Client",
    "ConflictError",
    "NotFoundError",
    "RateLimitedError",
    "ServerError",
    "TransportError",
    "ValidationFailed",
]

if TYPE_CHECKING:
    from .client import Client
    from .errors import (
        ApiError,
        AuthError,
        ConflictError,
        NotFoundError,
        RateLimitedError,
        ServerError,
        TransportError,
        ValidationFailed,
    )


def __getattr__(name: str) -> Any:
    if name == "Client":
        from .client import Client

        return Client
    if name in __all__:
        from . import errors

        return getattr(errors, name)
    raise AttributeError(name)
