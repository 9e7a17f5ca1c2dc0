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
