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

from fastapi.routing import APIRoute, iter_route_contexts
from starlette._utils import get_route_path
from starlette.routing import BaseRoute, Match, Mount, Route, WebSocketRoute
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


class _PrefixFilter:
    """An included router's `matches` that first checks the request's path against the literal
    start of each of its routes' paths (`/api/v1/runs/` of `/api/v1/runs/{run_id}`): a router none
    of whose routes' paths the request's path starts with cannot match it (every route matches by
    its path's regex, which begins with that literal text), so the request goes on to the next
    router without the router's routes being matched one by one. FastAPI >= 0.137 matches a
    request against each of the ~35 included routers in turn, each against every route of its own
    (~90 regex matches and scope bookkeeping per request). What the router answers when the
    prefixes do admit the path is FastAPI's own `matches`; a router with a route whose path is not
    known this way (a frontend group, a host) is always asked."""

    def __init__(self, router: Any) -> None:
        self.router = router
        self.original = router.matches
        self.seen: object = None
        self.prefixes: tuple[str, ...] | None = None

    def __call__(self, scope: Scope) -> tuple[Match, Scope]:
        candidates = self.router.effective_candidates()  # rebuilt (a new list) when its routes change
        if candidates is not self.seen:
            self.prefixes = _literal_starts(candidates)
            self.seen = candidates
        if self.prefixes is not None and not get_route_path(scope).startswith(self.prefixes):
            return Match.NONE, {}
        result: tuple[Match, Scope] = self.original(scope)
        return result


def _literal_starts(candidates: Sequence[Any]) -> tuple[str, ...] | None:
    """The literal start of every candidate's path (up to its first parameter), or None if one's is
    not known (a route of another kind than FastAPI's, Starlette's routes, websockets and mounts)."""
    out: set[str] = set()
    for c in candidates:
        nested = getattr(c, "effective_candidates", None)
        if nested is not None:  # a router included in this one
            inner = _literal_starts(nested())
            if inner is None:
                return None
            out.update(inner)
            continue
        route = getattr(c, "starlette_route", None)
        if route is None:  # a FastAPI route: its context holds the path with every prefix
            route = c if isinstance(getattr(c, "original_route", None), APIRoute) else None
        elif not isinstance(route, Route | WebSocketRoute | Mount):
            route = None
        fmt = getattr(route, "path_format", None)
        if not isinstance(fmt, str) or not fmt.startswith("/"):
            return None
        out.add(fmt.split("{", 1)[0])
    return tuple(sorted(out))


def index_included_routers(app: Any) -> None:
    """Give each router included in `app` the path prefilter above (an app whose FastAPI has no
    included-router objects, or whose routes are not of the known kinds, is left as it is)."""
    for route in getattr(app.router, "routes", ()):
        if type(route).__name__ == "_IncludedRouter" and callable(
            getattr(route, "effective_candidates", None)
        ):
            route.matches = _PrefixFilter(route)
