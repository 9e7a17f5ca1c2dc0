"""Alerts (docs/adr/0041-alerts.md): what a team is told, where, and that it arrives once.

- Subjects are found by a scan (beat `alert.scan`, and at once when a change is detected): failed
  runs (a lease that expired is `run_expired`), agents offline longer than a channel's
  threshold, skipped schedule slots, open regressions. Each subject raises one alert (a unique key
  per team, kind and subject) and one delivery per channel that takes its kind (a unique key per
  alert and channel) — a subject seen by many scans, or by two scans at once, is sent once. A
  channel hears of subjects from after it was made, not of the past.
- Deliveries are queued through the outbox after the transaction that made them commits
  (`alert.deliver`), sent with the delivery's row locked (two workers never send one delivery at
  once), marked sent in the same transaction, and retried with backoff (`alert.retry_due`).
  A worker that dies after the receiver answered and before the commit sends it again: webhook
  receivers deduplicate on X-Iowatt-Delivery.
"""

import secrets
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy.orm import Session

from backend.alert import repository, send, targets
from backend.alert.schemas import (
    AlertRead,
    ChannelCreate,
    ChannelCreated,
    ChannelRead,
    ChannelUpdate,
    DeliveryRead,
)
from backend.audit import service as audit
from backend.auth.principal import UserPrincipal
from backend.config import get_settings
from backend.errors import NotFound
from backend.jobs import enqueue
from backend.kit.time import utcnow
from backend.logs import log
from backend.models import Alert, AlertChannel, Role
from backend.models.series import Series, SeriesDetection
from backend.series.stats import METRICS

LOOKBACK = timedelta(days=1)  # subjects older than this are not raised by a scan
MAX_ATTEMPTS = 8
BACKOFF_S = (30, 60, 120, 300, 600, 1800, 3600)
RETRY_BATCH = 100


# ---- channels -----------------------------------------------------------------------------


def _check_url(kind: str, url: str) -> None:
    if kind == "webhook":
        targets.check_webhook(url)
    else:
        targets.check_apprise(url)


def create_channel(session: Session, *, principal: UserPrincipal, body: ChannelCreate) -> ChannelCreated:
    principal.require(body.team_id, Role.admin)
    _check_url(body.kind, body.url)
    c = AlertChannel(
        team_id=body.team_id,
        name=body.name,
        kind=body.kind,
        url=body.url,
        secret=secrets.token_hex(32) if body.kind == "webhook" else None,
        events=list(dict.fromkeys(body.events)),
        agent_offline_min=body.agent_offline_min,
        enabled=body.enabled,
        created_by=principal.user_id,
    )
    session.add(c)
    session.flush()
    _audit(session, c, principal, "alert_channel.created")
    return ChannelCreated(**channel_read(c).model_dump(), secret=c.secret)


def channel_read(c: AlertChannel) -> ChannelRead:
    return ChannelRead(
        id=c.id,
        team_id=c.team_id,
        name=c.name,
        kind=c.kind,
        url=targets.redact(c.url),
        events=c.events,
        agent_offline_min=c.agent_offline_min,
        enabled=c.enabled,
        created_by=c.created_by,
        created_at=c.created_at,
    )


def _audit(session: Session, c: AlertChannel, principal: UserPrincipal, action: str) -> None:
    audit.record(
        session,
        team_id=c.team_id,
        action=action,
        target_kind="alert_channel",
        target_id=c.id,
        user_id=principal.user_id,
        details={"name": c.name, "kind": c.kind, "url": targets.redact(c.url), "events": c.events},
    )


def _admin_channel(session: Session, principal: UserPrincipal, channel_id: uuid.UUID) -> AlertChannel:
    c = repository.channel(session, channel_id)
    if c is None or c.team_id not in principal.team_ids:
        raise NotFound("alert channel not found")
    principal.require(c.team_id, Role.admin)
    return c


def channels(
    session: Session, *, principal: UserPrincipal, team_id: uuid.UUID | None, limit: int, offset: int
) -> tuple[list[AlertChannel], int]:
    return repository.channels_page(session, principal.teams_for(team_id), limit=limit, offset=offset)


