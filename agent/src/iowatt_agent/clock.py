"""This agent's clock against the server's, measured NTP-style over the heartbeat exchange.

The heartbeat carries the agent's send time t0; the answer carries the server's receive time t1
and send time t2; the agent notes its receive time t3. Then

    offset = ((t1 - t0) + (t2 - t3)) / 2      (the server's clock minus the agent's)
    round trip δ = (t3 - t0) - (t2 - t1)      (the true offset lies within ± δ/2)

`ClockFilter` keeps the last few minutes' samples and answers the one with the smallest round
trip (NTP's clock filter: the exchange least delayed by queues says the most). A group run's
member re-measures with a burst of exchanges before it reports ready (group.py).
"""

from __future__ import annotations

import threading
import time
from collections import deque
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

KEEP_S = 300.0  # samples older than this are dropped (clocks drift: tens of µs per second at worst)
MAX_SAMPLES = 64
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def to_ns(t: datetime) -> int:
    """A timestamp as ns since the epoch, exact to its microseconds."""
    return (t - _EPOCH) // timedelta(microseconds=1) * 1000


def from_ns(ns: int) -> datetime:
    return _EPOCH + timedelta(microseconds=ns // 1000)


@dataclass(frozen=True)
class Sample:
    offset_ns: int
    round_trip_ns: int
    taken_mono_ns: int


def sample(t0: datetime, t1: datetime, t2: datetime, t3: datetime) -> Sample:
    a, b, c, d = to_ns(t0), to_ns(t1), to_ns(t2), to_ns(t3)
    return Sample(((b - a) + (c - d)) // 2, max(0, (d - a) - (c - b)), time.monotonic_ns())


class ClockFilter:
    """The recent samples (thread-safe: the heartbeat thread adds, the worker reads)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._samples: deque[Sample] = deque(maxlen=MAX_SAMPLES)

    def add(self, s: Sample) -> None:
        with self._lock:
            self._samples.append(s)

    def best(self) -> Sample | None:
        """The recent sample with the smallest round trip, or None."""
        oldest = time.monotonic_ns() - int(KEEP_S * 1e9)
        with self._lock:
            recent = [s for s in self._samples if s.taken_mono_ns >= oldest]
        return min(recent, key=lambda s: s.round_trip_ns) if recent else None


def now() -> datetime:
    """This agent's clock now, to the microsecond (what the exchange's t0 and t3 are read from)."""
    return from_ns(time.time_ns())
