"""The path template of the route a request goes to (`/api/v1/runs/{run_id}`), found once per
method and path.

The body limit picks its limit by it before routing, and the request log labels by it after:
each used to scan every route (FastAPI >= 0.137 builds each included router's route contexts on
the way), about 0.5 ms of an API process's CPU per request, twice. Routes do not change once an
app serves, so a router's answers are kept per (method, path), a bounded number of them: an
agent's lease and heartbeat paths, the UI's pages, repeat constantly."""

import contextlib
from collections.abc import Sequence
from typing import Any

from fastapi.routing import iter_route_contexts
from starlette.routing import BaseRoute, Match
from starlette.types import Scope

MAX_KEPT = 4096  # per router: past it the kept answers are dropped and found again
_UNMATCHED = ""


class _Kept:
    def __init__(self, routes: Sequence[BaseRoute]) -> None:
        self.count = len(routes)
        self.answers: dict[tuple[str, str], str] = {}


def template(scope: Scope, routes: Sequence[BaseRoute], owner: Any) -> str | None:
    """The template of the route that fully matches `scope` (method and path), or None.
    `owner` holds the kept answers (the app's router): a router whose routes changed in number
    (a test adding one) starts afresh."""
    kept: _Kept | None = getattr(owner, "_iowatt_templates", None) if owner is not None else None
    if kept is None or kept.count != len(routes):
        kept = _Kept(routes)
        with contextlib.suppress(AttributeError):  # an owner taking no attribute: found every time
            owner._iowatt_templates = kept
    key = (str(scope.get("method", "")), str(scope.get("path", "")))
    found = kept.answers.get(key)
    if found is None:
        found = _UNMATCHED
        for route in iter_route_contexts(routes):
            match, _ = route.matches(scope)
            if match == Match.FULL:
                path = getattr(route, "path", None)
                found = path if isinstance(path, str) else _UNMATCHED
                break
        if len(kept.answers) >= MAX_KEPT:
            kept.answers.clear()
        kept.answers[key] = found
    return found or None
