"""A group member's side of the start barrier (iowatt_agent.group, clock): the NTP-style offset
and round trip of one exchange, the filter keeping the exchange least delayed, the member waiting
for the server's instant and converting it to its own clock, and a stopped group or a lost lease
keeping the engine from starting. No server, no sleeps beyond a few milliseconds."""

import threading
import time
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

from iowatt_agent import clock
from iowatt_agent.client import Conflict
from iowatt_agent.group import MAX_BARRIER_S, GroupStart, barrier_limit_s, sleep_until
from iowatt_agent.schemas import Lease, ReadyRequest, ReadyResponse, StartedRequest
from iowatt_agent.status import AgentStatus

T0 = datetime(2026, 12, 6, 3, 0, 0, tzinfo=UTC)


def test_one_exchange_gives_the_offset_within_half_its_round_trip() -> None:
    # the server's clock is 10 ms ahead; 3 ms out, 1 ms of server work, 5 ms back
    t1 = T0 + timedelta(milliseconds=3 + 10)
    t2 = t1 + timedelta(milliseconds=1)
    t3 = T0 + timedelta(milliseconds=3 + 1 + 5)
    s = clock.sample(T0, t1, t2, t3)
    assert s.round_trip_ns == 8_000_000
    assert s.offset_ns == 9_000_000  # the asymmetry (3 vs 5 ms) errs by 1 ms, within 8/2
    assert abs(s.offset_ns - 10_000_000) <= s.round_trip_ns // 2
    assert clock.to_ns(clock.from_ns(clock.to_ns(t3))) == clock.to_ns(t3)


def test_the_filter_keeps_the_least_delayed_recent_exchange() -> None:
    f = clock.ClockFilter()
    assert f.best() is None
    now = time.monotonic_ns()
    f.add(clock.Sample(5_000, 900_000, now))
    f.add(clock.Sample(-2_000, 300_000, now))
    f.add(clock.Sample(7_000, 100_000, now - int((clock.KEEP_S + 1) * 1e9)))  # too old
    best = f.best()
    assert best is not None and best.offset_ns == -2_000 and best.round_trip_ns == 300_000


class Barrier:
    """The server's side of the barrier as a stub: answers in order, records what it was sent."""

    def __init__(self, answers: list[ReadyResponse | Exception]) -> None:
        self.answers = answers
        self.ready_calls: list[ReadyRequest] = []
        self.started_calls: list[StartedRequest] = []

    def ready(self, run_id: uuid.UUID, request: ReadyRequest, wait_s: float) -> ReadyResponse:
        self.ready_calls.append(request)
        answer = self.answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer

    def started(self, run_id: uuid.UUID, request: StartedRequest) -> None:
        self.started_calls.append(request)


def _lease_doc(**group: Any) -> dict[str, Any]:
    return {
        "run_id": str(uuid.uuid4()),
        "lease_id": str(uuid.uuid4()),
        "lease_expires_at": T0.isoformat(),
        "target_path": "/srv/a",
        "engine_job": {"global": {}, "jobs": []},
        "timeout_s": 60,
        "group": {"group_id": str(uuid.uuid4()), "members": 2, "start_tolerance_ns": 5_000_000, **group},
    }


def _member(answers: list[ReadyResponse | Exception], offset_ns: int = 0) -> tuple[GroupStart, Barrier]:
    lease = Lease.model_validate(_lease_doc())
    status = AgentStatus.__new__(AgentStatus)  # only its clock filter is used here
    status.clock = clock.ClockFilter()
    exchanges: list[int] = []

    def exchange() -> None:
        exchanges.append(1)
        status.clock.add(clock.Sample(offset_ns, 200_000 + 100_000 * len(exchanges), time.monotonic_ns()))

    stub = Barrier(answers)
    member = GroupStart(lease, client=stub, status=status, exchange=exchange, stop=threading.Event())  # type: ignore[arg-type]
    return member, stub


