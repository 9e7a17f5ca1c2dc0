"""Scenarios 3, 4, 5, 6 and 8 of issue 11: the API killed during uploads, Redis down, the worker
killed around dispatch, PostgreSQL restarted, duplicate and concurrent re-uploads. The rig runs the
Helm chart's topology (tests/faults/conftest.py): "the API" is every API process behind Caddy,
"the worker" both Celery workers."""

from __future__ import annotations

import json
import os
import re
import signal
import threading
import time
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest

from bench.load.topology import CADDYFILE
from tests.faults.conftest import (
    GROUP,
    Rig,
    api_sockets,
    ask_each_process,
    ask_process,
    measured_samples,
    on_process,
    received_by,
    report,
    sql,
    workload,
)
from tests.faults.conftest import fake_agent as _fake_agent
from tests.faults.proxy import Conn
from tests.stack import FINAL, TLS, _wait_http, http
from tests.waiting import wait_until

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group(GROUP)]


@pytest.fixture(autouse=True)
def _all_up(r: Rig) -> Iterator[None]:
    """Each scenario starts from a whole stack (a failed one may have left a part down) and ends
    with nothing stuck."""
    r.all_up()
    yield
    r.idle(60)


def _stored_once(r: Rig, run_id: str) -> dict[str, Any]:
    run = r.final(run_id, 90)
    assert run["status"] == "succeeded", run["error"]
    assert sql(r, "SELECT count(*) FROM run_results WHERE run_id = %s", uuid.UUID(run_id)) == [(1,)]
    assert sql(r, "SELECT count(*) FROM result_jobs WHERE run_id = %s", uuid.UUID(run_id)) == [(1,)]
    # 60 s: a worker started again (scenarios 5) runs the run's series task first, whose first call
    # imports numpy and scipy (~2 CPU-s): at load 20 that alone took 30 s once
    energy = r.energy_done(run_id, 60)
    assert energy["status"] == "ok", energy
    assert energy["samples"] == measured_samples(r, run_id), "power samples stored once each"
    assert not r.rejected() and not r.leftovers(run_id)
    return energy


def _is_result_upload(chunk: bytes) -> bool:
    line = chunk.split(b"\r\n", 1)[0]
    return line.startswith(b"PUT ") and line.split(b" ")[1].endswith(b"/result")


@pytest.mark.parametrize(
    "moment", ["request-held", "request-passed-0ms", "request-passed-30ms", "response-held"]
)
def test_3_api_sigkill_during_the_upload_stores_it_once_with_energy(r: Rig, moment: str) -> None:
    """Every API process SIGKILLed (the platform down: Caddy answers nothing but retries a refused
    connection for up to 10 s, then 502) at a moment of the result upload, then started again."""
    killed = threading.Event()

    def kill_api() -> None:
        killed.set()
        r.s.kill("api")

    def hook(direction: str, chunk: bytes, conn: Conn) -> None:
        if killed.is_set():
            return
        if direction == "request" and _is_result_upload(chunk):
            conn.marks.add("upload")
            if moment == "request-held":
                kill_api()  # the API never sees the upload
            elif moment.startswith("request-passed"):
                delay = int(moment.rsplit("-", 1)[1].removesuffix("ms")) / 1000
                killed.set()
                threading.Timer(delay, lambda: r.s.kill("api")).start()
        elif direction == "response" and "upload" in conn.marks and moment == "response-held":
            kill_api()  # committed, but the agent never hears so

    assert r.proxy is not None
    r.proxy.hook = hook
    run_id = r.queue(runtime_s=1)
    r.until("the API killed during the upload", killed.is_set, 60, every_s=0.05)
    t0 = time.monotonic()
    r.until(
        "every API process gone",
        lambda: not any(r.s.alive(n) for n in r.s.members("api")),
        10,
        every_s=0.05,
    )
    r.s.start("api")
    _wait_http(f"{r.s.url}/api/v1/health")
    api_back = time.monotonic() - t0
    statuses = r.trace(run_id, {"succeeded"}, 90)
    stored = time.monotonic() - t0
    energy = _stored_once(r, run_id)
    report(
        f"3 API SIGKILL at {moment}",
        api_back_s=api_back,
        stored_after_kill_s=stored,
        energy_after_kill_s=time.monotonic() - t0,
        samples=energy["samples"],
        statuses=statuses,
    )
    # A detour through "failed" (the agent's idle heartbeat reaching the new API before its spooled
    # result) is the bug scenario 7 pins down (xfail there); here the outcome: stored once.


