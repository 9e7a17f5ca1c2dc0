"""The real engine for the platform's tests of fio job files (ADR 0029), and a recording wrapper
for the tests that must see how the agent or the server called it: a shell script in the test's
directory that appends each call's argv and environment to `calls.jsonl` beside it, then execs
the real engine with the same arguments. The real engine does all the work; nothing stands in."""

from __future__ import annotations

import json
import os
import shlex
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
# the repository's build (`make engine`), or the server's setting when a test run names another
REAL_ENGINE = Path(
    os.environ.get("IOWATT_ENGINE_PATH") or REPO / "agent" / "engine" / "build" / "iowatt-engine"
)

# -I: the recorder reads no PYTHON* variables and adds none of its own to what it records
RECORD = (
    "import json, os, sys\n"
    "with open(sys.argv[1], 'a') as log:\n"
    "    log.write(json.dumps({'argv': sys.argv[2:], 'env': dict(os.environ)}) + '\\n')\n"
)


def write_recording_engine(directory: Path) -> Path:
    """An executable `iowatt-engine` in `directory` that records each call, then execs REAL_ENGINE."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "iowatt-engine"
    log = directory / "calls.jsonl"
    path.write_text(
        "#!/bin/sh\n"
        f'{shlex.quote(sys.executable)} -I -c {shlex.quote(RECORD)} {shlex.quote(str(log))} "$@" || exit 70\n'
        f'exec {shlex.quote(str(REAL_ENGINE))} "$@"\n'
    )
    path.chmod(0o755)
    return path


def calls(engine: Path) -> list[dict[str, Any]]:
    """The recorded calls of `engine` (a recording wrapper), oldest first: {"argv": [...], "env": {...}}."""
    log = engine.parent / "calls.jsonl"
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
