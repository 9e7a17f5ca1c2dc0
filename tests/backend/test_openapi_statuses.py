"""The OpenAPI documents every status a route answers: each operation is called as different
callers with ids that exist and ids that do not, with no body, an empty body and a wrong body, and
every answer's status (and its media type) must be in that operation's documented responses."""

import uuid
from typing import Any

from fastapi.testclient import TestClient
from sqlalchemy.orm import Session

from tests.factories import create_agent, create_run, create_user

BODIES: list[Any] = [None, {}, [1], {"name": "x\u0000"}]


def _fill(path: str, ids: dict[str, str]) -> str:
    out = path
    for name, value in ids.items():
        out = out.replace("{" + name + "}", value)
    return out


def test_every_answer_is_documented(client: TestClient, session: Session) -> None:
    admin = create_user(session)
    outsider = create_user(session)
    agent = create_agent(session, team=admin.team)
    run = create_run(session, agent=agent.agent)
    real = {
        "run_id": str(run.id),
        "agent_id": str(agent.agent.id),
        "device_id": str(run.device_id),
    }
    callers: dict[str, dict[str, str]] = {
        "anonymous": {},
        "admin": admin.headers,
        "outsider": outsider.headers,
        "agent": agent.headers,
        "garbage": {"Authorization": "Bearer iwu_garbage"},
    }
    spec = client.get("/openapi.json").json()
    undocumented: list[str] = []
    calls = 0
    for path, ops in spec["paths"].items():
        params = [p.strip("{}") for p in path.split("/") if p.startswith("{")]
        id_sets = [
            {p: real.get(p, str(uuid.uuid4())) for p in params},
            {p: str(uuid.uuid4()) for p in params},
        ]
        if not any(p in real for p in params):
            # no real id to put in: the first set is already ids that do not exist, as the second
            # (367 of ~1,950 calls were that second set again, with other random ids)
            id_sets = id_sets[:1]
        for method, op in ops.items():
            documented = op["responses"]
            for who, headers in callers.items():
                # a secured operation answers a caller without a valid token 401 from its first
                # dependency, before its path ids or body are read: once it has, the other ids and
                # bodies would only be 401 again (an operation that lets such a caller in, as an
                # invitation's accept does, is walked with all of them)
                once = "security" in op and who in ("anonymous", "garbage")
                combos = [
                    (ids, body)
                    for ids in id_sets
                    for body in (BODIES if method in ("post", "put", "patch") else [None])
                ]
                for ids, body in combos:
                    url = _fill(path, ids)
                    if path.endswith("/lease"):
                        url += "?wait_s=0"
                    r = client.request(method.upper(), url, headers=headers, json=body)
                    calls += 1
                    key = str(r.status_code)
                    where = f"{method.upper()} {path} as {who} body={body!r}: {r.status_code}"
                    if key not in documented:
                        undocumented.append(f"{where} {r.text[:120]}")
                    else:
                        media = r.headers.get("content-type", "").split(";")[0]
                        content = documented[key].get("content")
                        if r.content and content is not None and media not in content:
                            undocumented.append(f"{where} answered {media}, documented {sorted(content)}")
                    if once and r.status_code == 401:
                        break
    assert calls > 200
    assert undocumented == [], "\n".join(undocumented)


def test_csv_and_error_shapes_are_documented(client: TestClient) -> None:
    spec = client.get("/openapi.json").json()
    compare = spec["paths"]["/api/v1/compare"]["get"]["responses"]
    assert "text/csv" in compare["200"]["content"]
    login = spec["paths"]["/api/v1/auth/login"]["post"]["responses"]
    assert {"401", "413", "422", "429"} <= set(login) and "Retry-After" in login["429"]["headers"]
    for path, ops in spec["paths"].items():
        for method, op in ops.items():
            for status, resp in op["responses"].items():
                if status.startswith(("4", "5")) and status != "503":
                    schema = resp["content"]["application/json"]["schema"]
                    assert schema == {"$ref": "#/components/schemas/ErrorResponse"}, (method, path, status)
