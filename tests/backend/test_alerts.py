"""Alerts: channels and their address rule, one alert per subject and one delivery per channel,
signed webhooks to a real HTTP receiver, retries with backoff.

The scan and the sends are called with a chosen `now`; the receiver is a real HTTP server on
loopback (the instance setting that allows private addresses is on for those tests only)."""

import hashlib
import hmac
import json
import threading
import time
import uuid
from collections.abc import Iterator
from datetime import timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import Engine, delete
from sqlalchemy.orm import Session

from backend.alert import service as alert_service
from backend.alert.schemas import ChannelCreate
from backend.auth.principal import UserPrincipal
from backend.config import get_settings
from backend.kit.time import utcnow
from backend.models import AlertChannel, AlertDelivery, Role, RunStatus, Series, SeriesDetection, Team
from tests.factories import create_agent, create_run, create_user


class Receiver:
    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.answers: list[int] = []  # statuses to answer with, in order; then 204
        self.delay_s = 0.0  # how long each answer takes
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                body = self.rfile.read(int(self.headers["Content-Length"]))
                outer.requests.append({"headers": dict(self.headers), "body": body, "path": self.path})
                status = outer.answers.pop(0) if outer.answers else 204
                time.sleep(outer.delay_s)
                self.send_response(status)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def receiver(monkeypatch: pytest.MonkeyPatch) -> Iterator[Receiver]:
    monkeypatch.setenv("IOWATT_ALERT_PRIVATE_TARGETS", "true")
    get_settings.cache_clear()
    r = Receiver()
    yield r
    r.close()
    monkeypatch.delenv("IOWATT_ALERT_PRIVATE_TARGETS")
    get_settings.cache_clear()


def _channel(client: TestClient, headers: dict[str, str], team_id: uuid.UUID, url: str, **kw: Any) -> Any:
    body = {
        "team_id": str(team_id),
        "name": "hook",
        "kind": "webhook",
        "url": url,
        "events": ["run_failed"],
        **kw,
    }
    return client.post("/api/v1/alert-channels", json=body, headers=headers)


def test_channels_keep_to_public_addresses_and_hide_their_secrets(
    client: TestClient, session: Session
) -> None:
    admin = create_user(session, role=Role.admin)
    member = create_user(session, role=Role.member, team=admin.team)
    for url in (
        "http://127.0.0.1:5432/",
        "http://[::1]/x",
        "http://169.254.169.254/latest/meta-data",
        "http://10.1.2.3/",
    ):
        r = _channel(client, admin.headers, admin.team.id, url)
        assert r.status_code == 422, (url, r.text)
        assert (
            r.json()["detail"][0]["field"] == "url" and "IOWATT_ALERT_PRIVATE_TARGETS" in r.json()["message"]
        )
    for url, why in [
        ("ftp://1.1.1.1/x", "https://"),
        ("https://user:pw@1.1.1.1/x", "credentials"),
    ]:
        r = _channel(client, admin.headers, admin.team.id, url)
        assert r.status_code == 422 and why in r.json()["message"], (url, r.text)
    r = _channel(client, admin.headers, admin.team.id, "syslog://", kind="apprise")
    assert r.status_code == 422 and "one of" in r.json()["message"], r.text
    r = _channel(client, admin.headers, admin.team.id, "json://127.0.0.1:9/x", kind="apprise")
    assert r.status_code == 422 and "loopback" in r.json()["message"], r.text
    assert _channel(client, member.headers, admin.team.id, "https://1.1.1.1/h").status_code == 403

    r = _channel(client, admin.headers, admin.team.id, "https://1.1.1.1/hooks/T0KEN?key=s3cret")
    assert r.status_code == 201, r.text
    created = r.json()
    assert len(created["secret"]) == 64 and created["url"] == "https://1.1.1.1/…"
    listed = client.get("/api/v1/alert-channels", headers=member.headers).json()["items"]
    assert [c["url"] for c in listed] == ["https://1.1.1.1/…"]
    assert "secret" not in listed[0] and "T0KEN" not in json.dumps(listed)
    r = client.patch(
        f"/api/v1/alert-channels/{created['id']}", json={"url": "http://192.168.0.1/"}, headers=admin.headers
    )
    assert r.status_code == 422 and r.json()["detail"][0]["field"] == "url"


