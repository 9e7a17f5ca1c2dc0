"""`iowatt run --target A --target B`: one run on several targets of the agent at once. The
command runs in-process (typer's CliRunner) against the in-process API (the `client` fixture's
transport), so no stack is needed."""

import json
import uuid
from typing import Any

import pytest
from fastapi.testclient import TestClient
from iowatt_client import Client, cli
from iowatt_client.cli import EXIT_OK, EXIT_USAGE, app
from sqlalchemy.orm import Session
from typer.testing import CliRunner

from backend.run import repository as run_repo
from tests.backend.test_multi_target import MULTI
from tests.factories import create_agent, create_user

SPEC = {"jobs": [{"name": "j", "rw": "randread", "bs_bytes": 4096, "size_bytes": 4 << 20, "runtime_s": 1}]}


@pytest.fixture
def iowatt(client: TestClient, session: Session, monkeypatch: pytest.MonkeyPatch) -> Any:
    user = create_user(session)
    agent = create_agent(session, team=user.team, inventory=MULTI)
    monkeypatch.setattr(
        cli, "_client", lambda: Client("http://testserver", user.token, transport=client._transport)
    )
    runner = CliRunner()

    def run(*args: str, code: int = EXIT_OK) -> Any:
        r = runner.invoke(app, ["run", *args, "--agent", str(agent.agent.id), "--no-wait"])
        assert r.exit_code == code, f"exit {r.exit_code}\n{r.stdout}\n{r.stderr}"
        return r

    return run


def test_target_given_twice_queues_one_run_on_both(iowatt: Any, session: Session, tmp_path: Any) -> None:
    spec = tmp_path / "w.json"
    spec.write_text(json.dumps({"workload": SPEC}))
    r = iowatt(str(spec), "--target", "/srv/a", "--target", "/dev/shm/x")
    assert "on " in r.stderr and ":/srv/a, /dev/shm/x" in r.stderr
    run_id = uuid.UUID(r.stdout.split(":")[0])
    targets = run_repo.targets_of(session, [run_id])[run_id]
    assert [t.target_path for t in targets] == ["/srv/a", "/dev/shm/x"]
    shown = json.loads(iowatt(str(spec), "--target", "/srv/b", "--target", "/dev/shm/b", "--json").stdout)
    assert [t["target_path"] for t in shown["targets"]] == ["/srv/b", "/dev/shm/b"]
    # one --target is the single-target run it always was (no targets rows)
    one = json.loads(iowatt(str(spec), "--target", "/srv/bench", "--json").stdout)
    assert one["target_path"] == "/srv/bench" and one["targets"] == []
    # the server's refusal of a repeated target comes back as the API error's exit code
    assert iowatt(str(spec), "--target", "/srv/a", "--target", "/srv/a", code=EXIT_USAGE).stderr
    assert "--target" in iowatt(str(spec), code=EXIT_USAGE).stderr
