"""The Helm chart's topology on one machine (issue 30): N API processes, each
`python -m backend.serve --workers 1` on a port of its own with its own Prometheus directory,
behind Caddy (deploy/caddy/several-apis.Caddyfile), whose address is the platform's.

The one owner of how these processes are started: bench/load/loadsim.py `platform(api_processes=N)`
(the load smoke test and bench/load) and tests/stack.py `stack(api_processes=N)` (the fault rig)
start what `several_apis` returns, each with its own way of starting a process (niced, a tree of
another commit; a log per process)."""

from __future__ import annotations

import shutil
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
CADDYFILE = REPO / "deploy" / "caddy" / "several-apis.Caddyfile"


def caddy_binary() -> str:
    """Caddy (scripts/install-ops-test-tools.sh installs it for the tests)."""
    found = shutil.which("caddy")
    if found is None:
        raise RuntimeError("caddy is missing: scripts/install-ops-test-tools.sh installs it (make deps)")
    return found


@dataclass(frozen=True)
class Process:
    name: str  # api-0 ... api-(N-1), caddy: the log's name too
    argv: list[str]
    env: dict[str, str]


def several_apis(api_ports: Sequence[int], proxy_port: int, env: dict[str, str], work: Path) -> list[Process]:
    """One API process on each of `api_ports` (`api-K`), then Caddy on `proxy_port` sending to
    them (`caddy`), with `env` (the server's settings) and their state under `work`. The API
    processes believe Caddy's forwarded headers (IOWATT_TRUSTED_PROXIES, as the Caddyfile says)."""
    apis = [
        Process(
            f"api-{k}",
            [sys.executable, "-m", "backend.serve", "--host", "127.0.0.1", "--port", str(port)]
            + ["--workers", "1"],
            {
                **env,
                "PROMETHEUS_MULTIPROC_DIR": str(work / f"metrics-{k}"),
                "IOWATT_TRUSTED_PROXIES": '["127.0.0.1"]',
            },
        )
        for k, port in enumerate(api_ports)
    ]
    caddy = Process(
        "caddy",
        [caddy_binary(), "run", "--adapter", "caddyfile", "--config", str(CADDYFILE)],
        {
            **env,
            "IOWATT_PROXY_PORT": str(proxy_port),
            "IOWATT_API_UPSTREAMS": " ".join(f"127.0.0.1:{p}" for p in api_ports),
            "XDG_DATA_HOME": str(work / "caddy"),
            "XDG_CONFIG_HOME": str(work / "caddy"),
        },
    )
    return [*apis, caddy]
