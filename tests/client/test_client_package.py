"""The Python client (client/, distribution iowatt-client): its operations table is what the OpenAPI
document says (generated, checked in, stale = a failure), its models are checked against the
document's schemas, it carries no server code, and its retries, errors, pagination and config
behave as docs/scripting.md says. Against a fake transport: no server (tests/client/test_cli_stack.py
runs the command against the real stack)."""

import ast
import importlib.util
import json
import os
import stat
import subprocess
import sys
import tomllib
import types
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from pathlib import Path
from typing import Any, get_args

import httpx
import pytest
from iowatt_client import errors
from iowatt_client.client import Client, retry_after_s
from iowatt_client.models import SCHEMAS

from tests.conftest import REPO

CLIENT = Path(REPO) / "client"
DOC = json.loads((Path(REPO) / "frontend" / "openapi.json").read_text())


def _generator() -> types.ModuleType:
    spec = importlib.util.spec_from_file_location("gen_operations", CLIENT / "gen_operations.py")
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_operations_table_is_not_stale() -> None:
    checked_in = (CLIENT / "src" / "iowatt_client" / "_operations.py").read_text()
    assert checked_in == _generator().render(DOC), "run `make client` (client/gen_operations.py)"


def test_the_stale_check_sees_a_renamed_operation() -> None:
    doc = json.loads(json.dumps(DOC))
    doc["paths"]["/api/v1/runs"]["get"]["operationId"] = "list_runs_api_v1_runs_get"
    assert _generator().render(doc) != _generator().render(DOC)


def _nullable(prop: dict[str, Any]) -> bool:
    return prop.get("type") == "null" or any(p.get("type") == "null" for p in prop.get("anyOf", []))


def model_mismatches(model: Any, schema: dict[str, Any]) -> list[str]:
    wrong = []
    props, required = schema.get("properties", {}), set(schema.get("required", []))
    for name, field in model.model_fields.items():
        if name not in props:
            wrong.append(f"{model.__name__}.{name}: not in the schema")
            continue
        if field.is_required() and name not in required:
            wrong.append(f"{model.__name__}.{name}: required here, optional in the schema")
        nullable_here = type(None) in get_args(field.annotation)
        if nullable_here != _nullable(props[name]):
            wrong.append(
                f"{model.__name__}.{name}: nullable {nullable_here} here, {not nullable_here} in the schema"
            )
    return wrong


def test_models_agree_with_the_schemas() -> None:
    schemas = DOC["components"]["schemas"]
    wrong = [w for model, name in SCHEMAS.items() for w in model_mismatches(model, schemas[name])]
    assert wrong == []


def test_the_model_check_finds_a_difference() -> None:
    from iowatt_client.models import Run

    schema = json.loads(json.dumps(DOC["components"]["schemas"]["RunRead"]))
    del schema["properties"]["preset"]
    schema["properties"]["error"] = {"type": "string"}
    wrong = model_mismatches(Run, schema)
    assert "Run.preset: not in the schema" in wrong and any(
        w.startswith("Run.error: nullable") for w in wrong
    )


def test_the_package_has_no_server_code_and_two_dependencies() -> None:
    meta = tomllib.loads((CLIENT / "pyproject.toml").read_text())["project"]
    assert meta["name"] == "iowatt-client" and meta["license"] == "Apache-2.0"
    assert sorted(d.split("==")[0] for d in meta["dependencies"]) == ["httpx", "pydantic"]
    for py in (CLIENT / "src").rglob("*.py"):
        for node in ast.walk(ast.parse(py.read_text())):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            if isinstance(node, ast.ImportFrom) and node.level == 0:
                names = [node.module or ""]
            bad = [n for n in names if n.split(".")[0] in ("backend", "worker", "iowatt_agent", "tests")]
            assert not bad, f"{py}: imports {bad}"


# --- behaviour, on a fake transport ----------------------------------------------------------------


def fake(answers: list[httpx.Response], seen: list[httpx.Request]) -> httpx.MockTransport:
    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return answers.pop(0)

    return httpx.MockTransport(handler)


def test_429_and_503_are_retried_after_retry_after() -> None:
    slept: list[float] = []
    seen: list[httpx.Request] = []
    later = format_datetime(datetime.now(UTC) + timedelta(seconds=20), usegmt=True)
    answers = [
        httpx.Response(429, headers={"Retry-After": "2"}, json={"error": "too_many_requests"}),
        httpx.Response(503, headers={"Retry-After": later}),
        httpx.Response(200, json={"items": [], "total": 0}),
    ]
    with Client("http://x", "tok", transport=fake(answers, seen), sleep=slept.append) as c:
        assert c.call("list_runs") == {"items": [], "total": 0}
    assert len(seen) == 3 and slept[0] == 2 and 15 < slept[1] <= 20
    assert seen[0].headers["Authorization"] == "Bearer tok"


