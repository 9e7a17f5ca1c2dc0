"""Document every status a route can answer, in one place.

Each operation gets, with the ErrorResponse body:
- 413 and 422 everywhere (the body size limit and the NUL check apply to every request);
- 400 where the route reads a body (a body FastAPI cannot decode);
- 401 and 403 where the route authenticates (a bearer token in its dependencies): no or a bad
  token, and a token of the wrong kind, role, team or agent;
- 404 where the path names an object;
- the odd ones (409, 429, 503, ...) from the route's own `responses=` or from `EXTRA` below,
  keyed by "METHOD /path" for routes whose conflicts are decided in services.
`tests/backend/test_openapi_statuses.py` sends requests to every operation and fails on an
answer that is not documented.
"""

from collections.abc import Iterable
from typing import Any

from fastapi.dependencies.models import Dependant
from fastapi.routing import APIRoute, RouteContext, iter_route_contexts
from fastapi.security.base import SecurityBase
from starlette.routing import BaseRoute

from backend.kit.limits import limit_for

ERROR_REF = {"$ref": "#/components/schemas/ErrorResponse"}

DESCRIPTIONS = {
    400: "The request body cannot be read",
    401: "No bearer token, or an unknown, expired or revoked one",
    403: "The token may not do this: wrong kind (user or agent), role, team or agent",
    404: "No such object, or not visible to the caller",
    409: "Conflicts with the current state (a name taken, a run already finished, a lease lost)",
    413: "The request body is larger than this route's limit",
    422: "A field is invalid: `detail` lists each field and the reason",
    429: "Too many requests: try again after `Retry-After` seconds",
    503: "A service the route needs is unavailable",
}

# statuses decided inside services, per operation ("METHOD /path" as in the OpenAPI), with a
# description where the standard one does not fit ("" = the standard one)
EXTRA: dict[str, dict[int, str]] = {
    "POST /api/v1/auth/login": {401: "Wrong e-mail or password (the same answer for both)", 429: ""},
    "POST /api/v1/auth/logout": {409: "The token is not a browser session: revoke it instead"},
    "POST /api/v1/environments": {409: "An environment with this name exists in the team"},
    "PATCH /api/v1/environments/{environment_id}": {409: "An environment with this name exists"},
    "POST /api/v1/workloads": {409: "A workload with this name exists in the team"},
    "POST /api/v1/agents/enroll": {401: "Unknown, used, expired or revoked enrolment token", 409: ""},
    "POST /api/v1/agents/enrollment-tokens": {404: ""},
    "POST /api/v1/runs": {404: "", 409: ""},
    "POST /api/v1/series": {404: "no run with that id in the caller's teams"},
    "POST /api/v1/campaigns": {404: "", 409: ""},
    "POST /api/v1/runs/{run_id}/cancel": {409: ""},
    "POST /api/v1/runs/{run_id}/start": {409: ""},
    "POST /api/v1/runs/{run_id}/progress": {409: ""},
    "PUT /api/v1/runs/{run_id}/result": {409: ""},
    "POST /api/v1/runs/{run_id}/failure": {409: ""},
    "POST /api/v1/agents/{agent_id}/lease": {409: ""},
    "POST /api/v1/agents/{agent_id}/heartbeat": {409: ""},
    "GET /api/v1/compare": {404: ""},
    "GET /api/v1/compare/latency": {404: ""},
    # throttles and rate limits decided in services and dependencies (found by the long
    # Schemathesis run over every route: a team admin's 21st invitation in an hour was undocumented)
    "DELETE /api/v1/auth/me": {429: "`login_throttled`: too many wrong passwords (the login's throttle)"},
    "POST /api/v1/auth/email-verification": {
        429: "`mail_throttled`: IOWATT_ACCOUNT_MAIL_PER_HOUR mails an hour to this account"
    },
    "POST /api/v1/auth/password-reset": {429: "`reset_throttled`: too many reset requests from this address"},
    "POST /api/v1/teams/{team_id}/invitations": {
        429: "`invitations_throttled`: IOWATT_INVITATIONS_PER_CREATOR_PER_HOUR or _PER_TEAM_PER_DAY"
    },
    **{
        f"GET /api/v1/shared/{{token}}{tail}": {
            429: "`share_throttled`: more than IOWATT_SHARE_REQUESTS_PER_MIN a minute from this address"
        }
        for tail in ("", "/export.csv", "/export.json")
    },
}


def _walk(dep: Dependant) -> Iterable[Dependant]:
    yield dep
    for sub in dep.dependencies:
        yield from _walk(sub)


def _authenticates(route: APIRoute | RouteContext) -> bool:
    return any(isinstance(d.call, SecurityBase) for d in _walk(route.dependant))


def _path_params(route: APIRoute | RouteContext) -> bool:
    return any(d.path_params for d in _walk(route.dependant))


def statuses_for(route: APIRoute | RouteContext, method: str) -> set[int]:
    """The error statuses `route` can answer for `method` (besides its success statuses)."""
    out = {413, 422}
    if route.body_field is not None:
        out.add(400)
    if _authenticates(route):
        out |= {401, 403}
    if _path_params(route):
        out.add(404)
    out |= set(EXTRA.get(f"{method} {route.path}", {}))
    out |= {int(s) for s in route.responses if str(s).isdigit() and int(s) >= 400}
    return out


def _error_response(status: int, limit: int, description: str = "") -> dict[str, Any]:
    resp: dict[str, Any] = {
        "description": description or DESCRIPTIONS.get(status, "Error"),
        "content": {"application/json": {"schema": ERROR_REF}},
    }
    if status == 413:
        resp["description"] += f" ({limit} bytes)"
    if status == 429:
        resp["headers"] = {"Retry-After": {"description": "seconds to wait", "schema": {"type": "integer"}}}
    return resp


def document_errors(schema: dict[str, Any], routes: Iterable[BaseRoute]) -> None:
    """Add the error responses of every route to the OpenAPI document (in place)."""
    paths = schema.get("paths", {})
    # an included router is one node of `routes` (FastAPI >= 0.137): its contexts carry the
    # route as included (prefixed path, the router's responses and dependencies)
    for route in iter_route_contexts(list(routes)):
        if not isinstance(route.original_route, APIRoute) or not route.include_in_schema:
            continue
        for method in route.methods or ():
            op = paths.get(route.path_format, {}).get(method.lower())
            if op is None:
                continue
            responses = op.setdefault("responses", {})
            limit = limit_for(method, route.path)
            extra = EXTRA.get(f"{method} {route.path}", {})
            for status in sorted(statuses_for(route, method)):
                key = str(status)
                if key == "422":  # FastAPI's own entry points at HTTPValidationError: ours
                    responses[key] = _error_response(422, limit)
                elif key not in responses or "content" not in responses[key]:
                    default = _error_response(status, limit, extra.get(status, ""))
                    responses[key] = {**default, **responses.get(key, {})}
                    responses[key].setdefault("content", {"application/json": {"schema": ERROR_REF}})
            op["responses"] = dict(sorted(responses.items()))
