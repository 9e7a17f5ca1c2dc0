"""agent.json: the agent's credentials and how its server is verified (the state directory's
layout: `config`)."""

from __future__ import annotations

import json
import ssl
from datetime import datetime
from pathlib import Path
from typing import Literal
from uuid import UUID

from pydantic import BaseModel, ConfigDict, ValidationError

from .config import CONFIG_FILE, ConfigError, ensure_state_dir, write_private_file
from .transport import TransportError, ca_context, check_plain_http, endpoint, pinned_context


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
