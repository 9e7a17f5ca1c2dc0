"""No input gives a 500 (issue 12): every create/update operation of the OpenAPI (POST, PUT, PATCH
with a body), called by a caller allowed to call it, with hostile bodies built from its minimal valid
body (tests/security/test_authz_matrix.py BODIES): wrong types, relative and escaping paths, huge and
negative numbers, missing and unknown fields, NUL bytes, empty and very long strings, at every field
of the body down to list items. The operations come from the app's OpenAPI, so a new route is walked
by itself (and fails in the matrix until it has a valid body). Each request runs in a savepoint of
the matrix's world, rolled back after the answer."""

import copy
import json
from collections.abc import Iterator
from typing import Any

import pytest

from tests.security.conftest import Matrix
from tests.security.test_authz_matrix import (
    BODIES,
    EXPECTED,
    OK,
    OPERATIONS,
    PATH_IDS,
    PATH_IDS_BY_OP,
    QUERIES,
)
from tests.security.world import PRINCIPALS

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("security-matrix")]

WRITE_OPS = [op for op in OPERATIONS if op.split(" ", 1)[0] in ("POST", "PUT", "PATCH") and op in BODIES]

# what replaces one value of a valid body
HOSTILE: list[Any] = [
    None,
    "",
    "\x00",
    "a\x00b",
    "relative/path",
    "../../../etc/passwd",
    "x" * 10_000,
    -1,
    0,
    10**30,
    -(10**30),
    1e308,
    1.5,
    True,
    [],
    {},
    ["x"],
    {"unexpected": {"nested": [1, 2]}},
    "2026-13-45T99:99:99Z",
    "00000000-0000-0000-0000-000000000000",
]


# deeper in a body (an engine document's options) the values most likely to slip past a schema
DEEP_HOSTILE: list[Any] = [None, "\x00", "x" * 10_000, 10**30, -(10**30), True, {"unexpected": [1]}]


def _kind(value: Any) -> str:
    """A JSON value's type, numbers as one (a schema's number takes an integer)."""
    if value is None or isinstance(value, bool):
        return repr(value) if value is None else "bool"
    if isinstance(value, int | float):
        return "number"
    return type(value).__name__


def _for_field(valid: Any, values: list[Any]) -> list[Any]:
    """The hostile values for a field whose valid value is `valid`: every one of the field's own
    type (those pass the type check and reach the route's logic: where a 500 hides), and the first
    of each other type (a type error: the same 422 from the schema for any value of that type, so
    one of each proves it; all twenty cost a third of the suite's in-process CPU)."""
    own, seen, out = _kind(valid), set(), []
    for v in values:
        k = _kind(v)
        if k == own or k not in seen:
            out.append(v)
            seen.add(k)
    return out


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """Every location in a JSON value (dict keys and list indexes), depth first."""
    if isinstance(value, dict):
        for k, v in value.items():
            yield (*prefix, k)
            yield from _paths(v, (*prefix, k))
    elif isinstance(value, list):
        for i, v in enumerate(value[:1]):
            yield (*prefix, i)
            yield from _paths(v, (*prefix, i))


def _copy_along(doc: Any, path: tuple[Any, ...]) -> tuple[Any, Any]:
    """A copy of doc that shares everything but the containers on the path (copied one level
    each, so changing the last one leaves doc as it was): (the copy, the path's last container).
    A deep copy of a whole result document per hostile body was 4 % of the test's CPU."""
    out = copy.copy(doc)
    node = out
    for p in path[:-1]:
        node[p] = copy.copy(node[p])
        node = node[p]
    return out, node


def _set(doc: Any, path: tuple[Any, ...], value: Any) -> Any:
    out, node = _copy_along(doc, path)
    node[path[-1]] = value
    return out


def _drop(doc: Any, path: tuple[Any, ...]) -> Any:
    out, node = _copy_along(doc, path)
    del node[path[-1]]
    return out


def hostile_bodies(valid: Any) -> Iterator[tuple[str, Any]]:
    """(what, body) pairs: the whole body wrong, then every field wrong, missing, or joined by another."""
    yield "empty object", {}
    yield "a list", [valid]
    yield "a string", "x"
    yield "null", None
    if not isinstance(valid, dict):
        return
    yield "unknown field", {**valid, "unknown_field": 1}
    yield "NUL key", {**valid, "\x00": "x"}
    for path in _paths(valid):
        where = ".".join(str(p) for p in path)
        if isinstance(path[-1], str):
            yield f"{where} missing", _drop(valid, path)
            parent = path[:-1]
            yield f"{where} with an unknown sibling", _set(valid, (*parent, "unknown_field"), "x")
        node = valid
        for p in path:
            node = node[p]
        for bad in _for_field(node, HOSTILE if len(path) <= 2 else DEEP_HOSTILE):
            yield f"{where} = {json.dumps(bad)[:40]}", _set(valid, path, bad)


def _caller(op: str) -> str:
    """The first principal the matrix lets call this operation; for one nobody may call on the
    matrix's server (sign-in with OIDC is not configured there: 404), the first principal: its body
    is still validated before the route answers."""
    row = EXPECTED[op]
    return next((who for who, e in zip(PRINCIPALS, row, strict=True) if e == OK), PRINCIPALS[0])


def _url(m: Matrix, op: str) -> tuple[str, str]:
    method, template = op.split(" ", 1)
    ids = {**PATH_IDS, **PATH_IDS_BY_OP.get(op, {})}
    path = template
    for name, key in ids.items():
        path = path.replace(f"{{{name}}}", m.world.ids[key])
    return method, path


