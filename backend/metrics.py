"""Prometheus metrics at /metrics.

Anonymous scrapes get only aggregates over the whole server, which name no team:
- from the database at scrape time: runs by status (`iowatt_runs`), agents by online state
  (`iowatt_agents`, both states always present), the outbox backlog (`iowatt_outbox_unsent`,
  `iowatt_outbox_oldest_unsent_age_seconds`), leases held and those past their expiry that the
  worker has not expired yet (`iowatt_leases`, `iowatt_leases_overdue`: beat or the worker is not
  running), the database's size (`iowatt_database_size_bytes`);
- from Redis at scrape time: the Celery queue's length and the messages taken but not yet
  acknowledged (`iowatt_queue_messages`, `iowatt_queue_unacked`), the age of the newest worker
  heartbeat (`iowatt_worker_heartbeat_age_seconds`, +Inf when none was ever seen) and the workers
  by state (`iowatt_workers{state}`: alive when its own beat is younger than /health's 12 s), and
  `iowatt_redis_up`;
- from counters the worker keeps in Redis (backend.counters: one hash, `COUNTERS_KEY`, so every
  worker process adds to the same figure): lease expiries by outcome
  (`iowatt_lease_expiries_total`) and task failures by task name (`iowatt_task_failures_total`);
- from the API processes: request latency by method, route template and status
  (`iowatt_http_request_duration_seconds`), result uploads answered "already stored"
  (`iowatt_upload_duplicates_total`: an agent's retry) and the rows requests stored, by kind
  (`iowatt_ingested_total{kind}`: results, result_jobs, series_points, power_samples; counted when
  the request's transaction commits, backend.counters.ingested), the bulk lane's requests waiting
  and running (`iowatt_api_bulk_waiting`, `iowatt_api_bulk_running`), their waits
  (`iowatt_api_bulk_wait_seconds`) and those shed (`iowatt_api_bulk_shed_total{reason}`;
  backend/kit/lanes.py), and `iowatt_build_info{version}`.
  `backend.serve` runs several API processes behind one port and sets PROMETHEUS_MULTIPROC_DIR:
  each process then writes these to its own file there (prometheus_client's multiprocess mode)
  and a scrape, whichever process answers it, sums every process's files. Without the variable
  (one process, the tests' app) they live in this process's memory.

Every figure read from the database or Redis is the whole server's, the same whichever API
process or pod answers: a dashboard or rule takes `max` of them over the scraped instances, never
`sum` (deploy/monitoring/README.md).

A scrape with a user's bearer token (Prometheus' `authorization`
setting) also gets the same figures per team, labelled with the team's name and id, for the teams that
user belongs to only. An invalid token is a 401 (a misconfigured scraper should notice).
"""

import contextlib
import math
import os
import time
import uuid
from collections.abc import Iterator
from typing import Annotated

import redis
from fastapi import APIRouter, Depends, Request, Response
from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    Info,
    generate_latest,
)
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.multiprocess import MultiProcessCollector
from prometheus_client.registry import Collector
from sqlalchemy import func, select, text
from sqlalchemy.orm import Session, sessionmaker

from backend import __version__
from backend.auth import service as auth_service
from backend.auth.principal import UserPrincipal
from backend.config import get_settings
from backend.counters import (  # noqa: F401 - count: its former home
    COUNTERS_KEY,
    count,
    counters_redis,
    on_ingest,
)
from backend.db import get_session_factory, get_sessionmaker
from backend.errors import Forbidden, Unauthorized
from backend.health import WORKER_SEEN_KEY, WORKERS_FORGET_S, WORKERS_SEEN_KEY
from backend.health.router import WORKER_STALE_S
from backend.kit import lanes
from backend.kit.lanes import CONTROL
from backend.logs import log
from backend.models import ACTIVE_STATUSES, Agent, OutboxTask, Run, Team

router = APIRouter(tags=["health"], dependencies=[CONTROL])