@pytest.mark.parametrize("moment", ["request-complete", "response-held"])
def test_3_one_api_process_sigkilled_mid_upload_the_others_serve_and_nothing_is_lost(
    r: Rig, moment: str
) -> None:
    """One of the API processes behind Caddy dies alone (a segfault, the OOM killer): the one the
    result upload reached is SIGKILLed as soon as the request's last byte reached it (the kernel's
    byte counts of its connections, `api_sockets`: Caddy chose it), while it works on it; or once
    it answered, the answer held back so the agent never hears it. Caddy and the other process
    keep serving: the agent's retried upload is stored once, with its energy, while the killed
    process is still down; started again (as an orchestrator restarts a pod), it serves."""
    names = r.s.members("api")
    pids = {n: r.s.procs[n].pid for n in names}
    # the state this test starts from: every process serving
    r.until(
        "every API process answers", lambda: set(ask_each_process(r, "/api/v1/health").values()) == {200}, 60
    )
    victim: list[str] = []
    answers: list[bytes] = []  # the status line of the first answer to the upload the agent got
    # the upload's connection, the API's connections at its first byte, its body's length, bytes left
    upload: dict[str, Any] = {}
    run: list[str] = []  # this test's run (a result an earlier scenario left spooled is not its upload)
    killed = threading.Event()
    found_s: list[float] = []  # how long finding the upload's process took

    def kill(name: str) -> None:
        killed.set()
        os.kill(pids[name], signal.SIGKILL)

    def receiver(nbytes: int) -> str:
        """The API process Caddy sent the upload to: `nbytes` of it reached one of its connections."""
        t0 = time.monotonic()
        name = wait_until(lambda: received_by(r, upload["before"], nbytes), timeout=10, interval=0.002)
        found_s.append(time.monotonic() - t0)
        return str(name)

    def hook(direction: str, chunk: bytes, conn: Conn) -> None:
        ours = upload.get("conn") is conn
        if direction == "request" and _is_result_upload(chunk):
            # not this run's, or the agent's retry after an unanswered attempt: not the subject
            if upload or not run or run[0].encode() not in chunk.split(b"\r\n", 1)[0]:
                return
            head, _, body = chunk.partition(b"\r\n\r\n")
            length = re.search(rb"(?im)^content-length:\s*(\d+)", head)
            assert length, head  # the agent sends its JSON with a length
            upload.update(before=api_sockets(r), length=int(length[1]), left=int(length[1]) - len(body))
            upload["conn"] = conn
            passed = 0  # bytes of the body forwarded before this chunk
        elif direction == "request" and ours and upload["left"] > 0:
            passed = upload["length"] - upload["left"]
            upload["left"] -= len(chunk)
        elif direction == "response" and ours and not answers:
            answers.append(chunk.split(b"\r\n", 1)[0])
            if moment == "response-held":
                victim.append(receiver(upload["length"]))
                kill(victim[0])
                raise ConnectionResetError("the answer dies with its process")  # never forwarded
            return
        else:
            return
        if moment == "request-complete" and upload["left"] <= 0:
            # this chunk is the request's last. The process that got the body's bytes before it
            # is found while it is held (Caddy streams the body), then killed 10 ms after it
            # passed; a body in one chunk (or too little before it to tell from a heartbeat):
            # found once it arrived, then killed
            if passed >= 4096:
                victim.append(receiver(passed))
                threading.Timer(0.01, kill, (victim[0],)).start()
            else:

                def find_and_kill() -> None:
                    victim.append(receiver(upload["length"]))
                    kill(victim[0])

                threading.Thread(target=find_and_kill, daemon=True).start()

    assert r.proxy is not None
    r.proxy.hook = hook
    run_id = r.queue(runtime_s=1)
    run.append(run_id)  # its upload comes after its 1 s of load
    r.until("an API process killed during the upload", killed.is_set, 60, every_s=0.05)
    t0 = time.monotonic()
    # the other process answers through Caddy meanwhile: the API as a whole never went away
    health = httpx.get(f"{r.s.url}/api/v1/health", timeout=30, verify=TLS)
    answered = time.monotonic() - t0
    r.until("the killed process gone", lambda: not r.s.alive(victim[0]), 10, every_s=0.05)
    statuses = r.trace(run_id, {"succeeded"}, 90)
    stored = time.monotonic() - t0
    energy = _stored_once(r, run_id)
    others = [n for n in names if n != victim[0]]
    survived = all(r.s.alive(n) and r.s.procs[n].pid == pids[n] for n in others)
    down_while_stored = not r.s.alive(victim[0])
    r.s.start(victim[0])
    r.until(
        "the restarted process answers from the database",
        lambda: ask_process(r, victim[0], "/api/v1/runs?limit=1") == 200,
        90,
    )
    serving = time.monotonic() - t0
    report(
        f"3b one API process SIGKILLed at {moment}",
        victim=victim[0],
        found_in_s=found_s[0] if found_s else -1.0,
        first_answer=answers[0].decode(errors="replace") if answers else "",
        other_answered_s=answered,
        stored_after_kill_s=stored,
        restarted_serves_after_kill_s=serving,
        samples=energy["samples"],
        statuses=statuses,
    )
    assert health.status_code == 200, health.text
    assert victim[0] in names, victim
    assert survived and down_while_stored, "stored through the other process, the killed one still down"
    if moment == "request-complete":
        # the process died with the request: Caddy answered for it (a 2xx: it answered before the kill)
        assert answers and b" 502 " in answers[0], answers
    else:
        assert answers and answers[0].split(b" ")[1].startswith(b"2"), answers
    assert ask_each_process(r, "/api/v1/runs?limit=1") == dict.fromkeys(names, 200)