def test_each_field_gets_every_value_of_its_type_and_one_of_each_other() -> None:
    def split(out: list[Any], own: str) -> tuple[list[Any], list[str]]:
        return [v for v in out if _kind(v) == own], [_kind(v) for v in out if _kind(v) != own]

    for valid, own in (("name", "str"), (3, "number"), (2.5, "number"), (True, "bool"), ([1], "list")):
        mine, others = split(_for_field(valid, HOSTILE), own)
        assert mine == [v for v in HOSTILE if _kind(v) == own]
        assert sorted(others) == sorted({_kind(v) for v in HOSTILE} - {own})
    assert len(_for_field(None, HOSTILE)) == 6


def test_hostile_bodies_leave_the_valid_body_as_it_was() -> None:
    """Each hostile body is the valid one with one change; the valid one itself never changes."""
    valid = {"a": {"b": [{"c": 1, "d": "x"}], "e": 2}, "f": [3]}
    before = json.dumps(valid, sort_keys=True)
    bodies = [body for _, body in hostile_bodies(valid)]
    assert json.dumps(valid, sort_keys=True) == before
    assert {"a": {"b": [{"d": "x"}], "e": 2}, "f": [3]} in bodies
    assert {"a": {"b": [{"c": 1, "d": "x"}], "e": 2}, "f": [3], "unknown_field": "x"} in bodies


def test_every_write_operation_is_walked() -> None:
    writes = [op for op in OPERATIONS if op.split(" ", 1)[0] in ("POST", "PUT", "PATCH")]
    assert set(WRITE_OPS) <= set(writes) and len(WRITE_OPS) >= 15
    # the rest take no body (cancel, revoke, lease, logout, ...): their only input is the path and query
    bodiless = [op for op in writes if op not in BODIES]
    from backend.main import create_app

    spec = create_app().openapi()
    for op in bodiless:
        method, path = op.split(" ", 1)
        assert "requestBody" not in spec["paths"][path][method.lower()], f"{op} takes a body: walk it"


@pytest.mark.parametrize("op", WRITE_OPS)
def test_no_hostile_body_gives_a_500(matrix: Matrix, op: str) -> None:
    method, path = _url(matrix, op)
    who = _caller(op)
    valid = BODIES[op](matrix.world)
    params = QUERIES[op](matrix.world) if op in QUERIES else None
    failures: list[str] = []
    tried = 0
    if isinstance(valid, tuple):  # a text body (CSV): hostile texts instead
        text, media = valid
        cases: list[tuple[str, Any]] = [
            ("empty", ""),
            ("NUL", text.replace("300", "3\x000")),
            ("huge", text.replace("300", "1e400")),
            ("negative", text.replace("300", "-5")),
            ("no header", "2026-01-01T00:00:00Z,300\n"),
            ("garbage", "\xff\xfe,,,\n;;;"),
            ("bad time", text.replace("2026-01-01T00:00:00Z", "yesterday")),
        ]
        for what, content in cases:
            with matrix.isolated():
                r = matrix.client.request(
                    method,
                    path,
                    params=params,
                    content=content.encode("utf-8", "surrogatepass"),
                    headers={**matrix.world.headers[who], "Content-Type": media},
                )
            tried += 1
            if r.status_code >= 500:
                failures.append(f"{what}: {r.status_code} {r.text[:200]}")
    else:
        for what, body in hostile_bodies(valid):
            with matrix.isolated():
                r = matrix.client.request(
                    method, path, params=params, json=body, headers=matrix.world.headers[who]
                )
            tried += 1
            if r.status_code >= 500:
                failures.append(f"{what}: {r.status_code} {r.text[:200]}")
        with matrix.isolated():  # not JSON at all
            r = matrix.client.request(
                method,
                path,
                params=params,
                content=b"{not json\x00",
                headers={**matrix.world.headers[who], "Content-Type": "application/json"},
            )
        tried += 1
        if r.status_code >= 500:
            failures.append(f"invalid JSON: {r.status_code} {r.text[:200]}")
    assert tried > 5
    assert not failures, (
        f"{op} as {who} answered 5xx for {len(failures)} of {tried} bodies:\n  " + "\n  ".join(failures[:20])
    )


def test_a_campaign_with_a_relative_target_is_a_422_naming_the_field(matrix: Matrix) -> None:
    body = {**BODIES["POST /api/v1/campaigns"](matrix.world)}
    body["targets"] = [{"agent_id": matrix.world.ids["agent_x"], "target_path": "relative/dir"}]
    with matrix.isolated():
        r = matrix.client.post("/api/v1/campaigns", json=body, headers=matrix.world.headers["member"])
    assert r.status_code == 422, r.text
    fields = [d["field"] for d in r.json()["detail"]]
    assert any(f.startswith("targets.0.target_path") or f == "targets.0" for f in fields), r.text
    with matrix.isolated():  # the same input to /runs: the same answer
        r = matrix.client.post(
            "/api/v1/runs",
            json={
                "agent_id": matrix.world.ids["agent_x"],
                "target_path": "relative/dir",
                "workload_id": matrix.world.ids["workload"],
            },
            headers=matrix.world.headers["member"],
        )
    assert r.status_code == 422 and any("target_path" in d["field"] for d in r.json()["detail"]), r.text