UPLOAD_ROUTE = "/api/v1/runs/{run_id}/result"


_SHARED_COUNTERS = {
    "lease_expiries": ("iowatt_lease_expiries", "Leases that expired, by outcome", "outcome"),
    "task_failures": ("iowatt_task_failures", "Celery tasks that raised, by task name", "task"),
}


class _DbCollector(Collector):
    def collect(self) -> Iterator[Metric]:
        runs = GaugeMetricFamily("iowatt_runs", "Runs by status", labels=["status"])
        agents = GaugeMetricFamily("iowatt_agents", "Agents by online state", labels=["online"])
        with get_sessionmaker()() as s:
            for status, n in s.execute(select(Run.status, func.count()).group_by(Run.status)):
                runs.add_metric([status.value], n)
            by_state = {"true": 0, "false": 0}  # both always: "none offline" is a 0, not a gap
            for online, n in s.execute(select(Agent.online, func.count()).group_by(Agent.online)):
                by_state[str(online).lower()] = n
            for state, n in by_state.items():
                agents.add_metric([state], n)
            unsent, oldest = s.execute(
                select(func.count(), func.min(OutboxTask.created_at)).where(OutboxTask.sent_at.is_(None))
            ).one()
            now = s.scalar(select(func.now()))
            held, overdue = s.execute(
                select(
                    func.count(Run.lease_expires_at),
                    func.count().filter(Run.lease_expires_at < func.now()),
                ).where(Run.status.in_(ACTIVE_STATUSES))
            ).one()
            size = s.scalar(text("SELECT pg_database_size(current_database())"))
        yield runs
        yield agents
        yield GaugeMetricFamily(
            "iowatt_leases", "Leases held by agents (runs assigned or running)", value=held
        )
        yield GaugeMetricFamily(
            "iowatt_leases_overdue",
            "Leases past their expiry not yet expired (the worker expires them every 15 s: beat or "
            "the worker is not running when this stays above 0)",
            value=overdue,
        )
        yield GaugeMetricFamily("iowatt_database_size_bytes", "The database's size on disk", value=size or 0)
        yield GaugeMetricFamily(
            "iowatt_outbox_unsent", "Outbox tasks not yet sent to the broker", value=unsent
        )
        age = (now - oldest).total_seconds() if oldest is not None and now is not None else 0.0
        yield GaugeMetricFamily(
            "iowatt_outbox_oldest_unsent_age_seconds",
            "Age of the oldest unsent outbox task (0 when none)",
            value=max(age, 0.0),
        )
        yield from _shared_counters()
        yield from _redis_figures()


CELERY_QUEUE = "celery"  # the one queue (worker/app.py routes nothing elsewhere)
# kombu's Redis transport keeps a list per priority step: `celery` (0, the dispatch path's tasks)
# and `celery\x06\x16N` for the others (backend.outbox.priority_of); the queue is their sum
_PRIORITY_KEYS = [CELERY_QUEUE, *(f"{CELERY_QUEUE}\x06\x16{step}" for step in (3, 6, 9))]
UNACKED_KEY = "unacked"  # kombu's Redis transport: messages delivered and not yet acknowledged