PROBE: dict[str, tuple[str, str]] = {}


def _probe_agent(r: Rig) -> tuple[str, str]:
    """A second enrolled host that only long-polls (no runs): (agent id, token)."""
    if "agent" not in PROBE:
        target = r.s.workdir / "probe-target"
        target.mkdir()
        PROBE["agent"] = _fake_agent(r, target, "probe")
    return PROBE["agent"]


def _superseded_across(r: Rig, waiting: str, newer: str) -> float:
    """A long-poll waiting in API process `waiting` ends when a newer poll of the same agent
    starts in process `newer`: only Redis carries that announcement (ADR 0016), so this proves
    `waiting`'s subscription works. Seconds from the newer poll to the older one's end."""
    agent_id, token = _probe_agent(r)
    headers = {"Authorization": f"Bearer {token}"}
    ended: dict[str, Any] = {}

    def older(c: Any) -> None:
        c.request("POST", f"/api/v1/agents/{agent_id}/lease?wait_s=25", headers=headers)
        resp = c.getresponse()
        ended.update(status=resp.status, body=resp.read(), at=time.monotonic())

    with on_process(r, waiting) as a:
        t = threading.Thread(target=older, args=(a,), daemon=True)
        t.start()
        time.sleep(4)  # longer than a wait cut short while the subscription is down (2 s)
        assert "at" not in ended, f"the poll in {waiting} ended early (its subscription is down): {ended}"
        with on_process(r, newer) as b:
            t0 = time.monotonic()
            b.request("POST", f"/api/v1/agents/{agent_id}/lease?wait_s=0", headers=headers)
            resp = b.getresponse()
            assert resp.status == 200, resp.read()
            resp.read()
            t.join(30)
    assert ended.get("status") == 200 and json.loads(ended["body"])["lease"] is None, ended
    took = float(ended["at"] - t0)
    assert took < 15, f"the older poll ended {took:.1f} s after the newer one began (deadline 25 s)"
    return took


