"""All SQL of the environment domain: environments and their imported hourly grid series."""

import uuid
from datetime import datetime

from sqlalchemy import delete, func, insert, select
from sqlalchemy.orm import Session

from backend.models import Agent, Campaign, Environment, GridIntensityHour, Run


def get(session: Session, env_id: object) -> Environment | None:
    return session.get(Environment, env_id)


def list_in_teams(session: Session, team_ids: list[uuid.UUID]) -> list[Environment]:
    return list(
        session.scalars(
            select(Environment).where(Environment.team_id.in_(team_ids)).order_by(Environment.name)
        )
    )


def hour_counts(session: Session, env_ids: list[uuid.UUID]) -> dict[uuid.UUID, int]:
    """How many imported hours each environment has (environments without any are absent)."""
    if not env_ids:
        return {}
    rows = session.execute(
        select(GridIntensityHour.environment_id, func.count())
        .where(GridIntensityHour.environment_id.in_(env_ids))
        .group_by(GridIntensityHour.environment_id)
    )
    return dict(rows.tuples().all())


def replace_series(session: Session, env_id: uuid.UUID, series: dict[datetime, float]) -> None:
    session.execute(delete(GridIntensityHour).where(GridIntensityHour.environment_id == env_id))
    session.execute(
        insert(GridIntensityHour),
        [{"environment_id": env_id, "hour_utc": h, "g_per_kwh": g} for h, g in sorted(series.items())],
    )


def hours_between(
    session: Session, env_id: uuid.UUID, start: datetime, end: datetime
) -> dict[datetime, float]:
    """The imported hourly intensities from the hour of `start` to `end`."""
    rows = session.execute(
        select(GridIntensityHour.hour_utc, GridIntensityHour.g_per_kwh).where(
            GridIntensityHour.environment_id == env_id,
            GridIntensityHour.hour_utc >= start.replace(minute=0, second=0, microsecond=0),
            GridIntensityHour.hour_utc <= end,
        )
    )
    return {hour: g for hour, g in rows}


def campaigns_naming(session: Session, team_id: uuid.UUID, env_id: uuid.UUID) -> list[str]:
    """Ids of the team's campaigns whose targets name the environment."""
    rows = session.scalars(
        select(Campaign.id)
        .where(
            Campaign.team_id == team_id,
            Campaign.spec["targets"].contains([{"environment_id": str(env_id)}]),
        )
        .order_by(Campaign.created_at.desc())
    )
    return [str(i) for i in rows]


def run_in_teams(session: Session, run_id: uuid.UUID, team_ids: list[uuid.UUID]) -> Run | None:
    return session.scalars(select(Run).where(Run.id == run_id, Run.team_id.in_(team_ids))).first()


def latest_run_target(session: Session, env_id: uuid.UUID) -> tuple[uuid.UUID, str] | None:
    """The agent and target path of the newest run of an agent (not an upload) in the environment."""
    row = session.execute(
        select(Run.agent_id, Run.target_path)
        .where(Run.environment_id == env_id, Run.source == "agent")
        .order_by(Run.created_at.desc())
        .limit(1)
    ).first()
    return (row[0], row[1]) if row else None


def agent_in_team(session: Session, agent_id: uuid.UUID, team_id: uuid.UUID) -> Agent | None:
    return session.scalars(select(Agent).where(Agent.id == agent_id, Agent.team_id == team_id)).first()
