"""HTTP client for the server's agent API (docs/contracts.md §2).

Retry rules: connection errors, timeouts, 408 and 5xx are retried with exponential backoff and
jitter; 429 and 503 wait for the server's Retry-After when it gives one; every other 4xx is
permanent and raised at once. All errors are typed (ApiError subclasses) so callers decide what a
failure means without parsing strings.

TLS: `verify` is the context built from the state directory (credentials.server_ssl_context: the pinned
certificate or the enrolment CA file as the only trust anchor). A server whose certificate does not
verify raises ServerCertificateRejected, which is neither retried at once nor permanent: the loop
keeps backing off and the spool keeps every result until the operator re-pins.
"""

from __future__ import annotations

import email.utils
import random
import ssl
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any
from uuid import UUID

import httpx
from pydantic import BaseModel, ValidationError
from tenacity import RetryCallState, Retrying, retry_if_exception_type, stop_after_attempt

from . import __version__, protocol
from .schemas import (
    EnrollRequest,
    EnrollResponse,
    ErrorBody,
    FailureReport,
    HeartbeatRequest,
    HeartbeatResponse,
    Inventory,
    Lease,
    LeaseRequest,
    LeaseResponse,
    ProgressRequest,
    ProgressResponse,
    ReadyRequest,
    ReadyResponse,
    Request,
    ResultUpload,
    StartedRequest,
    StartRequest,
    TokenRotated,
)
from .transport import find_verification_error, rejection_message

API_PREFIX = "/api/v1"
MAX_RETRY_AFTER_S = 300.0


