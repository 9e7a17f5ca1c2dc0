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

import json
import os
import ssl
from datetime import datetime
from pathlib import Path
from typing import Literal
from uuid import UUID

from pydantic import BaseModel, ConfigDict, ValidationError

from .transport import TransportError, ca_context, check_plain_http, endpoint, pinned_context

DEFAULT_STATE_DIR = Path("/var/lib/iowatt-agent")
STATE_DIR_ENV = "IOWATT_AGENT_STATE_DIR"
CONFIG_FILE = "agent.json"


class ConfigError(Exception):
    """The state directory or its credentials file is missing or unusable."""


class TlsTrust(BaseModel):
    """How an https:// server is verified. `pin`: the certificate confirmed at enrolment is the
    only trust anchor; `ca`: the CA bundle given with --ca-file. `file` is relative to the state
    directory (or absolute)."""

    model_config = ConfigDict(extra="ignore")

    mode: Literal["pin", "ca"]
    file: str
    fingerprint_sha256: str | None = None  # pin: SHA-256 of the pinned certificate (DER), hex
    verify_hostname: bool = True


class AgentConfig(BaseModel):
    model_config = ConfigDict(extra="ignore")

    server_url: str
    agent_id: UUID
    agent_token: str
    token_expires_at: datetime | None = None  # as the server last said; the agent rotates before
    name: str
    team_id: UUID | None = None
    heartbeat_interval_s: float = 15.0
    tls: TlsTrust | None = None
    insecure_http: bool = False  # http:// to a non-loopback host, accepted at enrolment


def server_ssl_context(state_dir: Path, config: AgentConfig) -> ssl.SSLContext | None:
    """The TLS context every connection to the server uses (None for loopback/insecure http://).
    Refuses (ConfigError) a config that does not say how to verify its https:// server."""
    try:
        check_plain_http(config.server_url, insecure_http=config.insecure_http)
        scheme = endpoint(config.server_url).scheme
    except TransportError as exc:
        raise ConfigError(f"{exc} (re-enrol or `iowatt-agent repin --server URL`)") from None
    if scheme == "http":
        return None
    if config.tls is None:
        raise ConfigError(
            f"{config.server_url} is https:// but this agent has no pinned certificate or CA file "
            "(enrolled by an older agent): run `iowatt-agent repin` once to pin the server"
        )
    path = Path(config.tls.file)
    if not path.is_absolute():
        path = state_dir / path
    try:
        pem = path.read_text(encoding="ascii")
    except (OSError, UnicodeDecodeError) as exc:
        reason = getattr(exc, "strerror", None) or str(exc)
        raise ConfigError(
            f"cannot read the server's trust anchor {path}: {reason} (`iowatt-agent repin`)"
        ) from None
    try:
        if config.tls.mode == "pin":
            return pinned_context(pem, verify_hostname=config.tls.verify_hostname)
        return ca_context(pem, verify_hostname=config.tls.verify_hostname)
    except TransportError as exc:
        raise ConfigError(f"{path}: {exc} (`iowatt-agent repin`)") from None


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


def save_config(state_dir: Path, config: AgentConfig) -> Path:
    ensure_state_dir(state_dir)
    path = state_dir / CONFIG_FILE
    write_private_file(path, (config.model_dump_json(indent=2) + "\n").encode())
    return path


def load_config(state_dir: Path) -> AgentConfig:
    path = state_dir / CONFIG_FILE
    try:
        raw = path.read_text()
    except FileNotFoundError:
        raise ConfigError(
            f"not enrolled: {path} does not exist; "
            "run `iowatt-agent enroll --server URL --token-file FILE` first"
        ) from None
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc.strerror}") from exc
    try:
        return AgentConfig.model_validate(json.loads(raw))
    except (ValueError, ValidationError) as exc:
        raise ConfigError(f"{path} is not a valid agent config: {exc}") from exc