def update_channel(
    session: Session, *, principal: UserPrincipal, channel_id: uuid.UUID, body: ChannelUpdate
) -> AlertChannel:
    c = _admin_channel(session, principal, channel_id)
    changes = body.model_dump(exclude_unset=True, exclude_none=True)
    if "url" in changes:
        _check_url(c.kind, changes["url"])
    for k, v in changes.items():
        setattr(c, k, list(dict.fromkeys(v)) if k == "events" else v)
    session.flush()
    _audit(session, c, principal, "alert_channel.updated")
    return c


def delete_channel(session: Session, *, principal: UserPrincipal, channel_id: uuid.UUID) -> None:
    c = _admin_channel(session, principal, channel_id)
    _audit(session, c, principal, "alert_channel.deleted")
    session.delete(c)
    session.flush()


def send_test(
    session: Session, *, principal: UserPrincipal, channel_id: uuid.UUID
) -> tuple[uuid.UUID, uuid.UUID]:
    """A test alert to this channel alone, delivered like any other."""
    c = _admin_channel(session, principal, channel_id)
    now = utcnow()
    a = repository.ensure_alert(
        session,
        team_id=c.team_id,
        kind="test",
        key=str(uuid.uuid4()),
        title=f"iowatt test alert for the channel {c.name}",
        text="This is a test: the channel is set up and reachable.",
        link=f"{_base()}/settings/alerts",
        details={"channel_id": str(c.id)},
    )
    delivery_id = repository.ensure_delivery(session, alert_id=a.id, channel_id=c.id, now=now)
    assert delivery_id is not None
    enqueue(session, "alert.deliver", delivery_id=str(delivery_id))
    return a.id, delivery_id


# ---- alerts -----------------------------------------------------------------------------


def alerts(
    session: Session,
    *,
    principal: UserPrincipal,
    team_id: uuid.UUID | None,
    kind: str | None,
    limit: int,
    offset: int,
) -> tuple[list[AlertRead], int]:
    rows, total = repository.alerts_page(
        session, principal.teams_for(team_id), kind=kind, limit=limit, offset=offset
    )
    by_alert: dict[uuid.UUID, list[DeliveryRead]] = {a.id: [] for a in rows}
    for d, name in repository.deliveries_of(session, [a.id for a in rows]):
        by_alert[d.alert_id].append(
            DeliveryRead(
                id=d.id,
                channel_id=d.channel_id,
                channel_name=name,
                status=d.state,
                attempts=d.attempts,
                next_attempt_at=d.next_attempt_at,
                last_error=d.last_error,
                response_status=d.response_status,
                sent_at=d.sent_at,
            )
        )
    return [
        AlertRead(
            id=a.id,
            team_id=a.team_id,
            kind=a.kind,
            title=a.title,
            text=a.text,
            link=a.link,
            details=a.details,
            created_at=a.created_at,
            deliveries=by_alert[a.id],
        )
        for a in rows
    ], total


# ---- the scan -------------------------------------------------------------------------------


def _base() -> str:
    return get_settings().public_url.rstrip("/")


@dataclass
class Subject:
    team_id: uuid.UUID
    kind: str
    key: str
    title: str
    text: str
    link: str
    since: datetime  # when it happened: channels made later do not hear of it
    details: dict[str, Any] = field(default_factory=dict)
    eligible: Callable[[AlertChannel], bool] | None = None  # instead of the `since` rule

    def takes(self, c: AlertChannel) -> bool:
        if self.kind not in c.events:
            return False
        return self.eligible(c) if self.eligible is not None else self.since >= c.created_at


def _offline_for(last_heard: datetime, now: datetime) -> Callable[[AlertChannel], bool]:
    """Past the channel's threshold, and past it since the channel was made (an agent silent for
    months is not news to a channel made today)."""

    def eligible(c: AlertChannel) -> bool:
        due_at = last_heard + timedelta(minutes=c.agent_offline_min)
        return due_at <= now and due_at >= c.created_at

    return eligible


