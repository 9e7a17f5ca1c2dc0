"""Where the command finds its server and token: `IOWATT_URL` / `IOWATT_TOKEN` first, else the
file `iowatt login` wrote: `$IOWATT_CONFIG`, else `$XDG_CONFIG_HOME/iowatt/config.json`
(`~/.config/iowatt/config.json`), created 0600 in a 0700 directory (it holds a bearer token)."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

URL_ENV, TOKEN_ENV, CONFIG_ENV = "IOWATT_URL", "IOWATT_TOKEN", "IOWATT_CONFIG"


class ConfigMissing(Exception):
    """No server URL or token: run `iowatt login` or set IOWATT_URL and IOWATT_TOKEN."""


@dataclass(frozen=True)
class Config:
    url: str
    token: str


def config_path() -> Path:
    if os.environ.get(CONFIG_ENV):
        return Path(os.environ[CONFIG_ENV])
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "iowatt" / "config.json"


def read_file() -> dict[str, str]:
    p = config_path()
    try:
        data = json.loads(p.read_text())
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as e:
        raise ConfigMissing(f"{p}: unreadable ({e}); run `iowatt login` again") from None
    return {k: str(v) for k, v in data.items() if k in ("url", "token") and v}


def load() -> Config:
    stored = read_file() if not (os.environ.get(URL_ENV) and os.environ.get(TOKEN_ENV)) else {}
    url = os.environ.get(URL_ENV) or stored.get("url")
    token = os.environ.get(TOKEN_ENV) or stored.get("token")
    if not url or not token:
        what = "URL" if not url else "token"
        raise ConfigMissing(f"no server {what}: run `iowatt login URL` or set {URL_ENV} and {TOKEN_ENV}")
    return Config(url=url.rstrip("/"), token=token)


def save(url: str, token: str) -> Path:
    """Write the file 0600 (created so, never widened on the way), its directory 0700."""
    p = config_path()
    p.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    tmp = p.with_name(p.name + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "w") as f:
        json.dump({"url": url.rstrip("/"), "token": token}, f)
        f.write("\n")
    os.chmod(tmp, 0o600)
    os.replace(tmp, p)
    return p
