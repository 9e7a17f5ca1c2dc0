"""The order rules of long-poll supersession across processes (backend/agent/wake.py, ADR 0016):
a waiter ends when a NEWER generation of its agent is announced, never for its own or an older
one, including when an announcement arrives before the waiter has learnt its own generation (the
announcement travels on the subscription, the generation on another connection). The real
processes and Redis: tests/backend/test_multiproc.py."""

import asyncio
from types import SimpleNamespace
from typing import Any

from backend.agent.wake import Waiter


def _waiter() -> Waiter:
    hub: Any = SimpleNamespace(ready=asyncio.Event())  # Waiter reads only whether the hub is subscribed
    return Waiter(hub)


def test_only_a_newer_generation_supersedes() -> None:
    w = _waiter()
    w.own(7)
    w.announced(7)  # its own announcement
    w.announced(5)  # an older poll's, arriving late
    assert not w.superseded
    w.announced(8)
    assert w.superseded and w.event.is_set()


def test_announcements_before_the_own_generation_are_weighed_once_it_is_known() -> None:
    own_first = _waiter()
    own_first.announced(4)  # its own announcement overtook the script's reply
    own_first.own(4)
    assert not own_first.superseded

    overtaken = _waiter()
    overtaken.announced(4)
    overtaken.announced(5)  # a newer poll elsewhere started meanwhile
    overtaken.own(4)
    assert overtaken.superseded


def test_without_redis_any_later_announcement_supersedes() -> None:
    w = _waiter()
    w.own(0)  # Redis was unreachable when it started: it has no generation
    assert not w.superseded
    w.announced(1)
    assert w.superseded


def test_a_superseded_waiter_does_not_wait() -> None:
    w = _waiter()
    w.own(1)
    w.announced(2)
    assert asyncio.run(w.wait(30)) is False
