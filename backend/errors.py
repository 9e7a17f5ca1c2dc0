"""Domain errors carry their HTTP status; one handler renders one JSON shape."""

from typing import Any


class AppError(Exception):
    status_code = 400
    code = "bad_request"

    def __init__(
        self,
        message: str,
        *,
        detail: Any = None,
        code: str | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.detail = detail
        self.headers = headers
        if code is not None:
            self.code = code


class NotFound(AppError):
    status_code = 404
    code = "not_found"


class Unauthorized(AppError):
    status_code = 401
    code = "unauthorized"


class Forbidden(AppError):
    status_code = 403
    code = "forbidden"


class Conflict(AppError):
    status_code = 409
    code = "conflict"


class TooManyRequests(AppError):
    """429 with Retry-After (seconds)."""

    status_code = 429
    code = "too_many_requests"

    def __init__(self, message: str, *, retry_after_s: int, code: str | None = None) -> None:
        super().__init__(
            message,
            detail={"retry_after_s": retry_after_s},
            code=code,
            headers={"Retry-After": str(retry_after_s)},
        )


class Invalid(AppError):
    """Semantic validation failure that pydantic could not see (422 naming the field)."""

    status_code = 422
    code = "validation_error"

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}", detail=[{"field": field, "message": message}])

    def under(self, prefix: str) -> "Invalid":
        """The same 422 with every field named under `prefix`: a part of a larger body checked on
        its own (a campaign's target `targets.2.`, a schedule's campaign `campaign.`)."""
        entries = (
            self.detail
            if isinstance(self.detail, list) and self.detail
            else [{"field": "", "message": self.message}]
        )
        detail = [{**d, "field": f"{prefix}.{d['field']}".rstrip(".")} for d in entries]
        out = Invalid(detail[0]["field"], detail[0]["message"])
        out.code, out.detail = self.code, detail
        out.message = "; ".join(f"{d['field']}: {d['message']}" for d in detail[:5])
        return out
