"""Structured logs: one JSON object per line on stderr (structlog over the stdlib).

Every line has `timestamp` (ISO-8601 UTC), `level` and `event`, plus what is bound to the current
context: `request_id` during an API request (`RequestLogMiddleware`) or a Celery task that a
request queued (worker/observe.py), and the task's name and id inside a task. The middleware
writes one `http.request` line per request (method, route template, status, duration_ms); the
worker one `task.done` / `task.failed` line per task.

Request ids: an incoming `X-Request-ID` of 1-64 safe characters (letters, digits, `.`, `_`, `-`)
is kept, anything else is replaced by a new random id; the id is returned in the `X-Request-ID`
response header and as `request_id` in every JSON error body.
"""

import json
import logging
import re
import sys
import time
import uuid
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

import structlog
import structlog.typing

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

REQUEST_ID_HEADER = "X-Request-ID"
_HEADER = REQUEST_ID_HEADER.lower().encode()
_SAFE_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
_MAX_ERROR_BODY = 64 * 1024  # error bodies are small; a larger one is passed through untouched


class _Stderr:
    """Whatever sys.stderr is at each write (loggers are cached on first use; a later redirection
    of stderr, as by a test's capture, is still honoured)."""

    def write(self, text: str) -> int:
        return sys.stderr.write(text)

    def flush(self) -> None:
        sys.stderr.flush()


def configure_logging(level: int = logging.INFO) -> None:
    shared: list[structlog.typing.Processor] = [
        structlog.contextvars.merge_contextvars,
        structlog.processors.add_log_level,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
    ]
    structlog.configure(
        processors=[*shared, structlog.processors.format_exc_info, structlog.processors.JSONRenderer()],
        logger_factory=structlog.PrintLoggerFactory(_Stderr()),  # type: ignore[arg-type]
        wrapper_class=structlog.make_filtering_bound_logger(level),
        cache_logger_on_first_use=True,
    )


log = structlog.get_logger("iowatt")


def valid_request_id(raw: str | bytes | None) -> str | None:
    """The id when it is short and safe to log and echo, else None."""
    if raw is None:
        return None
    text = raw.decode("latin-1") if isinstance(raw, bytes) else raw
    return text if _SAFE_ID.fullmatch(text) else None


def new_request_id() -> str:
    return uuid.uuid4().hex


def current_request_id() -> str | None:
    """The request id bound to this context (an API request, or a task a request queued)."""
    value = structlog.contextvars.get_contextvars().get("request_id")
    return value if isinstance(value, str) else None


def request_id_of(scope: Scope) -> str | None:
    """The id the middleware gave this request (the exception handlers read it from here)."""
    state = scope.get("state")
    value = state.get("request_id") if isinstance(state, dict) else None
    return value if isinstance(value, str) else None


def route_template(scope: Scope) -> str:
    """The matched route's path template (`/api/v1/runs/{run_id}`), never the raw path, so
    labels and log fields stay few; "unmatched" when no route took the request."""
    app = scope.get("app")
    router = getattr(app, "router", None)
    if router is not None:
        # not scope["route"]: for a route of an included router that is the route as written,
        # without the router's prefix (FastAPI >= 0.137); the routes as included, matched once
        # per method and path (backend/kit/routes.py)
        from backend.kit.routes import template

        found = template(scope, router.routes, router)
        if found is not None:
            return found
    return "unmatched"


def _with_request_id(body: bytes, request_id: str) -> bytes | None:
    """The JSON error body with `request_id` added, or None when it is not our error shape."""
    try:
        doc = json.loads(body)
    except ValueError:
        return None
    if not isinstance(doc, dict) or "error" not in doc:
        return None
    doc["request_id"] = request_id
    return json.dumps(doc).encode()


class RequestLogMiddleware:
    """Pure ASGI (like backend.kit.limits.BodyLimitMiddleware; no BaseHTTPMiddleware): gives the
    request its id, binds it to the log context, adds it to the response header and to JSON error
    bodies (every 4xx/5xx our code or the outer middleware renders), writes the access line and
    reports (method, route template, status, seconds) to `observe` (the latency histogram)."""

    def __init__(
        self,
        app: ASGIApp,
        observe: Callable[[str, str, int, float], None] | None = None,
    ) -> None:
        self.app = app
        self.observe = observe

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = scope.get("headers") or []
        incoming = next((v for k, v in headers if k == _HEADER), None)
        request_id = valid_request_id(incoming) or new_request_id()
        state = scope.setdefault("state", {})
        if isinstance(state, dict):
            state["request_id"] = request_id
        tokens = structlog.contextvars.bind_contextvars(request_id=request_id)
        t0 = time.perf_counter()
        status = 500
        held: Message | None = None  # an error's response start, held until its body is seen
        chunks: list[bytes] = []

        async def send_wrapped(message: Message) -> None:
            nonlocal status, held
            if message["type"] == "http.response.start":
                status = int(message["status"])
                message["headers"] = [
                    *[(k, v) for k, v in message.get("headers") or [] if k.lower() != _HEADER],
                    (_HEADER, request_id.encode()),
                ]
                content_type = next((v for k, v in message["headers"] if k.lower() == b"content-type"), b"")
                if status >= 400 and content_type.startswith(b"application/json"):
                    held = message
                    return
                await send(message)
                return
            if message["type"] == "http.response.body" and held is not None:
                chunks.append(message.get("body", b""))
                if message.get("more_body", False) and sum(map(len, chunks)) <= _MAX_ERROR_BODY:
                    return
                start, held = held, None
                body = b"".join(chunks)
                if not message.get("more_body", False):
                    body = _with_request_id(body, request_id) or body
                    start["headers"] = [
                        *[(k, v) for k, v in start["headers"] if k.lower() != b"content-length"],
                        (b"content-length", str(len(body)).encode()),
                    ]
                await send(start)
                await send({**message, "body": body})
                return
            await send(message)

        try:
            await self.app(scope, receive, send_wrapped)
        except BaseException:
            status = 500
            raise
        finally:
            duration = time.perf_counter() - t0
            route = route_template(scope)
            method = str(scope.get("method", ""))
            try:
                if self.observe is not None:
                    self.observe(method, route, status, duration)
            finally:
                line = log.warning if status >= 500 else log.info
                line(
                    "http.request",
                    method=method,
                    route=route,
                    status=status,
                    duration_ms=round(duration * 1000, 2),
                )
                structlog.contextvars.reset_contextvars(**tokens)
