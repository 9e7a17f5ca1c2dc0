"""What starting a server process imports. The suite starts about forty API processes, and the
Celery worker and `iowatt-server` many times: each start pays for its imports again
(docs/testing.md § Start-up costs). The modules below were made lazy on purpose, each imported by
the code that uses it: Authlib, joserfc and cryptography's ciphers by the OpenID Connect sign-in
(backend/auth/oidc_client.py), Celery by the outbox's first send (backend/outbox), FastAPI by a
request's session (backend/db.py); the worker's counters and liveness key live apart from the
routers that serve them (backend/counters.py, backend/health/__init__.py). An import of one of
them at a module's top again fails here; not a timing test. No server process imports rich
(structlog would, for console tracebacks the server never prints: backend/__init__.py). What the
lazy modules do is tested where they are used (test_oidc.py, test_outbox.py, tests/worker)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

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
        lazy = (*lazy, "rich")
        found = sorted(m for m in lazy if m in loaded or any(n.startswith(m + ".") for n in loaded))
        assert not found, f"`import {step}` imports {found}: import them where they are used"
    # the probe sees imports: the API does import what every process needs
    assert "fastapi" in imported["backend.main"] and "sqlalchemy" in imported["backend.db"]


def test_serve_forks_its_processes_from_the_supervisor_that_imported_the_app(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`backend.serve` with N > 1 processes imports the app in its supervisor and starts each process
    as a fork of it, so the imports are paid once (docs/benchmarks.md § Start-up): uvicorn's process
    factory then makes fork processes (a uvicorn that no longer reads `_subprocess.spawn` fails here,
    not silently spawns), and a process puts back the signal handlers a fresh interpreter has. That
    the forks serve, answer alike and are restarted: test_multiproc.py and tests/faults."""
    import signal

    import uvicorn._subprocess
    from uvicorn.config import Config

    from backend import serve

    monkeypatch.setattr(uvicorn._subprocess, "spawn", uvicorn._subprocess.spawn)  # put back after
    monkeypatch.setattr(serve.gc, "freeze", lambda: None)  # not this test process's heap
    serve._fork_from_here()
    assert "backend.main" in sys.modules
    proc = uvicorn._subprocess.get_subprocess(Config(app="backend.main:create_app"), print, [])
    assert proc._start_method == "fork"
    handlers: dict[int, object] = {}
    monkeypatch.setattr(signal, "signal", lambda sig, handler: handlers.__setitem__(sig, handler))
    type(proc)(target=lambda: None).run()  # the child's first steps, here without a fork
    assert handlers[signal.SIGTERM] == signal.SIG_DFL and handlers[signal.SIGHUP] == signal.SIG_DFL
    assert handlers[signal.SIGINT] is signal.default_int_handler