def test_a_member_reports_its_clock_waits_for_the_instant_and_converts_it() -> None:
    now = datetime.now(UTC)
    # the server's clock is 10 s ahead of this host's: its instant, 10 s and 30 ms ahead on the
    # server's clock, is 30 ms ahead on this host's (a margin of seconds, not milliseconds, between
    # the two readings: a process held up by a loaded machine still tells them apart)
    offset = 10_000_000_000
    start_at = now + timedelta(seconds=10, milliseconds=30)
    member, stub = _member(
        [
            ReadyResponse(start_at=None, stop=None, server_time=now),  # the other member is not ready
            ReadyResponse(start_at=start_at, stop=None, server_time=now),
        ],
        offset_ns=offset,
    )
    assert member.wait() is True
    woke = time.time_ns()
    assert stub.ready_calls[0].clock is not None and stub.ready_calls[0].clock.round_trip_ns == 300_000
    assert stub.ready_calls[0].clock.offset_ns == offset and len(stub.ready_calls) == 2
    # the server's start_at is 10 s earlier on this host's clock: woken ~30 ms from the call
    assert woke >= clock.to_ns(start_at) - offset
    assert woke < clock.to_ns(start_at)
    member.report(datetime.now(UTC))
    assert len(stub.started_calls) == 1


def test_a_stopped_group_or_a_lost_lease_starts_nothing() -> None:
    now = datetime.now(UTC)
    stopped, _ = _member([ReadyResponse(start_at=None, stop="member b failed", server_time=now)])
    assert stopped.wait() is False
    assert stopped.stop_reason == "the group stopped: member b failed" and stopped.cancelled is True
    lost, _ = _member([Conflict("run is cancelled, not running", status_code=409)])
    assert lost.wait() is False
    assert lost.stop_reason is not None and "ended the run" in lost.stop_reason and lost.cancelled is False


def test_an_instant_too_far_ahead_is_refused_not_waited_for() -> None:
    far = datetime.now(UTC) + timedelta(hours=1)
    member, _ = _member([ReadyResponse(start_at=far, stop=None, server_time=far)])
    t0 = time.monotonic()
    assert member.wait() is False and time.monotonic() - t0 < 5
    assert member.stop_reason is not None and "s away" in member.stop_reason and member.cancelled is False


def test_a_server_that_never_gives_an_instant_does_not_hold_the_host() -> None:
    now = datetime.now(UTC)
    member, stub = _member([ReadyResponse(start_at=None, stop=None, server_time=now)] * 1000)
    answer = stub.ready

    def long_poll(*args: Any) -> ReadyResponse:  # a long-poll that times out "not yet"
        time.sleep(0.01)
        return answer(*args)

    stub.ready = long_poll  # type: ignore[method-assign, assignment]
    member.max_barrier_s = 0.05
    t0 = time.monotonic()
    assert member.wait() is False and time.monotonic() - t0 < 5
    assert member.stop_reason is not None and "no start instant" in member.stop_reason
    assert member.cancelled is False and len(stub.ready_calls) >= 1


def test_the_barrier_waits_as_long_as_the_groups_prepare_timeout_allows() -> None:
    """A lease's prepare timeout (sized by the server from the members' layout) sets how long the
    member waits at the barrier, with a minute's slack; a server that sends none: 600 s."""
    assert barrier_limit_s(None) == MAX_BARRIER_S == 600
    assert barrier_limit_s(1174.0) == 1234.0
    lease = Lease.model_validate(_lease_doc(prepare_timeout_s=1174.0))
    assert lease.group is not None and lease.group.prepare_timeout_s == 1174.0
    assert Lease.model_validate(_lease_doc()).group.prepare_timeout_s is None  # type: ignore[union-attr]


def test_sleep_until_ends_at_the_instant_or_when_stopped() -> None:
    stop = threading.Event()
    target = time.time_ns() + 5_000_000
    assert sleep_until(target, stop) is True and time.time_ns() >= target
    stop.set()
    assert sleep_until(time.time_ns() + 60_000_000_000, stop) is False
