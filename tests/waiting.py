"""Waiting in tests: poll a condition until it holds or a deadline passes, never a fixed sleep.

A fixed `time.sleep(0.5)` "so the server is up" is either too short on a busy CI machine (a flaky
failure) or too long everywhere else (a slow suite). `wait_until` returns as soon as the condition
holds and fails with a message, and the condition's last value, when it never does. A sleep that
is itself the behaviour under test (idle for N seconds, a lease that must expire, a client that
holds a connection) stays a sleep, with a comment saying so.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


class WaitTimeout(AssertionError):
    """The condition did not hold before the deadline (an AssertionError: the test fails)."""


def wait_until(
    condition: Callable[[], T | None],
    *,
    timeout: float = 10.0,
    interval: float = 0.02,
    message: str | Callable[[], str] = "",
    ignore: tuple[type[BaseException], ...] = (),
    max_interval: float | None = None,
) -> T:
    """Call `condition` every `interval` seconds until it returns something truthy, and return
    that; after `timeout` seconds raise WaitTimeout with `message` (a string, or a callable for
    state read at failure time) and the last value. Exceptions of the types in `ignore` count as
    "not yet" (e.g. OSError while a server is starting, a file not written yet). `max_interval`:
    each wait half as long again as the one before, up to it (a look that costs the server CPU,
    for something that may take seconds: soon after a quick change, seldom during a long one)."""
    deadline = time.monotonic() + timeout
    last: object = None
    while True:
        try:
            value = condition()
        except ignore as exc:
            last = exc
        else:
            if value:
                return value
            last = value
        if time.monotonic() >= deadline:
            text = message() if callable(message) else message
            raise WaitTimeout(f"not true after {timeout:g} s: {text or condition!r} (last: {last!r})")
        time.sleep(interval)
        if max_interval is not None:
            interval = min(max_interval, interval * 1.5)
