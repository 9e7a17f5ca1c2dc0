"""docs/contracts.md §2 (agent ↔ server) and §3 (UI ↔ server) against the server's OpenAPI, so
their shapes cannot drift.

The page writes shapes as key lists: `{"id","name","kind": "session|personal","teams":[{"id"}]}`
(a key, optionally `?` for an optional request field, optionally `: value`, where a value may be a
nested shape, a list `[...]` of one, a schema name such as `RunRead`, or prose; parentheses are
comments). Every shape in §3 is checked:
- `Name = {...}`: the keys are exactly the properties of the OpenAPI schema `Name`;
- `` `METHOD /path {...}` ``: the keys are exactly the request body's properties;
- `` `METHOD /path` → [status] `{...}` `` or `→ [status] Name`: the response of that status (the
  route's first 2xx when none is written) has exactly those keys, or is the schema `Name`;
- nested shapes are checked against the property's schema (through `$ref`, `anyOf` with null and
  arrays), a schema name against the property's `$ref`.
Shapes in §3 that are not HTTP bodies are listed in NOT_BODIES, so a new one must be placed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[1]
METHOD = r"(GET|POST|PUT|PATCH|DELETE)"
# §3 spans with braces that are not a request or response body
NOT_BODIES = {
    '{"field", "message", "rule", "fix"}',  # one `detail` entry of a host_policy_refused 422 (ErrorResponse)
    "{rule, field, message, fix}",  # §2: a violation of iowatt_policy.check_run on the agent, not HTTP
}
# §2's inventory: its schema is checked against the agent's by tests/agent/test_contract.py
NOT_CHECKED_HERE = ('{"hostname", "os": {"kernel", "distro"}',)


@dataclass
class Ref:
    name: str


@dataclass
class Enum:
    values: set[str]  # `"queued|assigned"`: exactly the schema's enum (when it has one)


@dataclass
class Shape:
    keys: dict[str, Shape | Ref | Enum | None] = field(default_factory=dict)
    array: bool = False  # the value is a list of this shape
    opaque: bool = False  # `{...}`: any object


TOKEN = re.compile(r'"[^"]*"|\.\.\.|[{}\[\](),:?|]|[^\s{}\[\](),:?|"]+')


class Parser:
    def __init__(self, text: str) -> None:
        # a `|` inside a code span in a markdown table is written `\|` (else it ends the cell)
        self.toks: list[str] = TOKEN.findall(text.replace("\\|", "|"))
        self.i = 0

    def peek(self) -> str | None:
        return self.toks[self.i] if self.i < len(self.toks) else None

    def take(self) -> str:
        tok = self.toks[self.i]
        self.i += 1
        return tok

    def skip_parens(self) -> None:
        depth = 0
        while True:
            tok = self.take()
            depth += tok == "("
            depth -= tok == ")"
            if depth == 0:
                return

    def obj(self) -> Shape:
        assert self.take() == "{"
        shape = Shape()
        if self.peek() == "...":
            self.take()
            assert self.take() == "}"
            return Shape(opaque=True)
        while self.peek() != "}":
            key = self.take()
            assert key.startswith('"'), f"expected a key, got {key!r} in {self.toks}"
            value: Shape | Ref | Enum | None = None
            while self.peek() == "?" or self.peek() == "(":
                self.skip_parens() if self.peek() == "(" else self.take()
            if self.peek() in (":", "|"):  # `"key": value`, or `"key"|null`
                self.take()
                value = self.value()
            shape.keys[key.strip('"')] = value
            if self.peek() == ",":
                self.take()
        self.take()
        return shape

    def value(self) -> Shape | Ref | Enum | None:
        """A value up to the next `,` or `}` of this object; its shape when it has one."""
        found: Shape | Ref | Enum | None = None
        while self.peek() not in (",", "}", "]"):
            tok = self.peek()
            if tok == "(":
                self.skip_parens()
            elif tok == "{":
                found = self.obj()
            elif tok == "[":
                self.take()
                inner = self.value()
                while self.peek() == ",":  # `[number|null, one per run]`: prose after the type
                    self.take()
                    self.value()
                assert self.take() == "]"
                if isinstance(inner, Shape):
                    inner.array = True
                    found = inner
                elif isinstance(inner, Ref):
                    found = Shape(keys={}, array=True, opaque=False)
                    found.keys = {"$ref": inner}
            elif tok is not None and tok.startswith('"') and found is None:
                self.take()
                found = Enum(set(tok.strip('"').split("|")))
            elif tok is not None and tok.startswith('"') and isinstance(found, Enum):  # "a"|"b"
                found.values.add(self.take().strip('"'))
            elif tok is not None and re.fullmatch(r"[A-Z][A-Za-z]+", tok) and found is None:
                self.take()
                found = Ref(tok)
            else:
                self.take()
        return found


def parse(text: str) -> Shape:
    p = Parser(text)
    shape = p.obj()
    assert p.peek() is None, f"text after the shape: {p.toks[p.i :]}"
    return shape


@cache
def openapi() -> dict[str, Any]:
    from backend.main import create_app

    return create_app().openapi()


def ref_name(schema: dict[str, Any]) -> str | None:
    return schema["$ref"].rsplit("/", 1)[1] if "$ref" in schema else None


def resolve(schema: dict[str, Any]) -> list[dict[str, Any]]:
    """The object schemas a schema can be (through $ref, anyOf/oneOf minus null, allOf of one)."""
    if "$ref" in schema:
        return resolve(openapi()["components"]["schemas"][ref_name(schema)])
    for key in ("anyOf", "oneOf"):
        if key in schema:
            return [s for sub in schema[key] if sub.get("type") != "null" for s in resolve(sub)]
    if "allOf" in schema and len(schema["allOf"]) == 1:
        return resolve(schema["allOf"][0])
    return [schema]


def refs(schema: dict[str, Any]) -> set[str]:
    """Schema names a property can be (a list: its items')."""
    if "$ref" in schema:  # pydantic names a model `X-Input`/`X-Output` when the two differ: both are X
        return {re.sub(r"-(Input|Output)$", "", ref_name(schema) or "")}
    if schema.get("type") == "array":
        return refs(schema["items"])
    out: set[str] = set()
    for key in ("anyOf", "oneOf", "allOf"):
        for sub in schema.get(key, []):
            out |= refs(sub)
    return out


def enum_values(schema: dict[str, Any]) -> set[str] | None:
    found: set[str] = set()
    for s in resolve(schema):
        if "const" in s:
            found.add(s["const"])
        found |= set(s.get("enum", []))
    return found or None


def mismatches(shape: Shape | Ref | Enum, schema: dict[str, Any], where: str) -> list[str]:
    if isinstance(shape, Enum):
        values = enum_values(schema)
        # a list of choices must be the schema's; one example value must be one of them
        ok = values is None or values == shape.values or (len(shape.values) == 1 and shape.values <= values)
        return (
            [] if ok else [f"{where}: the doc says {sorted(shape.values)}, the schema {sorted(values or ())}"]
        )
    if isinstance(shape, Ref):
        names = refs(schema)
        return (
            []
            if shape.name in names
            else [f"{where}: the doc says {shape.name}, the schema {names or schema}"]
        )
    if shape.opaque:
        return []
    candidates = []
    for s in resolve(schema):
        if s.get("type") == "array" and shape.array:
            s = s["items"]
            candidates.extend(resolve(s))
        else:
            candidates.append(s)
    if shape.array and set(shape.keys) == {"$ref"}:
        return mismatches(shape.keys["$ref"], schema, where)  # type: ignore[arg-type]
    best: list[str] | None = None
    for s in candidates:
        if s.get("type") == "object" and "properties" not in s:
            return []  # a free-form object (dict[str, Any]): the doc's keys are examples
        props = s.get("properties", {})
        errs = []
        if set(shape.keys) != set(props):
            errs.append(
                f"{where}: keys the doc has and the schema not: {sorted(set(shape.keys) - set(props))}; "
                f"the schema has and the doc not: {sorted(set(props) - set(shape.keys))}"
            )
        else:
            for key, sub in shape.keys.items():
                if sub is not None:
                    errs += mismatches(sub, props[key], f"{where}.{key}")
        if not errs:
            return []
        if best is None or len(errs) < len(best):
            best = errs
    return best or [f"{where}: no object schema in {schema}"]


def operation(method: str, path: str) -> dict[str, Any]:
    norm = re.sub(r"\{[^}]*\}", "{}", path)
    for p, ops in openapi()["paths"].items():
        if re.sub(r"\{[^}]*\}", "{}", p) == norm and method.lower() in ops:
            op: dict[str, Any] = ops[method.lower()]
            return op
    raise AssertionError(f"{method} {path} is not in the OpenAPI")


def response_schema(op: dict[str, Any], status: str | None) -> tuple[str, dict[str, Any] | None]:
    if status is None:
        status = next(s for s in op["responses"] if s.startswith("2"))
    assert status in op["responses"], f"no {status} response; it has {sorted(op['responses'])}"
    content = op["responses"][status].get("content", {})
    return status, content.get("application/json", {}).get("schema")


def section(number: int) -> str:
    text = (REPO / "docs" / "contracts.md").read_text()
    return text.split(f"\n## {number}.", 1)[1].split("\n## ", 1)[0]


@dataclass
class Check:
    label: str
    shape: Shape | Ref | None  # None: the response has no body (204)
    schema: dict[str, Any] | None


ROW = re.compile(rf"^\| `{METHOD} (/[^`?]*)(?:\?[^`]*)?` \| (.*?) \| (.*) \|$", re.M)


def table_checks(sec: str) -> tuple[list[Check], set[str]]:
    """Rows `| `METHOD /path` | body | answer |`: the body's shape, and each `NNN `{...}`` or
    `NNN Name` of the answer (a shape written after `or` belongs to the status before it)."""
    checks: list[Check] = []
    used: set[str] = set()
    for m in ROW.finditer(sec):
        method, path, body, answer = m[1], m[2], m[3], m[4]
        op = operation(method, path)
        label = f"{method} {path}"
        for b in re.findall(r"`(\{.*?\})`", body):
            used.add(b)
            checks.append(
                Check(f"{label} body", parse(b), op["requestBody"]["content"]["application/json"]["schema"])
            )
        status = None
        for part in re.finditer(r"(?:(\d{3}) )?(?:`(\{.*?\})`|([A-Z][A-Za-z]+)\b)", answer):
            status = part[1] or status
            if status is None or (part[3] and part[1] is None):
                continue
            code, schema = response_schema(op, status)
            if part[2]:
                used.add(part[2])
                checks.append(Check(f"{label} → {code}", parse(part[2]), schema))
            else:
                checks.append(Check(f"{label} → {code}", Ref(part[3]), schema or {}))
    return checks, used


def balanced(text: str, start: int) -> str:
    """The `{...}` that opens at `start`."""
    depth = 0
    for i in range(start, len(text)):
        depth += {"{": 1, "}": -1}.get(text[i], 0)
        if depth == 0:
            return text[start : i + 1]
    raise AssertionError(f"unbalanced braces from {text[start : start + 60]!r}")


def block_checks(sec: str) -> list[Check]:
    """```json blocks (`//` comments dropped): `Name = {...}` in them is the schema Name; a block
    that opens with `{` right after an endpoint's line is that endpoint's 2xx answer."""
    checks = []
    for m in re.finditer(r"(?:`([^`\n]+)`\s*)?```json\n(.*?)```", sec, re.S):
        body = re.sub(r"//[^\n]*", "", m[2])
        if body.lstrip().startswith("{") and m[1]:
            ep = re.match(METHOD + r" (/[^?\s]*)", m[1])
            assert ep, f"a JSON block after {m[1]!r}"
            code, schema = response_schema(operation(ep[1], ep[2]), None)
            checks.append(
                Check(
                    f"{ep[1]} {ep[2]} → {code} (JSON block)", parse(balanced(body, body.index("{"))), schema
                )
            )
        for named in re.finditer(r"^(\w+) = \{", body, re.M):
            shape = parse(balanced(body, named.end() - 1))
            checks.append(
                Check(f"{named[1]} (JSON block)", shape, {"$ref": f"#/components/schemas/{named[1]}"})
            )
    return checks


def checks_of(sec: str) -> tuple[list[Check], list[str]]:
    """What §N claims, and the brace spans it left unplaced."""
    checks, in_rows = table_checks(sec)
    checks += block_checks(sec)
    parts = re.split(r"`([^`]+)`", re.sub(r"```.*?```", "", sec, flags=re.S))  # spans outside blocks
    spans = [(parts[i].replace("\n", " "), parts[i + 1]) for i in range(1, len(parts), 2)]
    placed: set[int] = {n for n, (span, _) in enumerate(spans) if span in in_rows}
    for n, (span, after) in enumerate(spans):
        if n in placed:
            continue
        named = re.fullmatch(r"(\w+) = (\{.*\})", span)
        if named:
            placed.add(n)
            schemas = openapi()["components"]["schemas"]
            # a model whose answer differs from its request is `X-Output` there: the page shows answers
            name = named[1] if named[1] in schemas else f"{named[1]}-Output"
            assert name in schemas, f"{named[1]} is not an OpenAPI schema"
            checks.append(Check(named[1], parse(named[2]), {"$ref": f"#/components/schemas/{name}"}))
            continue
        ep = re.fullmatch(
            METHOD + r" (/[^\s\[?{]*(?:\{[^}]*\}[^\s\[?{]*)*)(?:\[?\?[^ ]*)?(?: (\{.*\}))?", span
        )
        if not ep:
            continue
        method, path, body = ep[1], ep[2], ep[3]
        if not path.startswith("/api/"):
            continue
        op = operation(method, path)
        label = f"{method} {path}"
        if body:
            placed.add(n)
            req = op["requestBody"]["content"]["application/json"]["schema"]
            checks.append(Check(f"{label} body", parse(body), req))
        arrow = re.match(r"\s*(?:\([^)]*\)\s*)?→\s*(\d{3})?\s*(?:([A-Z]\w+)\b)?", after)
        if not arrow:
            continue
        status, name = arrow[1], arrow[2]
        rest = after[arrow.end() :]
        code, schema = response_schema(op, status)
        if name:
            checks.append(Check(f"{label} → {code}", Ref(name), schema or {}))
        elif rest.strip() == "" and n + 1 < len(spans) and spans[n + 1][0].startswith("{"):
            placed.add(n + 1)
            checks.append(Check(f"{label} → {code}", parse(spans[n + 1][0]), schema))
        elif code == "204":
            checks.append(Check(f"{label} → 204", None, schema))
    unplaced = [
        s
        for n, (s, _) in enumerate(spans)
        if n not in placed
        and s.startswith("{")
        and s not in NOT_BODIES
        and not s.startswith(NOT_CHECKED_HERE)
    ]
    return checks, unplaced


@pytest.mark.parametrize(("number", "at_least"), [(2, 12), (3, 25), (5, 7)])
def test_every_shape_of_the_section_is_placed_and_checked(number: int, at_least: int) -> None:
    checks, unplaced = checks_of(section(number))
    assert unplaced == [], f"§{number} shapes the test cannot place (name them `Name = {{...}}`): {unplaced}"
    assert len(checks) >= at_least, [c.label for c in checks]


@pytest.mark.parametrize(
    "check", [c for n in (2, 3, 5) for c in checks_of(section(n))[0]], ids=lambda c: c.label
)
def test_section_shape_matches_the_openapi(check: Check) -> None:
    if check.shape is None:
        assert check.schema is None, f"{check.label}: the doc says no body, the route returns {check.schema}"
        return
    assert check.schema is not None, f"{check.label}: the route documents no JSON body"
    assert mismatches(check.shape, check.schema, check.label) == []


def test_the_checker_sees_drift() -> None:
    """Injected drift: a missing key, an extra key, a nested key and a wrong schema name."""
    run = {"$ref": "#/components/schemas/RunRead"}
    props = openapi()["components"]["schemas"]["RunRead"]["properties"]
    full = "{" + ",".join(f'"{k}"' for k in props) + "}"
    assert mismatches(parse(full), run, "RunRead") == []
    assert mismatches(parse(full.replace('"status",', "")), run, "RunRead")
    assert mismatches(parse(full.replace("}", ',"color"}')), run, "RunRead")
    jobs = full.replace('"jobs"', '"jobs": [{"job_index","name","colour"}]')
    assert any("colour" in e for e in mismatches(parse(jobs), run, "RunRead"))
    assert mismatches(parse(full.replace('"workload"', '"workload": AgentRead')), run, "RunRead")
    assert mismatches(parse(full.replace('"workload"', '"workload": WorkloadSpec')), run, "RunRead") == []
    assert mismatches(parse(full.replace('"status"', '"status": "queued|done"')), run, "RunRead")


def test_section_4_power_example_matches_the_upload_schema() -> None:
    """§4's example `"power": {...}` is the result upload's `power` (PowerUpload), key for key,
    with its enums (tier, quantity, status) as the schema has them."""
    block = section(4).split("```json\n", 1)[1].split("```", 1)[0]
    shape = parse("{" + block + "}").keys["power"]
    assert isinstance(shape, Shape)
    assert mismatches(shape, {"$ref": "#/components/schemas/PowerUpload"}, "§4 power") == []
