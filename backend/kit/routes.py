"""The path template of the route a request goes to (`/api/v1/runs/{run_id}`), found once per
method and path.

The body limit picks its limit by it before routing, and the request log labels by it after:
each used to scan every route (FastAPI >= 0.137 builds each included router's route contexts on
the way), about 0.5 ms of an API process's CPU per request, twice. Routes do not change once an
app serves, so a router's answers are kept per (method, path), a bounded number of them: an
agent's lease and heartbeat paths, the UI's pages, repeat constantly.

A path's UUID segments (an agent's, a run's id) do not change its route when no route can tell two
UUIDs apart (every path segment of every route either literal text that is no UUID or a whole
parameter: `{agent_id}`, `{p:path}`): then the answer is kept once per shape of path
(`/api/v1/agents/<uuid>/heartbeat`), not once per agent and per run. With one answer per agent
and per run, 1,000 agents' heartbeats and long-polls filled the kept answers at 2,000 and every
run's paths added more (past MAX_KEPT all dropped), each first sight a scan of the routes."""

import contextlib
import re
from collections.abc import Sequence
from typing import Any

from fastapi import routing as fastapi_routing
from fastapi.routing import APIRoute, iter_route_contexts
from starlette._utils import get_route_path
from starlette.routing import BaseRoute, Match, Mount, Route, WebSocketRoute
from starlette.types import Scope

MAX_KEPT = 4096  # per router: past it the kept answers are dropped and found again
_UNMATCHED = ""
_UUID = re.compile(
    r"(?<=/)[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}(?=/|$)"
)
_UUID_SHAPE = "<uuid>"  # a request's path with this text itself is kept by its own path
_WHOLE_PARAM = re.compile(r"\{[A-Za-z_][A-Za-z0-9_]*(:(str|path|uuid))?\}")


class _Kept:
    def __init__(self, routes: Sequence[BaseRoute]) -> None:
        self.count = len(routes)
        self.answers: dict[tuple[str, str], str] = {}
        self.by_shape = _uuid_blind(routes)


def _uuid_blind(routes: Sequence[BaseRoute]) -> bool:
    """Whether no route can tell two UUIDs apart in a path segment: every segment of every route's
    path is literal text that is not a UUID or one whole parameter that takes any segment (any
    UUID) or any rest of the path; a route whose path is not known this way makes it False."""
    for route in fastapi_routing.iter_route_contexts(routes):  # not a scan for a match: no count
        fmt = getattr(route, "path_format", None)
        if not isinstance(fmt, str) or not fmt.startswith("/"):
            return False
        for segment in fmt.split("/"):
            if "{" in segment or "}" in segment:
                if not _WHOLE_PARAM.fullmatch(segment):
                    return False
            elif _UUID.search("/" + segment):  # a literal segment that is a UUID
                return False
    return True


def template(scope: Scope, routes: Sequence[BaseRoute], owner: Any) -> str | None:
    """The template of the route that fully matches `scope` (method and path), or None.
    `owner` holds the kept answers (the app's router): a router whose routes changed in number
    (a test adding one) starts afresh."""
    kept: _Kept | None = getattr(owner, "_iowatt_templates", None) if owner is not None else None
    if kept is None or kept.count != len(routes):
        kept = _Kept(routes)
        with contextlib.suppress(AttributeError):  # an owner taking no attribute: found every time
            owner._iowatt_templates = kept
    raw = str(scope.get("path", ""))
    shaped = kept.by_shape and _UUID_SHAPE not in raw
    key = (str(scope.get("method", "")), _UUID.sub(_UUID_SHAPE, raw) if shaped else raw)
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