def _both_processes_hear_redis(r: Rig) -> str:
    """Every API process's subscription is back (each supersedes across to the other): how many
    probes it took and how long the older poll waited for the newer one's announcement."""
    first, second = r.s.members("api")[:2]
    tries: list[str] = []

    def both() -> bool:
        try:
            took = [_superseded_across(r, first, second), _superseded_across(r, second, first)]
        except Exception as e:  # not yet: noted, and the probe is repeated
            tries.append(f"{type(e).__name__}: {str(e).splitlines()[0][:80] if str(e) else ''}")
            raise
        tries.append(f"ended {took[0]:.2f} s and {took[1]:.2f} s after the newer poll")
        return True

    r.until("both API processes' Redis subscriptions back", both, 120, every_s=0.5)
    return f"{len(tries)} probe(s), last {tries[-1]}" + (f", first {tries[0]}" if len(tries) > 1 else "")


def test_4_redis_down_at_post_runs_is_503_with_nothing_or_201_and_dispatched_later(r: Rig) -> None:
    _probe_agent(r)  # enrolled beforehand
    before = len(r.runs())
    r.redis.stop()
    try:
        created = r.create(runtime_s=1)
        assert created.status_code in (201, 503), (created.status_code, created.text)
        assert created.headers["content-type"].startswith("application/json"), created.text
    finally:
        t0 = time.monotonic()
        r.redis.start()
    if created.status_code == 503:
        assert len(r.runs()) == before, "a 503 created nothing"
        report("4 Redis down at POST /runs", status=503, both_processes_hear_s=_both_processes_hear_redis(r))
        return
    run_id = created.json()["id"]
    r.status_in(run_id, {"running", *FINAL}, 60)
    dispatched = time.monotonic() - t0
    _stored_once(r, run_id)
    hear = _both_processes_hear_redis(r)
    report(
        "4 Redis down at POST /runs",
        status=201,
        started_after_redis_back_s=dispatched,
        both_processes_hear_s=hear,
    )
    assert len(r.runs()) == before + 1
    assert dispatched <= 10, f"dispatched {dispatched:.1f} s after Redis returned"


def test_4_redis_down_during_the_run_and_upload_loses_nothing(r: Rig) -> None:
    run_id = r.queue(runtime_s=2)
    r.status_in(run_id, {"running"}, 30)
    r.redis.stop()
    try:
        run = r.final(run_id, 60)  # the upload needs no Redis: stored, its energy task waits
        assert run["status"] == "succeeded", run["error"]
    finally:
        r.redis.start()
    t0 = time.monotonic()
    energy = _stored_once(r, run_id)
    energy_s = time.monotonic() - t0
    report(
        "4 Redis down during run+upload",
        energy_after_redis_back_s=energy_s,
        samples=energy["samples"],
        both_processes_hear_s=_both_processes_hear_redis(r),
    )


@pytest.mark.parametrize("when", ["before", "right-after"])
def test_5_worker_sigkill_around_dispatch_dispatches_within_10s_of_its_return(r: Rig, when: str) -> None:
    """Both workers SIGKILLed (no worker at all: the one left would take the task, as the load
    smoke test checks), back 2 s later."""
    if when == "before":
        r.s.kill("worker")
        run_id = r.queue(runtime_s=1)
    else:
        run_id = r.queue(runtime_s=1)
        r.s.kill("worker")
    time.sleep(2)  # the behaviour under test: no worker for a while, the run's task waits in Redis
    marks = r.worker_logs()
    started = time.monotonic()
    r.s.start("worker")  # both
    # the first one ready may take the task
    r.until("a worker ready", lambda: b" ready." in r.logged_since(marks), 60, every_s=0.05)
    t0 = time.monotonic()
    r.status_in(run_id, {"running", *FINAL}, 60)
    dispatched = time.monotonic() - t0
    _stored_once(r, run_id)
    report(
        f"5 worker SIGKILL {when} dispatch",
        worker_boot_s=t0 - started,
        started_after_worker_ready_s=dispatched,
    )
    assert dispatched <= 10, f"dispatched {dispatched:.1f} s after the worker returned"


