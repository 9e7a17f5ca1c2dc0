"""The agent's wire models against the server's OpenAPI (frontend/openapi.json, exported by the
server). Skipped when the export does not exist yet; the comparator itself is tested on a
synthetic document so it cannot silently pass."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from typing import Any

import pytest
from iowatt_agent import schemas as s
from pydantic import BaseModel

OPENAPI = Path(__file__).resolve().parents[2] / "frontend" / "openapi.json"

# (method, path, request model, success status, answer model)
CALLS: list[tuple[str, str, type[BaseModel] | None, str, type[BaseModel] | None]] = [
    ("post", "/api/v1/agents/enroll", s.EnrollRequest, "201", s.EnrollResponse),
    ("post", "/api/v1/agents/{}/heartbeat", s.HeartbeatRequest, "200", s.HeartbeatResponse),
    ("post", "/api/v1/agents/{}/token", None, "200", s.TokenRotated),
    ("put", "/api/v1/agents/{}/inventory", s.Inventory, "200", None),
    ("post", "/api/v1/agents/{}/lease", s.LeaseRequest, "200", s.LeaseResponse),
    ("post", "/api/v1/runs/{}/start", s.StartRequest, "200", None),
    ("post", "/api/v1/runs/{}/progress", s.ProgressRequest, "200", s.ProgressResponse),
    ("put", "/api/v1/runs/{}/result", s.ResultUpload, "201", None),
    ("post", "/api/v1/runs/{}/failure", s.FailureReport, "200", None),
]

# What the server serves back of what the agent sent: (method, path, status, property path in the
# answer, agent model). The inventory is stored and served as the agent's own model (AgentRead's
# `inventory`, which the UI reads through the generated client), so every field the agent sends
# must be served under its name and type.
ECHOES: list[tuple[str, str, str, tuple[str, ...], type[BaseModel]]] = [
    ("put", "/api/v1/agents/{}/inventory", "200", ("inventory",), s.Inventory),
]


def _norm(path: str) -> str:
    return re.sub(r"\{[^}]+\}", "{}", path)


class Resolver:
    def __init__(self, doc: dict[str, Any], defs_key: str) -> None:
        self.doc, self.defs_key = doc, defs_key

    def __call__(self, schema: dict[str, Any]) -> dict[str, Any]:
        while "$ref" in schema:
            name = schema["$ref"].rsplit("/", 1)[-1]
            node: Any = self.doc
            for part in self.defs_key.split("/"):
                node = node[part]
            schema = node[name]
        if "allOf" in schema and len(schema["allOf"]) == 1:
            return self(schema["allOf"][0])
        alts = schema.get("anyOf") or schema.get("oneOf")
        if alts:
            non_null = [a for a in alts if a.get("type") != "null"]
            if len(non_null) == 1:
                return self(non_null[0])
        return schema


def _kind(schema: dict[str, Any]) -> str | None:
    t = schema.get("type")
    if t is None and "properties" in schema:
        return "object"
    return t if isinstance(t, str) else None


def compare(
    agent: dict[str, Any],
    server: dict[str, Any],
    ra: Resolver,
    rs: Resolver,
    where: str,
    direction: str,
    problems: list[str],
) -> None:
    agent, server = ra(agent), rs(server)
    ka, ks = _kind(agent), _kind(server)
    if ka is None or ks is None:
        return  # "any" on one side
    # An integer fits where a number is expected, not the other way round.
    sender, receiver = (ka, ks) if direction in ("request", "echo") else (ks, ka)
    if ka != ks and not (sender == "integer" and receiver == "number"):
        problems.append(f"{where}: agent type {ka}, server type {ks}")
        return
    if ka == "array":
        compare(agent.get("items", {}), server.get("items", {}), ra, rs, f"{where}[]", direction, problems)
        return
    if ka != "object" or "properties" not in agent or "properties" not in server:
        return
    pa, ps = agent["properties"], server["properties"]
    # A server schema that keeps unknown keys (additionalProperties, as the inventory's) still
    # declares every field the agent sends: tolerance is for agents newer than the server.
    if direction == "request":
        problems += [f"{where}.{f}: agent sends it, server does not accept it" for f in pa if f not in ps]
        problems += [
            f"{where}.{f}: server requires it, agent never sends it"
            for f in server.get("required", [])
            if f not in pa
        ]
    elif direction == "echo":
        problems += [f"{where}.{f}: agent sends it, server does not serve it" for f in pa if f not in ps]
    else:
        problems += [
            f"{where}.{f}: agent needs it, server does not answer it"
            for f in agent.get("required", [])
            if f not in ps
        ]
    for f in pa:
        if f in ps:
            compare(pa[f], ps[f], ra, rs, f"{where}.{f}", direction, problems)


# Fields a contract section adds before the server exports them. Left out while the server lacks
# them (its snapshot predates the section), checked like any other field once it has them.
# fields the agent may send before the committed OpenAPI snapshot knows them
_ISSUE_15 = "issue 15: backend/agent/schemas.py declares it; frontend/openapi.json at the next `make client`"
PENDING: dict[str, str] = {
    f"{prefix}{field}": _ISSUE_15
    for prefix in ("EnrollRequest.inventory.", "Inventory.", "served Inventory.")
    for field in ("capabilities", "policy.allowed_dbms")
}


def test_the_agent_reports_each_meters_idle_baseline_and_the_server_declares_it() -> None:
    """issue 25: a meter's idle baseline travels in inventory.policy.meters[] on both sides (the
    agent's wire model and the server's input and read schemas), so the UI's estimate can count it."""
    from backend.agent.schemas import PolicyMeter, PolicyMeterRead

    assert "idle_s" in s.PolicyMeter.model_fields
    assert "idle_s" in PolicyMeter.model_fields and "idle_s" in PolicyMeterRead.model_fields
    sent = s.PolicyMeter(name="wall", driver="shelly", tier="plug", idle_s=12.5).model_dump()
    assert PolicyMeter.model_validate(sent).idle_s == 12.5
    assert PolicyMeter.model_validate({k: v for k, v in sent.items() if k != "idle_s"}).idle_s is None


