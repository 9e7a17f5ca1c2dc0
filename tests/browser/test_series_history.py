"""A series' history page in Chromium at 1440×900 with 10 and 1,000 points. A real run on the
shared stack joins its series through the worker (the result stored, `series.track_run` queued
after commit); the two series drawn are written straight into the stack's database
(series_seed.py: noise, a drop, runs left out, a kernel change, a change found), then
tests/browser/series.mjs checks the chart, its marks and a point's links and times the page. In the
same session: Settings → Alerts with seeded alerts (a regression of the 1,000-run series, a given-up
and a retried delivery), a webhook channel added from the form, and the campaign form's matrix
plan (a 3 × 2 sweep: its count and measuring time before anything is queued).
IOWATT_SERIES_SHOTS=DIR keeps a copy of the screenshots (docs/screenshots)."""

import os
import re
import shutil
import tempfile
import time
import uuid
from pathlib import Path

import psycopg
import pytest

from tests.browser.series_seed import seed_series
from tests.browser.test_browser import _needs, _node, _shot
from tests.stack import Stack

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("stack-b")]

SMALL = {
    "jobs": [
        {
            "name": "r",
            "rw": "randread",
            "bs_bytes": 4096,
            "size_bytes": 1 << 20,
            "runtime_s": 1,
            "direct": False,
        }
    ]
}


def test_series_history_with_10_and_1000_points_in_chromium(live: Stack, tmp_path: Path) -> None:
    _needs()
    target = tempfile.mkdtemp(prefix="iowatt-series-", dir="/dev/shm")
    alerts: list[str] = []
    db = live.commands["api"][1]["IOWATT_DATABASE_URL"].replace("postgresql+psycopg://", "postgresql://")
    with live.api() as api:
        campaigns = api.get("/campaigns").json()["total"]
    try:
        rid = live.queue(target, workload=SMALL, name="series: a real run")
        assert live.wait(rid)["status"] == "succeeded"
        with live.api() as api:
            deadline = time.monotonic() + 30
            while not (found := api.get("/series", params={"run_id": rid}).json())["total"]:
                assert time.monotonic() < deadline, "the run joined no series (series.track_run)"
                time.sleep(0.5)
            run = api.get(f"/runs/{rid}").json()
            verdict = api.get(f"/series/{found['items'][0]['id']}/verdict", params={"run": rid}).json()
            assert verdict["status"] in ("excluded", "insufficient_history"), verdict  # a 1 s run: short
        with psycopg.connect(db, autocommit=True) as conn:
            ids = {
                n: seed_series(
                    conn,
                    team_id=run["team_id"],
                    agent_id=run["agent_id"],
                    device_id=run["device_id"],
                    n=n,
                    name=f"series: {n} synthetic runs",
                )
                for n in (10, 1000)
            }
            step = conn.execute("SELECT run_id FROM series_detections WHERE series_id = %s", (ids[1000],))
            point = f"{ids[1000]}?metric=read_iops&job=0&run={step.fetchone()[0]}"  # type: ignore[index]
            alerts = _seed_alerts(live, conn, run["team_id"], point)
        report = _node(
            "tests/browser/series.mjs",
            live,
            tmp_path,
            IOWATT_SERIES_SETS=";".join(f"{n}:{sid}" for n, sid in ids.items()),
            IOWATT_ALERT_POINT=point,
        )
        assert set(re.findall(r"timing (\d+) runs: \d+ ms", report)) == {"10", "1000"}, report
        print(report)
        names = [
            *(f"series-{n}" for n in ids),
            "alerts",
            "alerts-page-3",
            "alerts-one-kind",
            "campaign-plan",
            "campaign-target-set",
        ]
        for name in names:
            _shot(report, tmp_path, name)
        if keep := os.environ.get("IOWATT_SERIES_SHOTS"):
            for name in names:
                shutil.copy(tmp_path / f"{name}.png", Path(keep) / f"{name}.png")
        with live.api() as api:  # nothing was queued from the campaign form
            assert api.get("/campaigns").json()["total"] == campaigns
    finally:
        shutil.rmtree(target, ignore_errors=True)
        with live.api() as api:
            for c in api.get("/alert-channels").json()["items"]:
                if c["name"] in ("lab webhook", "storage team webhook"):
                    api.delete(f"/alert-channels/{c['id']}")
        if alerts:
            with psycopg.connect(db, autocommit=True) as conn:
                conn.execute("DELETE FROM alerts WHERE id = ANY(%s)", (alerts,))


BULK_ALERTS = 120  # older failed runs: the Alerts page in pages (50 each) and filtered by kind


def _seed_alerts(live: Stack, conn: psycopg.Connection, team_id: str, point: str) -> list[str]:
    """A webhook channel (through the API) and three alerts to it written into the database: a
    regression of the series (`point`: its id and query, as the server links it) sent, a failed
    run given up after 8 attempts, an agent offline being retried; and BULK_ALERTS older failed-run
    alerts (a day and more ago). Their ids."""
    with live.api() as api:
        r = api.post(
            "/alert-channels",
            json={
                "team_id": team_id,
                "name": "lab webhook",
                "kind": "webhook",
                "url": "http://127.0.0.1:9/iowatt-seed",
                "events": ["regression", "run_failed", "agent_offline"],
            },
        )
        assert r.status_code == 201, r.text
        channel = r.json()["id"]
    rows = [
        ("regression", "Regression in series: 1000 synthetic runs: read_iops -12.0 %",
         "read_iops (job 0): 20,000 -> 17,600 IOPS, -12.0 % (95 %: -12.6 ... -11.4 %), p 1e-9; "
         "1 run left out (cache_resident)", f"{live.url}/series/{point}", "sent", 1, None),
        ("run_failed", "Run failed: nightly 7 on /srv/bench",
         "iowatt-engine: /srv/bench/iowatt.0: No space left on device", f"{live.url}/runs/{uuid.uuid4()}",
         "failed", 8, "HTTP 503 from the receiver"),
        ("agent_offline", "Agent offline: lab-host-2 for 12 min", "no heartbeat since 12 min ago",
         f"{live.url}/agents", "pending", 2, "connection refused"),
    ]  # fmt: skip
    ids = []
    for i, (kind, title, text, link, state, attempts, error) in enumerate(rows):
        aid = str(uuid.uuid4())
        conn.execute(
            "INSERT INTO alerts (id, team_id, kind, key, title, text, link, details, created_at) "
            "VALUES (%s, %s, %s, %s, %s, %s, %s, '{}', now() - %s * interval '7 min')",
            (aid, team_id, kind, f"browser-{aid}", title, text, link, i),
        )
        conn.execute(
            "INSERT INTO alert_deliveries (id, alert_id, channel_id, state, attempts, next_attempt_at, "
            "last_error, sent_at, created_at) VALUES (gen_random_uuid(), %s, %s, %s, %s, "
            "now() + interval '1 hour', %s, CASE WHEN %s = 'sent' THEN now() END, now())",
            (aid, channel, state, attempts, error, state),
        )
        ids.append(aid)
    bulk = conn.execute(
        "INSERT INTO alerts (id, team_id, kind, key, title, text, link, details, created_at) "
        "SELECT gen_random_uuid(), %s, 'run_failed', 'browser-bulk-' || n, 'Older failed run ' || n, "
        "'seeded: an older failure', %s, '{}', now() - interval '1 day' - n * interval '1 min' "
        "FROM generate_series(1, %s) AS n RETURNING id",
        (team_id, f"{live.url}/runs", BULK_ALERTS),
    )
    return ids + [str(r[0]) for r in bulk.fetchall()]
