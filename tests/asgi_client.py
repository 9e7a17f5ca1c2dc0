"""An in-process test client that crosses into the app's event loop once per request.

Starlette's TestClient runs the app on an event loop in a second thread (its blocking portal) and
makes seven or eight calls into that thread for one request (two events, a memory stream, a cancel
scope, the task, the wait for the response start, each body chunk, the end): each a
`call_soon_threadsafe` (a write to the loop's self-pipe) and a condition wait. `InProcessClient` is
that TestClient (the same lifespan, portal, cookies, websockets) whose HTTP requests run as one
coroutine on the portal: it builds the ASGI scope as Starlette does, hands the app the whole request
body, collects the whole response and returns it. `tests/backend/test_openapi_statuses.py` (1,942
requests) took 13 % less CPU with it (median of three alternating pairs after a warm-up pair, load
9; docs/testing.md).

What differs from Starlette's transport: the response is read to its end before the call returns
(the in-process tests have no endless streams: a long-poll returns at its wait's end). The same
rules for exceptions: with `raise_server_exceptions` an exception in the app is raised in the test;
without, an app that answered nothing gives a 500. Outside `with` (no portal running) and for
websockets it is Starlette's own transport.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import unquote

import anyio
import httpx
from starlette.testclient import TestClient, _TestClientTransport


class _OneCallTransport(_TestClientTransport):
    def __init__(self, owner: InProcessClient, base: _TestClientTransport) -> None:
        self.__dict__.update(base.__dict__)
        self._owner = owner

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        portal = self._owner.portal
        if portal is None or request.url.scheme not in ("http", "https"):
            return super().handle_request(request)
        port = request.url.port or {"http": 80, "https": 443}[request.url.scheme]
        headers = [] if "host" in request.headers else [(b"host", request.url.netloc)]
        headers += [(k.lower().encode(), v.encode()) for k, v in request.headers.multi_items()]
        scope: dict[str, Any] = {
            "type": "http",
            "http_version": "1.1",
            "method": request.method,
            "path": unquote(request.url.path),
            "raw_path": request.url.raw_path.split(b"?", 1)[0],
            "root_path": self.root_path,
            "scheme": request.url.scheme,
            "query_string": request.url.query,
            "headers": headers,
            "client": self.client,
            "server": [request.url.raw_host.decode("ascii"), port],
            "extensions": {"http.response.debug": {}},
            "state": self.app_state.copy(),
        }
        status, out_headers, body, error = portal.call(self._run, scope, request.read())
        if error is not None and self.raise_server_exceptions:
            raise error
        if status is None:
            if self.raise_server_exceptions:
                raise AssertionError("TestClient did not receive any response.")
            status, out_headers, body = 500, [], b""
        return httpx.Response(status, headers=out_headers, stream=httpx.ByteStream(body), request=request)

    async def _run(self, scope: dict[str, Any], body: bytes) -> tuple[Any, Any, bytes, BaseException | None]:
        done = anyio.Event()
        read = False
        status: int | None = None
        headers: list[tuple[str, str]] = []
        chunks: list[bytes] = []

        async def receive() -> dict[str, Any]:
            nonlocal read
            if not read:
                read = True
                return {"type": "http.request", "body": body, "more_body": False}
            await done.wait()  # as Starlette's: a disconnect only once the response is complete
            return {"type": "http.disconnect"}

        async def send(message: dict[str, Any]) -> None:
            nonlocal status, headers
            if message["type"] == "http.response.start":
                assert status is None, 'Received multiple "http.response.start" messages.'
                status = message["status"]
                headers = [(k.decode(), v.decode()) for k, v in message.get("headers", [])]
            elif message["type"] == "http.response.body":
                chunks.append(bytes(message.get("body", b"")))
                if not message.get("more_body", False):
                    done.set()

        error: BaseException | None = None
        try:
            await self.app(scope, receive, send)
        except Exception as exc:  # noqa: BLE001 - handed to the caller as Starlette's client does
            error = exc
        finally:
            done.set()
        if scope["method"] == "HEAD":
            chunks = []
        return status, headers, b"".join(chunks), error


class InProcessClient(TestClient):
    __test__ = False

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        base = self._transport
        assert isinstance(base, _TestClientTransport)
        self._transport = _OneCallTransport(self, base)
