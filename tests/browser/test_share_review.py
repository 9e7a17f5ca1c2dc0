"""A procurement review shared by read-only link, in Chromium on the real platform (issue 16 on
issue 13's links): the stack's admin builds a review (two published candidates and one measured
by a real run), decides it, starts a new version and changes a price; both are shared; then
tests/browser/share_review.mjs opens both links in a profile that never logs in (see there).
Screenshots V3-*.png go to IOWATT_SHARE_SHOTS (default: tmp_path)."""

import csv
import io
import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.browser.test_browser import CHROMIUM, PLAYWRIGHT, _node, _shot
from tests.conftest import REPO
from tests.stack import SHORT_WORKLOAD, Stack

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("stack-c")]

GB = 10**9


def _published(name: str, price: str, gb: int, rps: str) -> dict[str, Any]:
    return {
        "name": name,
        "device": {"model": name, "capacity_bytes": gb * GB, "unit_price": price, "media": "hdd"},
        "count": 2,
        "protection": "raid1",
        "performance": {
            "source": "published",
            "metric": "rps",
            "value": rps,
            "reference": "seed 001 Table 3",
        },
        "power": {"idle_w": "5", "load_w": "9", "per": "drive", "reference": "datasheet"},
    }


def test_a_shared_review_in_chromium(live: Stack, tmp_path: Path) -> None:
    dist = Path(os.environ.get("IOWATT_FRONTEND_DIST") or Path(REPO) / "frontend" / "dist")
    for need, fix in (
        (CHROMIUM, "apt-get install chromium-headless-shell"),
        (PLAYWRIGHT, "make deps-ui"),
        (dist, "make ui"),
    ):
        assert Path(need).exists(), f"{need} is missing: {fix}"
    disk = tempfile.mkdtemp(prefix="iowatt-share-review-", dir="/var/tmp")
    try:
        run_id = live.queue(disk, SHORT_WORKLOAD, name=f"share review on {disk}")
        assert live.wait(run_id)["status"] == "succeeded"
        with live.api() as api:
            team = api.get("/auth/me").json()["teams"][0]
            r = api.post(
                "/reviews",
                json={
                    "team_id": team["id"],
                    "name": "Content server drives",
                    "question": "Which mirrored pair for the content platform?",
                    "currency": "USD",
                    "horizon_years": 5,
                    "tariff_per_kwh": "0.15",
                    "grid_g_per_kwh": 350,
                    "weights": {"cost_per_gb_usable": 1, "tco": 1},
                },
            )
            assert r.status_code == 201, r.text
            rv = r.json()
            for body in (
                _published("ENT 15K R1", "595", 600, "580.7"),
                _published("ENT CAP R1", "399", 2000, "285.5"),
                {
                    **_published("Measured SSD R1", "250", 480, "1"),
                    "performance": {"source": "run", "run_id": run_id},
                },
            ):
                c = api.post(f"/reviews/{rv['id']}/candidates", json=body)
                assert c.status_code == 201, c.text
            chosen = next(
                c for c in api.get(f"/reviews/{rv['id']}").json()["candidates"] if c["name"] == "ENT 15K R1"
            )
            d = api.post(
                f"/reviews/{rv['id']}/decision",
                json={"candidate_id": chosen["id"], "reason": "lowest TCO per usable GB we can support"},
            )
            assert d.status_code == 200, d.text
            v2 = api.post(f"/reviews/{rv['id']}/versions").json()
            c15 = next(c for c in v2["candidates"] if c["name"] == "ENT 15K R1")
            p = api.patch(
                f"/reviews/{v2['id']}/candidates/{c15['id']}",
                json={"device": {"model": "ENT 15K R1", "capacity_bytes": 600 * GB, "unit_price": "550"}},
            )
            assert p.status_code == 200, p.text
            paths = []
            for review_id, title in ((rv["id"], ""), (v2["id"], "")):
                s = api.post("/share-links", json={"kind": "review", "target": review_id, "title": title})
                assert s.status_code == 201, s.text
                paths.append(httpx.URL(s.json()["url"]).path)
        shots = Path(os.environ.get("IOWATT_SHARE_SHOTS", str(tmp_path)))
        shots.mkdir(parents=True, exist_ok=True)
        report = _node(
            "tests/browser/share_review.mjs",
            live,
            tmp_path,
            IOWATT_SHARE_DECIDED=paths[0],
            IOWATT_SHARE_UNDECIDED=paths[1],
            IOWATT_SHARE_TEAM=team["name"],
            IOWATT_SHARE_HIDDEN=disk,
            IOWATT_SHARE_SHOTS=str(shots),
        )
        assert "every request the shared pages made is the links' API or a static asset" in report
        recorded = (tmp_path / "share-review-requests.txt").read_text().split()
        assert recorded and all("/api/v1/" not in u or "/api/v1/shared/" in u for u in recorded)
        rows = list(csv.DictReader(io.StringIO((tmp_path / "shared-review.csv").read_text())))
        assert [x["candidate"] for x in rows] == ["ENT 15K R1", "ENT CAP R1", "Measured SSD R1"]
        assert rows[0]["price_total"].startswith("1190")
        shared = json.loads((tmp_path / "shared-review.json").read_text())
        assert shared["review"]["decided"] is True and disk not in json.dumps(shared)
        for name in ("V3-shared-review-decided", "V3-shared-review-undecided"):
            _shot(report, shots, name)
        assert (shots / "V3-preview-review.png").stat().st_size > 10_000  # the server's preview PNG
    finally:
        shutil.rmtree(disk, ignore_errors=True)
