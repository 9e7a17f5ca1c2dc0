"""What the host's engine can run here: its version and the asynchronous ioengines that work on
this host (built in, and allowed by the kernel: io_uring can be disabled by sysctl or a seccomp
policy). Reported in the inventory's capabilities (protocol 2), so the server shows each agent's
engine features and can tell an agent lacking io_uring before a run is queued.

Each ioengine is tried with a 4 KiB read of a file in a private temporary directory (exit 0: it
works; 77: not built in or not allowed here; anything else: unknown, left out). Cached per engine
binary (path, inode, mtime): a rebuilt or replaced engine is asked again.
"""

from __future__ import annotations

import logging
import os
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

log = logging.getLogger("iowatt_agent.engine_features")
ASYNC_IOENGINES = ("io_uring", "libaio")
PROBE_TIMEOUT_S = 20.0
ENV = {"PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "LC_ALL": "C"}


@dataclass(frozen=True)
class EngineFeatures:
    version: str | None  # "0.1.0", from `iowatt-engine --version`
    ioengines: tuple[str, ...]  # the asynchronous ones that ran here


_cache: dict[tuple[str, int, int], EngineFeatures] = {}


def engine_features(engine: Path | str | None) -> EngineFeatures | None:
    if engine is None:
        return None
    try:
        st = os.stat(engine)
    except OSError:
        return None
    key = (str(engine), st.st_ino, st.st_mtime_ns)
    if key not in _cache:
        _cache[key] = _probe(str(engine))
    return _cache[key]


def _run(argv: list[str]) -> subprocess.CompletedProcess[str] | None:
    try:
        return subprocess.run(
            argv,
            env=dict(ENV),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=PROBE_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        log.warning("engine_features.probe_failed engine=%s error=%s", argv[0], exc)
        return None


def _probe(engine: str) -> EngineFeatures:
    done = _run([engine, "--version"])
    version = None
    if done is not None and done.returncode == 0:
        # "iowatt-engine-0.1.0"
        version = done.stdout.strip().removeprefix("iowatt-engine-")[:50] or None
    works = []
    with tempfile.TemporaryDirectory(prefix="iowatt-probe-") as d:
        for ioengine in ASYNC_IOENGINES:
            ran = _run(
                [engine, "--untrusted", f"--beneath={d}", "--name=probe", f"--ioengine={ioengine}",
                 "--rw=read", "--bs=4k", "--size=4k", f"--filename={d}/probe", "--output-format=terse"]
            )  # fmt: skip
            if ran is not None and ran.returncode == 0:
                works.append(ioengine)
    return EngineFeatures(version=version, ioengines=tuple(works))
