"""The route template a request goes to, as the body limit and the request log see it: found once
per method and path, the same answer as a scan of the routes."""

import re
import uuid
from typing import Any

import pytest
from fastapi import FastAPI
from fastapi import routing as fastapi_routing

from backend.kit import routes as kit_routes


def _scope(app: FastAPI, method: str, path: str) -> dict[str, Any]:
    return {"type": "http", "method": method, "path": path, "root_path": "", "app": app, "headers": []}


def test_templates_are_found_once_per_method_and_path(monkeypatch: pytest.MonkeyPatch) -> None:
    app = FastAPI()

    @app.get("/api/v1/runs/{run_id}")
    def get_run(run_id: str) -> str:
        return run_id

    @app.post("/api/v1/runs")
    def create_run() -> None:
        return None

    scans: list[int] = []
    real = fastapi_routing.iter_route_contexts

    def counting(routes: Any) -> Any:
        scans.append(1)
        return real(routes)

    monkeypatch.setattr(kit_routes, "iter_route_contexts", counting)
    r = app.router
    assert kit_routes.template(_scope(app, "GET", "/api/v1/runs/abc"), r.routes, r) == "/api/v1/runs/{run_id}"
    assert kit_routes.template(_scope(app, "GET", "/api/v1/runs/abc"), r.routes, r) == "/api/v1/runs/{run_id}"
    assert len(scans) == 1  # the second answer was kept
    # the method decides too: GET /runs is no route here, POST /runs is
    assert kit_routes.template(_scope(app, "GET", "/api/v1/runs"), r.routes, r) is None
    assert kit_routes.template(_scope(app, "POST", "/api/v1/runs"), r.routes, r) == "/api/v1/runs"
    assert kit_routes.template(_scope(app, "GET", "/nowhere"), r.routes, r) is None
    assert kit_routes.template(_scope(app, "GET", "/nowhere"), r.routes, r) is None
    assert len(scans) == 4

    @app.get("/api/v1/later")
    def later() -> None:
        return None

    # a route added: the kept answers are dropped, the new route is found
    assert kit_routes.template(_scope(app, "GET", "/api/v1/later"), r.routes, r) == "/api/v1/later"
    assert kit_routes.template(_scope(app, "GET", "/api/v1/runs/abc"), r.routes, r) == "/api/v1/runs/{run_id}"
    assert len(scans) == 6


def test_the_kept_answers_are_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    app = FastAPI()

    @app.get("/x/{n}")
    def x(n: str) -> str:
        return n

    monkeypatch.setattr(kit_routes, "MAX_KEPT", 10)
    for n in range(25):
        assert kit_routes.template(_scope(app, "GET", f"/x/{n}"), app.router.routes, app.router) == "/x/{n}"
    assert len(app.router._iowatt_templates.answers) <= 10  # type: ignore[attr-defined]


def _filled(template: str) -> list[str]:
    """Paths a template's route matches and paths next to it that it must not."""
    ids = re.sub(r"\{[^}]+\}", "0b7c3c1e-5f3a-4c1a-9d2e-2f1b8f9a7c11", template)
    words = re.sub(r"\{[^}]+\}", "x", template)
    return [ids, words + "/", ids.rstrip("/") + "/more", template.rsplit("/", 1)[0] or "/"]


def _filtered(app: FastAPI) -> list[Any]:
    return [r for r in app.router.routes if isinstance(r.__dict__.get("matches"), kit_routes._PrefixFilter)]


def test_the_routers_path_prefilter_answers_as_fastapi_does(app_client: Any) -> None:
    """create_app() gives each included router a prefilter on its routes' literal path starts
    (backend/kit/routes.py): for every route's path, paths beside it and paths of no route, a
    router the prefilter skips is one FastAPI's own matching finds no route of (a path that passes
    the prefilter is matched by FastAPI itself)."""
    app = app_client.app
    filtered = [
        r for r in app.router.routes if isinstance(r.__dict__.get("matches"), kit_routes._PrefixFilter)
    ]
    assert len(filtered) >= 30  # every included router
    paths = {
        "/",
        "/api",
        "/api/v1",
        "/api/v1/",
        "/api/v1/nothing",
        "/runs",
        "/s",
        "/s/",
        "/metrics/",
        "/docs/x",
    }
    for ctx in fastapi_routing.iter_route_contexts(app.router.routes):
        if isinstance(ctx.path, str):
            paths.update(_filled(ctx.path))
    assert len(paths) > 300
    methods = ("GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS")
    skipped = 0
    for n, path in enumerate(sorted(paths)):
        method = methods[n % len(methods)]  # a route's path decides NONE; the method only FULL or PARTIAL
        for r in filtered:
            ours = r.matches(_scope(app, method, path))
            prefixes = r.matches.prefixes
            if prefixes is not None and path.startswith(prefixes):
                continue  # the prefilter let FastAPI's own matching answer
            skipped += 1
            assert ours == (fastapi_routing.Match.NONE, {})
            assert type(r).matches(r, _scope(app, method, path))[0] == fastapi_routing.Match.NONE, (path, r)
    assert skipped > len(paths) * 20  # most routers are skipped for most paths


