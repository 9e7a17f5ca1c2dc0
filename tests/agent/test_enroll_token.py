"""The enrollment token never travels on a command line (issue 9): `--token` is refused with the
two ways that work, `--token-file PATH|-` and `$IOWATT_ENROLL_TOKEN`, and each of those reaches
the server's enroll call."""

from __future__ import annotations

import functools

import pytest
from iowatt_agent import cli, enrol
from iowatt_agent.client import ApiClient
from iowatt_agent.credentials import load_config
from typer.testing import CliRunner

from tests.agent.fakes import ENROLL_TOKEN, FakeApi

runner = CliRunner()
SERVER = "http://127.0.0.1:8000"


@pytest.fixture(autouse=True)
def fake_server(api: FakeApi, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(
        enrol, "ApiClient", functools.partial(ApiClient, transport=api.transport(), sleep=lambda s: None)
    )
    monkeypatch.delenv("IOWATT_ENROLL_TOKEN", raising=False)
    monkeypatch.delenv("IOWATT_ENROLLMENT_TOKEN", raising=False)


def enroll(tmp_path, *args: str, input: str | None = None, env: dict[str, str] | None = None):
    return runner.invoke(
        cli.app,
        ["enroll", "--server", SERVER, "--name", "box", "--state-dir", str(tmp_path / "state"), *args],
        input=input,
        env=env,
    )


def sent_tokens(api: FakeApi) -> list[str]:
    return [body["enrollment_token"] for _, _, body in api.calls_to("POST /api/v1/agents/enroll")]


def test_token_on_the_command_line_is_refused_with_the_two_ways(api, tmp_path):
    result = enroll(tmp_path, "--token", ENROLL_TOKEN)
    assert result.exit_code == 2
    assert "--token-file" in result.output and "IOWATT_ENROLL_TOKEN" in result.output
    assert "ps" in result.output  # says why
    assert api.calls == [] and not (tmp_path / "state" / "agent.json").exists()


def test_token_file(api, tmp_path):
    path = tmp_path / "token"
    path.write_text(f"  {ENROLL_TOKEN}\n")
    result = enroll(tmp_path, "--token-file", str(path))
    assert result.exit_code == 0, result.output
    assert sent_tokens(api) == [ENROLL_TOKEN]
    assert load_config(tmp_path / "state").agent_token == "agent-token-123"


def test_token_from_stdin(api, tmp_path):
    result = enroll(tmp_path, "--token-file", "-", input=ENROLL_TOKEN + "\n")
    assert result.exit_code == 0, result.output
    assert sent_tokens(api) == [ENROLL_TOKEN]


def test_token_from_the_environment_and_the_old_variable_name(api, tmp_path):
    result = enroll(tmp_path, env={"IOWATT_ENROLL_TOKEN": ENROLL_TOKEN})
    assert result.exit_code == 0, result.output
    old = enroll(tmp_path, "--replace", env={"IOWATT_ENROLLMENT_TOKEN": ENROLL_TOKEN})
    assert old.exit_code == 0, old.output
    # the file wins over the environment
    path = tmp_path / "token"
    path.write_text("from-file\n")
    enroll(tmp_path, "--replace", "--token-file", str(path), env={"IOWATT_ENROLL_TOKEN": ENROLL_TOKEN})
    assert sent_tokens(api) == [ENROLL_TOKEN, ENROLL_TOKEN, "from-file"]


@pytest.mark.parametrize(
    ("content", "message"),
    [("", "one word"), ("\n\n", "one word"), ("two words\n", "one word")],
)
def test_unusable_token_files(api, tmp_path, content, message):
    path = tmp_path / "token"
    path.write_text(content)
    result = enroll(tmp_path, "--token-file", str(path))
    assert result.exit_code == 2 and message in result.output and api.calls == []


def test_missing_token_and_missing_file(api, tmp_path):
    none = enroll(tmp_path)
    assert none.exit_code == 2 and "--token-file" in none.output and "IOWATT_ENROLL_TOKEN" in none.output
    missing = enroll(tmp_path, "--token-file", str(tmp_path / "nope"))
    assert missing.exit_code == 2 and "cannot read --token-file" in missing.output
    assert api.calls == []
