"""The team switcher scopes the runs list (issue 13, T) in Chromium at 1440x900 on the real
platform: the stack's admin joins a second team ("Bolt Labs", made by another user) as a viewer;
runs uploaded to each team show only under their team, and both under "All my teams" with a chip
naming the team. Screenshots T-*.png go to IOWATT_TEAM_SHOTS (default: tmp_path)."""

import json
import os
import uuid
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import httpx
import pytest

from tests.browser.test_browser import _needs, _node, _shot
from tests.stack import Stack

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("stack-a")]

FIO = json.loads((Path(__file__).parents[1] / "backend" / "data" / "upload-fio-randread.json").read_text())


def _upload(api: httpx.Client, team_id: str, name: str, k: int) -> None:
    body: dict[str, Any] = {
        "team_id": team_id,
        "upload_id": f"team-scope-{uuid.uuid4().hex[:8]}",
        "host": "ci-runner-1",
        "device": {"model": "WDC WD40EFRX 4TB", "serial": f"TS{k:04d}", "media": "hdd"},
        "name": name,
        "engine_result": FIO,
        "started_at": f"2026-11-{10 + k:02d}T10:00:00Z",
        "finished_at": f"2026-11-{10 + k:02d}T10:00:02Z",
    }
    r = api.post("/results", json=body)
    assert r.status_code == 201, r.text


def _invite_token(api: httpx.Client, team_id: str, email: str, role: str) -> str:
    r = api.post(f"/teams/{team_id}/invitations", json={"email": email, "role": role})
    assert r.status_code == 201, r.text
    return urlparse(r.json()["url"]).path.rsplit("/", 1)[-1]


def test_switcher_scopes_the_runs_list(live: Stack, tmp_path: Path) -> None:
    _needs()
    with live.api() as admin:
        me = admin.get("/auth/me").json()
        team_a = me["teams"][0]["id"]
        # another user (joins A by invitation: the only way in), who makes Bolt Labs
        bea_email = f"bea-{uuid.uuid4().hex[:8]}@example.test"
        token = _invite_token(admin, team_a, bea_email, "member")
        r = admin.post(
            f"/invitations/{token}/accept", json={"display_name": "Bea", "password": "bolt labs 1"}
        )
        assert r.status_code == 200, r.text
        bea = httpx.Client(
            base_url=f"{live.url}/api/v1", headers={"Authorization": f"Bearer {r.json()['access_token']}"}
        )
        # teams are made by instance administrators (IOWATT_TEAM_CREATORS' default, issue 22): the
        # admin makes Bolt Labs for Bea, who then keeps the admin as a viewer there
        b_name = f"Bolt Labs {uuid.uuid4().hex[:4]}"
        r = admin.post("/teams", json={"name": b_name})
        assert r.status_code == 201, r.text
        team_b = r.json()["id"]
        token = _invite_token(admin, team_b, bea_email, "admin")
        r = bea.post(f"/invitations/{token}/accept", json={})
        assert r.status_code == 200, r.text
        r = bea.patch(f"/teams/{team_b}/members/{me['id']}", json={"role": "viewer"})
        assert r.status_code == 200, r.text
        try:
            for k in range(2):
                _upload(admin, team_a, f"Acme nightly #{k + 1}", k)
            _upload(bea, team_b, "Bolt hdd baseline", 3)
            for api, team, name in ((admin, team_a, "Acme lab rack"), (bea, team_b, "Bolt cold aisle")):
                r = api.post("/environments", json={"team_id": team, "name": name, "kind": "local"})
                assert r.status_code == 201, r.text
            # the API as the UI asks it
            b_runs = admin.get("/runs", params={"team_id": team_b}).json()
            assert [r["name"] for r in b_runs["items"]] == ["Bolt hdd baseline"]
            shots = Path(os.environ.get("IOWATT_TEAM_SHOTS", str(tmp_path)))
            shots.mkdir(parents=True, exist_ok=True)
            report = _node(
                "tests/browser/team_scope.mjs",
                live,
                shots,
                IOWATT_TEAM_A=team_a,
                IOWATT_TEAM_B=team_b,
                IOWATT_TEAM_B_NAME=b_name,
            )
            assert "All my teams: both teams' runs" in report
            assert "Edit only where allowed" in report
            for name in (
                "T-runs-teamA",
                "T-runs-teamB",
                "T-runs-all",
                "T-environments-all",
                "T-environments-teamB",
            ):
                _shot(report, shots, name)
        finally:
            # leave Bolt Labs: the session's other browser tests expect the admin in one team
            r = admin.delete(f"/teams/{team_b}/members/{me['id']}")
            assert r.status_code == 204, r.text
            bea.close()
