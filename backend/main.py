"""create_app(): routers under /api/v1, one error shape, the built UI at /."""

import copy
import gc
import os
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from fastapi import Depends, FastAPI, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.exceptions import RequestValidationError
from fastapi.openapi.utils import get_openapi
from fastapi.responses import FileResponse, JSONResponse
from fastapi.routing import APIRoute, iter_route_contexts
from fastapi.staticfiles import StaticFiles
from pydantic import BaseModel
from starlette.exceptions import HTTPException as StarletteHTTPException

from backend import __version__, apidocs
from backend.agent.router import router as agent_router
from backend.agent_dist.router import router as agent_dist_router
from backend.alert.router import router as alert_router
from backend.audit.router import router as audit_router
from backend.auth.oidc_router import router as oidc_router
from backend.auth.proof_router import router as proof_router
from backend.auth.router import router as auth_router
from backend.campaign.router import router as campaign_router
from backend.carbon.router import router as carbon_router
from backend.comment.router import router as comment_router
from backend.compare.router import router as compare_router
from backend.config import get_settings
from backend.db import unit_of_work, unreachable
from backend.device.router import router as device_router
from backend.environment.router import router as environment_router
from backend.erase.router import router as erase_router
from backend.errors import AppError, Invalid
from backend.export.router import router as export_router
from backend.health.router import router as health_router
from backend.imports.router import router as imports_router
from backend.invitation.router import router as invitation_router
from backend.kit.headers import SecurityHeadersMiddleware
from backend.kit.lanes import BULK
from backend.kit.limits import BodyLimitMiddleware
from backend.kit.messages import plain_message
from backend.kit.openapi import document_errors
from backend.kit.operation_ids import operation_id
from backend.kit.routes import index_included_routers
from backend.kit.schema import NUL
from backend.kit.security import prepare_password_check
from backend.logs import REQUEST_ID_HEADER, RequestLogMiddleware, configure_logging, log, request_id_of
from backend.metrics import observe_request
from backend.metrics import router as metrics_router
from backend.pts.router import router as pts_router
from backend.review.router import router as review_router
from backend.run.group_router import barrier_router as run_barrier_router
from backend.run.group_router import router as run_group_router
from backend.run.router import router as run_router
from backend.run.router import tags_router as run_tags_router
from backend.schedule.router import router as schedule_router
from backend.series.router import router as series_router
from backend.serve import EXITS_WITH_APP
from backend.sharing.router import pages as sharing_pages
from backend.sharing.router import router as sharing_router
from backend.team.router import router as team_router
from backend.upload.router import router as upload_router
from backend.views.router import router as views_router
from backend.workload.facts_router import router as workload_facts_router
from backend.workload.router import router as workload_router
from backend.workload.service import ensure_builtins

API_PREFIX = "/api/v1"


def _field_of(loc: tuple[Any, ...]) -> str:
    parts = [str(p) for p in loc]
    if parts and parts[0] in ("body", "query", "path", "header"):
        parts = parts[1:]
    return ".".join(parts) or "body"


def _validation_handler(_: Request, exc: RequestValidationError) -> JSONResponse:
    detail = [{"field": _field_of(tuple(e["loc"])), "message": plain_message(e)} for e in exc.errors()]
    message = "; ".join(f"{d['field']}: {d['message']}" for d in detail[:5])
    return JSONResponse(
        status_code=422, content={"error": "validation_error", "message": message, "detail": detail}
    )


def _app_error_handler(_: Request, exc: AppError) -> JSONResponse:
    return JSONResponse(
        status_code=exc.status_code,
        content={"error": exc.code, "message": exc.message, "detail": exc.detail},
        headers=exc.headers,
    )


async def _no_nul_in_params(request: Request) -> None:
    """No NUL character in a query or path parameter (bodies: backend.kit.schema.InputSchema). A
    coroutine: every request runs it, on the event loop (a sync one was a threadpool hop each)."""
    for name, value in request.query_params.multi_items():
        if NUL in name or NUL in value:
            raise Invalid(name.replace(NUL, "\\0"), "must not contain a NUL character")
    for name, value in request.path_params.items():
        if isinstance(value, str) and NUL in value:
            raise Invalid(name, "must not contain a NUL character")


def _http_handler(_: Request, exc: StarletteHTTPException) -> JSONResponse:
    return JSONResponse(
        status_code=exc.status_code,
        content={"error": "http_error", "message": str(exc.detail), "detail": None},
        headers=getattr(exc, "headers", None),
    )


