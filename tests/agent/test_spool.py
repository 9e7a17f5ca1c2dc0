from __future__ import annotations

import json
import os
import stat
import uuid
from datetime import UTC, datetime

import httpx
from iowatt_agent.schemas import FailureReport, ResultUpload
from iowatt_agent.spool import Delivery, Spool, SpoolRetrier

from tests.agent.fakes import FakeApi, error


def make_upload(**over) -> ResultUpload:
    now = datetime.now(UTC)
    fields = dict(
        lease_id=uuid.uuid4(),
        upload_id=uuid.uuid4(),
        engine_result={"jobs": [{"jobname": "a"}]},
        engine_exit_code=0,
        started_at=now,
        finished_at=now,
        agent_version="t",
    )
    fields.update(over)
    return ResultUpload(**fields)


def test_entry_is_on_disk_before_the_first_upload_attempt(api: FakeApi, make_client, tmp_path):
    spool = Spool(tmp_path)
    seen: list[list[str]] = []
    api.on_request = lambda m, p, b: seen.append(sorted(os.listdir(spool.dir)))
    run_id = uuid.uuid4()
    entry = spool.put_result(make_upload(), run_id)
    assert stat.S_IMODE(entry.path.stat().st_mode) == 0o600
    assert not [p for p in os.listdir(spool.dir) if ".tmp" in p]  # no tmp leftovers
    assert spool.deliver(entry, make_client()) is Delivery.DELIVERED
    assert entry.path.name in seen[0]
    assert not entry.path.exists()


def test_server_down_then_upload_exactly_once_even_when_the_answer_was_lost(
    api: FakeApi, make_client, tmp_path
):
    spool = Spool(tmp_path)
    run_id = uuid.uuid4()
    upload = make_upload()
    path = f"/api/v1/runs/{run_id}/result"
    body = json.loads(upload.model_dump_json())

    def store_then_lose_answer():
        api.default("PUT", path, {"authorization": "Bearer agent-token-123"}, body)
        raise httpx.ReadError("connection reset after the server stored it")

    # down, down, then up but the answer never arrives
    api.script[f"PUT {path}"] = [
        httpx.ConnectError("refused"),
        httpx.ConnectError("refused"),
        store_then_lose_answer,
    ]
    client = make_client()
    entry = spool.put_result(upload, run_id)
    for _ in range(3):
        assert spool.deliver(entry, client, attempts=1) is Delivery.RETRY
        assert entry.path.exists()
    assert len(api.results) == 1  # stored by the server, unknown to the agent
    # A later flush (here: a fresh Spool reading the directory, as after an agent restart)
    # resends with the same upload_id: the server answers 200 and stores nothing new.
    pending = Spool(tmp_path).pending()
    assert [e.upload_id for e in pending] == [upload.upload_id]
    assert Spool(tmp_path).flush(client)[Delivery.DELIVERED] == 1
    assert list(api.results) == [str(upload.upload_id)]
    assert api.results_by_run == {str(run_id): str(upload.upload_id)}
    assert len(api.calls_to(rf"PUT {path}")) == 4
    assert Spool(tmp_path).pending() == []


def test_permanent_4xx_moves_to_rejected_with_reason(api: FakeApi, make_client, tmp_path):
    spool = Spool(tmp_path)
    run_id = uuid.uuid4()
    api.script[f"PUT /api/v1/runs/{run_id}/result"] = [error(409, "lease_lost", "lease is not this run's")]
    entry = spool.put_result(make_upload(), run_id)
    assert spool.deliver(entry, make_client()) is Delivery.REJECTED
    assert spool.pending() == []
    [rejected] = spool.rejected()
    doc = json.loads(rejected.read_text())
    assert doc["rejected"]["status_code"] == 409
    assert "lease_lost" in doc["rejected"]["reason"]
    assert doc["payload"]["engine_result"] == {"jobs": [{"jobname": "a"}]}  # nothing lost
    # and it is not retried
    assert spool.flush(make_client())[Delivery.DELIVERED] == 0


