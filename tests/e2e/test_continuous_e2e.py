"""Issue 28's end-to-end test: a schedule runs twice, a regression comes in the same series, the
alert reaches a webhook receiver exactly once and `iowatt ci` exits 1 — on the shared stack's real
API, worker, Redis and PostgreSQL.

The shared stacks run no Celery beat: the test sends beat's tasks (`schedule.tick`, `alert.scan`,
`alert.retry_due`) to the stack's worker through its broker, as beat would, and reads the worker's
`task.done` line for each. The schedule is made due by setting its `next_slot_at` in the stack's
database (a cron slot is up to a minute away).

The runs go to a second host of the stack (tests/stack.py's RecordedHost) that answers each lease
with the engine's own document of a randread job (tests/backend/data/upload-engine-randread.json)
reporting 12 s of load: a real 1 s run is flagged short and left out of change detection by design
(docs/adr/0040), and 3 × 12 s of real load would cost the suite ~36 CPU-s. The regression is that
target answering at half the IOPS and bandwidth and twice the latency — what a slower disk behind
the same path reports. The receiver is an HTTP server in this process on 127.0.0.1 (the stack
allows private alert targets, IOWATT_ALERT_PRIVATE_TARGETS)."""

from __future__ import annotations

import copy
import hashlib
import hmac
import json
import shutil
import tempfile
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import psycopg
import pytest

from tests.stack import FINAL, RecordedHost, Stack, recorded_host
from tests.waiting import wait_until

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("stack-a")]

DATA = Path(__file__).parents[1] / "backend" / "data"
ENGINE_DOC: dict[str, Any] = json.loads((DATA / "upload-engine-randread.json").read_text())
RUNTIME_S = 12  # what the recorded document reports (the short-run rule's minimum is 10 s)
SPEC = {
    "jobs": [
        {
            "name": "nightly-rr",
            "rw": "randread",
            "bs_bytes": 4096,
            "size_bytes": 4 << 20,
            "runtime_s": RUNTIME_S,
            "time_based": True,
            "direct": True,
        }
    ]
}


def _doc(iops: float) -> dict[str, Any]:
    """The engine's randread document as `RUNTIME_S` seconds at `iops` (bandwidth and latency
    follow: one 4 KiB I/O in flight)."""
    doc = copy.deepcopy(ENGINE_DOC)
    job = doc["jobs"][0]
    rd = job["read"]
    ios = int(iops * RUNTIME_S)
    lat = 1e9 / iops
    rd.update(
        iops=iops,
        bw_bytes=int(iops * 4096),
        bw=int(iops * 4),
        io_bytes=ios * 4096,
        io_kbytes=ios * 4,
        total_ios=ios,
        runtime=RUNTIME_S * 1000,
    )
    for key in ("clat_ns", "lat_ns"):
        rd[key]["mean"] = lat
    job["job_runtime"] = RUNTIME_S * 1000
    job["iowatt"]["runtime_ns"] = RUNTIME_S * 10**9
    job["iowatt"]["series"] = []
    return doc


class Receiver:
    """A webhook receiver on 127.0.0.1: every POST kept with its headers."""

    def __init__(self) -> None:
        self.requests: list[tuple[dict[str, str], bytes]] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                body = self.rfile.read(int(self.headers["Content-Length"]))
                outer.requests.append((dict(self.headers), body))
                self.send_response(204)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/iowatt"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    r = Receiver()
    yield r
    r.close()


def _db(s: Stack) -> str:
    return s.commands["api"][1]["IOWATT_DATABASE_URL"].replace("postgresql+psycopg://", "postgresql://")


def beat(s: Stack, task: str) -> None:
    """Send one of beat's tasks to the stack's worker and wait for its `task.done` line."""
    from celery import Celery

    app = Celery(broker=s.commands["worker"][1]["IOWATT_REDIS_URL"])
    try:
        task_id = app.send_task(task).id
    finally:
        app.close()
    log = s.logs / "worker.log"

    def done() -> bool:
        for line in log.read_text(errors="replace").splitlines():
            if task_id in line and '"task.done"' in line:
                return True
            if task_id in line and '"task.failed"' in line:
                raise AssertionError(f"{task} failed on the stack's worker: {line}")
        return False

    wait_until(done, timeout=60, interval=0.2, message=lambda: f"{task} ({task_id}) done; {s.tail()}")


def _slot(s: Stack, host: RecordedHost, schedule_id: str, n: int, iops: float) -> str:
    """Make the schedule due, tick, and answer its slot's run at `iops`; the run's id."""
    with psycopg.connect(_db(s), autocommit=True) as conn:
        conn.execute("UPDATE schedules SET next_slot_at = now() WHERE id = %s", (schedule_id,))
    beat(s, "schedule.tick")
    with s.api() as api:
        slots = api.get(f"/schedules/{schedule_id}/slots").json()["items"]
        assert len(slots) == n and slots[0]["status"] == "queued", slots
        runs = api.get("/runs", params={"campaign_id": slots[0]["campaign_id"]}).json()["items"]
        assert len(runs) == 1, runs
    host.answer(runs[0]["id"], _doc(iops))
    run = s.wait(runs[0]["id"], timeout_s=60)
    assert run["status"] == "succeeded", run["error"]
    return str(run["id"])