class _HeldReceiver:
    """A webhook receiver on 127.0.0.1 that holds its first answer until `release` is set (the
    sender is killed meanwhile); later requests are answered 204 at once. Every request's
    X-Iowatt-Delivery is kept, as a receiver that deduplicates on it keeps them."""

    def __init__(self) -> None:
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        self.deliveries: list[str] = []
        self.release = threading.Event()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                self.rfile.read(int(self.headers["Content-Length"]))
                outer.deliveries.append(self.headers["X-Iowatt-Delivery"])
                if len(outer.deliveries) == 1:
                    outer.release.wait(60)
                try:
                    self.send_response(204)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                except OSError:
                    pass  # the sender is gone

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.release.set()
        self.server.shutdown()
        self.server.server_close()


def test_5_worker_sigkill_mid_alert_delivery_delivers_it_once_after_restart(r: Rig) -> None:
    """Issue 28: the worker SIGKILLed while the receiver holds its answer to an alert's webhook
    (sent, not yet recorded). The delivery's row lock dies with the worker's connection; beat's
    `alert.retry_due` sends it again once the worker is back, with the same X-Iowatt-Delivery: a
    receiver that deduplicates on it (docs/continuous.md) acts once. Nothing is lost, the log says
    sent after one recorded attempt, and later retries send nothing more."""
    rec = _HeldReceiver()
    channel = ""
    try:
        with r.api() as api:
            team = api.get("/auth/me").json()["teams"][0]["id"]
            c = api.post(
                "/alert-channels",
                json={
                    "team_id": team,
                    "name": "held",
                    "kind": "webhook",
                    "url": rec.url,
                    "events": ["run_failed"],
                },
            )
            assert c.status_code == 201, c.text
            channel = c.json()["id"]
            t = api.post(f"/alert-channels/{channel}/test")
            assert t.status_code == 202, t.text
            delivery = t.json()["delivery_id"]
        r.until("the worker sends the alert", lambda: rec.deliveries, 30, every_s=0.05)
        r.s.kill("worker")  # both, the sender among them: the receiver has the request, no answer
        rec.release.set()
        assert sql(r, "SELECT state, attempts FROM alert_deliveries WHERE id = %s", uuid.UUID(delivery)) == [
            ("pending", 0)
        ]
        started = time.monotonic()
        r.s.start("worker")
        r.until(
            "the delivery sent after the restart",
            lambda: sql(r, "SELECT state FROM alert_deliveries WHERE id = %s", uuid.UUID(delivery))
            == [("sent",)],
            60,
        )
        resent = time.monotonic() - started
        marks = r.worker_logs()

        def retry_ran() -> bool:
            return any(
                b'"task.done"' in ln and b'"alert.retry_due"' in ln
                for ln in r.logged_since(marks).splitlines()
            )

        r.until("beat's next alert.retry_due done", retry_ran, 40)
        report(
            "5 worker SIGKILL mid alert delivery", sent_after_restart_s=resent, requests=len(rec.deliveries)
        )
        assert set(rec.deliveries) == {delivery}, rec.deliveries  # one delivery: deduplicated, once
        assert len(rec.deliveries) == 2, rec.deliveries  # the one held when the worker died, and again
        assert sql(
            r, "SELECT state, attempts, last_error FROM alert_deliveries WHERE id = %s", uuid.UUID(delivery)
        ) == [("sent", 1, None)]
    finally:
        if channel:
            with r.api() as api:
                api.delete(f"/alert-channels/{channel}")
        rec.close()


