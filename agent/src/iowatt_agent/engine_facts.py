"""The host's engine's option facts (ADR 0030): which options a server's job may carry, from
`iowatt-engine --limits` (each row's `server` class), read once per engine binary. The agent judges
every lease with the engine it runs, so a server can never send an option that engine does not
have, or one it marks as the host's or as a path. An engine that cannot say (missing, failing, or
older than ADR 0030) gives None: libs/policy then allows only its frozen pre-0030 list."""

from __future__ import annotations

import json
import logging
import os
import subprocess
from pathlib import Path

from iowatt_policy import EngineOptions

log = logging.getLogger("iowatt_agent.engine_facts")
LIMITS_TIMEOUT_S = 20.0
# the engine's whole environment: nothing of the agent's
ENV = {"PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "LC_ALL": "C"}

_cache: dict[tuple[str, int, int], EngineOptions | None] = {}


def engine_options(engine: Path | str | None) -> EngineOptions | None:
    """EngineOptions of `engine --limits`, cached by the binary's path, inode and mtime (a rebuilt
    or replaced engine is read again); None when it cannot say."""
    if engine is None:
        return None
    try:
        st = os.stat(engine)
    except OSError:
        return None
    key = (str(engine), st.st_ino, st.st_mtime_ns)
    if key not in _cache:
        _cache[key] = _read(engine)
    return _cache[key]


def _read(engine: Path | str) -> EngineOptions | None:
    try:
        done = subprocess.run(
            [str(engine), "--limits"],
            env=dict(ENV),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=LIMITS_TIMEOUT_S,
            check=False,
        )
        if done.returncode != 0:
            raise ValueError(f"exit {done.returncode}")
        return EngineOptions.from_limits(json.loads(done.stdout))
    except (OSError, subprocess.TimeoutExpired, ValueError) as exc:
        log.warning(
            "%s --limits gives no option facts (%s): a server's block jobs are judged by libs/policy's "
            "frozen option list alone; rebuild the engine",
            engine,
            exc,
        )
        return None
