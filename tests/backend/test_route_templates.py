"""The route template a request goes to, as the body limit and the request log see it: found once
per method and path, the same answer as a scan of the routes."""

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