def _subjects(session: Session, team_ids: list[uuid.UUID], now: datetime) -> Iterator[Subject]:
    since = now - LOOKBACK
    base = _base()
    for r in repository.failed_runs(session, team_ids, since):
        expired = (r.error or "").startswith("lease expired")
        kind = "run_expired" if expired else "run_failed"
        yield Subject(
            team_id=r.team_id,
            kind=kind,
            key=str(r.id),
            title=f"Run {'expired' if expired else 'failed'}: {r.name or str(r.id)[:8]} on {r.target_path}",
            text=(r.error or "the run failed")[:2000],
            link=f"{base}/runs/{r.id}",
            since=r.finished_at or now,
            details={"run_id": str(r.id), "agent_id": str(r.agent_id), "target_path": r.target_path},
        )
    for a in repository.offline_agents(session, team_ids):
        assert a.last_heartbeat_at is not None
        silent_min = (now - a.last_heartbeat_at).total_seconds() / 60
        yield Subject(
            team_id=a.team_id,
            kind="agent_offline",
            # one alert per offline spell: the last heartbeat names it
            key=f"{a.id}:{a.last_heartbeat_at.isoformat()}",
            title=f"Agent offline: {a.name} ({a.hostname}), last heard {int(silent_min)} min ago",
            text=(
                f"The agent {a.name} on {a.hostname} has not sent a heartbeat since "
                f"{a.last_heartbeat_at:%Y-%m-%d %H:%M} UTC."
            ),
            link=f"{base}/agents",
            since=a.last_heartbeat_at,
            details={"agent_id": str(a.id), "last_heartbeat_at": a.last_heartbeat_at.isoformat()},
            eligible=_offline_for(a.last_heartbeat_at, now),
        )
    for slot, s in repository.skipped_slots(session, team_ids, since):
        yield Subject(
            team_id=s.team_id,
            kind="schedule_missed",
            key=str(slot.id),
            title=f"Schedule did not run: {s.name} at {slot.slot_at:%Y-%m-%d %H:%M} UTC",
            text=slot.reason or "skipped",
            link=f"{base}/campaigns",
            since=slot.created_at,
            details={
                "schedule_id": str(s.id),
                "slot_at": slot.slot_at.isoformat(),
                "skipped_targets": slot.skipped_targets,
            },
        )
    # one alert per run of a series that regressed, whatever number of metrics and jobs moved with
    # it (a slower disk moves IOPS, bandwidth and latency at once) and however it was found (its
    # change point and the new run's test): one message for one step
    steps: dict[tuple[uuid.UUID, str], list[tuple[SeriesDetection, Series]]] = {}
    for d, series in repository.regressions(session, team_ids, since):
        steps.setdefault((series.id, str(d.run_id or d.id)), []).append((d, series))
    for (series_id, run_key), found in steps.items():
        series = found[0][1]
        moved: dict[tuple[int, str], SeriesDetection] = {}
        for d, _ in sorted(found, key=lambda x: (x[0].created_at, x[0].kind != "new_run")):
            moved.setdefault((d.job_index, d.metric), d)
        order = list(METRICS)
        moved = dict(sorted(moved.items(), key=lambda kv: (kv[0][0], order.index(kv[0][1]))))
        first = next(iter(moved.values()))
        jobs = len({j for j, _ in moved})
        what = ", ".join(
            f"{d.metric}{f' (job {j})' if jobs > 1 else ''} {d.change_pct:+.1f} %"
            for (j, _), d in moved.items()
        )
        yield Subject(
            team_id=series.team_id,
            kind="regression",
            key=f"{series_id}:{run_key}",
            title=f"Regression in {series.name}: {what}",
            text="\n".join(_regression_line(d) for d in moved.values()),
            # the history at the point: the metric and job that moved first, that run picked
            link=f"{base}/series/{series_id}?metric={first.metric}&job={first.job_index}"
            + (f"&run={first.run_id}" if first.run_id else ""),
            since=min(d.created_at for d in moved.values()),
            details={
                "series_id": str(series_id),
                "detection_id": str(first.id),
                "detection_ids": [str(d.id) for d in moved.values()],
                "run_id": str(first.run_id) if first.run_id else None,
                "metric": first.metric,
                "change_pct": first.change_pct,
                "metrics": [
                    {"job_index": j, "metric": m, "change_pct": d.change_pct} for (j, m), d in moved.items()
                ],
            },
        )