def test_retries_are_bounded() -> None:
    slept: list[float] = []
    seen: list[httpx.Request] = []
    busy = [
        httpx.Response(429, headers={"Retry-After": "1"}, json={"error": "throttled", "message": "slow"})
    ] * 4
    with (
        Client("http://x", transport=fake(list(busy), seen), retries=3, sleep=slept.append) as c,
        pytest.raises(errors.RateLimitedError) as e,
    ):
        c.call("list_runs")
    assert len(seen) == 4 and slept == [1, 1, 1] and e.value.code == "throttled"
    # a wait longer than max_wait_s is not waited: the error at once
    seen.clear()
    long = [httpx.Response(503, headers={"Retry-After": "3600"}, json={"error": "db_down"})]
    with (
        Client("http://x", transport=fake(long, seen), max_wait_s=30, sleep=slept.append) as c,
        pytest.raises(errors.ServerError),
    ):
        c.call("health")
    assert len(seen) == 1


def test_retry_after_forms() -> None:
    assert retry_after_s("7") == 7 and retry_after_s(None) is None and retry_after_s("soon") is None
    assert (
        retry_after_s("Thu, 01 Jan 2026 00:00:10 GMT", now=datetime(2026, 1, 1, tzinfo=UTC).timestamp()) == 10
    )


@pytest.mark.parametrize(
    ("status", "cls"),
    [
        (401, errors.AuthError),
        (403, errors.AuthError),
        (404, errors.NotFoundError),
        (409, errors.ConflictError),
        (422, errors.ValidationFailed),
        (500, errors.ServerError),
    ],
)
def test_errors_carry_the_servers_body(status: int, cls: type[errors.ApiError]) -> None:
    body = {
        "error": "run_not_found",
        "message": "no run x",
        "detail": [{"field": "run_id", "message": "?"}],
        "request_id": "r-1",
    }
    with (
        Client("http://x", transport=fake([httpx.Response(status, json=body)], [])) as c,
        pytest.raises(cls) as e,
    ):
        c.get_run("x")
    assert (e.value.status, e.value.code, e.value.message, e.value.request_id) == (
        status,
        "run_not_found",
        "no run x",
        "r-1",
    )
    assert e.value.detail == body["detail"] and e.value.body["error"] == "run_not_found"


def test_iowatt_runs_bar_is_the_whole_runs_share_not_the_current_jobs(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`iowatt run`'s bar reads the server's run_percent: the 5th of 80 jobs 87 % done is 6.3 % of the
    run (the bar read 87 %); a server older than the field gives the job's own."""
    import typer
    from iowatt_client import cli
    from rich.progress import Progress

    drawn: list[float] = []
    update = Progress.update
    monkeypatch.setattr(
        Progress, "update", lambda self, task, **kw: (drawn.append(kw["completed"]), update(self, task, **kw))
    )
    report = {"job_index": 4, "job_name": "job04", "percent": 87.0, "samples": []}
    for progress in ({**report, "run_percent": 6.3}, report):
        live = {"status": "running", "cancel_requested": False, "progress": progress, "samples_kept": 300}
        answers = [httpx.Response(200, json=live)]
        # the run goes on past the timeout of 0 s: one poll, one bar drawn
        with Client("http://x", transport=fake(answers, [])) as c, pytest.raises(typer.Exit):
            cli.follow(c, "r1", show=True, interval_s=0, timeout_s=0)
    assert drawn == [6.3, 87.0]
    assert cli.run_percent("succeeded", report) == 100.0


def test_pagination_walks_limit_and_offset_to_total() -> None:
    seen: list[httpx.Request] = []
    items = [{"n": i} for i in range(5)]
    answers = [httpx.Response(200, json={"items": items[i : i + 2], "total": 5}) for i in (0, 2, 4)]
    with Client("http://x", transport=fake(answers, seen)) as c:
        assert list(c.paginate("list_runs", page_size=2)) == items
    assert [(r.url.params["limit"], r.url.params["offset"]) for r in seen] == [
        ("2", "0"),
        ("2", "2"),
        ("2", "4"),
    ]


def test_call_checks_operation_and_parameters() -> None:
    with Client("http://x", transport=fake([], [])) as c:
        with pytest.raises(ValueError, match="no operation"):
            c.call("list_runs_api_v1_runs_get")
        with pytest.raises(ValueError, match="unknown query"):
            c.call("list_runs", params={"colour": "red"})
        with pytest.raises(ValueError, match="missing path"):
            c.call("get_run")


def test_config_file_is_0600_and_the_environment_wins(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from iowatt_client import config

    monkeypatch.setenv("IOWATT_CONFIG", str(tmp_path / "d" / "config.json"))
    monkeypatch.delenv("IOWATT_URL", raising=False)
    monkeypatch.delenv("IOWATT_TOKEN", raising=False)
    with pytest.raises(config.ConfigMissing):
        config.load()
    p = config.save("http://a:8000/", "secret")
    assert stat.S_IMODE(p.stat().st_mode) == 0o600 and stat.S_IMODE(p.parent.stat().st_mode) == 0o700
    assert config.load() == config.Config("http://a:8000", "secret")
    monkeypatch.setenv("IOWATT_URL", "http://b")
    monkeypatch.setenv("IOWATT_TOKEN", "t2")
    assert config.load() == config.Config("http://b", "t2")


def test_the_command_starts_without_httpx_pydantic_or_rich() -> None:
    """Start-up stays cheap: `iowatt --help` imports typer only (the client's modules on use)."""
    code = (
        "import sys; from iowatt_client import cli; "
        "print(sorted(m for m in ('httpx', 'pydantic', 'rich.table') if m in sys.modules))"
    )

    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "PYTHONPATH": str(CLIENT / "src")},
    ).stdout
    assert out.strip() == "[]", out