def _series_of(s: Stack, run_id: str) -> dict[str, Any]:
    with s.api() as api:
        found: dict[str, Any] = wait_until(
            lambda: api.get("/series", params={"run_id": run_id}).json()["items"],
            timeout=60,
            interval=0.3,
            message=lambda: f"run {run_id} joins a series (series.track_run); {s.tail()}",
        )
        return found[0]


def test_a_schedule_a_regression_one_alert_and_iowatt_ci_fails(
    live: Stack, receiver: Receiver, tmp_path: Path
) -> None:
    from iowatt_client.cli import EXIT_FAILED, app
    from typer.testing import CliRunner

    target = tempfile.mkdtemp(prefix="iowatt-continuous-", dir="/dev/shm")
    schedule_id = channel_id = None
    try:
        with recorded_host(live, "nightly-host") as host, live.api() as api:
            host.cli("targets", "add", target)
            host.report_inventory()
            team_id = api.get("/auth/me").json()["teams"][0]["id"]
            r = api.post(
                "/alert-channels",
                json={
                    "team_id": team_id,
                    "name": "receiver",
                    "kind": "webhook",
                    "url": receiver.url,
                    "events": ["regression"],
                },
            )
            assert r.status_code == 201, r.text
            channel_id, secret = r.json()["id"], r.json()["secret"]
            r = api.post(
                "/schedules",
                json={
                    "name": "nightly",
                    "cron": "0 3 * * *",
                    "timezone": "Europe/Berlin",
                    "campaign": {
                        "name": "nightly",
                        "workload": SPEC,
                        "targets": [{"agent_id": host.agent_id, "target_path": target}],
                    },
                },
            )
            assert r.status_code == 201, r.text
            schedule_id = r.json()["id"]

            # the schedule runs twice: the series' history
            first = _slot(live, host, schedule_id, 1, 20_000.0)
            series = _series_of(live, first)
            # two runs of history are enough here (the defaults want five and p < 1e-5)
            r = api.patch(f"/series/{series['id']}", json={"thresholds": {"min_window": 2, "alpha": 0.05}})
            assert r.status_code == 200, r.text
            second = _slot(live, host, schedule_id, 2, 20_400.0)
            assert _series_of(live, second)["id"] == series["id"]
            verdict = api.get(f"/series/{series['id']}/verdict", params={"run": second}).json()
            assert verdict["status"] == "insufficient_history", verdict

            # the regression: `iowatt ci` queues the third run of the series and judges it; the
            # target answers at half the speed
            spec_file = tmp_path / "nightly.json"
            spec_file.write_text(json.dumps(SPEC))
            ci: dict[str, Any] = {}

            def gate() -> None:
                ci["result"] = CliRunner().invoke(
                    app,
                    ["ci", str(spec_file), "--target", target, "--agent", host.agent_id, "--timeout", "120"],
                    env={"IOWATT_URL": live.url, "IOWATT_TOKEN": live.token},
                )

            t = threading.Thread(target=gate)
            t.start()
            try:

                def queued() -> str | None:
                    items = api.get("/runs", params={"agent_id": host.agent_id, "limit": 10}).json()["items"]
                    return next((x["id"] for x in items if x["status"] not in FINAL), None)

                third = wait_until(queued, timeout=60, interval=0.3, message="iowatt ci queues a run")
                host.answer(third, _doc(10_000.0))
            finally:
                t.join(timeout=180)
            res = ci["result"]
            assert res.exit_code == EXIT_FAILED, f"{res.exit_code}\n{res.stdout}\n{res.stderr}"
            assert res.stdout.startswith("## iowatt: a regression") and "REGRESSION" in res.stdout

            # the alert: delivered once, signed, naming every metric that moved
            wait_until(lambda: receiver.requests, timeout=60, interval=0.3, message=lambda: live.tail())
            # beat's periodic scan and retries come again: nothing more is sent
            beat(live, "alert.scan")
            beat(live, "alert.retry_due")
            assert len(receiver.requests) == 1, receiver.requests
            headers, body = receiver.requests[0]
            mac = hmac.new(
                secret.encode(), headers["X-Iowatt-Timestamp"].encode() + b"." + body, hashlib.sha256
            )
            assert headers["X-Iowatt-Signature"] == "sha256=" + mac.hexdigest()
            alert = json.loads(body)["alert"]
            assert alert["kind"] == "regression" and alert["details"]["run_id"] == third
            assert f"/series/{series['id']}?metric=" in alert["link"] and alert["link"].endswith(
                f"&run={third}"
            )
            moved = {m["metric"] for m in alert["details"]["metrics"]}
            assert {"read_iops", "read_bw_bytes", "read_lat_mean_ns"} <= moved, alert
            alerts = api.get("/alerts", params={"team_id": team_id, "kind": "regression"}).json()["items"]
            mine = [a for a in alerts if a["details"]["series_id"] == series["id"]]
            assert len(mine) == 1 and [d["status"] for d in mine[0]["deliveries"]] == ["sent"], mine
            assert mine[0]["deliveries"][0]["attempts"] == 1
    finally:
        with live.api() as api:
            if schedule_id:
                api.delete(f"/schedules/{schedule_id}")
            if channel_id:
                api.delete(f"/alert-channels/{channel_id}")
        shutil.rmtree(target, ignore_errors=True)