def test_6_postgres_fast_restart_during_runs_uploads_and_dispatch(r: Rig) -> None:
    marks = r.worker_logs()
    runs = [r.queue(runtime_s=1) for _ in range(3)]
    r.status_in(runs[0], {"running"}, 30)
    took = [r.pg.restart()]  # a run running, two queued waiting for dispatch
    r.until("the first run's upload", lambda: r.s.status_of(runs[0]) in FINAL, 30, every_s=0.1)
    took.append(r.pg.restart())  # around the first upload's energy task and the next dispatch
    t0 = time.monotonic()
    for run_id in runs:
        _stored_once(r, run_id)
    events = r.logged_since(marks).decode(errors="replace")
    report(
        "6 PostgreSQL fast restart x2",
        restart_s=max(took),
        all_done_after_s=time.monotonic() - t0,
        tasks_retried=events.count('"task.transient_error"'),
        tasks_failed=events.count('"task.failed"'),
    )
    assert all(r.s.alive(n) for n in ("api", "caddy", "worker", "beat", "agent"))
    # each API process's connection pool met the restart: each answers from the database again
    assert ask_each_process(r, "/api/v1/runs?limit=5") == dict.fromkeys(r.s.members("api"), 200)
    # a task that met the restart retried it (worker/observe.py) instead of failing
    assert '"task.failed"' not in events, [line for line in events.splitlines() if "task.failed" in line]


def _health_checks_of(r: Rig, marks: dict[Path, int], uri: str) -> dict[str, int]:
    """How many requests to `uri` each API process logged after `marks` ({name: count})."""
    counts = {}
    for log, offset in marks.items():
        with log.open("rb") as f:
            f.seek(offset)
            lines = f.read().splitlines()
        counts[log.stem] = sum(1 for line in lines if b'"http.request"' in line and _route_of(line) == uri)
    return counts


def _route_of(line: bytes) -> str | None:
    try:
        return str(json.loads(line).get("route"))
    except ValueError:
        return None


def test_6_postgres_down_the_api_answers_its_own_503_through_caddy(r: Rig) -> None:
    """PostgreSQL stopped (an outage, not a restart): every API process answers /health 503 at
    once, so a proxy that checks /health takes them all out of rotation, and users got Caddy's bare
    answer after lb_try_duration instead of the API's. Caddy checks liveness (the Caddyfile's
    health_uri): once it has checked each process during the outage, a request through it gets
    the API's own JSON 503 `database_unavailable` with Retry-After and a request id, at once."""
    uri = re.search(r"^\s*health_uri\s+(\S+)", CADDYFILE.read_text(), re.M)
    assert uri, "deploy/caddy/several-apis.Caddyfile has no health_uri"
    headers = {"Authorization": f"Bearer {r.s.token}"}
    r.pg.stop()
    try:
        # each process itself: readiness says down, liveness says it answers
        assert ask_each_process(r, "/api/v1/health") == dict.fromkeys(r.s.members("api"), 503)
        assert ask_each_process(r, "/api/v1/health/live") == dict.fromkeys(r.s.members("api"), 200)
        logs = [r.s.logs / f"{name}.log" for name in r.s.members("api")]
        marks = {log: log.stat().st_size for log in logs}
        # Caddy's active health check (every 5 s) has asked each process since the database went
        took = r.until(
            f"Caddy's health check ({uri[1]}) of each API process",
            lambda: all(n > 0 for n in _health_checks_of(r, marks, uri[1]).values()),
            20,
        )
        t0 = time.monotonic()
        got = httpx.get(f"{r.s.url}/api/v1/runs", headers=headers, timeout=30, verify=TLS)
        answered_s = time.monotonic() - t0
        assert got.status_code == 503, (got.status_code, got.text)
        assert got.headers.get("content-type", "").startswith("application/json"), (got.headers, got.text)
        body = got.json()
        assert body["error"] == "database_unavailable" and body["request_id"], body
        assert got.headers["Retry-After"] == "5" and got.headers["X-Request-ID"] == body["request_id"]
        assert answered_s < 5, f"{answered_s:.1f} s: Caddy looked for a healthy process first"
        health = httpx.get(f"{r.s.url}/api/v1/health", timeout=30, verify=TLS)
        assert (health.status_code, health.json()) == (503, {"status": "down"})
    finally:
        started = r.pg.start()
    report("6 PostgreSQL down", health_checked_s=took, answered_s=answered_s, start_s=started)
    r.until("the API answers from the database again", lambda: ask_each_process(r, "/api/v1/runs?limit=1")
            == dict.fromkeys(r.s.members("api"), 200), 30)  # fmt: skip


