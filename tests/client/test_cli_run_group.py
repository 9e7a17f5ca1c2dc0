"""`iowatt run W --member A:PATH --member B:PATH`: a group run on two agents. In-process (typer's
CliRunner against the in-process API through the `client` fixture's transport): no stack."""

import json
from typing import Any

import pytest
from fastapi.testclient import TestClient
from iowatt_client import Client, cli
from iowatt_client.cli import EXIT_OK, EXIT_USAGE, app
from sqlalchemy.orm import Session
from typer.testing import CliRunner

from tests.factories import create_agent, create_user

SPEC = {"jobs": [{"name": "j", "rw": "randread", "bs_bytes": 4096, "size_bytes": 4 << 20, "runtime_s": 1}]}


@pytest.fixture
def iowatt(client: TestClient, session: Session, monkeypatch: pytest.MonkeyPatch) -> Any:
    user = create_user(session)
    create_agent(session, team=user.team, name="host-a")
    create_agent(session, team=user.team, name="host-b")
    monkeypatch.setattr(
        cli, "_client", lambda: Client("http://testserver", user.token, transport=client._transport)
    )
    runner = CliRunner()

    def run(*args: str, code: int = EXIT_OK) -> Any:
        r = runner.invoke(app, ["run", *args, "--no-wait"])
        assert r.exit_code == code, f"exit {r.exit_code}\n{r.stdout}\n{r.stderr}"
        return r

    return run


def test_members_on_two_agents_queue_one_group(iowatt: Any, tmp_path: Any) -> None:
    spec = tmp_path / "w.json"
    spec.write_text(json.dumps({"workload": SPEC}))
    r = iowatt(str(spec), "--member", "host-a:/srv/a", "--member", "host-b:/srv/b")
    assert "queued group" in r.stderr and "host-a:/srv/a, host-b:/srv/b" in r.stderr
    assert r.stdout.strip().endswith(": queued")
    shown = json.loads(
        iowatt(str(spec), "--member", "host-a:/srv/b", "--member", "host-b:/srv/a", "--json").stdout
    )
    assert {(m["agent_name"], m["target_path"]) for m in shown["members"]} == {
        ("host-a", "/srv/b"),
        ("host-b", "/srv/a"),
    }
    # one member, or one without a path, is a usage error; the server's 422 (one agent twice) too
    assert "at least twice" in iowatt(str(spec), "--member", "host-a:/srv/a", code=EXIT_USAGE).stderr
    assert iowatt(str(spec), "--member", "host-a", "--member", "host-b:/srv/b", code=EXIT_USAGE).stderr
    twice = iowatt(str(spec), "--member", "host-a:/srv/a", "--member", "host-a:/srv/b", code=EXIT_USAGE)
    assert "members.1.agent_id" in twice.stderr
