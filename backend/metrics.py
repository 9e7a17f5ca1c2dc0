"""Prometheus metrics at /metrics, read from the database.

Anonymous scrapes get only aggregates over the whole server, which name no team: runs by status
and agents by online state. A scrape with a user's bearer token (Prometheus' `authorization`
setting) also gets the same figures per team, labelled with the team's name, for the teams that
user belongs to only. An invalid token is a 401 (a misconfigured scraper should notice).
"""

import uuid
from collections.abc import Iterator
from typing import Annotated

from fastapi import APIRouter, Depends, Request, Response
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector
from sqlalchemy import func, select
from sqlalchemy.orm import Session, sessionmaker

from backend.auth import service as auth_service
from backend.auth.principal import UserPrincipal
from backend.db import get_session_factory, get_sessionmaker
from backend.errors import Forbidden, Unauthorized
from backend.models import Agent, Run, Team

router = APIRouter(tags=["health"])


class _DbCollector(Collector):
    def collect(self) -> Iterator[GaugeMetricFamily]:
        runs = GaugeMetricFamily("iowatt_runs", "Runs by status", labels=["status"])
        agents = GaugeMetricFamily("iowatt_agents", "Agents by online state", labels=["online"])
        with get_sessionmaker()() as s:
            for status, n in s.execute(select(Run.status, func.count()).group_by(Run.status)):
                runs.add_metric([status.value], n)
            for online, n in s.execute(select(Agent.online, func.count()).group_by(Agent.online)):
                agents.add_metric([str(online).lower()], n)
        yield runs
        yield agents


class _TeamCollector(Collector):
    """The caller's teams only."""

    def __init__(self, factory: sessionmaker[Session], team_ids: list[uuid.UUID]) -> None:
        self.factory = factory
        self.team_ids = team_ids

    def collect(self) -> Iterator[GaugeMetricFamily]:
        runs = GaugeMetricFamily("iowatt_team_runs", "Runs by team and status", labels=["team", "status"])
        agents = GaugeMetricFamily(
            "iowatt_team_agents", "Agents by team and online state", labels=["team", "online"]
        )
        with self.factory() as s:
            for team, status, n in s.execute(
                select(Team.name, Run.status, func.count())
                .join(Team, Team.id == Run.team_id)
                .where(Run.team_id.in_(self.team_ids))
                .group_by(Team.name, Run.status)
            ):
                runs.add_metric([team, status.value], n)
            for team, online, n in s.execute(
                select(Team.name, Agent.online, func.count())
                .join(Team, Team.id == Agent.team_id)
                .where(Agent.team_id.in_(self.team_ids))
                .group_by(Team.name, Agent.online)
            ):
                agents.add_metric([team, str(online).lower()], n)
        yield runs
        yield agents


_registry = CollectorRegistry()
_registry.register(_DbCollector())


def _caller(factory: sessionmaker[Session], request: Request) -> UserPrincipal | None:
    scheme, _, raw = request.headers.get("authorization", "").partition(" ")
    if not raw.strip():
        return None
    if scheme.lower() != "bearer":
        raise Unauthorized("use Authorization: Bearer <token>", code="no_token")
    with factory() as s, s.begin():
        principal = auth_service.authenticate(s, raw_token=raw.strip())
    if not isinstance(principal, UserPrincipal):
        raise Forbidden("per-team metrics need a user's token", code="user_only")
    return principal


@router.get("/metrics", include_in_schema=False)
def metrics(
    request: Request, factory: Annotated[sessionmaker[Session], Depends(get_session_factory)]
) -> Response:
    principal = _caller(factory, request)
    body = generate_latest(_registry)
    if principal is not None and principal.team_ids:
        team = CollectorRegistry()
        team.register(_TeamCollector(factory, principal.team_ids))
        body += generate_latest(team)
    return Response(body, media_type=CONTENT_TYPE_LATEST)