def _unhandled_handler(request: Request, exc: Exception) -> JSONResponse:
    """A bug: our JSON shape (never Starlette's plain text), with the request id to find the
    traceback in the log; or the database out of reach: 503 `database_unavailable` with
    Retry-After. Runs outside RequestLogMiddleware, so it sets the header itself."""
    request_id = request_id_of(request.scope)
    if unreachable(exc):  # not a bug: PostgreSQL is down or restarting
        log.warning("http.database_unavailable", error=str(exc).splitlines()[0][:300], request_id=request_id)
        return JSONResponse(
            status_code=503,
            content={
                "error": "database_unavailable",
                "message": "the database cannot be reached; try again shortly",
                "detail": None,
                "request_id": request_id,
            },
            headers={"Retry-After": "5", **({REQUEST_ID_HEADER: request_id} if request_id else {})},
        )
    log.error("http.unhandled", error=f"{type(exc).__name__}: {str(exc)[:300]}", request_id=request_id)
    return JSONResponse(
        status_code=500,
        content={
            "error": "internal_error",
            "message": "internal server error; the request id names it in the server log",
            "detail": None,
            "request_id": request_id,
        },
        headers={REQUEST_ID_HEADER: request_id} if request_id else None,
    )


def _mount_ui(app: FastAPI, dist: Path) -> None:
    index = dist / "index.html"
    if (dist / "assets").is_dir():
        app.mount("/assets", StaticFiles(directory=dist / "assets"), name="assets")

    # each API route's path pattern (as included: prefixed) and methods, made again only when the
    # app's routes change: walking every route for an unknown /api path was ~60 % of its 404's CPU
    table: dict[str, Any] = {}

    def api_methods() -> list[tuple[Any, tuple[str, ...]]]:
        key = tuple(map(id, app.router.routes))
        if table.get("key") != key:
            table["rows"] = [
                (r.path_regex, tuple(r.methods or ()))
                for r in iter_route_contexts(app.routes)
                if isinstance(r.original_route, APIRoute) and r.name != "spa"
            ]
            table["key"] = key
        return table["rows"]  # type: ignore[no-any-return]

    @app.get("/{path:path}", include_in_schema=False, dependencies=[BULK])
    def spa(path: str) -> Any:
        if path.startswith("api/"):
            allowed = sorted(
                m for regex, methods in api_methods() if regex.match("/" + path) for m in methods
            )
            if allowed:  # the path exists with other methods: 405 like every other method gets
                return JSONResponse(
                    status_code=405,
                    content={
                        "error": "method_not_allowed",
                        "message": f"GET is not allowed on /{path}; allowed: {', '.join(allowed)}",
                        "detail": None,
                    },
                    headers={"Allow": ", ".join(allowed)},
                )
            return JSONResponse(
                status_code=404,
                content={"error": "not_found", "message": f"no route /{path}", "detail": None},
            )
        candidate = (dist / path).resolve()
        if path and candidate.is_file() and dist.resolve() in candidate.parents:
            return FileResponse(candidate)
        if index.is_file():
            return FileResponse(index)
        return JSONResponse(
            status_code=503,
            content={
                "error": "ui_not_built",
                "message": "the web UI is not built: run `make up` (or `make ui`)",
                "detail": None,
            },
        )


class ErrorDetail(BaseModel):
    field: str
    message: str


class ErrorResponse(BaseModel):
    """Every error: a code, a message for people, for 422s the failing fields, and the request's
    id (also in the `X-Request-ID` header) to find it in the server's log."""

    error: str
    message: str
    detail: list[ErrorDetail] | dict[str, Any] | str | None
    request_id: str


# The document depends only on the code: apps made by the same code in one process (the tests make
# dozens) share one build of it, each app keeping its own copy.
_BUILT_SCHEMAS: dict[tuple[Any, ...], dict[str, Any]] = {}


def _schema_key(app: FastAPI) -> tuple[Any, ...]:
    # a route left out of the schema (the UI's catch-all, a closure made per app) does not key it:
    # every create_app() of one process then shares one build (three at the suite's collection)
    routes = tuple(
        (
            r.path,
            tuple(sorted(r.methods or ())),
            r.name,
            id(r.endpoint) if r.include_in_schema else None,
            r.include_in_schema,
        )
        if isinstance(r, APIRoute)
        else (getattr(r, "path", None), type(r).__name__)
        for r in app.routes
    )
    return (app.title, app.version, app.description, routes)


def _openapi_with_our_errors(app: FastAPI) -> Callable[[], dict[str, Any]]:
    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            key = _schema_key(app)
            if key not in _BUILT_SCHEMAS:
                _BUILT_SCHEMAS[key] = _build_schema(app)
            app.openapi_schema = copy.deepcopy(_BUILT_SCHEMAS[key])
        return app.openapi_schema

    return openapi