def _redis_figures() -> Iterator[Metric]:
    """The queue, the workers' heartbeats and whether Redis answers (nothing but iowatt_redis_up=0
    when it does not: the figures are missing, not zero)."""
    up = GaugeMetricFamily("iowatt_redis_up", "1 when the API reaches Redis")
    try:
        r = counters_redis(get_settings().redis_url)
        with r.pipeline(transaction=False) as p:
            for key in _PRIORITY_KEYS:
                p.llen(key)
            p.hlen(UNACKED_KEY)
            p.get(WORKER_SEEN_KEY)
            p.hgetall(WORKERS_SEEN_KEY)
            *lengths, unacked, newest, seen = p.execute()
            queued = sum(lengths)
    except (redis.RedisError, OSError) as exc:
        log.warning("metrics.redis_unavailable", error=str(exc).splitlines()[0][:200])
        up.add_metric([], 0)
        yield up
        return
    up.add_metric([], 1)
    yield up
    queue = GaugeMetricFamily("iowatt_queue_messages", "Celery messages waiting in Redis", labels=["queue"])
    queue.add_metric([CELERY_QUEUE], queued)
    yield queue
    yield GaugeMetricFamily(
        "iowatt_queue_unacked", "Celery messages a worker took and has not acknowledged yet", value=unacked
    )
    now = time.time()
    age = max(now - float(newest), 0.0) if newest else math.inf
    yield GaugeMetricFamily(
        "iowatt_worker_heartbeat_age_seconds",
        "Seconds since the newest heartbeat of any Celery worker (+Inf: none seen)",
        value=age,
    )
    workers = GaugeMetricFamily(
        "iowatt_workers",
        f"Celery worker processes by state: alive (beat within {WORKER_STALE_S} s) or stale "
        f"(silent, forgotten after {WORKERS_FORGET_S} s)",
        labels=["state"],
    )
    states = {"alive": 0, "stale": 0}
    gone = []
    for field, value in seen.items():
        silent = now - float(value)
        if silent >= WORKERS_FORGET_S:
            gone.append(field)
        else:
            states["alive" if silent < WORKER_STALE_S else "stale"] += 1
    for state, n in states.items():
        workers.add_metric([state], n)
    yield workers
    if gone:
        with contextlib.suppress(redis.RedisError, OSError):
            r.hdel(WORKERS_SEEN_KEY, *gone)


def _shared_counters() -> Iterator[Metric]:
    families = {
        key: CounterMetricFamily(name, doc, labels=[label])
        for key, (name, doc, label) in _SHARED_COUNTERS.items()
    }
    try:
        raw = counters_redis(get_settings().redis_url).hgetall(COUNTERS_KEY)
    except (redis.RedisError, OSError) as exc:  # Redis down: the counters are missing, not wrong
        log.warning("metrics.counters_unavailable", error=str(exc).splitlines()[0][:200])
        raw = {}
    for field, value in raw.items():
        key, _, label = (field.decode() if isinstance(field, bytes) else field).partition("|")
        if key in families:
            families[key].add_metric([label], float(value))
    yield from families.values()


class _TeamCollector(Collector):
    """The caller's teams only."""

    def __init__(self, factory: sessionmaker[Session], team_ids: list[uuid.UUID]) -> None:
        self.factory = factory
        self.team_ids = team_ids

    def collect(self) -> Iterator[GaugeMetricFamily]:
        # team_id beside the name: two of a user's teams may carry the same name (names are unique
        # only among the teams their creator belongs to), and each must stay its own series
        runs = GaugeMetricFamily(
            "iowatt_team_runs", "Runs by team and status", labels=["team", "team_id", "status"]
        )
        agents = GaugeMetricFamily(
            "iowatt_team_agents", "Agents by team and online state", labels=["team", "team_id", "online"]
        )
        with self.factory() as s:
            for team, team_id, status, n in s.execute(
                select(Team.name, Team.id, Run.status, func.count())
                .join(Team, Team.id == Run.team_id)
                .where(Run.team_id.in_(self.team_ids))
                .group_by(Team.id, Team.name, Run.status)
            ):
                runs.add_metric([team, str(team_id), status.value], n)
            for team, team_id, online, n in s.execute(
                select(Team.name, Team.id, Agent.online, func.count())
                .join(Team, Team.id == Agent.team_id)
                .where(Agent.team_id.in_(self.team_ids))
                .group_by(Team.id, Team.name, Agent.online)
            ):
                agents.add_metric([team, str(team_id), str(online).lower()], n)
        yield runs
        yield agents


_registry = CollectorRegistry()
_registry.register(_DbCollector())

