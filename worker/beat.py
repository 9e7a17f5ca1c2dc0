"""Periodic housekeeping; every entry expires so a backlog never piles up behind a dead worker.
Each is sent at its task's broker priority (backend.outbox.priority_of: the dispatch path first)."""

from typing import Any

from backend.outbox import priority_of

_SCHEDULE: dict[str, dict[str, Any]] = {
    "expire-stale-leases": {"task": "run.expire_stale_leases", "schedule": 15.0, "options": {"expires": 14}},
    "dispatch-pending": {"task": "run.dispatch_pending", "schedule": 10.0, "options": {"expires": 9}},
    "mark-silent-agents-offline": {
        "task": "agent.mark_silent_offline",
        "schedule": 15.0,
        "options": {"expires": 14},
    },
    # ADR 0012: unsent outbox rows (Redis was down at commit time) go out within a second or so
    "outbox-send": {"task": "outbox.send", "schedule": 1.0, "options": {"expires": 5}},
    # schedules are rows, not beat entries: one tick finds every due slot (ADR 0039), so adding a
    # schedule needs no restart, and two beat processes never queue one slot twice
    "schedule-tick": {"task": "schedule.tick", "schedule": 20.0, "options": {"expires": 19}},
    # alerts (ADR 0041): raise what is new (one alert per subject, one delivery per channel), and
    # send again what failed, once its backoff is over
    "alert-scan": {"task": "alert.scan", "schedule": 15.0, "options": {"expires": 14}},
    "alert-retry-due": {"task": "alert.retry_due", "schedule": 15.0, "options": {"expires": 14}},
    "repair-derived": {"task": "outbox.repair", "schedule": 60.0, "options": {"expires": 55}},
}

BEAT_SCHEDULE = {
    name: {**entry, "options": {**entry["options"], "priority": priority_of(entry["task"])}}
    for name, entry in _SCHEDULE.items()
}