def check(openapi: dict[str, Any]) -> list[str]:
    paths = {_norm(p): ops for p, ops in openapi.get("paths", {}).items()}
    rs = Resolver(openapi, "components/schemas")
    problems: list[str] = []
    for method, path, request, status, answer in CALLS:
        op = paths.get(path, {}).get(method)
        if op is None:
            problems.append(f"{method.upper()} {path}: missing from the server's OpenAPI")
            continue
        if request is not None:
            schema = request.model_json_schema(by_alias=True, mode="serialization")
            body = op.get("requestBody", {}).get("content", {}).get("application/json", {}).get("schema")
            if body is None:
                problems.append(f"{method.upper()} {path}: server declares no JSON body")
            else:
                compare(
                    schema, body, Resolver(schema, "$defs"), rs, f"{request.__name__}", "request", problems
                )
        if answer is not None:
            responses = op.get("responses", {})
            resp = responses.get(status) or responses.get("200") or responses.get("201")
            body = (resp or {}).get("content", {}).get("application/json", {}).get("schema")
            if body is None:
                problems.append(f"{method.upper()} {path}: no JSON answer for {status}")
            else:
                schema = answer.model_json_schema(by_alias=True, mode="validation")
                compare(schema, body, Resolver(schema, "$defs"), rs, f"{answer.__name__}", "answer", problems)
    for method, path, status, prop, model in ECHOES:
        name = f"{method.upper()} {path} {status} .{'.'.join(prop)}"
        op = paths.get(path, {}).get(method) or {}
        node: dict[str, Any] | None = (
            op.get("responses", {})
            .get(status, {})
            .get("content", {})
            .get("application/json", {})
            .get("schema")
        )
        for part in prop:
            node = rs(node).get("properties", {}).get(part) if node is not None else None
        if node is None:
            problems.append(f"{name}: not served")
            continue
        schema = model.model_json_schema(by_alias=True, mode="serialization")
        compare(schema, node, Resolver(schema, "$defs"), rs, f"served {model.__name__}", "echo", problems)
    return problems