def _build_schema(app: FastAPI) -> dict[str, Any]:
    """The OpenAPI document with our error shape: ErrorResponse for every error, 422 included."""
    schema = get_openapi(title=app.title, version=app.version, description=app.description, routes=app.routes)
    schemas = schema.setdefault("components", {}).setdefault("schemas", {})
    err = ErrorResponse.model_json_schema(ref_template="#/components/schemas/{model}")
    for name, sub in err.pop("$defs", {}).items():
        schemas[name] = sub
    schemas["ErrorResponse"] = err
    # FastAPI documents 422 as its own {loc, msg} shape; ours is ErrorResponse
    schemas["HTTPValidationError"] = {"$ref": "#/components/schemas/ErrorResponse"}
    schemas.pop("ValidationError", None)
    document_errors(schema, app.routes)
    return schema


@asynccontextmanager
async def _lifespan(_: FastAPI) -> AsyncIterator[None]:
    # built-in workload presets follow the code: refresh them at start-up (idempotent)
    await run_in_threadpool(_ensure_builtins)
    # make the dummy password hash now, so even the first login with an unknown e-mail costs
    # exactly one verification, like a wrong password (backend.serve's supervisor made it already:
    # its processes inherit it)
    await run_in_threadpool(prepare_password_check)
    # what start-up built (modules, routes, schemas, validators) lives as long as the app: move it out
    # of the cyclic GC's reach, so a collection during a request walks that request's objects, not
    # the whole heap (collections were about a fifth of a 30-run comparison's CPU: docs/benchmarks.md
    # § Compare); thawed at shutdown, so an app that stops (tests) leaves nothing uncollectable --
    # except in backend.serve's processes, which exit with the app: thawing there only made the
    # exit's final collection walk the whole heap (0.15-0.3 CPU-s per process stop)
    gc.freeze()
    yield
    if not os.environ.get(EXITS_WITH_APP):
        gc.unfreeze()


def _ensure_builtins() -> None:
    try:
        with unit_of_work() as session:
            ensure_builtins(session)
    except Exception as exc:  # noqa: BLE001 - the API still starts; /health shows the database state
        log.warning("builtins.not_refreshed", error=str(exc).splitlines()[0])


def create_app() -> FastAPI:
    settings = get_settings()
    configure_logging()
    app = FastAPI(
        lifespan=_lifespan,
        title="iowatt",
        version=__version__,
        openapi_url="/openapi.json",
        description="Storage benchmarking results platform. Base units: bytes, ns, s, W, J, gCO2e; UTC.",
        dependencies=[Depends(_no_nul_in_params)],
        generate_unique_id_function=operation_id,  # `list_runs`, not `list_runs_api_v1_runs_get`
        # /docs and /redoc are served with their assets, no CDN (backend/apidocs.py)
        docs_url=None,
        redoc_url=None,
    )
    app.add_exception_handler(RequestValidationError, _validation_handler)  # type: ignore[arg-type]
    app.add_exception_handler(AppError, _app_error_handler)  # type: ignore[arg-type]
    app.add_exception_handler(StarletteHTTPException, _http_handler)  # type: ignore[arg-type]
    app.add_exception_handler(Exception, _unhandled_handler)
    for r in (
        health_router,
        auth_router,
        oidc_router,
        proof_router,
        team_router,
        invitation_router,
        audit_router,
        agent_router,
        agent_dist_router,
        device_router,
        environment_router,
        workload_router,
        workload_facts_router,
        run_router,
        run_tags_router,
        run_group_router,
        run_barrier_router,
        pts_router,
        upload_router,
        imports_router,
        compare_router,
        carbon_router,
        campaign_router,
        schedule_router,
        alert_router,
        series_router,
        comment_router,
        export_router,
        erase_router,
        views_router,
        sharing_router,
        review_router,
    ):
        app.include_router(r, prefix=API_PREFIX)
    app.include_router(metrics_router)
    app.include_router(sharing_pages)  # /s/{token}: link previews, before the SPA's catch-all
    apidocs.mount(app)  # /docs, /redoc and their assets, before the SPA's catch-all
    _mount_ui(app, settings.frontend_dist)
    index_included_routers(app)  # a request skips the routers none of whose paths it starts like
    app.openapi = _openapi_with_our_errors(app)  # type: ignore[method-assign]
    # outermost last: security headers on every answer, including the size limit's 413, which
    # is decided before the body is read, routed or authenticated
    app.add_middleware(BodyLimitMiddleware, routes=lambda: app.router.routes)
    app.add_middleware(SecurityHeadersMiddleware)
    # outermost: the request id and the access log cover every answer, the 413 and NUL 422 too
    app.add_middleware(RequestLogMiddleware, observe=observe_request)
    return app
