"""Database engine and the request/task unit of work.

One request or one task is one transaction: `get_session` commits when the route returns
without error and rolls back otherwise. Celery tasks queued during the request are outbox rows
of that same transaction, sent after it commits (see `backend.outbox`).
"""

import asyncio
import weakref
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from functools import lru_cache

from sqlalchemy import Engine, create_engine
from sqlalchemy.orm import Session, sessionmaker

from backend.config import get_settings
from backend.logs import log

# Connections a process keeps open: the API's REQUEST_SESSIONS (20), the long-polls' own threads
# (backend.agent.service.LONGPOLL_THREADS, 8) and 2 spare, as deploy/helm sizes max_connections
# (30 per API process). All 30 stay open once made, none past them (a 31st waits for one, as
# before): with pool_size=10 and max_overflow=20 (the same 30 at most) every connection past the
# tenth was closed when given back and made again by a later request, a new PostgreSQL backend
# each time. At 1,000 agents that was ~12 new backends a second (1,236 in one load run against 65
# kept), each a fork, its authentication and cold caches: PostgreSQL's CPU 0.46 -> 0.31 s/s of the
# 2-core machine's 2 (perf, docs/benchmarks.md § A thousand agents on two cores).
POOL_CONNECTIONS = 30


def make_engine(url: str) -> Engine:
    return create_engine(url, pool_pre_ping=True, pool_size=POOL_CONNECTIONS, max_overflow=0)


@lru_cache
def get_engine() -> Engine:
    return make_engine(get_settings().database_url)


@lru_cache
def get_sessionmaker() -> sessionmaker[Session]:
    return sessionmaker(bind=get_engine(), expire_on_commit=False)


def unreachable(exc: BaseException) -> bool:
    """The error is the database being out of reach (connection refused or lost, the server
    shutting down or starting), not a statement's error: the API answers it 503
    `database_unavailable`."""
    from sqlalchemy.exc import OperationalError

    if not isinstance(exc, OperationalError):
        return False
    state = getattr(exc.orig, "sqlstate", None)
    # psycopg's connection errors carry no SQLSTATE; 08: connection exception; 57P01-57P03: admin
    # or crash shutdown, cannot connect now
    return exc.connection_invalidated or state is None or state.startswith(("08", "57P"))


@contextmanager
def unit_of_work() -> Iterator[Session]:
    """A transaction for code outside a request (tasks, CLI): commit on success."""
    session = get_sessionmaker()()
    try:
        yield session
        session.commit()
    except BaseException:
        try:
            session.rollback()
        except Exception as exc:  # the original error is the one worth raising
            log.warning("db.rollback_failed", error=str(exc)[:200])
        raise
    finally:
        session.close()


# Requests that hold a session at the same time, per API process (one event loop). A request's
# session keeps its pooled connection from its first query (authentication) to its commit, across
# several hops to the threadpool; with more such requests than pooled connections
# (POOL_CONNECTIONS), every thread could wait for a connection while every connection waits for
# a thread: bench/load's 200 agents stopped the API that way. The pool's other 10: the long-polls'
# own 8 threads (backend.agent.service.LONGPOLL_THREADS) and 2 spare. Waiting for a slot costs no
# thread.
REQUEST_SESSIONS = 20
_slots: "weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Semaphore]" = (
    weakref.WeakKeyDictionary()
)


async def get_session() -> AsyncIterator[Session]:
    """FastAPI dependency: the request's unit of work (exit code runs before the response), once
    one of REQUEST_SESSIONS slots is free. Entered on the event loop: making the session does no
    I/O (it takes its connection at its first statement, on the thread that runs it), so it needs
    no hop to the threadpool (one per request less, bench/load/route_cpu.py); its end (commit or
    rollback, close) does I/O and runs on a thread, as FastAPI runs a sync generator dependency's
    exit (contextmanager_in_threadpool: shielded from cancellation, on a limiter of its own, the
    route's error raised again after the rollback)."""
    # anyio is imported here, not at the top: the worker and `iowatt-server` use this module
    # without serving a request (tests/backend/test_startup_imports.py)
    import anyio
    import anyio.to_thread

    loop = asyncio.get_running_loop()
    slots = _slots.get(loop)
    if slots is None:
        slots = _slots[loop] = asyncio.Semaphore(REQUEST_SESSIONS)
    async with slots:
        work = unit_of_work()
        session = work.__enter__()
        # the exit waits for no threadpool slot (a limiter of its own, as FastAPI's): a request
        # holding a pooled connection must be able to give it back while every thread is busy
        exit_limiter = anyio.CapacityLimiter(1)
        try:
            yield session
        except BaseException as exc:
            with anyio.CancelScope(shield=True):
                ok = await anyio.to_thread.run_sync(
                    work.__exit__, type(exc), exc, exc.__traceback__, limiter=exit_limiter
                )
            if not ok:
                raise
        else:
            with anyio.CancelScope(shield=True):
                await anyio.to_thread.run_sync(work.__exit__, None, None, None, limiter=exit_limiter)


async def get_session_factory() -> sessionmaker[Session]:
    """FastAPI dependency for routes that manage short transactions themselves (long-polls). A
    coroutine (no I/O): a sync one was a hop to the threadpool for every long-poll look and
    `GET /health`."""
    return get_sessionmaker()
