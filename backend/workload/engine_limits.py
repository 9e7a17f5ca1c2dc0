"""The engine the server runs, and the limits, defaults and choice lists it enforces, read from
`iowatt-engine --limits` (agent/engine/README.md § Limits) once per process.

One owner per limit: the engine refuses a job with exit 2 on the host, so the server's 422s say
what that exit would, from the same numbers. The workload schemas read them at import (their
pydantic `Field` bounds and defaults, and so the OpenAPI document, are built from them): a server
has the engine already, as it checks file workloads with its --parse-only (backend/workload/facts.py;
the server image ships it, IOWATT_ENGINE_PATH), so there is no copy of the numbers to fall back to.
A server without an engine, or with one too old to print --limits, stops at start naming the
setting and the build command.
"""

from __future__ import annotations

import functools
import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any, cast

from iowatt_policy import EngineOptions

from backend.config import REPO_ROOT, get_settings
from backend.errors import AppError

ENGINE_NAME = "iowatt-engine"
REPO_ENGINE = REPO_ROOT / "agent" / "engine" / "build" / ENGINE_NAME
LIMITS_SCHEMA = "iowatt-engine-limits/1"
LIMITS_TIMEOUT_S = 20.0


class EngineUnavailable(AppError):
    """The server has no engine to check a file workload with (503: the deployment's to fix)."""

    status_code = 503
    code = "engine_unavailable"


def engine_path() -> Path:
    """IOWATT_ENGINE_PATH, else the repository's build (make -C agent/engine), else iowatt-engine
    on PATH; EngineUnavailable naming the setting when none is an executable file."""
    configured = get_settings().engine_path
    if configured:
        path = Path(configured)
        if not (path.is_file() and os.access(path, os.X_OK)):
            raise EngineUnavailable(
                f"IOWATT_ENGINE_PATH={path} is not an executable file: the server checks file workloads "
                "(PostMark, vdbench) with iowatt-engine --parse-only; build it (make -C agent/engine) "
                "or fix the setting"
            )
        return path
    if REPO_ENGINE.is_file() and os.access(REPO_ENGINE, os.X_OK):
        return REPO_ENGINE
    found = shutil.which(ENGINE_NAME)
    if found:
        return Path(found)
    raise EngineUnavailable(
        f"no {ENGINE_NAME} on this server (tried {REPO_ENGINE} and PATH): file workloads (PostMark, "
        "vdbench) are checked with the engine's --parse-only before they are saved or queued; build it "
        "(make -C agent/engine) or set IOWATT_ENGINE_PATH"
    )


def read_limits(engine: Path) -> dict[str, Any]:
    """`engine --limits` as a dict; EngineUnavailable when it fails or prints another schema."""
    try:
        proc = subprocess.run(
            [str(engine), "--limits"],
            capture_output=True,
            text=True,
            timeout=LIMITS_TIMEOUT_S,
            check=False,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise EngineUnavailable(f"{engine} --limits did not run: {exc}") from exc
    if proc.returncode != 0:
        raise EngineUnavailable(
            f"{engine} --limits failed (exit {proc.returncode}: {proc.stderr.strip()[:300]}): an engine "
            "older than --limits? rebuild it (make -C agent/engine)"
        )
    try:
        doc = json.loads(proc.stdout)
    except json.JSONDecodeError as exc:
        raise EngineUnavailable(f"{engine} --limits printed no JSON: {proc.stdout[:200]!r}") from exc
    if not isinstance(doc, dict) or doc.get("schema") != LIMITS_SCHEMA:
        raise EngineUnavailable(f"{engine} --limits printed no {LIMITS_SCHEMA} document: rebuild it")
    return doc


@functools.cache
def limits() -> dict[str, Any]:
    """The configured engine's --limits document, read once per process."""
    return read_limits(engine_path())


@functools.cache
def policy_options() -> EngineOptions | None:
    """Which options a server's job may carry, as the engine's table says (its rows' `server`
    class, ADR 0030), for check_run's early answer; None for an engine older than that (libs/policy
    then allows only its frozen pre-0030 list, as the agent does with such an engine)."""
    try:
        return EngineOptions.from_limits(limits())
    except ValueError:
        return None


def block_limit(name: str) -> int:
    """A block-mode array limit: max_jobs, max_bssplit, max_options, path_max."""
    return int(limits()["block"][name])


def option(name: str) -> dict[str, Any]:
    """One row of the engine's option table (type, default, min, max, choices, names)."""
    return cast(dict[str, Any], limits()["block"]["options"][name])


def option_max(name: str) -> int:
    value = option(name)["max"]
    if value is None:
        raise KeyError(f"the engine's {name} has no upper limit")
    return int(value)


def option_default(name: str) -> str:
    value = option(name)["default"]
    if value is None:
        raise KeyError(f"the engine's {name} has no default")
    return str(value)


def section(mode: str) -> dict[str, Any]:
    """A file or database mode's limits: postmark, heap_btree, vdbench."""
    return cast(dict[str, Any], limits()[mode])
