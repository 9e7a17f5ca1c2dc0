"""Readable OpenAPI operation ids: the route's name (`list_runs`), not FastAPI's default
`list_runs_api_v1_runs_get`. The Python client (client/), the `iowatt` command and the UI's typed
client name operations by these ids, so they are part of the API's contract (docs/contracts.md).

A route's name is its endpoint function's name; two routes whose functions share a name get the
id written below, keyed by the endpoint's module. tests/client/test_operation_ids.py fails on a
duplicate id or the old suffix."""

from fastapi.routing import APIRoute

# "<module>.<function>" -> operation id, for names that more than one route has
RENAMED = {
    "backend.auth.oidc_router.login": "oidc_login",
    "backend.review.router.list_comments": "list_review_comments",
    "backend.run.router.upload_result": "upload_run_result",
}


def operation_id(route: APIRoute) -> str:
    return RENAMED.get(f"{route.endpoint.__module__}.{route.name}", route.name)
