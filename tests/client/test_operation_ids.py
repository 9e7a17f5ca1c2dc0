"""Readable, unique OpenAPI operation ids (issue 26): the route's name (`list_runs`), never FastAPI's
default with the path and method appended (`list_runs_api_v1_runs_get`). The Python client, the
`iowatt` command and the UI's typed client name operations by them."""

import keyword
from collections import Counter

from fastapi import FastAPI
from fastapi.routing import APIRoute

from backend.kit.operation_ids import RENAMED, operation_id
from backend.main import create_app


def ids(doc: dict) -> list[str]:
    return [op["operationId"] for methods in doc["paths"].values() for op in methods.values()]


def check(doc: dict) -> list[str]:
    """What is wrong with a document's operation ids (empty: nothing)."""
    found = ids(doc)
    wrong = [f"{i} is used {n} times" for i, n in Counter(found).items() if n > 1]
    wrong += [
        f"{i} carries the path suffix" for i in found if "_api_v1_" in i or i.endswith(("_get", "_post"))
    ]
    wrong += [f"{i} is not a Python name" for i in found if not i.isidentifier() or keyword.iskeyword(i)]
    return wrong


def test_every_operation_id_is_the_route_name_and_unique() -> None:
    doc = create_app().openapi()
    assert check(doc) == []
    found = set(ids(doc))
    assert {"list_runs", "get_run", "create_import", "list_import_formats", "compare"} <= found
    assert set(RENAMED.values()) <= found  # each rename is still needed and used


def test_the_checker_finds_a_duplicate_and_the_old_suffix() -> None:
    app = FastAPI(generate_unique_id_function=operation_id)

    @app.get("/a")
    def list_things() -> None: ...

    @app.post("/b", name="list_things")
    def other() -> None: ...

    @app.get("/api/v1/c", generate_unique_id_function=lambda r: f"{r.name}_api_v1_c_get")
    def old_style() -> None: ...

    wrong = check(app.openapi())
    assert "list_things is used 2 times" in wrong
    assert "old_style_api_v1_c_get carries the path suffix" in wrong
    route = next(r for r in app.routes if isinstance(r, APIRoute) and r.path == "/a")
    assert operation_id(route) == "list_things"