def test_5xx_is_kept_for_later(api: FakeApi, make_client, tmp_path):
    spool = Spool(tmp_path)
    run_id = uuid.uuid4()
    api.script[f"POST /api/v1/runs/{run_id}/failure"] = [error(503, "down", "x")]
    report = FailureReport(
        lease_id=uuid.uuid4(),
        upload_id=uuid.uuid4(),
        reason="boom",
        exit_code=1,
        stderr_tail="e",
        cancelled=False,
    )
    spool.put_failure(report, run_id)
    assert spool.flush(make_client())[Delivery.RETRY] == 1
    assert spool.flush(make_client())[Delivery.DELIVERED] == 1
    assert list(api.failures) == [str(report.upload_id)]


def test_flush_is_oldest_first_and_stops_when_server_is_down(api: FakeApi, make_client, tmp_path):
    spool = Spool(tmp_path)
    runs = [uuid.uuid4() for _ in range(3)]
    for run_id in runs:
        spool.put_result(make_upload(), run_id)
    api.script["PUT /api/v1/runs/.*/result"] = [httpx.ConnectError("down")] * 5
    counts = spool.flush(make_client())
    assert counts[Delivery.RETRY] == 1 and len(api.calls) == 1
    api.script.clear()
    assert spool.flush(make_client())[Delivery.DELIVERED] == 3
    assert [c[1].split("/")[4] for c in api.calls[1:]] == [str(r) for r in runs]


def test_unreadable_spool_file_is_set_aside(tmp_path):
    spool = Spool(tmp_path)
    (spool.dir / "20260101T000000000000Z-result-x.json").write_text("{not json")
    assert spool.pending() == []
    assert len(spool.rejected()) == 1


def test_retrier_backoff_grows_and_is_capped(tmp_path, make_client):
    import threading

    retrier = SpoolRetrier(
        Spool(tmp_path), make_client(), threading.Event(), base_s=2, max_s=60, idle_s=30, rng=lambda: 1.0
    )
    assert [retrier.next_delay(n) for n in range(0, 8)] == [30, 2, 4, 8, 16, 32, 60, 60]


def test_retrier_thread_delivers_once_the_server_is_back(api: FakeApi, make_client, tmp_path):
    import threading
    import time

    spool = Spool(tmp_path)
    run_id = uuid.uuid4()
    api.script[f"PUT /api/v1/runs/{run_id}/result"] = [error(502, "bad_gateway", "x")] * 2
    spool.put_result(make_upload(), run_id)
    stop = threading.Event()
    retrier = SpoolRetrier(spool, make_client(), stop, base_s=0.05, max_s=0.2, idle_s=5)
    retrier.start()
    try:
        deadline = time.monotonic() + 5
        while spool.pending() and time.monotonic() < deadline:
            time.sleep(0.02)
    finally:
        stop.set()
        retrier.kick()
    assert spool.pending() == [] and len(api.results) == 1
    assert len(api.calls) == 3  # 502, 502, 201: one flush per backoff step


class Network:
    """The link between agent and fake API: while `down`, every request fails as refused."""

    def __init__(self, api: FakeApi) -> None:
        self.down = True
        api.on_request = self.check

    def check(self, method: str, path: str, body: object) -> None:
        if self.down:
            raise httpx.ConnectError("connection refused")


def _heartbeat(api: FakeApi, client) -> None:
    from iowatt_agent.schemas import HeartbeatRequest

    client.heartbeat(api.agent_id, HeartbeatRequest(state="idle", current_run_id=None, agent_version="t"))


def _wait_for(predicate, timeout_s: float) -> bool:
    import time

    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.01)
    return predicate()


