"""Procurement reviews in Chromium (issue 16): tests/browser/reviews.mjs builds a small review in
the UI (two candidates with published figures, one linked to a real run), decides it and
downloads the PDF and the CSV; here the PDF's text must hold the ranking and the formulas, and
the CSV one row per candidate with the figures the API computed."""

import csv
import io
import os
import re
import shutil
import tempfile
from pathlib import Path
from typing import Any

import pytest
from pypdf import PdfReader

from tests.browser.test_browser import CHROMIUM, PLAYWRIGHT, _node, _shot
from tests.conftest import REPO
from tests.stack import SHORT_WORKLOAD, Stack

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("stack-b")]


def _candidate(i: int) -> dict[str, Any]:
    """Nine configurations of seed 001's drives, published rates, so the ranking has work to do."""
    models = [("ENT 15K", 600, "595", 1250), ("ENT 10K", 1800, "875", 900), ("ENT CAP", 2000, "399", 520)]
    protections = [("raid1", 2), ("raid10", 4), ("raid5", 4)]
    model, gb, price, rps = models[i % 3]
    protection, count = protections[i // 3]
    return {
        "name": f"{model} {protection.upper()} ×{count}",
        "device": {
            "model": model,
            "capacity_bytes": gb * 10**9,
            "unit_price": price,
            "afr": "0.0044",
            "media": "hdd",
        },
        "count": count,
        "protection": protection,
        "performance": {
            "source": "published",
            "metric": "rps",
            "value": rps * count // 2,
            "reference": "seed 001",
        },
        "power": {"idle_w": 4 + i % 3, "load_w": 8 + i % 3, "per": "drive", "reference": "datasheet"},
    }


def test_review_built_decided_and_exported_in_chromium(live: Stack, tmp_path: Path) -> None:
    dist = Path(os.environ.get("IOWATT_FRONTEND_DIST") or Path(REPO) / "frontend" / "dist")
    needs = (
        (CHROMIUM, "apt-get install chromium-headless-shell"),
        (PLAYWRIGHT, "make deps-ui"),
        (dist / "index.html", "make ui"),
    )
    for need, fix in needs:
        assert Path(need).exists(), f"{need} is missing: {fix}"
    disk = tempfile.mkdtemp(prefix="iowatt-review-", dir="/var/tmp")
    try:
        run_id = live.queue(disk, SHORT_WORKLOAD, name="review: measured disk")
        assert live.wait(run_id)["status"] == "succeeded"
        with live.api() as api:
            team = api.get("/auth/me").json()["teams"][0]["id"]
            r = api.post(
                "/reviews",
                json={
                    "team_id": team,
                    "name": "Seed 001: nine configurations",
                    "question": "Which drives and RAID level for the departmental file server?",
                    "currency": "USD",
                    "horizon_years": 5,
                    "duty_cycle": 0.4,
                    "tariff_per_kwh": "0.18",
                    "grid_g_per_kwh": 350,
                    "weights": {"tco": 1, "performance": 1, "co2e_lifetime": 0.5, "cost_per_gb_usable": 1},
                },
            )
            assert r.status_code == 201, r.text
            many = r.json()["id"]
            for i in range(9):
                c = api.post(f"/reviews/{many}/candidates", json=_candidate(i))
                assert c.status_code == 201, c.text
            # reviews have no delete: another test's (the shared review's) may be listed too
            listed = api.get("/reviews", params={"limit": 100}).json()["items"]
        report = _node(
            "tests/browser/reviews.mjs",
            live,
            tmp_path,
            IOWATT_REVIEW_RUN=run_id,
            IOWATT_REVIEW_MANY=many,
            IOWATT_REVIEW_BEFORE=str(len(listed)),
        )
        assert "reviews: " in report

        pages = PdfReader(tmp_path / "review.pdf").pages
        text = " ".join("".join(p.extract_text() or "" for p in pages).split())
        assert "Ranking" in text
        for name in ("ENT 15K R1", "ENT CAP R1", "Measured disk"):
            assert name in text, name
        # the chosen candidate and the methodology appendix's formulas
        assert "Fastest per drive" in text
        for formula in ("set price = unit price × count", "raw = count × drive capacity", "TCO = set price"):
            assert formula in text, formula

        rows = list(csv.DictReader(io.StringIO((tmp_path / "review.csv").read_text())))
        assert [r["candidate"] for r in rows] == ["ENT 15K R1", "ENT CAP R1", "Measured disk"]
        mirror = rows[0]
        assert (mirror["drives"], mirror["protection"], mirror["price_total"]) == ("2", "raid1", "1190.00")
        assert int(mirror["usable_bytes"]) * 2 == int(mirror["raw_bytes"]) == 1_200_000_000_000
        assert mirror["cost_per_gb_usable"] == "1.9833"  # 1,190 / 600 GB: the mirror counted
        assert rows[2]["performance_source"] == "run"
        assert sorted(int(r["rank"]) for r in rows) == [1, 2, 3]

        shots = Path(os.environ.get("IOWATT_REVIEW_SHOTS") or tmp_path)
        for shot in ("V2-list-2", "V2-list-10", "V2-review-2", "V2-review-8", "V2-decided", "V2-sensitivity"):
            png = tmp_path / f"{shot}.png"
            _shot(report, tmp_path, shot)
            if shots != tmp_path:
                shutil.copy(png, shots / png.name)
        assert re.search(r"reviews: \d+ passed, 0 failed", report)
    finally:
        shutil.rmtree(disk, ignore_errors=True)
