"""The application's routes as included: FastAPI >= 0.137 keeps an included router as one node of
`app.routes`; `iter_route_contexts` yields each of its routes with the prefixed path, the router's
responses and dependencies. TEMPORARY fallback for the FastAPI 0.115 of a not yet upgraded venv."""

from collections.abc import Iterable, Iterator
from typing import Any

try:
    from fastapi.routing import RouteContext, iter_route_contexts  # type: ignore[attr-defined,unused-ignore]
except ImportError:  # FastAPI < 0.137: app.routes is already flat

    class RouteContext:  # type: ignore[no-redef,unused-ignore]
        def __init__(self, route: Any) -> None:
            self.original_route = route

        def __getattr__(self, name: str) -> Any:
            return getattr(self.original_route, name)

    def iter_route_contexts(routes: Iterable[Any]) -> Iterator[RouteContext]:  # type: ignore[misc,unused-ignore]
        return (RouteContext(r) for r in routes)


__all__ = ["RouteContext", "iter_route_contexts"]