def synthetic_openapi() -> dict[str, Any]:
    """An OpenAPI document built from the agent's own models: what a conforming server exports."""
    components: dict[str, Any] = {}
    paths: dict[str, Any] = {}

    def ref(model: type[BaseModel], mode: str) -> dict[str, Any]:
        schema = model.model_json_schema(
            by_alias=True,
            mode=mode,  # type: ignore[arg-type]
            ref_template="#/components/schemas/{model}",
        )
        components.update(schema.pop("$defs", {}))
        components[model.__name__] = schema
        return {"$ref": f"#/components/schemas/{model.__name__}"}

    for method, path, request, status, answer in CALLS:
        op: dict[str, Any] = {"responses": {status: {"description": "ok"}}}
        if request is not None:
            op["requestBody"] = {"content": {"application/json": {"schema": ref(request, "validation")}}}
        if answer is not None:
            op["responses"][status]["content"] = {
                "application/json": {"schema": ref(answer, "serialization")}
            }
        paths.setdefault(path.replace("{}", "{id}"), {})[method] = op
    for method, path, status, prop, model in ECHOES:
        served: dict[str, Any] = {"anyOf": [ref(model, "serialization"), {"type": "null"}]}
        for part in reversed(prop):
            served = {"type": "object", "properties": {part: served}, "required": [part]}
        responses = paths[path.replace("{}", "{id}")][method]["responses"]
        responses.setdefault(status, {"description": "ok"})["content"] = {
            "application/json": {"schema": served}
        }
    return {"openapi": "3.1.0", "paths": paths, "components": {"schemas": components}}


def test_comparator_accepts_a_conforming_server_and_catches_drift():
    doc = synthetic_openapi()
    assert check(doc) == []
    drifted = copy.deepcopy(doc)
    progress = drifted["components"]["schemas"]["ProgressRequest"]
    del progress["properties"]["read_iops"]
    progress["required"].append("job_total")
    progress["properties"]["job_total"] = {"type": "integer"}
    drifted["components"]["schemas"]["ProgressResponse"]["properties"].pop("cancel_requested")
    drifted["components"]["schemas"]["BlockDevice"]["properties"]["size_bytes"] = {"type": "string"}
    drifted["components"]["schemas"]["Inventory"]["properties"]["mem_bytes"] = {"type": "number"}
    drifted["components"]["schemas"]["ProgressRequest"]["properties"]["percent"] = {"type": "integer"}
    del drifted["paths"]["/api/v1/runs/{id}/failure"]
    problems = check(drifted)
    assert any("ProgressRequest.read_iops: agent sends it" in p for p in problems)
    assert any("ProgressRequest.job_total: server requires it" in p for p in problems)
    assert any("ProgressResponse.cancel_requested: agent needs it" in p for p in problems)
    assert any("block_devices[].size_bytes: agent type integer, server type string" in p for p in problems)
    assert not any("mem_bytes" in p for p in problems)  # agent sends an integer where a number fits
    assert any("ProgressRequest.percent: agent type number, server type integer" in p for p in problems)
    assert any("POST /api/v1/runs/{}/failure: missing" in p for p in problems)


def test_comparator_catches_a_served_inventory_that_drifted_from_what_the_agent_sends() -> None:
    doc = synthetic_openapi()
    schemas = doc["components"]["schemas"]
    # the server serves its own copy of the shapes (as FastAPI's "-Output" schemas), drifted there only
    served, disk = copy.deepcopy(schemas["Inventory"]), copy.deepcopy(schemas["BlockDevice"])
    del disk["properties"]["serial_sha256"]
    disk["properties"]["size_bytes"] = {"anyOf": [{"type": "string"}, {"type": "null"}]}
    served["properties"]["block_devices"] = {"type": "array", "items": {"$ref": "#/components/schemas/Disk"}}
    served["properties"]["mem_bytes"] = {"type": "boolean"}
    schemas["Disk"], schemas["Served"] = disk, served
    content = doc["paths"]["/api/v1/agents/{id}/inventory"]["put"]["responses"]["200"]["content"]
    content["application/json"]["schema"]["properties"]["inventory"]["anyOf"][0] = {
        "$ref": "#/components/schemas/Served"
    }
    problems = check(doc)
    assert sorted(problems) == [
        "served Inventory.block_devices[].serial_sha256: agent sends it, server does not serve it",
        "served Inventory.block_devices[].size_bytes: agent type integer, server type string",
        "served Inventory.mem_bytes: agent type integer, server type boolean",
    ]
    # the inventory the server accepts is checked on its own: no problem reported there
    del content["application/json"]["schema"]["properties"]["inventory"]
    assert check(doc) == ["PUT /api/v1/agents/{}/inventory 200 .inventory: not served"]


@pytest.mark.skipif(not OPENAPI.exists(), reason=f"{OPENAPI} not exported by the server yet")
def test_agent_wire_models_match_the_server_openapi():
    problems = check(json.loads(OPENAPI.read_text()))
    problems = [p for p in problems if not any(p.startswith(f"{k}: agent sends it") for k in PENDING)]
    assert problems == [], "\n".join(problems)
