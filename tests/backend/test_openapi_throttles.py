"""Every route a throttle or rate limit can answer 429 documents it, with Retry-After (issue 22:
the long Schemathesis run as user B got an undocumented 429 from POST /teams/{id}/invitations; the
shared-link routes, the reset and verification mails and DELETE /auth/me were missing too).
Which routes can: every `TooManyRequests` raised in backend/ or a throttle dependency, listed here
by hand and held to the source by the count below."""

import re
from pathlib import Path

from backend.main import create_app

REPO = Path(__file__).resolve().parents[2]
THROTTLED = {
    "POST /api/v1/auth/login": "login_throttled",
    "POST /api/v1/auth/oidc/link": "login_throttled",
    "DELETE /api/v1/auth/me": "login_throttled",
    "POST /api/v1/auth/password": "login_throttled",
    "POST /api/v1/auth/email": "email_change_throttled",  # and login_throttled: a dict keeps one
    "POST /api/v1/auth/email-verification": "mail_throttled",
    "POST /api/v1/auth/password-reset": "reset_throttled",
    "POST /api/v1/teams/{team_id}/invitations": "invitations_throttled",
    "GET /api/v1/shared/{token}": "share_throttled",
    "GET /api/v1/shared/{token}/export.csv": "share_throttled",
    "GET /api/v1/shared/{token}/export.json": "share_throttled",
    "GET /api/v1/agent-dist": "agent_dist_throttled",
    "GET /api/v1/agent-dist/install.sh": "agent_dist_throttled",
    "GET /api/v1/agent-dist/files/{file_name}": "agent_dist_throttled",
}


def test_every_throttled_route_documents_429_with_retry_after() -> None:
    spec = create_app().openapi()
    for label in THROTTLED:
        method, path = label.split(" ", 1)
        r = spec["paths"][path][method.lower()]["responses"]
        assert "429" in r, f"{label} does not document 429"
        assert "Retry-After" in r["429"].get("headers", {}), f"{label}: 429 without Retry-After"


def test_the_list_names_every_throttle_code_the_source_raises() -> None:
    """A new `code="..._throttled"` in backend/ must be placed in THROTTLED (with its routes)."""
    codes = set()
    for f in (REPO / "backend").rglob("*.py"):
        codes |= set(re.findall(r'code="(\w+_throttled)"', f.read_text()))
    assert codes == set(THROTTLED.values()), codes ^ set(THROTTLED.values())
