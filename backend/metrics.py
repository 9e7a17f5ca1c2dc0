"""Prometheus metrics at /metrics: runs by status and agents online, read from the database."""

from collections.abc import Iterator

from fastapi import APIRouter, Response
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector
from sqlalchemy import func, select

from backend.db import get_sessionmaker
from backend.models import Agent, Run

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


_registry = CollectorRegistry()
_registry.register(_DbCollector())


@router.get("/metrics", include_in_schema=False)
def metrics() -> Response:
    return Response(generate_latest(_registry), media_type=CONTENT_TYPE_LATEST)