def test_retrier_delivers_right_after_the_first_request_that_gets_through(
    api: FakeApi, make_client, tmp_path
):
    """Issue 11, scenario 7: network down, result spooled, network back. The heartbeat that gets
    through first wakes the retrier; the upload follows within 1 s, not after the backoff."""
    import threading
    import time

    from iowatt_agent.client import ServerUnreachable

    network = Network(api)
    spool = Spool(tmp_path)
    run_id = uuid.uuid4()
    spool.put_result(make_upload(), run_id)
    hb = make_client()
    stop = threading.Event()
    # backoff of 10-20 s after the first failure, 20-40 s after the second: far beyond the 1 s bound
    retrier = SpoolRetrier(spool, make_client(), stop, base_s=20, max_s=300, idle_s=60)
    hb.on_success = retrier.server_reachable
    puts = f"PUT /api/v1/runs/{run_id}/result"
    retrier.start()
    try:
        assert _wait_for(lambda: len(api.calls_to(puts)) == 1, 5)  # first attempt: refused
        try:
            _heartbeat(api, hb)  # still down: a failed request wakes nothing
            raise AssertionError("heartbeat got through while the network was down")
        except ServerUnreachable:
            pass
        time.sleep(0.3)
        assert len(api.calls_to(puts)) == 1 and spool.pending()

        network.down = False
        _heartbeat(api, hb)
        back = time.monotonic()
        assert _wait_for(lambda: not spool.pending(), 1.0), "spooled result not delivered within 1 s"
        assert time.monotonic() - back < 1.0
    finally:
        stop.set()
        retrier.kick()
    assert list(api.results_by_run) == [str(run_id)]
    assert len(api.calls_to(puts)) == 2  # refused once, delivered once


def test_retrier_keeps_its_backoff_while_the_server_answers_errors(api: FakeApi, make_client, tmp_path):
    """A server that answers 503 to the upload is up: heartbeats getting through must not make
    the agent re-send the upload at heartbeat pace."""
    import threading
    import time

    spool = Spool(tmp_path)
    run_id = uuid.uuid4()
    puts = f"PUT /api/v1/runs/{run_id}/result"
    api.script[puts] = [error(503, "unavailable", "try later")] * 3
    spool.put_result(make_upload(), run_id)
    hb = make_client()
    stop = threading.Event()
    retrier = SpoolRetrier(spool, make_client(), stop, base_s=20, max_s=300, idle_s=60)
    hb.on_success = retrier.server_reachable
    retrier.start()
    try:
        assert _wait_for(lambda: len(api.calls_to(puts)) == 1, 5)
        for _ in range(10):
            _heartbeat(api, hb)
            time.sleep(0.03)
        time.sleep(0.3)
        assert len(api.calls_to(puts)) == 1  # still waiting out its backoff
        assert len(api.heartbeats) == 10 and spool.pending()
        retrier.kick()  # a new entry or a stop still flushes at once
        assert _wait_for(lambda: len(api.calls_to(puts)) == 2, 1.0)
    finally:
        stop.set()
        retrier.kick()


def test_a_success_during_a_failing_flush_is_not_missed(api: FakeApi, make_client, tmp_path):
    """The network returns while the retrier's own attempt is still failing: the success that
    came in meanwhile still ends the backoff."""
    import threading

    spool = Spool(tmp_path)
    run_id = uuid.uuid4()
    puts = f"PUT /api/v1/runs/{run_id}/result"
    stop = threading.Event()
    retrier = SpoolRetrier(spool, make_client(), stop, base_s=20, max_s=300, idle_s=60)

    def refused_after_a_heartbeat_got_through():
        retrier.server_reachable()  # another thread's request succeeded just now
        raise httpx.ConnectError("refused")

    api.script[puts] = [refused_after_a_heartbeat_got_through]
    spool.put_result(make_upload(), run_id)
    retrier.start()
    try:
        assert _wait_for(lambda: not spool.pending(), 1.0)
    finally:
        stop.set()
        retrier.kick()
    assert len(api.calls_to(puts)) == 2
