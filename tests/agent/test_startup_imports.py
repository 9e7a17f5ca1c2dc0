"""What an `iowatt-agent` call imports before its command runs. The suite calls the CLI over a
hundred times (`targets add`, `meters set`, `enroll`, ...) and each call paid for every command's
imports (docs/testing.md § Start-up costs). The modules below are imported by the
commands or drivers that use them (agent/src/iowatt_agent/cli.py): the HTTP client and its retry
library, the worker loop, bench, the inventory, bench's progress bars, the meters' HTTP and SNMP
clients. An import of one of them at a module's top again fails here; not a timing test."""

from __future__ import annotations

import json
import subprocess
import sys

LAZY = (
    "httpx",
    "tenacity",
    "asyncio",
    "rich.progress",
    "iowatt_agent.client",
    "iowatt_agent.loop",
    "iowatt_agent.bench",
    "iowatt_agent.enrol",
    "iowatt_agent.inventory",
    "iowatt_agent.runner",
    "iowatt_agent.schemas",
)
PROBE = "import json, sys, iowatt_agent.cli; print(json.dumps(sorted(sys.modules)))"


def test_the_cli_imports_only_what_every_command_needs() -> None:
    out = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, check=True)
    loaded = set(json.loads(out.stdout))
    found = sorted(m for m in LAZY if m in loaded)
    assert not found, f"`import iowatt_agent.cli` imports {found}: import them in the command that uses them"
    assert {"typer", "iowatt_agent.targets_cli"} <= loaded  # what every command needs is there


def test_run_still_finds_the_loop_a_test_may_replace() -> None:
    from iowatt_agent import cli
    from iowatt_agent.loop import AgentLoop

    assert cli.AgentLoop is AgentLoop  # imported on first use, still replaceable here


def test_a_call_builds_only_the_command_it_names() -> None:
    """`main` hands typer a copy of the app with only the named command (or group and command): the
    others' click commands are not built at each start; an option or unknown name first keeps the
    whole app (its help, --version, "No such command" and suggestions)."""
    from iowatt_agent.cli import app, only_the_command

    bench = only_the_command(app, ["bench", "--target", "x"])
    assert [c.callback.__name__ for c in bench.registered_commands] == ["bench"]
    assert bench.registered_groups == [] and bench.registered_callback is app.registered_callback
    meters = only_the_command(app, ["meters", "test", "shelly://h"])
    assert bench.registered_commands != [] and meters.registered_commands == []
    (group,) = meters.registered_groups
    assert group.name == "meters" and [c.name for c in group.typer_instance.registered_commands] == ["test"]
    assert len(only_the_command(app, ["meters"]).registered_groups[0].typer_instance.registered_commands) > 1
    for args in ([], ["--help"], ["--version"], ["nosuch"], ["ben"]):
        assert only_the_command(app, args) is app
    assert len(app.registered_commands) > 1 and len(app.registered_groups) == 2  # the app is not changed
