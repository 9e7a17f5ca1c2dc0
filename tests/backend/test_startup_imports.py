"""What starting a server process imports. The suite starts about forty API processes, and the
Celery worker and `iowatt-server` many times: each start pays for its imports again
(docs/testing.md § Start-up costs). The modules below were made lazy on purpose, each imported by
the code that uses it: Authlib, joserfc and cryptography's ciphers by the OpenID Connect sign-in
(backend/auth/oidc_client.py), Celery by the outbox's first send (backend/outbox), FastAPI by a
request's session (backend/db.py); the worker's counters and liveness key live apart from the
routers that serve them (backend/counters.py, backend/health/__init__.py). An import of one of
them at a module's top again fails here; not a timing test. What the lazy modules do is tested
where they are used (test_oidc.py, test_outbox.py, tests/worker)."""

from __future__ import annotations

import json
import subprocess
import sys

from tests.conftest import REPO

# two processes: each step imports more; what each step must not have imported yet
CHAINS = (("backend.db", "backend.cli", "worker.app"), ("backend.main",))
PROBE = """
import json, sys
seen = {}
for name in sys.argv[1:]:
    __import__(name)
    seen[name] = sorted(sys.modules)
print(json.dumps(seen))
"""
LAZY = {
    # `iowatt-server` and the worker serve no request
    "backend.db": ("fastapi", "celery", "authlib", "joserfc"),
    "backend.cli": ("fastapi", "celery", "authlib", "joserfc", "httpx"),
    "worker.app": ("fastapi", "starlette", "prometheus_client", "authlib", "joserfc", "httpx"),
    # the API: sign-in and the broker only when used
    "backend.main": (
        "celery",
        "kombu",
        "authlib",
        "joserfc",
        "httpx",
        "cryptography.hazmat.primitives.ciphers",
    ),
}


def _imported(chain: tuple[str, ...]) -> dict[str, list[str]]:
    out = subprocess.run(
        [sys.executable, "-W", "ignore", "-c", PROBE, *chain],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(out.stdout)


def test_server_processes_start_without_what_only_some_requests_need() -> None:
    imported = {step: mods for chain in CHAINS for step, mods in _imported(chain).items()}
    for step, lazy in LAZY.items():
        loaded = set(imported[step])
        found = sorted(m for m in lazy if m in loaded or any(n.startswith(m + ".") for n in loaded))
        assert not found, f"`import {step}` imports {found}: import them where they are used"
    # the probe sees imports: the API does import what every process needs
    assert "fastapi" in imported["backend.main"] and "sqlalchemy" in imported["backend.db"]
