"""All SQL of the alert domain."""

import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import ColumnElement, select
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.orm import Session

from backend.kit.repository import page_of
from backend.models import Agent, Alert, AlertChannel, AlertDelivery, Run, RunStatus, Schedule, ScheduleSlot
from backend.models.series import Series, SeriesDetection


def channel(session: Session, channel_id: uuid.UUID) -> AlertChannel | None:
    return session.get(AlertChannel, channel_id)


def channels_page(
    session: Session, team_ids: list[uuid.UUID], *, limit: int, offset: int
) -> tuple[list[AlertChannel], int]:
    return page_of(
        session,
        AlertChannel,
        AlertChannel.team_id.in_(team_ids),
        order_by=(AlertChannel.created_at, AlertChannel.id),
        limit=limit,
        offset=offset,
    )


def enabled_channels(session: Session) -> list[AlertChannel]:
    return list(session.scalars(select(AlertChannel).where(AlertChannel.enabled)))


def alerts_page(
    session: Session, team_ids: list[uuid.UUID], *, kind: str | None, limit: int, offset: int
) -> tuple[list[Alert], int]:
    cond: list[ColumnElement[bool]] = [Alert.team_id.in_(team_ids)]
    if kind is not None:
        cond.append(Alert.kind == kind)
    return page_of(
        session, Alert, *cond, order_by=(Alert.created_at.desc(), Alert.id), limit=limit, offset=offset
    )


def deliveries_of(session: Session, alert_ids: list[uuid.UUID]) -> list[tuple[AlertDelivery, str]]:
    if not alert_ids:
        return []
    rows = session.execute(
        select(AlertDelivery, AlertChannel.name)
        .join(AlertChannel, AlertChannel.id == AlertDelivery.channel_id)
        .where(AlertDelivery.alert_id.in_(alert_ids))
        .order_by(AlertChannel.name)
    )
    return [(d, name) for d, name in rows]


def ensure_alert(session: Session, *, team_id: uuid.UUID, kind: str, key: str, **values: Any) -> Alert:
    """The alert of this subject: inserted unless it exists (a scan sees a subject many times)."""
    session.execute(
        insert(Alert)
        .values(id=uuid.uuid4(), team_id=team_id, kind=kind, key=key, **values)
        .on_conflict_do_nothing(constraint="uq_alerts_subject")
    )
    found = session.scalar(
        select(Alert).where(Alert.team_id == team_id, Alert.kind == kind, Alert.key == key)
    )
    assert found is not None
    return found


def ensure_delivery(
    session: Session, *, alert_id: uuid.UUID, channel_id: uuid.UUID, now: datetime
) -> uuid.UUID | None:
    """A new delivery's id, or None when this alert already went (or goes) to this channel."""
    return session.scalar(
        insert(AlertDelivery)
        .values(
            id=uuid.uuid4(),
            alert_id=alert_id,
            channel_id=channel_id,
            state="pending",
            attempts=0,
            next_attempt_at=now,
        )
        .on_conflict_do_nothing(constraint="uq_alert_deliveries_pair")
        .returning(AlertDelivery.id)
    )


def lock_delivery(session: Session, delivery_id: uuid.UUID) -> AlertDelivery | None:
    """The delivery, locked; None when another worker is sending it right now."""
    return session.scalar(
        select(AlertDelivery).where(AlertDelivery.id == delivery_id).with_for_update(skip_locked=True)
    )


def due_deliveries(session: Session, now: datetime, *, limit: int) -> list[uuid.UUID]:
    return list(
        session.scalars(
            select(AlertDelivery.id)
            .where(AlertDelivery.state == "pending", AlertDelivery.next_attempt_at <= now)
            .order_by(AlertDelivery.next_attempt_at)
            .limit(limit)
        )
    )


def alert(session: Session, alert_id: uuid.UUID) -> Alert | None:
    return session.get(Alert, alert_id)


# ---- subjects the scan raises alerts for ------------------------------------------------------


def failed_runs(session: Session, team_ids: list[uuid.UUID], since: datetime) -> list[Run]:
    return list(
        session.scalars(
            select(Run).where(
                Run.team_id.in_(team_ids), Run.status == RunStatus.failed, Run.finished_at >= since
            )
        )
    )


def offline_agents(session: Session, team_ids: list[uuid.UUID]) -> list[Agent]:
    return list(
        session.scalars(
            select(Agent).where(
                Agent.team_id.in_(team_ids),
                Agent.online.is_(False),
                Agent.revoked_at.is_(None),
                Agent.last_heartbeat_at.is_not(None),
                Agent.kind != "external",
            )
        )
    )


def skipped_slots(
    session: Session, team_ids: list[uuid.UUID], since: datetime
) -> list[tuple[ScheduleSlot, Schedule]]:
    rows = session.execute(
        select(ScheduleSlot, Schedule)
        .join(Schedule, Schedule.id == ScheduleSlot.schedule_id)
        .where(
            Schedule.team_id.in_(team_ids), ScheduleSlot.status == "skipped", ScheduleSlot.created_at >= since
        )
    )
    return [(slot, s) for slot, s in rows]


def regressions(
    session: Session, team_ids: list[uuid.UUID], since: datetime
) -> list[tuple[SeriesDetection, Series]]:
    rows = session.execute(
        select(SeriesDetection, Series)
        .join(Series, Series.id == SeriesDetection.series_id)
        .where(
            Series.team_id.in_(team_ids),
            SeriesDetection.direction == "regression",
            SeriesDetection.status == "open",
            SeriesDetection.created_at >= since,
            # a change in runs older than that (found over the history after the thresholds
            # changed, say) is shown on the history page, not sent as news
            SeriesDetection.at >= since,
        )
        .order_by(SeriesDetection.created_at, SeriesDetection.id)
    )
    return [(d, s) for d, s in rows]