def test_the_prefilter_follows_routes_added_after_the_include() -> None:
    app = FastAPI()
    router = fastapi_routing.APIRouter()

    @router.get("/a/{thing_id}")
    def thing(thing_id: str) -> str:
        return thing_id

    app.include_router(router, prefix="/api")
    kit_routes.index_included_routers(app)
    (included,) = [
        r for r in app.router.routes if isinstance(r.__dict__.get("matches"), kit_routes._PrefixFilter)
    ]
    match = fastapi_routing.Match
    assert included.matches(_scope(app, "GET", "/api/a/1"))[0] == match.FULL
    assert included.matches(_scope(app, "GET", "/api/b"))[0] == match.NONE

    @router.get("/b")
    def b() -> None:
        return None

    assert included.matches(_scope(app, "GET", "/api/b"))[0] == match.FULL
    assert included.matches(_scope(app, "POST", "/api/b"))[0] == match.PARTIAL
    assert included.matches(_scope(app, "GET", "/api/c"))[0] == match.NONE


def test_uuid_segments_are_kept_once_per_shape_of_path(
    monkeypatch: pytest.MonkeyPatch, app_client: Any
) -> None:
    """An agent's and a run's id in a path: one scan of the routes per shape of path, not per agent
    and per run (1,000 agents' heartbeats and polls), with each path's own answer; an app with a
    route that can tell two UUIDs apart keeps every path by itself."""
    app = FastAPI()

    @app.post("/api/v1/agents/{agent_id}/heartbeat")
    def heartbeat(agent_id: str) -> str:
        return agent_id

    @app.get("/api/v1/runs/export")
    def export() -> None:
        return None

    @app.get("/api/v1/runs/{run_id}")
    def get_run(run_id: str) -> str:
        return run_id

    scans: list[int] = []
    real = fastapi_routing.iter_route_contexts

    def counting(routes: Any) -> Any:
        scans.append(1)
        return real(routes)

    r = app.router
    assert (
        kit_routes.template(_scope(app, "GET", "/api/v1/runs/export"), r.routes, r) == "/api/v1/runs/export"
    )
    monkeypatch.setattr(kit_routes, "iter_route_contexts", counting)
    ids = [str(uuid.uuid4()) for _ in range(50)] + [str(uuid.uuid4()).upper()]
    for i in ids:
        hb = _scope(app, "POST", f"/api/v1/agents/{i}/heartbeat")
        assert kit_routes.template(hb, r.routes, r) == "/api/v1/agents/{agent_id}/heartbeat"
        assert (
            kit_routes.template(_scope(app, "GET", f"/api/v1/runs/{i}"), r.routes, r)
            == "/api/v1/runs/{run_id}"
        )
        assert kit_routes.template(_scope(app, "GET", f"/api/v1/agents/{i}/heartbeat"), r.routes, r) is None
    assert len(scans) == 3  # a shape each: POST and GET of the heartbeat's, GET of a run's
    assert (
        kit_routes.template(_scope(app, "GET", "/api/v1/runs/export"), r.routes, r) == "/api/v1/runs/export"
    )
    assert (
        kit_routes.template(_scope(app, "GET", "/api/v1/runs/not-an-id"), r.routes, r)
        == "/api/v1/runs/{run_id}"
    )
    # the shape's own text in a path (percent-decoded by the server) is kept by that path
    assert kit_routes.template(_scope(app, "GET", "/api/v1/runs/<uuid>/x"), r.routes, r) is None
    hb = _scope(app, "POST", f"/api/v1/agents/{ids[0]}/heartbeat")
    assert kit_routes.template(hb, r.routes, r) == "/api/v1/agents/{agent_id}/heartbeat"
    assert len(scans) == 5

    telling = FastAPI()

    @telling.get("/x/{n}a")  # a UUID ending in `a` is its path
    def x(n: str) -> str:
        return n

    t = telling.router
    scans.clear()
    ending_a, ending_b = "0b7c3c1e-5f3a-4c1a-9d2e-2f1b8f9a7c1a", "0b7c3c1e-5f3a-4c1a-9d2e-2f1b8f9a7c1b"
    assert kit_routes.template(_scope(telling, "GET", f"/x/{ending_a}"), t.routes, t) == "/x/{n}a"
    assert kit_routes.template(_scope(telling, "GET", f"/x/{ending_b}"), t.routes, t) is None
    assert len(scans) == 2  # each path scanned
    # the server's own routes tell no two UUIDs apart: its paths are kept by shape
    assert kit_routes._uuid_blind(app_client.app.router.routes)