def test_one_alert_per_subject_signed_and_sent_once(
    client: TestClient, session: Session, receiver: Receiver
) -> None:
    admin = create_user(session, role=Role.admin)
    url = f"http://localhost:{receiver.port}/iowatt"
    r = _channel(
        client,
        admin.headers,
        admin.team.id,
        url,
        events=["run_failed", "run_expired", "agent_offline"],
        agent_offline_min=15,
    )
    assert r.status_code == 201, r.text
    secret = r.json()["secret"]
    now = utcnow() + timedelta(seconds=5)
    a = create_agent(session, team=admin.team)
    failed = create_run(
        session, agent=a.agent, status=RunStatus.failed, finished_at=now, error="engine exited 1"
    )
    expired = create_run(
        session,
        agent=a.agent,
        status=RunStatus.failed,
        finished_at=now,
        error="lease expired: the agent stopped reporting progress",
    )
    quiet = create_agent(session, team=admin.team, online=False)
    quiet.agent.last_heartbeat_at = now - timedelta(minutes=10)
    session.flush()

    made = alert_service.scan(session, now=now)
    assert len(made) == 2  # the two runs; the agent is silent for 10 min, the channel waits 15
    assert alert_service.scan(session, now=now) == []  # seen again: nothing new
    made += alert_service.scan(session, now=now + timedelta(minutes=6))  # 16 min: now it is
    assert len(made) == 3

    statuses = [alert_service.deliver(session, delivery_id=d, now=now + timedelta(minutes=6)) for d in made]
    assert statuses == ["sent", "sent", "sent"]
    assert [alert_service.deliver(session, delivery_id=d, now=now + timedelta(minutes=7)) for d in made] == [
        None
    ] * 3
    assert len(receiver.requests) == 3  # each once

    kinds = {}
    for req in receiver.requests:
        h = req["headers"]
        mac = hmac.new(secret.encode(), h["X-Iowatt-Timestamp"].encode() + b"." + req["body"], hashlib.sha256)
        assert h["X-Iowatt-Signature"] == f"sha256={mac.hexdigest()}"
        assert h["Host"] == f"localhost:{receiver.port}" and req["path"] == "/iowatt"
        doc = json.loads(req["body"])
        assert doc["delivery_id"] == h["X-Iowatt-Delivery"] and doc["alert"]["kind"] == h["X-Iowatt-Event"]
        kinds[doc["alert"]["kind"]] = doc["alert"]
    assert set(kinds) == {"run_failed", "run_expired", "agent_offline"}
    assert (
        kinds["run_failed"]["link"].endswith(f"/runs/{failed.id}")
        and kinds["run_failed"]["text"] == "engine exited 1"
    )
    assert kinds["run_expired"]["details"]["run_id"] == str(expired.id)
    assert quiet.agent.name in kinds["agent_offline"]["title"]

    page = client.get("/api/v1/alerts", headers=admin.headers).json()
    assert page["total"] == 3
    assert {d["status"] for a_ in page["items"] for d in a_["deliveries"]} == {"sent"}
    # a channel made now does not hear of what came before it
    late = _channel(client, admin.headers, admin.team.id, url, name="late", events=["run_failed"]).json()
    channel = session.get(AlertChannel, uuid.UUID(late["id"]))
    assert channel is not None
    channel.created_at = now + timedelta(minutes=1)  # in the test's one transaction, now() never moves
    session.flush()
    assert alert_service.scan(session, now=now + timedelta(minutes=8)) == []


def test_a_failing_receiver_is_retried_with_backoff_then_given_up(
    client: TestClient, session: Session, receiver: Receiver
) -> None:
    admin = create_user(session, role=Role.admin)
    _channel(client, admin.headers, admin.team.id, f"http://127.0.0.1:{receiver.port}/h")
    now = utcnow() + timedelta(seconds=5)
    a = create_agent(session, team=admin.team)
    create_run(session, agent=a.agent, status=RunStatus.failed, finished_at=now, error="boom")
    (d,) = alert_service.scan(session, now=now)
    receiver.answers = [500, 503]
    assert alert_service.deliver(session, delivery_id=d, now=now) == "pending"
    row = session.get(AlertDelivery, d)
    assert (
        row is not None
        and row.attempts == 1
        and row.response_status == 500
        and "HTTP 500" in (row.last_error or "")
    )
    first_wait = row.next_attempt_at - utcnow()
    assert timedelta(seconds=20) < first_wait <= timedelta(seconds=31)
    assert alert_service.deliver(session, delivery_id=d, now=now) is None  # not due yet: nothing sent
    assert alert_service.due(session, now=row.next_attempt_at) == [d]
    assert alert_service.deliver(session, delivery_id=d, now=row.next_attempt_at) == "pending"
    assert row.next_attempt_at - utcnow() > first_wait  # the wait grows
    assert alert_service.deliver(session, delivery_id=d, now=row.next_attempt_at) == "sent"
    assert len(receiver.requests) == 3 and row.last_error is None

    # a receiver that never answers 2xx: given up after the last attempt, with the error kept
    create_run(session, agent=a.agent, status=RunStatus.failed, finished_at=now, error="boom 2")
    (d2,) = alert_service.scan(session, now=now)
    receiver.answers = [500] * alert_service.MAX_ATTEMPTS
    for _ in range(alert_service.MAX_ATTEMPTS):
        r2 = session.get(AlertDelivery, d2)
        assert r2 is not None
        status = alert_service.deliver(session, delivery_id=d2, now=r2.next_attempt_at)
    assert status == "failed"
    assert alert_service.due(session, now=now + timedelta(days=1)) == []


