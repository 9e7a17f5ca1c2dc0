"""Request body size limits, enforced before the body is parsed and before authentication.

A pure ASGI middleware (no BaseHTTPMiddleware: it neither buffers the body nor runs the app in
another task). It finds the route the request will reach, takes that route's limit (a small
default, larger for the few routes that carry big documents), and answers 413

    {"error": "payload_too_large", "message": ..., "detail": {"limit_bytes": N}}

at once when Content-Length is larger, or as soon as a streamed (chunked) body passes the limit,
whatever the application was about to answer.

Sizes (docs/contracts.md, "Request size limits"):
- result upload (`PUT /runs/{id}/result`): the largest legitimate body. A json+ engine document
  carries per job up to 2 x 1,856 latency histogram bins (about 30 bytes each as JSON: 110 KB)
  and one series point per measured second (about 160 bytes); the power upload one sample per
  second or faster (about 30 bytes). The longest preset, kernel-help (110 jobs, about 12 h), is
  about 20 MB; the longest job a workload allows (runtime_s up to 7 days) is about 115 MB with a
  1 Hz meter. 128 MiB (IOWATT_MAX_RESULT_BODY_BYTES). Only a request that carries an agent's
  bearer token (`Bearer iwa_...`) gets that limit: without one the default applies, so an
  anonymous client cannot make the server read and parse 128 MiB before authentication fails.
  The same for an uploaded result (`POST /results`) with a user's token (`Bearer iwu_...`).
- grid intensity import: 5 years of hourly `hour_utc,g_per_kwh` lines (43,920 x ~32 bytes):
  4 MiB.
- everything else (JSON forms, inventory, heartbeats, progress, failure reports): 1 MiB
  (IOWATT_MAX_BODY_BYTES); logging in: 16 KiB.
"""

import json
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from iowatt_workload import KiB, MiB
from starlette.exceptions import HTTPException
from starlette.routing import BaseRoute

from backend.config import get_settings
from backend.kit.routes import template as route_template

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


AGENT_BEARER = b"bearer iwa_"
USER_BEARER = b"bearer iwu_"


def route_limits() -> dict[tuple[str, str], tuple[int, tuple[bytes, ...] | None]]:
    """(method, route path template) -> (limit in bytes, only with a bearer token of these
    prefixes (None: any request)), for the routes that differ from the default."""
    s = get_settings()
    return {
        ("PUT", "/api/v1/runs/{run_id}/result"): (s.max_result_body_bytes, (AGENT_BEARER,)),
        # an uploaded result (a CI pipeline's user token of scope upload)
        ("POST", "/api/v1/results"): (s.max_result_body_bytes, (USER_BEARER,)),
        # an imported file or pasted text (docs/imports.md): a user's token
        ("POST", "/api/v1/imports"): (s.import_max_bytes, (USER_BEARER,)),
        ("PUT", "/api/v1/environments/{environment_id}/grid-intensity"): (4 * MiB, None),
        ("POST", "/api/v1/auth/login"): (16 * KiB, None),
    }


def limit_for(method: str, path_template: str | None, authorization: bytes | None = None) -> int:
    """The body limit of a route; `authorization` (the raw header) None means "as documented"."""
    if path_template is not None:
        found = route_limits().get((method.upper(), path_template))
        if found is not None:
            limit, bearers = found
            if bearers is None or authorization is None or authorization.lower().startswith(bearers):
                return limit
    return get_settings().max_body_bytes


class BodyTooLarge(HTTPException):
    """Raised from `receive` when a streamed body passes the limit (FastAPI re-raises an
    HTTPException from body reading; the middleware answers 413 whatever happens next)."""

    def __init__(self, limit: int) -> None:
        super().__init__(status_code=413, detail=f"the request body is larger than {limit} bytes")
        self.limit = limit


def _response_body(limit: int) -> bytes:
    return json.dumps(
        {
            "error": "payload_too_large",
            "message": f"the request body is larger than this route's limit of {limit} bytes",
            "detail": {"limit_bytes": limit},
        }
    ).encode()


async def _send_413(send: Send, limit: int) -> None:
    body = _response_body(limit)
    await send(
        {
            "type": "http.response.start",
            "status": 413,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                (b"connection", b"close"),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


async def _send_json(send: Send, status: int, payload: dict[str, Any]) -> None:
    body = json.dumps(payload).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())],
        }
    )
    await send({"type": "http.response.body", "body": body})


class BodyLimitMiddleware:
    """Also refuses a NUL character in the URL path (422) before routing: static files and the
    UI's catch-all would otherwise hand it to the file system."""

    def __init__(self, app: ASGIApp, routes: Callable[[], list[BaseRoute]]) -> None:
        self.app = app
        self.routes = routes

    def _template(self, scope: Scope) -> str | None:
        # an included router is one node of the routes (FastAPI >= 0.137): its routes are matched
        # as included (prefixed paths), once per method and path (backend/kit/routes.py)
        routes = self.routes()
        return route_template(scope, routes, getattr(scope.get("app"), "router", None))

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if "\x00" in scope.get("path", ""):
            message = "must not contain a NUL character"
            await _send_json(
                send,
                422,
                {
                    "error": "validation_error",
                    "message": f"path: {message}",
                    "detail": [{"field": "path", "message": message}],
                },
            )
            return
        headers = scope.get("headers") or []
        authorization = next((v for k, v in headers if k == b"authorization"), b"")
        limit = limit_for(scope["method"], self._template(scope), authorization)
        for name, value in headers:
            if name == b"content-length":
                try:
                    declared = int(value)
                except ValueError:
                    declared = 0  # the server rejects a malformed length before we see it
                if declared > limit:
                    await _send_413(send, limit)
                    return

        received = 0
        exceeded = False
        started = False

        async def limited_receive() -> Message:
            nonlocal received, exceeded
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > limit:
                    exceeded = True
                    raise BodyTooLarge(limit)
            return message

        async def guarded_send(message: Message) -> None:
            nonlocal started
            if exceeded:
                if not started:  # whatever the app answers to the aborted body, the client gets 413
                    started = True
                    await _send_413(send, limit)
                return
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, limited_receive, guarded_send)
        except BodyTooLarge:
            if not started:
                started = True
                await _send_413(send, limit)