class ApiError(Exception):
    """Any failure talking to the server."""

    def __init__(
        self,
        message: str,
        *,
        status_code: int | None = None,
        code: str | None = None,
        detail: Any = None,
        retry_after_s: float | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.status_code = status_code
        self.code = code
        self.detail = detail
        self.retry_after_s = retry_after_s


class TransientError(ApiError):
    """Worth retrying: the server is down, overloaded or failed internally."""


class ServerUnreachable(TransientError):
    """No HTTP answer at all (connection refused, reset, timeout)."""


class ServerCertificateRejected(ApiError):
    """The server's certificate did not verify against the pinned certificate or CA file: fail
    closed (nothing is sent), keep spooled results, say how to re-pin."""


class PermanentError(ApiError):
    """A 4xx that retrying cannot fix."""


class Unauthorized(PermanentError):
    """401: unknown, expired or revoked token."""


class Forbidden(PermanentError):
    """403: the token may not act on this resource."""


class NotFound(PermanentError):
    """404."""


class Conflict(PermanentError):
    """409: e.g. agent_name_taken, lease_lost, another result exists."""


class ProtocolError(PermanentError):
    """The server answered 2xx with a body that does not match the contract."""


@dataclass(frozen=True)
class RetryPolicy:
    max_attempts: int = 6
    base_s: float = 0.5
    max_s: float = 30.0


def parse_retry_after(value: str | None, now: datetime | None = None) -> float | None:
    """Retry-After as delay-seconds or an HTTP date; None when absent or unparsable."""
    if value is None:
        return None
    value = value.strip()
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        if when.tzinfo is None:
            when = when.replace(tzinfo=UTC)
        seconds = (when - (now or datetime.now(UTC))).total_seconds()
    return min(max(seconds, 0.0), MAX_RETRY_AFTER_S)


def error_from_response(response: httpx.Response) -> ApiError:
    status = response.status_code
    code: str | None = None
    message = response.reason_phrase or f"HTTP {status}"
    detail: Any = None
    try:
        body = ErrorBody.model_validate(response.json())
        code, detail = body.error, body.detail
        message = body.message or body.error
    except (ValueError, ValidationError):
        text = response.text.strip()
        if text:
            message = text[:300]
    text = f"{response.request.method} {response.request.url.path}: HTTP {status}"
    text += f" {code}: {message}" if code else f": {message}"
    kwargs: dict[str, Any] = {"status_code": status, "code": code, "detail": detail}
    if status in (429, 503):
        kwargs["retry_after_s"] = parse_retry_after(response.headers.get("retry-after"))
    if status == 408 or status == 429 or status >= 500:
        return TransientError(text, **kwargs)
    cls: type[PermanentError] = {
        401: Unauthorized,
        403: Forbidden,
        404: NotFound,
        409: Conflict,
    }.get(status, PermanentError)
    return cls(text, **kwargs)


class ApiClient:
    def __init__(
        self,
        server_url: str,
        token: str | None = None,
        *,
        transport: httpx.BaseTransport | None = None,
        timeout_s: float = 30.0,
        retry: RetryPolicy | None = None,
        sleep: Callable[[float], None] = time.sleep,
        rng: Callable[[], float] = random.random,
        verify: ssl.SSLContext | bool = True,
        pinned_sha256: str | None = None,
    ) -> None:
        headers = {"User-Agent": f"iowatt-agent/{__version__}", "Accept": "application/json"}
        headers.update(protocol.headers())  # the wire protocol's version (protocol.py)
        if token:
            headers["Authorization"] = f"Bearer {token}"
        self._http = httpx.Client(
            base_url=server_url.rstrip("/") + API_PREFIX,
            headers=headers,
            timeout=timeout_s,
            transport=transport,
            verify=verify,
        )
        self.server_url = server_url
        self.pinned_sha256 = pinned_sha256
        self.retry = retry or RetryPolicy()
        self._sleep = sleep
        self._rng = rng
        # Called (from the calling thread) after every request the server answered below 400:
        # the server is reachable again, e.g. to wake the spool retrier (spool.SpoolRetrier).
        self.on_success: Callable[[], None] | None = None

    def close(self) -> None:
        self._http.close()

    def set_token(self, token: str) -> None:
        """Use `token` from the next request on (after a rotation, docs/adr/0011)."""
        self._http.headers["Authorization"] = f"Bearer {token}"

    def __enter__(self) -> ApiClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- plumbing ------------------------------------------------------------------------------

    def backoff_s(self, attempt: int, error: BaseException | None) -> float:
        """Delay before retry number `attempt` (1-based): Retry-After if given, else
        exponential with 'equal jitter' (half fixed, half random) capped at max_s."""
        if isinstance(error, ApiError) and error.retry_after_s is not None:
            return error.retry_after_s
        ceiling: float = min(self.retry.max_s, self.retry.base_s * 2.0 ** (attempt - 1))
        return ceiling / 2 + ceiling / 2 * self._rng()

    def _wait(self, state: RetryCallState) -> float:
        error = state.outcome.exception() if state.outcome else None
        return self.backoff_s(state.attempt_number, error)

    def _send_once(
        self,
        method: str,
        path: str,
        *,
        body: BaseModel | None,
        params: dict[str, Any] | None,
        timeout_s: float | None,
    ) -> httpx.Response:
        kwargs: dict[str, Any] = {"params": params}
        if body is not None:
            exclude = body.wire_exclude() if isinstance(body, Request) else None
            kwargs["content"] = body.model_dump_json(by_alias=True, exclude=exclude).encode()
            kwargs["headers"] = {"Content-Type": "application/json"}
        if timeout_s is not None:
            kwargs["timeout"] = timeout_s
        try:
            response = self._http.request(method, path, **kwargs)
        except httpx.TransportError as exc:
            refused = find_verification_error(exc)
            if refused is not None:
                reason = str(refused.verify_message or refused)
                message = rejection_message(self.server_url, reason, pinned_sha256=self.pinned_sha256)
                raise ServerCertificateRejected(f"{method} {path}: {message}") from exc
            reason = str(exc) or type(exc).__name__
            raise ServerUnreachable(f"{method} {path}: server unreachable: {reason}") from exc
        protocol.note_server(response.headers.get(protocol.SERVER_HEADER))
        if response.status_code >= 400:
            raise error_from_response(response)
        if self.on_success is not None:
            self.on_success()
        return response

    def request(
        self,
        method: str,
        path: str,
        *,
        body: BaseModel | None = None,
        params: dict[str, Any] | None = None,
        timeout_s: float | None = None,
        attempts: int | None = None,
    ) -> httpx.Response:
        retrying = Retrying(
            stop=stop_after_attempt(attempts or self.retry.max_attempts),
            wait=self._wait,
            retry=retry_if_exception_type(TransientError),
            sleep=self._sleep,
            reraise=True,
        )
        for attempt in retrying:
            with attempt:
                return self._send_once(method, path, body=body, params=params, timeout_s=timeout_s)
        raise AssertionError("unreachable")  # pragma: no cover

    @staticmethod
    def _parse(model: type[Any], response: httpx.Response) -> Any:
        try:
            return model.model_validate(response.json())
        except (ValueError, ValidationError) as exc:
            raise ProtocolError(
                f"{response.request.method} {response.request.url.path}: unexpected answer: {exc}",
                status_code=response.status_code,
            ) from exc

    # --- calls ---------------------------------------------------------------------------------

    def enroll(self, request: EnrollRequest) -> EnrollResponse:
        response = self.request("POST", "/agents/enroll", body=request)
        result: EnrollResponse = self._parse(EnrollResponse, response)
        return result

    def heartbeat(self, agent_id: UUID, request: HeartbeatRequest, *, attempts: int = 2) -> HeartbeatResponse:
        response = self.request("POST", f"/agents/{agent_id}/heartbeat", body=request, attempts=attempts)
        result: HeartbeatResponse = self._parse(HeartbeatResponse, response)
        return result

    def rotate_token(self, agent_id: UUID, *, attempts: int = 2) -> TokenRotated:
        """A new token for this agent. Safe to retry: the token this client holds stays valid
        until the new one is used, and rotating with it again just hands out another one."""
        response = self.request("POST", f"/agents/{agent_id}/token", attempts=attempts)
        result: TokenRotated = self._parse(TokenRotated, response)
        return result

    def put_inventory(self, agent_id: UUID, inventory: Inventory) -> None:
        self.request("PUT", f"/agents/{agent_id}/inventory", body=inventory)

    def lease(
        self, agent_id: UUID, wait_s: float, *, boot_id: UUID | None = None, attempts: int = 1
    ) -> Lease | None:
        return self.lease_answer(agent_id, wait_s, boot_id=boot_id, attempts=attempts).lease

    def lease_answer(
        self, agent_id: UUID, wait_s: float, *, boot_id: UUID | None = None, attempts: int = 1
    ) -> LeaseResponse:
        """The lease long-poll's whole answer: the lease, if any, and the wait the server names for
        the next poll (None from an older server)."""
        response = self.request(
            "POST",
            f"/agents/{agent_id}/lease",
            body=LeaseRequest(boot_id=boot_id),
            params={"wait_s": int(wait_s)},
            timeout_s=wait_s + 15.0,
            attempts=attempts,
        )
        answer: LeaseResponse = self._parse(LeaseResponse, response)
        return answer

    def start(self, run_id: UUID, lease_id: UUID) -> None:
        self.request("POST", f"/runs/{run_id}/start", body=StartRequest(lease_id=lease_id))

    def ready(self, run_id: UUID, request: ReadyRequest, wait_s: float) -> ReadyResponse:
        """A group member is ready: long-polls until the server sets the group's start instant."""
        response = self.request(
            "POST",
            f"/runs/{run_id}/ready",
            body=request,
            params={"wait_s": int(wait_s)},
            timeout_s=wait_s + 15.0,
            attempts=1,
        )
        result: ReadyResponse = self._parse(ReadyResponse, response)
        return result

    def started(self, run_id: UUID, request: StartedRequest) -> None:
        self.request("POST", f"/runs/{run_id}/started", body=request, attempts=3)

    def progress(self, run_id: UUID, request: ProgressRequest) -> ProgressResponse:
        response = self.request("POST", f"/runs/{run_id}/progress", body=request, attempts=1, timeout_s=10.0)
        result: ProgressResponse = self._parse(ProgressResponse, response)
        return result

    def put_result(self, run_id: UUID, upload: ResultUpload, *, attempts: int | None = None) -> int:
        """201 = stored now, 200 = this upload_id was already stored (idempotent retry)."""
        return self.request("PUT", f"/runs/{run_id}/result", body=upload, attempts=attempts).status_code

    def post_failure(self, run_id: UUID, report: FailureReport, *, attempts: int | None = None) -> int:
        return self.request("POST", f"/runs/{run_id}/failure", body=report, attempts=attempts).status_code
