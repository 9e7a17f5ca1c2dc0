"""Agent state directory and the credentials file it holds.

Layout of the state directory (default /var/lib/iowatt-agent, or --state-dir /
IOWATT_AGENT_STATE_DIR):

    agent.json          server URL, agent id, agent token and its expiry, how the server is
                        verified (0600); a rotated token is written here before it is used
    server-cert.pem     the server certificate pinned at enrolment (0600), or
    server-ca.pem       the CA bundle given with --ca-file (0600)
    policy.json         what the server's runs may touch here (`policy`, 0600)
    meters.json         this host's wattmeters by name (`policy`, 0600: specs may hold a BMC or
                        plug password); an old single `meter.json` is migrated into it once
    spool/*.json        results and failures not yet acknowledged by the server
    spool/rejected/     uploads the server refused permanently, with the reason
    jobs/               engine job files of the current run (a dead agent's are removed at start)
"""

from __future__ import annotations

import os
from pathlib import Path

DEFAULT_STATE_DIR = Path("/var/lib/iowatt-agent")
STATE_DIR_ENV = "IOWATT_AGENT_STATE_DIR"
CONFIG_FILE = "agent.json"


class ConfigError(Exception):
    """The state directory or its credentials file is missing or unusable."""


# agent.json's models and what reads, writes and trusts it live in `credentials` (which imports
# this module): pydantic and ssl cost ~0.25 CPU-s at every start, and the policy commands
# (`targets ...`, `meters ...`) never read agent.json.


def resolve_state_dir(explicit: str | Path | None = None) -> Path:
    if explicit:
        return Path(explicit)
    env = os.environ.get(STATE_DIR_ENV)
    if env:
        return Path(env)
    return DEFAULT_STATE_DIR


def normalize_server_url(url: str) -> str:
    """'http://h:8000/', 'http://h:8000/api/v1' -> 'http://h:8000' (the client adds /api/v1)."""
    url = url.strip()
    if not url.startswith(("http://", "https://")):
        raise ConfigError(f"server URL must start with http:// or https://, got {url!r}")
    url = url.rstrip("/")
    if url.endswith("/api/v1"):
        url = url[: -len("/api/v1")]
    return url


def ensure_state_dir(state_dir: Path) -> Path:
    try:
        state_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    except OSError as exc:
        raise ConfigError(f"cannot create state directory {state_dir}: {exc.strerror}") from exc
    if not os.access(state_dir, os.W_OK):
        raise ConfigError(f"state directory {state_dir} is not writable (run as root or use --state-dir)")
    return state_dir


def write_private_file(path: Path, data: bytes, mode: int = 0o600) -> None:
    """Atomically replace `path` with `data`: tmp file (created with `mode`) + fsync + rename + dir fsync.
    A failed write (ENOSPC, EIO) removes the tmp file and raises the OSError."""
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    try:
        try:
            os.fchmod(fd, mode)
            view = memoryview(data)
            while view:
                n = os.write(fd, view)
                view = view[n:]
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    dfd = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(dfd)
    finally:
        os.close(dfd)