# Read once, as prometheus_client does at import: the value class of every metric below follows it.
MULTIPROCESS_DIR = os.environ.get("PROMETHEUS_MULTIPROC_DIR") or None
# the per-process metrics: in this registry with one process, in the shared files with several
_own = None if MULTIPROCESS_DIR else _registry

_latency = Histogram(
    "iowatt_http_request_duration_seconds",
    "API request duration by method, route template and status (a long-poll lasts its wait: up to "
    "IOWATT_LONGPOLL_MAX_WAIT_S, 80 s by default, at most 300)",
    ["method", "route", "status"],
    # past 60 s for the long-polls' waits (ADR 0053): an 80 s poll fell in +Inf with 60 the last
    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 90.0, 120.0, 300.0),
    registry=_own,
)
_upload_duplicates = Counter(
    "iowatt_upload_duplicates",
    "Result uploads answered 'already stored' (200): an agent retried an upload that had landed",
    registry=_own,
)
_ingested = Counter(
    "iowatt_ingested",
    "Rows stored by the API, by kind (results, result_jobs, series_points, power_samples), counted "
    "when the request's transaction commits",
    ["kind"],
    registry=_own,
)
for _kind in ("results", "result_jobs", "series_points", "power_samples"):
    _ingested.labels(_kind)  # present at 0 from the start: rate() needs the first sample
on_ingest(lambda kind, n: _ingested.labels(kind).inc(n))
Info("iowatt_build", "The server's version", registry=_registry).info({"version": __version__})

# the bulk lane (backend/kit/lanes.py, docs/adr/0056): per process, summed over the live processes
_bulk_waiting = Gauge(
    "iowatt_api_bulk_waiting",
    "Bulk requests (users' reads and other non-control requests) waiting for a slot now",
    multiprocess_mode="livesum",
    registry=_own,
)
_bulk_running = Gauge(
    "iowatt_api_bulk_running",
    "Bulk requests in progress now (at most IOWATT_BULK_CONCURRENCY per API process)",
    multiprocess_mode="livesum",
    registry=_own,
)
_bulk_wait = Histogram(
    "iowatt_api_bulk_wait_seconds",
    "How long each admitted bulk request waited for its slot (0 when one was free)",
    buckets=(0.001, 0.01, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 20.0, 30.0, 60.0),
    registry=_own,
)
_bulk_shed = Counter(
    "iowatt_api_bulk_shed",
    "Bulk requests not run, by reason: 503 overloaded for queue_full (IOWATT_BULK_QUEUE waiting "
    "already) or wait_timeout (waited IOWATT_BULK_WAIT_S); client_gone (499: the client left while "
    "the request waited)",
    ["reason"],
    registry=_own,
)
for _reason in ("queue_full", "wait_timeout", "client_gone"):
    _bulk_shed.labels(_reason)


def _on_lane(event: str, value: float | str) -> None:
    if event == "waiting":
        _bulk_waiting.set(float(value))
    elif event == "running":
        _bulk_running.set(float(value))
    elif event == "admitted":
        _bulk_wait.observe(float(value))
    elif event == "shed":
        _bulk_shed.labels(str(value)).inc()


lanes.observe(_on_lane)


def observe_request(method: str, route: str, status: int, seconds: float) -> None:
    """Called by backend.logs.RequestLogMiddleware once per request."""
    _latency.labels(method, route, str(status)).observe(seconds)
    if method == "PUT" and route == UPLOAD_ROUTE and status == 200:
        _upload_duplicates.inc()


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
    if MULTIPROCESS_DIR:  # every API process's latency and duplicate counts, summed
        every = CollectorRegistry()
        MultiProcessCollector(every, path=MULTIPROCESS_DIR)  # type: ignore[no-untyped-call]
        body += generate_latest(every)
    if principal is not None and principal.team_ids:
        team = CollectorRegistry()
        team.register(_TeamCollector(factory, principal.team_ids))
        body += generate_latest(team)
    return Response(body, media_type=CONTENT_TYPE_LATEST)
