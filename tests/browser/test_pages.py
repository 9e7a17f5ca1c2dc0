"""Every page at 1440×900 and 390×844 in Chromium (issue 25): axe-core clean, a phone's menu, the
shared pages, the dashboard and the review within a phone's width, a dark theme, a modal that keeps
and returns the focus (tests/browser/pages.mjs). Then the review's PDF: its text read back holds
every figure of the review page's figures table exactly as the page writes it (a cost per IOPS of
0.0005 EUR is not "0.00", a cost per GB per IOPS below 10^-6 is not "5.0E-7").
Screenshots P-*.png go to IOWATT_PAGES_SHOTS (default: tmp_path)."""

import io
import json
import os
import re
import shutil
import tempfile
from pathlib import Path
from typing import Any

import httpx
import pytest
from pypdf import PdfReader

from tests.browser.test_browser import _needs, _node, _shot
from tests.stack import Stack

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("stack-a")]

GB = 10**9
JOB = {
    "name": "rand4k",
    "rw": "randread",
    "bs_bytes": 4096,
    "size_bytes": 16 * 1024 * 1024,
    "runtime_s": 1,
    "time_based": True,
    "direct": False,
    # paced: the pages show the runs, not their speed (unpaced, the engine kept a core busy)
    "rate_iops": 2000,
}


def _published(name: str, price: str, gb: int, iops: int) -> dict[str, Any]:
    return {
        "name": name,
        "device": {
            "model": name,
            "capacity_bytes": gb * GB,
            "unit_price": price,
            "afr": "0.0044",
            "media": "ssd",
        },
        "count": 2,
        "protection": "raid1",
        "performance": {"source": "published", "metric": "iops", "value": iops, "reference": "datasheet"},
        "power": {"idle_w": "1.5", "load_w": "6.2", "per": "drive", "reference": "datasheet"},
    }


def _pdf_text(pdf: bytes) -> str:
    pages = PdfReader(io.BytesIO(pdf)).pages
    return " ".join(" ".join((p.extract_text() or "").split()) for p in pages)


def test_pages_on_a_desktop_and_a_phone(live: Stack, tmp_path: Path) -> None:
    _needs()
    disk = tempfile.mkdtemp(prefix="iowatt-pages-", dir="/var/tmp")
    channel = ""
    try:
        runs = [live.queue(disk, workload={"jobs": [JOB]}, name=f"pages {k}") for k in (1, 2)]
        for rid in runs:
            assert live.wait(rid)["status"] == "succeeded"
        with live.api() as api:
            team = api.get("/auth/me").json()["teams"][0]
            r = api.post(
                "/reviews",
                json={
                    "team_id": team["id"],
                    "name": "Flash for the build farm",
                    "question": "Which pair of SSDs?",
                    "currency": "EUR",
                    "horizon_years": 5,
                    "tariff_per_kwh": "0.2814",
                    "grid_g_per_kwh": 380,
                },
            )
            assert r.status_code == 201, r.text
            review = r.json()["id"]
            # 20 EUR / 40,000 IOPS: a cost per IOPS of 0.0005 EUR; 40 EUR / 2,000 GB / 40,000 IOPS =
            # 5E-7 per usable GB per IOPS (a Decimal's str() writes it "5.0E-7")
            for body in (
                _published("Cheap fast SSD", "20", 2000, 40_000),
                _published("Big SSD", "389.90", 7680, 95_000),
            ):
                c = api.post(f"/reviews/{review}/candidates", json=body)
                assert c.status_code == 201, c.text
            figures = api.get(f"/reviews/{review}").json()["candidates"][0]
            assert figures["cost_per_iops_single"] == "0.0005"
            assert "E-7" in figures["cost_per_gb_usable_per_iops"], figures["cost_per_gb_usable_per_iops"]
            paths = []
            for kind, target in (
                ("comparison", {"runs": runs}),
                ("review", review),
            ):
                s = api.post("/share-links", json={"kind": kind, "target": target, "title": ""})
                assert s.status_code == 201, s.text
                paths.append(httpx.URL(s.json()["url"]).path)
            pdf = api.get(f"/reviews/{review}/pdf", timeout=120)
            assert pdf.status_code == 200, pdf.text
            # an alert channel for the Alerts page (an IP literal: nothing resolves names here; no
            # run fails in this test, so nothing is sent to it)
            ch = api.post(
                "/alert-channels",
                json={
                    "team_id": team["id"],
                    "name": "storage team chat",
                    "kind": "webhook",
                    "url": "https://1.1.1.1/hooks/iowatt",
                    "events": ["regression", "run_failed", "agent_offline"],
                    "agent_offline_min": 30,
                },
            )
            assert ch.status_code == 201, ch.text
            channel = ch.json()["id"]
        report = _node(
            "tests/browser/pages.mjs",
            live,
            tmp_path,
            IOWATT_PAGES_RUNS=",".join(runs),
            IOWATT_PAGES_REVIEW=review,
            IOWATT_PAGES_SHARED=",".join(paths),
        )
        assert "pages: " in report and " 0 failed" in report, report

        # every figure of the page's table, as the page writes it, is in the PDF's text
        text = _pdf_text(pdf.content)
        page = json.loads((tmp_path / "review-figures.json").read_text())
        missing = [(row["key"], v) for row in page for v in row["values"] if " ".join(v.split()) not in text]
        assert not missing, (missing, text[:3000])
        cost = next(r for r in page if r["key"] == "figure-cost_per_iops_single")["values"]
        assert cost[0] == "0.0005 EUR"
        fine = next(r for r in page if r["key"] == "figure-cost_per_gb_usable_per_iops")["values"]
        assert fine[0] == "0.00000050 EUR"
        assert "E-7" not in text

        shots = Path(os.environ.get("IOWATT_PAGES_SHOTS") or tmp_path)
        shots.mkdir(parents=True, exist_ok=True)
        names = re.findall(r"^shot (P-[\w-]+): ", report, flags=re.M)
        assert len(names) >= 40, report  # 19 pages at two widths, the shared pages, dark, login
        for name in names:
            _shot(report, tmp_path, name, 5_000)
            if shots != tmp_path:
                shutil.copy(tmp_path / f"{name}.png", shots / f"{name}.png")
    finally:
        shutil.rmtree(disk, ignore_errors=True)
        if channel:  # the shared stack as it was
            with live.api() as api:
                assert api.delete(f"/alert-channels/{channel}").status_code == 204