def test_two_workers_delivering_at_once_send_once(engine: Engine, receiver: Receiver) -> None:
    """alert.deliver twice at the same instant (the outbox's at-least-once send, or a retry beside
    the first try): the row lock lets one send; the other finds it taken or already sent."""
    with Session(engine) as setup:
        admin = create_user(setup, role=Role.admin)
        principal = UserPrincipal(user_id=admin.user.id, roles={admin.team.id: Role.admin})
        body = ChannelCreate(
            team_id=admin.team.id,
            name="race",
            kind="webhook",
            url=f"http://127.0.0.1:{receiver.port}/race",
            events=["run_failed"],
        )
        alert_service.create_channel(setup, principal=principal, body=body)
        a = create_agent(setup, team=admin.team)
        now = utcnow() + timedelta(seconds=5)
        create_run(setup, agent=a.agent, status=RunStatus.failed, finished_at=now, error="boom")
        (d,) = alert_service.scan(setup, now=now)
        setup.commit()
        team_id = admin.team.id
    receiver.delay_s = 0.3  # the first send is still in flight when the second arrives
    try:
        barrier = threading.Barrier(2)
        results: list[str | None] = []
        errors: list[BaseException] = []

        def one() -> None:
            try:
                with Session(engine) as session:
                    barrier.wait(timeout=10)
                    results.append(alert_service.deliver(session, delivery_id=d, now=now))
                    session.commit()
            except BaseException as exc:  # noqa: BLE001 - reported below
                errors.append(exc)

        threads = [threading.Thread(target=one) for _ in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=30)
        assert not errors, errors
        assert sorted(results, key=str) == [None, "sent"]
        assert len(receiver.requests) == 1
    finally:
        with Session(engine) as cleanup:
            cleanup.execute(delete(Team).where(Team.id == team_id))
            cleanup.commit()


def test_a_step_found_twice_is_one_regression_alert(
    client: TestClient, session: Session, receiver: Receiver
) -> None:
    """Change detection stores a step twice (its change point and the new run's test, on the same
    run and metric) and in a second metric that moved with it: the channel hears of it once, every
    metric named; an improvement raises nothing, nor a change in runs older than a day (found
    over the history when thresholds changed)."""
    admin = create_user(session, role=Role.admin)
    r = _channel(
        client, admin.headers, admin.team.id, f"http://127.0.0.1:{receiver.port}/h", events=["regression"]
    )
    assert r.status_code == 201, r.text
    a = create_agent(session, team=admin.team)
    now = utcnow() + timedelta(seconds=5)
    run = create_run(session, agent=a.agent, status=RunStatus.succeeded, finished_at=now)
    s = Series(
        team_id=admin.team.id,
        key=uuid.uuid4().hex,
        workload_fingerprint="f" * 64,
        target_kind="path",
        agent_id=a.agent.id,
        target_path="/srv/bench",
        name="rr4k on /srv/bench",
    )
    session.add(s)
    session.flush()

    def detection(kind: str, direction: str, pct: float) -> SeriesDetection:
        return SeriesDetection(
            series_id=s.id,
            metric="read_iops",
            job_index=0,
            kind=kind,
            direction=direction,
            run_id=run.id,
            at=now,
            mean_before=1000.0,
            mean_after=1000.0 * (1 + pct / 100),
            change_pct=pct,
            change_pct_low=pct - 2,
            change_pct_high=pct + 2,
            runs_before=10,
            runs_after=1,
            method=kind,
            parameters={},
            created_at=now,
        )

    latency = detection("new_run", "regression", 11.0)
    latency.metric = "read_lat_mean_ns"
    old_run = create_run(session, agent=a.agent, status=RunStatus.succeeded, finished_at=now)
    old = detection("change_point", "regression", -20.0)
    old.run_id, old.at = old_run.id, now - timedelta(days=3)
    session.add_all(
        [
            detection("change_point", "regression", -10.0),
            detection("new_run", "regression", -10.5),
            latency,
            old,
        ]
    )
    session.flush()
    s2 = detection("new_run", "improvement", 12.0)
    s2.metric = "read_bw_bytes"
    session.add(s2)
    session.flush()
    made = alert_service.scan(session, now=now)
    assert len(made) == 1
    assert alert_service.deliver(session, delivery_id=made[0], now=now) == "sent"
    doc = json.loads(receiver.requests[0]["body"])["alert"]
    assert doc["kind"] == "regression"
    assert doc["title"] == "Regression in rr4k on /srv/bench: read_iops -10.5 %, read_lat_mean_ns +11.0 %"
    assert [m["metric"] for m in doc["details"]["metrics"]] == ["read_iops", "read_lat_mean_ns"]
    assert len(doc["text"].splitlines()) == 2
    assert doc["link"].endswith(f"/series/{s.id}?metric=read_iops&job=0&run={run.id}")  # the point
    assert doc["details"]["run_id"] == str(run.id)
    assert alert_service.scan(session, now=now) == []
