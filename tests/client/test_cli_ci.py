"""`iowatt ci`: a run's verdict against its series as Markdown and an exit code. In-process (typer's
CliRunner against the `client` fixture's app), on a history stored as tests/backend/test_series.py
stores one (no stack, no agent)."""

import json
from typing import Any

import pytest
from fastapi.testclient import TestClient
from iowatt_client import Client, cli
from iowatt_client.cli import EXIT_FAILED, EXIT_OK, EXIT_USAGE, app
from sqlalchemy.orm import Session
from typer.testing import CliRunner

from tests.backend.test_series import _history, _noise


@pytest.fixture
def ci(session: Session, client: TestClient, monkeypatch: pytest.MonkeyPatch) -> Any:
    def make(values: list[float]) -> Any:
        u, runs = _history(session, values)
        monkeypatch.setattr(
            cli, "_client", lambda: Client("http://testserver", u.token, transport=client._transport)
        )

        def run(*args: str, code: int = EXIT_OK) -> Any:
            r = CliRunner().invoke(app, ["ci", *args])
            assert r.exit_code == code, f"exit {r.exit_code}\n{r.stdout}\n{r.stderr}"
            return r

        return runs, run

    return make


def test_a_regression_exits_1_with_a_markdown_summary(ci: Any, tmp_path: Any) -> None:
    runs, run = ci(_noise(10, 21) + _noise(2, 22, mean=16000.0))
    summary = tmp_path / "summary.md"
    r = run("--run", str(runs[-1].id), "--summary", str(summary), code=EXIT_FAILED)
    assert r.stdout.startswith("## iowatt: a regression")
    assert "| 0 | read IOPS |" in r.stdout and "REGRESSION" in r.stdout
    assert summary.read_text() == r.stdout.rstrip("\n") + "\n"
    doc = json.loads(run("--run", str(runs[-1].id), "--json", code=EXIT_FAILED).stdout)
    assert doc["verdict"]["status"] == "regression" and doc["run_id"] == str(runs[-1].id)


def test_a_run_like_the_others_exits_0(ci: Any) -> None:
    runs, run = ci(_noise(10, 23))
    r = run("--run", str(runs[-1].id))
    assert r.stdout.startswith("## iowatt: no change") and "REGRESSION" not in r.stdout
    first = run("--run", str(runs[0].id))  # nothing before it: not a failure
    assert "too little history" in first.stdout
    assert "--target" in run(code=EXIT_USAGE).stderr


def test_it_queues_the_run_it_judges_and_a_failed_run_exits_1(
    session: Session, client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.factories import create_agent, create_user

    u = create_user(session)
    agent = create_agent(session, team=u.team).agent
    monkeypatch.setattr(
        cli, "_client", lambda: Client("http://testserver", u.token, transport=client._transport)
    )
    followed: list[str] = []

    def follow(c: Any, run_id: str, **_: Any) -> Any:  # the run ends at once, failed
        followed.append(run_id)
        run = c.get_run(run_id)
        return run.model_copy(update={"status": "failed", "error": "engine exited 1"})

    monkeypatch.setattr(cli, "follow", follow)
    r = CliRunner().invoke(app, ["ci", "quick", "--target", "/srv/bench", "--agent", str(agent.id)])
    assert r.exit_code == EXIT_FAILED, r.stdout + r.stderr
    assert len(followed) == 1 and f"queued {followed[0]}" in r.stderr
    assert f"run {followed[0]} failed: engine exited 1" in r.stderr