def _regression_line(d: SeriesDetection) -> str:
    low, high = d.change_pct_low, d.change_pct_high
    interval = f" (95 % interval {low:+.1f} … {high:+.1f} %)" if low is not None and high is not None else ""
    left_out = [r for e in d.excluded or [] for r in e.get("reasons", [])]
    why = (
        f" Left out of the comparison: {len(d.excluded)} run(s) ({', '.join(sorted(set(left_out)))})."
        if left_out
        else ""
    )
    return (
        f"{d.metric} of job {d.job_index} moved from {d.mean_before:.4g} to {d.mean_after:.4g} "
        f"({d.change_pct:+.1f} %{interval}) by {d.method}, {d.runs_before} runs before and "
        f"{d.runs_after} after.{why}"
    )


def scan(
    session: Session, *, now: datetime | None = None, team_ids: list[uuid.UUID] | None = None
) -> list[uuid.UUID]:
    """Raise what is new; returns the deliveries made (queued after commit)."""
    now = now or utcnow()
    by_team: dict[uuid.UUID, list[AlertChannel]] = {}
    for c in repository.enabled_channels(session):
        if team_ids is None or c.team_id in team_ids:
            by_team.setdefault(c.team_id, []).append(c)
    if not by_team:
        return []
    made: list[uuid.UUID] = []
    for sub in _subjects(session, list(by_team), now):
        takers = [c for c in by_team.get(sub.team_id, []) if sub.takes(c)]
        if not takers:
            continue
        a = repository.ensure_alert(
            session,
            team_id=sub.team_id,
            kind=sub.kind,
            key=sub.key,
            title=sub.title[:300],
            text=sub.text,
            link=sub.link[:500],
            details=sub.details,
        )
        for c in takers:
            d = repository.ensure_delivery(session, alert_id=a.id, channel_id=c.id, now=now)
            if d is not None:
                made.append(d)
                enqueue(session, "alert.deliver", delivery_id=str(d))
                log.info("alert.raised", alert_id=str(a.id), kind=a.kind, channel_id=str(c.id))
    return made


# ---- delivery -------------------------------------------------------------------------------


def deliver(session: Session, *, delivery_id: uuid.UUID, now: datetime | None = None) -> str | None:
    """Send one pending, due delivery (its row locked for the send); its status after, or None
    when there was nothing to do (sent, given up, not due, or being sent by another worker)."""
    now = now or utcnow()
    d = repository.lock_delivery(session, delivery_id)
    if d is None or d.state != "pending" or d.next_attempt_at > now:
        return None
    c = repository.channel(session, d.channel_id)
    a: Alert | None = repository.alert(session, d.alert_id)
    if c is None or a is None:
        return None
    ok, status, error = send.send(c, a, d)
    d.attempts += 1
    d.response_status = status
    if ok:
        d.state, d.sent_at, d.last_error = "sent", utcnow(), None
        log.info("alert.sent", delivery_id=str(d.id), channel_id=str(c.id), attempts=d.attempts)
    else:
        d.last_error = error
        if d.attempts >= MAX_ATTEMPTS:
            d.state = "failed"
            log.warning("alert.gave_up", delivery_id=str(d.id), channel_id=str(c.id), error=error)
        else:
            d.next_attempt_at = utcnow() + timedelta(seconds=BACKOFF_S[min(d.attempts, len(BACKOFF_S)) - 1])
            log.warning("alert.retry", delivery_id=str(d.id), attempts=d.attempts, error=error)
    session.flush()
    return d.state


def due(session: Session, *, now: datetime | None = None) -> list[uuid.UUID]:
    return repository.due_deliveries(session, now or utcnow(), limit=RETRY_BATCH)
