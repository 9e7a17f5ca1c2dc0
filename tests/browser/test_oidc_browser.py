"""Sign-in with OpenID Connect in Chromium (issue 13, V5): a real API process configured for a real
provider (panva's oidc-provider), the built UI, and tests/browser/oidc.mjs clicking "Sign in with
Test SSO" through the provider's login form into the app; a person without an account gets the page
that says why; an account made from an invitation (its address never proven) is linked only in the
link step, with its password (issue 22, ADR 0026). Screenshots V5-*.png go to IOWATT_OIDC_SHOTS
(default: tmp_path).

The API runs on a database of its own (not the shared `live` stack: that one has no provider)."""

import os
import subprocess
from pathlib import Path

import httpx
import pytest
from sqlalchemy import create_engine, text

from tests.browser.test_browser import (
    CHROMIUM,
    _browser_server_wanted,
    _browser_ws,
    _run_script,
    _shot,
    _shots_wanted,
)
from tests.conftest import REPO
from tests.oidc.provider import oidc_provider
from tests.services import Postgres, free_port
from tests.stack import _bootstrap, http
from tests.waiting import wait_until

pytestmark = pytest.mark.slow  # its own API and database: no shared stack, no group

BIN = Path(REPO) / ".venv" / "bin"
PLAYWRIGHT = Path(REPO) / "frontend" / "node_modules" / "playwright-core"


def test_oidc_sign_in_in_chromium(pg: Postgres, redis_url: str, db_url: str, tmp_path: Path) -> None:
    dist = Path(os.environ.get("IOWATT_FRONTEND_DIST") or Path(REPO) / "frontend" / "dist")
    for need, fix in (
        (CHROMIUM, "make deps-system"),
        (PLAYWRIGHT, "make deps-ui"),
        (dist / "index.html", "make ui"),
    ):
        assert need.exists(), f"{need} is missing: {fix}"
    db = pg.migrated_database("iowatt_oidc_browser")
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    env = {
        **os.environ,
        "IOWATT_DATABASE_URL": db,
        "IOWATT_REDIS_URL": redis_url.rsplit("/", 1)[0] + "/5",
        "IOWATT_ENV": "test",
        "IOWATT_PUBLIC_URL": url,
        "IOWATT_FRONTEND_DIST": str(dist),
    }
    # `iowatt-server bootstrap` in this process (typer's runner, tests/stack.py): a process of its
    # own is ~1.4 CPU-s of imports
    _bootstrap(env, tmp_path)
    creds = dict(line.split("=", 1) for line in (tmp_path / "creds").read_text().split())
    shots = Path(os.environ.get("IOWATT_OIDC_SHOTS", str(tmp_path)))
    shots.mkdir(parents=True, exist_ok=True)
    with oidc_provider([f"{url}/api/v1/auth/oidc/callback"]) as provider:
        provider.set_users(
            {
                "admin": {"email": creds["email"], "name": "Administrator"},
                "invitee": {"email": INVITEE, "name": "Invitee"},
            }
        )
        env |= {
            "IOWATT_OIDC_ISSUER": provider.issuer,
            "IOWATT_OIDC_CLIENT_ID": provider.client_id,
            "IOWATT_OIDC_CLIENT_SECRET": provider.client_secret,
            "IOWATT_OIDC_DISPLAY_NAME": "Test SSO",
        }
        log = tmp_path / "api.log"
        with log.open("wb") as out:
            api = subprocess.Popen(
                [str(BIN / "uvicorn"), "backend.main:create_app", "--factory", "--port", str(port)],
                cwd=REPO,
                env=env,
                stdout=out,
                stderr=subprocess.STDOUT,
            )
        try:
            with http(timeout=2) as c:  # one TLS context for the looks (tests/stack.py TLS)
                wait_until(
                    lambda: c.get(f"{url}/api/v1/auth/oidc").json()["enabled"],
                    timeout=60,
                    interval=0.2,
                    ignore=(httpx.HTTPError, ValueError),
                    message=lambda: log.read_text(errors="replace")[-2000:],
                )
            _invitee_accepts(url, creds)
            returncode, report = _run_script(
                "tests/browser/oidc.mjs",
                {
                    **os.environ,
                    "IOWATT_URL": url,
                    "IOWATT_EMAIL": creds["email"],
                    "IOWATT_PASSWORD": creds["password"],
                    "IOWATT_ARTIFACTS": str(tmp_path),
                    "IOWATT_OIDC_KNOWN": "admin",
                    "IOWATT_OIDC_STRANGER": "stranger",
                    "IOWATT_OIDC_UNPROVEN": "invitee",
                    "IOWATT_OIDC_UNPROVEN_PASSWORD": INVITEE_PASSWORD,
                    "IOWATT_OIDC_SHOTS": str(shots),
                    **({"IOWATT_BROWSER_WS": _browser_ws()} if _browser_server_wanted() else {}),
                    **({"IOWATT_SHOTS": "1"} if _shots_wanted() else {}),
                },
            )
        finally:
            api.terminate()
            api.wait(timeout=30)
        assert returncode == 0, (
            f"oidc.mjs failed (screenshots in {tmp_path}):\n{report}\n"
            f"{log.read_text(errors='replace')[-3000:]}\n{provider.log()}"
        )
    assert "oidc: 4 passed, 0 failed" in report
    assert f"signed in as {creds['email']}" in report and f"linked {INVITEE}" in report
    for name in ("V5-login", "V5-provider", "V5-refused", "V5-signed-in", "V5-link"):
        _shot(report, shots, name, 5_000)
    # the server linked the provider's identity to the account, and made none for the stranger
    eng = create_engine(db)
    try:
        with eng.connect() as c:
            linked = c.execute(
                text("SELECT oidc_subject FROM users WHERE email = :e"), {"e": creds["email"]}
            ).scalar_one()
            strangers = c.execute(
                text("SELECT count(*) FROM users WHERE email LIKE 'stranger%'")
            ).scalar_one()
            invitee = c.execute(
                text("SELECT oidc_subject, email_verified_at IS NOT NULL FROM users WHERE email = :e"),
                {"e": INVITEE},
            ).one()
    finally:
        eng.dispose()
    assert (linked, strangers) == ("admin", 0)
    assert tuple(invitee) == ("invitee", True)


INVITEE = "invitee@example.test"
INVITEE_PASSWORD = "the invitee's password"


def _invitee_accepts(url: str, creds: dict[str, str]) -> None:
    """An account made the usual way: the admin invites, the invitee accepts with a password."""
    with http(base_url=f"{url}/api/v1") as api:
        token = api.post("/auth/login", json={"email": creds["email"], "password": creds["password"]}).json()[
            "access_token"
        ]
        auth = {"Authorization": f"Bearer {token}"}
        team = api.get("/auth/me", headers=auth).json()["teams"][0]["id"]
        r = api.post(f"/teams/{team}/invitations", json={"email": INVITEE, "role": "member"}, headers=auth)
        assert r.status_code == 201, r.text
        raw = r.json()["url"].rsplit("/invite/", 1)[1]
        r = api.post(
            f"/invitations/{raw}/accept", json={"display_name": "Invitee", "password": INVITEE_PASSWORD}
        )
        assert r.status_code == 200, r.text
        assert r.json()["user"]["email_verified"] is False
