"""Security headers on every response (a pure ASGI middleware).

- Content-Security-Policy: scripts only from the server itself (`script-src 'self'`, no inline
  script, no eval) and styles too (`style-src 'self'`, no inline style): React and Recharts set
  styles through the CSSOM (`element.style`), which CSP allows, so the built UI needs no
  'unsafe-inline' (checked in Chromium on every page, charts and tooltips included: no CSP
  violation); images and fonts from the server or `data:` (the favicon is `data:,`); API calls
  only to the same origin; never framed (`frame-ancestors 'none'`), no plugins, no `<base>` or
  form posts elsewhere. A frontend change that adds a `<style>` element or a `style="..."`
  attribute in HTML would be blocked: use CSS files or React's `style` prop.
- X-Content-Type-Options: nosniff; Referrer-Policy: no-referrer (share links carry tokens in
  their path, which must never leak in a Referer); X-Frame-Options: DENY for old browsers.
- Strict-Transport-Security only when the request came over TLS: scheme https, or
  X-Forwarded-Proto https from a proxy in IOWATT_TRUSTED_PROXIES (backend.kit.http).
The API docs pages (/docs, /redoc: backend/apidocs.py) load Swagger UI and ReDoc from the server
itself, no CDN and no inline script; both libraries inject <style> elements, so DOCS_CSP allows
inline styles (and ReDoc's search worker from a blob:) on those two pages only; they hold no data of
their own (the OpenAPI document is public) and still cannot be framed.
A header the application already set is kept.
"""

from backend.kit.http import is_tls
from backend.kit.limits import ASGIApp, Message, Receive, Scope, Send

CSP = "; ".join(
    [
        "default-src 'self'",
        "script-src 'self'",
        "style-src 'self'",
        "img-src 'self' data:",
        "font-src 'self' data:",
        "connect-src 'self'",
        "object-src 'none'",
        "base-uri 'self'",
        "form-action 'self'",
        "frame-ancestors 'none'",
    ]
)
DOCS_PATHS = ("/docs", "/redoc")
DOCS_CSP = "; ".join(
    [
        "default-src 'self'",
        "script-src 'self'",
        "style-src 'self' 'unsafe-inline'",
        "img-src 'self' data:",
        "font-src 'self' data:",
        "worker-src 'self' blob:",
        "connect-src 'self'",
        "object-src 'none'",
        "base-uri 'self'",
        "frame-ancestors 'none'",
    ]
)
HSTS = "max-age=31536000; includeSubDomains"

_ALWAYS: list[tuple[bytes, bytes]] = [
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-frame-options", b"DENY"),
    (b"cross-origin-opener-policy", b"same-origin"),
]


class SecurityHeadersMiddleware:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        csp = DOCS_CSP if scope.get("path") in DOCS_PATHS else CSP
        extra = [(b"content-security-policy", csp.encode()), *_ALWAYS]
        if is_tls(scope):
            extra.append((b"strict-transport-security", HSTS.encode()))

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers") or [])
                present = {k.lower() for k, _ in headers}
                headers += [(k, v) for k, v in extra if k not in present]
                message["headers"] = headers
            await send(message)

        await self.app(scope, receive, send_with_headers)
