from __future__ import annotations

import time

import pytest
from iowatt_agent.meters import Clock, Meter, Readings, open_meter


def sample(spec: str, seconds: float = 0.35, **kwargs) -> tuple[Meter, Readings]:
    """Open `spec`, sample for `seconds`, stop: what the run does, in small (the sampling window
    is the behaviour under test, not a wait for something)."""
    meter = open_meter(spec, **kwargs)
    meter.start(Clock.now())
    time.sleep(seconds)
    return meter, meter.stop()


@pytest.fixture
def closing():
    """Closes fake instruments after the test."""
    items = []
    yield items.append
    for item in items:
        item.close()


@pytest.fixture
def free_port() -> int:
    """A loopback port nobody listens on."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]
