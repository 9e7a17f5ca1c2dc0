"""`iowatt-agent upload` (issue 13, V3): the body it sends is the server's ResultImport, retries keep
the upload_id, refusals exit 2 or 3 with the server's message, and tokens never come from argv.
A fake API through httpx's MockTransport; the server side is tests/backend/test_result_upload.py."""

import json
from pathlib import Path
from typing import Any

import httpx
import pytest
from iowatt_agent.ci_upload import UploadArgs, UploadError, payload, upload
from iowatt_agent.cli import app
from typer.testing import CliRunner

from backend.upload.schemas import ResultImport

FIO = Path(__file__).parents[1] / "backend" / "data" / "upload-fio-randread.json"
TEAM = "11111111-2222-4333-8444-555555555555"


def args(**over: Any) -> UploadArgs:
    base: dict[str, Any] = {
        "server": "https://iowatt.example",
        "token": "iwu_secret",
        "result": FIO,
        "team_id": TEAM,
        "host": "ci-runner-1",
        "device_model": "Samsung SSD 990 PRO 2TB",
        "upload_id": "job-42",
        "serial": "S7KH",
        "tags": ["nightly"],
    }
    return UploadArgs(**{**base, **over})


def test_the_body_is_the_servers_result_import() -> None:
    doc = json.loads(FIO.read_text())
    body = payload(args(), doc)
    parsed = ResultImport.model_validate(body)  # the server's own schema accepts it as sent
    assert parsed.upload_id == "job-42" and parsed.device.serial == "S7KH" and parsed.tags == ["nightly"]
    assert parsed.engine_result == doc
    # without times: it ended at the document's timestamp and lasted its longest job
    assert parsed.finished_at.timestamp() == doc["timestamp"]
    assert (parsed.finished_at - parsed.started_at).total_seconds() == pytest.approx(
        doc["jobs"][0]["job_runtime"] / 1000
    )
    assert body["name"] == "upload-fio-randread on ci-runner-1"


def test_a_lost_answer_is_retried_with_the_same_upload_id() -> None:
    seen: list[dict[str, Any]] = []

    def handler(req: httpx.Request) -> httpx.Response:
        seen.append(json.loads(req.content))
        assert req.headers["authorization"] == "Bearer iwu_secret"
        assert req.url.path == "/api/v1/results"
        if len(seen) == 1:
            return httpx.Response(503, json={"message": "restarting"})
        return httpx.Response(
            200, json={"run_id": "r1", "url": "https://iowatt.example/runs/r1", "duplicate": True}
        )

    out = upload(args(), transport=httpx.MockTransport(handler), sleep_s=0)
    assert out["url"].endswith("/runs/r1") and out["duplicate"] is True
    assert [b["upload_id"] for b in seen] == ["job-42", "job-42"]


@pytest.mark.parametrize(("status", "code"), [(403, 3), (401, 3), (422, 2), (404, 2)])
def test_refusals_exit_with_the_servers_message(status: int, code: int) -> None:
    def handler(req: httpx.Request) -> httpx.Response:
        return httpx.Response(status, json={"error": "x", "message": "host: 'build-01' is an enrolled agent"})

    with pytest.raises(UploadError) as e:
        upload(args(), transport=httpx.MockTransport(handler), sleep_s=0)
    assert e.value.code == code and "enrolled agent" in str(e.value)


def test_an_unreachable_server_exits_1_after_the_attempts() -> None:
    calls = []

    def handler(req: httpx.Request) -> httpx.Response:
        calls.append(1)
        raise httpx.ConnectError("refused")

    with pytest.raises(UploadError) as e:
        upload(args(), transport=httpx.MockTransport(handler), sleep_s=0)
    assert e.value.code == 1 and len(calls) == 3


def test_a_file_that_is_not_a_document_exits_2(tmp_path: Path) -> None:
    bad = tmp_path / "r.json"
    bad.write_text("fio: error")
    with pytest.raises(UploadError) as e:
        upload(args(result=bad), transport=httpx.MockTransport(lambda r: httpx.Response(500)))
    assert e.value.code == 2 and "r.json" in str(e.value)


def test_the_command_refuses_a_token_on_argv_and_needs_one(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("IOWATT_UPLOAD_TOKEN", raising=False)
    common = [
        "upload",
        str(FIO),
        "--server",
        "https://x",
        "--team",
        TEAM,
        "--host",
        "h",
        "--device-model",
        "m",
        "--upload-id",
        "1",
    ]
    r = CliRunner().invoke(app, [*common, "--token", "iwu_x"])
    assert r.exit_code == 2 and "--token is refused" in r.output
    r = CliRunner().invoke(app, common)
    assert r.exit_code == 2 and "no upload token" in r.output


def test_against_the_real_server_twice(client: Any, session: Any) -> None:
    """The command's upload through the real API (the test client's transport): a run, then the
    same upload_id again adds nothing."""
    from tests.factories import create_user

    u = create_user(session)
    a = args(server="http://testserver", token=u.token, team_id=str(u.team.id))
    first = upload(a, transport=client._transport, sleep_s=0)
    again = upload(a, transport=client._transport, sleep_s=0)
    assert first["duplicate"] is False and again == {**first, "duplicate": True}
    run = client.get(f"/api/v1/runs/{first['run_id']}", headers=u.headers).json()
    assert (run["source"], run["agent_name"], run["tags"]) == ("import", "ci-runner-1", ["nightly"])