def test_8_duplicate_and_concurrent_re_uploads_are_idempotent(r: Rig) -> None:
    done = r.queue(runtime_s=1)
    r.final(done)
    with r.api() as api:
        engine_result = api.get(f"/runs/{done}/result").json()["engine_result"]
    target = r.s.workdir / "fake-target"
    target.mkdir()
    agent_id, token = _fake_agent(r, target)
    agent = http(base_url=f"{r.s.url}/api/v1", headers={"Authorization": f"Bearer {token}"}, timeout=30)
    with agent:
        hb = {"state": "idle", "current_run_id": None, "agent_version": "fake"}
        assert agent.post(f"/agents/{agent_id}/heartbeat", json=hb).status_code == 200
        with r.api() as api:
            created = api.post(
                "/runs",
                json={
                    "agent_id": agent_id,
                    "target_path": str(target),
                    "workload": workload(1),
                    "meter": "",
                },
            )
            assert created.status_code == 201, created.text
            run_id = created.json()["id"]
        lease = None
        deadline = time.monotonic() + 30
        while lease is None and time.monotonic() < deadline:
            lease = agent.post(f"/agents/{agent_id}/lease", params={"wait_s": 5}).json()["lease"]
        assert lease and lease["run_id"] == run_id, lease
        assert agent.post(f"/runs/{run_id}/start", json={"lease_id": lease["lease_id"]}).status_code == 200
        now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        body = {
            "lease_id": lease["lease_id"],
            "engine_result": engine_result,
            "engine_exit_code": 0,
            "started_at": now,
            "finished_at": now,
            "agent_version": "fake",
        }
        same = str(uuid.uuid4())
        ids = [same] * 8 + [str(uuid.uuid4()) for _ in range(4)]

        def put(upload_id: str) -> tuple[str, int]:
            with http(
                base_url=f"{r.s.url}/api/v1", headers={"Authorization": f"Bearer {token}"}, timeout=30
            ) as c:
                return upload_id, c.put(
                    f"/runs/{run_id}/result", json={**body, "upload_id": upload_id}
                ).status_code

        with ThreadPoolExecutor(len(ids)) as pool:
            answers = list(pool.map(put, ids))
        again = put(same)
    created_by = [u for u, code in answers if code == 201]
    report("8 concurrent re-uploads", answers=sorted(code for _, code in answers), again=again[1])
    assert len(created_by) == 1, answers
    winner = created_by[0]
    for u, code in answers:
        if code != 201:  # the winner's id again: "already stored"; another id: refused
            assert code == (200 if u == winner else 409), (u, code, winner)
    assert again[1] == (200 if same == winner else 409)
    assert sql(
        r, "SELECT count(*), min(upload_id::text) FROM run_results WHERE run_id = %s", uuid.UUID(run_id)
    ) == [(1, winner)]
    assert r.run(run_id)["status"] == "succeeded"


def test_zz_nothing_lost_duplicated_or_stuck(r: Rig) -> None:
    """After every scenario of the module: the whole ledger (conftest.Rig.ledger)."""
    r.ledger()
