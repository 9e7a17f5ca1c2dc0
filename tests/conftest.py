"""Shared fixtures: one private PostgreSQL + Redis per test process, the schema built by the
real migrations, and each test in a transaction rolled back at the end."""

from __future__ import annotations

import atexit
import contextlib
import os
import shutil
import tempfile
from collections.abc import Callable, Generator, Iterator
from typing import TYPE_CHECKING

import pytest

# The server's libraries (alembic, FastAPI, SQLAlchemy, the test client) are imported where a
# fixture uses them: the controlling process of `pytest -n` imports this file too and runs no test
# (they cost it ~0.7 CPU-s; the test processes import them with their first test module anyway).
if TYPE_CHECKING:
    from alembic.config import Config
    from fastapi import FastAPI
    from fastapi.testclient import TestClient
    from sqlalchemy.engine import Connection, Engine
    from sqlalchemy.orm import Session

    from tests.services import Postgres
    from tests.stack import Stack

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def alembic_config(url: str) -> Config:
    from alembic.config import Config

    cfg = Config(os.path.join(REPO, "alembic.ini"))
    cfg.set_main_option("script_location", os.path.join(REPO, "migrations"))
    cfg.attributes["database_url"] = url
    cfg.attributes["configure_logger"] = False
    cfg.attributes["allow_downgrade"] = True  # the migration tests go down on purpose (ADR 0043)
    return cfg


def reset_settings_caches() -> None:
    from backend.agent.wake import get_redis
    from backend.config import get_settings
    from backend.db import get_engine, get_sessionmaker

    for f in (get_settings, get_engine, get_sessionmaker, get_redis):
        f.cache_clear()


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """A test on the shared stack names its xdist group (tests/stack.py STACK_GROUPS: one stack per
    group's process). The order: tests marked slow first, so that `--dist loadgroup`, which hands
    out its groups largest first and then single tests in this order, starts a minutes-long test
    early instead of leaving it for the end while the other process idles (so do tests marked
    `early`: tests of `make test-fast` that mostly wait, half a minute or more or bound by the clock);
    tests marked after_stack_tests (the stack's leak check) last: xdist runs a group's tests in
    this order, so they end their group."""
    from tests.stack import STACK_GROUPS

    for item in items:
        if {"live", "shared_stack"} & set(getattr(item, "fixturenames", ())):
            mark = item.get_closest_marker("xdist_group")
            if mark is None or mark.args[0] not in STACK_GROUPS:
                raise pytest.UsageError(
                    f"{item.nodeid} uses the shared stack: mark it xdist_group(one of {STACK_GROUPS}) "
                    "(docs/testing.md)"
                )
    items.sort(
        key=lambda item: (
            item.get_closest_marker("after_stack_tests") is not None,
            item.get_closest_marker("slow") is None and item.get_closest_marker("early") is None,
        )
    )


@pytest.fixture(scope="session")
def pg() -> Iterator[Postgres]:
    from tests.services import postgres

    with postgres() as server:
        yield server


@pytest.fixture(scope="session")
def redis_url() -> Iterator[str]:
    from tests.services import redis_server

    with redis_server() as url:
        yield url


@pytest.fixture(scope="session")
def db_url(pg: Postgres, redis_url: str) -> Iterator[str]:
    url = pg.migrated_database("iowatt_test")
    os.environ["IOWATT_DATABASE_URL"] = url
    os.environ["IOWATT_REDIS_URL"] = redis_url
    os.environ["IOWATT_ENV"] = "test"
    # real Argon2id, with test-sized cost (the default's 64 MiB x 3 passes per user is slow here);
    # one lane: with four, each hash and check started threads for 1 MiB of work (1.59 against 0.75
    # ms of CPU a hash; about one per test that makes a user)
    os.environ.setdefault("IOWATT_ARGON2_MEMORY_KIB", "1024")
    os.environ.setdefault("IOWATT_ARGON2_TIME_COST", "1")
    os.environ.setdefault("IOWATT_ARGON2_PARALLELISM", "1")
    reset_settings_caches()
    yield url


@pytest.fixture(scope="session")
def engine(db_url: str) -> Iterator[Engine]:
    from sqlalchemy import create_engine

    eng = create_engine(db_url)
    yield eng
    eng.dispose()


@pytest.fixture
def connection(engine: Engine) -> Iterator[Connection]:
    conn = engine.connect()
    trans = conn.begin()
    yield conn
    trans.rollback()
    conn.close()


@pytest.fixture
def session(connection: Connection) -> Iterator[Session]:
    from sqlalchemy.orm import Session

    s = Session(bind=connection, join_transaction_mode="create_savepoint", expire_on_commit=False)
    yield s
    s.close()


def _memoize_fastapi_dependants() -> None:
    """With any dependency override set (the `client` fixture overrides the session), FastAPI
    analyses every sub-dependency of every request again (`get_dependant`: inspect.signature, the
    annotations, each parameter): 9 % of a simple request's CPU in process (median of 8 alternating
    blocks), 8 % of the security matrix's hostile uploads. The analysis
    depends only on its arguments, so the tests keep the last few hundred: the same Dependant for
    the same call, path and scopes (`call` compared by identity; a new override function, as each
    test's is, is analysed once). Only the tests do this; a FastAPI whose function moved or whose
    arguments cannot be a key is left as it is."""
    import threading
    from collections import OrderedDict

    from fastapi.dependencies import utils

    original = utils.get_dependant
    if getattr(original, "iowatt_memoized", False):
        return
    cache: OrderedDict[tuple[object, ...], object] = OrderedDict()
    lock = threading.Lock()

    def get_dependant(**kwargs: object) -> object:
        call = kwargs.get("call")
        try:
            key = (id(call),) + tuple(
                (k, tuple(v) if isinstance(v, list) else v) for k, v in sorted(kwargs.items()) if k != "call"
            )
            hash(key)
        except TypeError:
            return original(**kwargs)
        with lock:
            hit = cache.get(key)
            if hit is not None and getattr(hit, "call", None) is call:
                cache.move_to_end(key)
                return hit
        made = original(**kwargs)
        with lock:
            cache[key] = made
            while len(cache) > 512:
                cache.popitem(last=False)
        return made

    get_dependant.iowatt_memoized = True  # type: ignore[attr-defined]
    utils.get_dependant = get_dependant  # type: ignore[assignment]


@pytest.fixture(scope="session")
def app_client(db_url: str) -> Iterator[TestClient]:
    """One app and its TestClient per test process, started once (its lifespan: the presets, the
    dummy password hash). A fresh app per test cost ~20 ms of start-up plus up to ~140 ms the first
    time a request walked the routers (FastAPI builds each included router's effective routes on
    first use, per app): a third of an API test's CPU. Use it through `client`, which gives each
    test this test's database session and a clean client; a test that changes the app itself
    (routes, middleware, settings read when the app is made) makes its own with create_app()."""
    from backend.main import create_app
    from tests.asgi_client import InProcessClient

    # one hand-over into the app's event loop per request, not eight (tests/asgi_client.py)
    with InProcessClient(create_app(), raise_server_exceptions=True) as c:
        yield c


@pytest.fixture
def client(app_client: TestClient, session: Session, connection: Connection) -> Iterator[TestClient]:
    """The process's app (app_client) for one test: its requests use this test's session (each
    request a savepoint in the test's transaction); no cookies, headers or dependency overrides
    of another test, before or after it."""
    from fastapi import FastAPI
    from sqlalchemy.orm import sessionmaker

    from backend.db import get_session, get_session_factory

    c = app_client
    app = c.app
    assert isinstance(app, FastAPI)
    routes = list(app.router.routes)
    headers = c.headers.copy()

    def _session() -> Iterator[Session]:
        # Each request is a savepoint inside the test's transaction: a failing request rolls back
        # its own writes (as a real request would) but not the test's fixtures.
        nested = session.begin_nested()
        try:
            yield session
            nested.commit()
        except BaseException:
            nested.rollback()
            raise

    factory = sessionmaker(bind=connection, join_transaction_mode="create_savepoint", expire_on_commit=False)

    async def _factory() -> sessionmaker[Session]:  # a coroutine as get_session_factory: no hop
        return factory

    app.dependency_overrides.clear()
    app.dependency_overrides[get_session] = _session
    app.dependency_overrides[get_session_factory] = _factory
    c.cookies.clear()
    try:
        yield c
    finally:
        app.dependency_overrides.clear()
        c.cookies.clear()
        c.headers = headers
    assert app.router.routes == routes, (
        "the test changed the shared app's routes: make its own app with create_app() instead"
    )


@pytest.fixture(scope="session")
def shared_stack(pg: Postgres, redis_url: str, db_url: str) -> Iterator[Stack]:
    """The whole platform as real processes, one per test process, shared by its end-to-end and
    browser tests (through `live`)."""
    from tests.stack import stack

    # one API process (production and the fault rigs run API_WORKERS): the shared stacks' tests
    # are about what the platform does, not how it spreads requests over processes, which
    # tests/backend/test_multiproc.py and the server fault rig test; a second process cost each of
    # the four stacks its start-up and ~0.4 CPU-s a minute idle
    with stack(pg, redis_url, api_workers=1) as s:
        yield s


@pytest.fixture
def var_tmp() -> Iterator[Callable[[str], str]]:
    """`var_tmp(prefix)`: a directory under /var/tmp (the machine's disk, not tmpfs: direct I/O and a
    DBMS's files behave as on a data disk) for the test's targets, removed after the test (the agent
    removes what it lays out; the directory itself was left behind)."""
    made: list[str] = []

    def make(prefix: str) -> str:
        made.append(tempfile.mkdtemp(prefix=prefix, dir="/var/tmp"))
        return made[-1]

    yield make
    for d in made:
        shutil.rmtree(d, ignore_errors=True)


@pytest.fixture
def live(shared_stack: Stack) -> Iterator[Stack]:
    """The shared stack for one test. What the test changes on it (the host's targets, DBMS
    consent and meters, environments, team workloads, teams joined, runs left in flight) is put
    back after it, so no test depends on the one before (docs/testing.md). The state a test starts
    from is the one the test before it was put back to (restore() checked it: a `state()` is seven
    requests), or read afresh after a test whose restore failed (the two tests that use
    `shared_stack` itself put back what they change, tests/e2e/test_zz_stack_left_clean.py)."""
    before = shared_stack.put_back_to or shared_stack.state()
    shared_stack.put_back_to = None
    yield shared_stack
    put_back = shared_stack.restore(before)
    shared_stack.put_back_to = before
    if put_back:
        print("put back after the test:\n  " + "\n  ".join(put_back))


class _XdistGroupIds:
    """pytest-xdist 3.8 names a test's `--dist loadgroup` group by setting `item._nodeid`
    (`...@stack-a`), which pytest 9 no longer reads (a node's id is `_id`): without this, no group
    held together (the shared stacks' tests ran on either process, and the fuzz short run's tests
    were split from their check)."""

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(self, items: list[pytest.Item]) -> None:
        for item in items:
            nid = item.__dict__.get("_nodeid")
            parent = item.parent
            if (
                isinstance(nid, str)
                and parent is not None
                and nid != item.nodeid
                and nid.startswith(parent.nodeid + "::")
            ):
                item._id = parent.id.child(nid[len(parent.nodeid) + 2 :])


def _rewrite_test_module(path: str) -> None:
    """pytest's cached rewrite of one test module, written as its import hook writes it (`config`
    None: no assertion-pass hook, which `_warm_bytecode` checks is off). A module that does not
    parse is left to pytest, which reports it with its error."""
    from pathlib import Path

    from _pytest.assertion import rewrite

    fn = Path(path)
    cache_dir = rewrite.get_cache_dir(fn)
    pyc = cache_dir / (fn.name[:-3] + rewrite.PYC_TAIL)
    if not rewrite.try_makedirs(cache_dir) or rewrite._read_pyc(fn, pyc) is not None:
        return
    try:
        source_hash, co = rewrite._rewrite_test(fn, None)
    except SyntaxError:
        return
    quiet = type("QuietState", (), {"trace": staticmethod(lambda *_: None)})()
    rewrite._write_pyc(quiet, co, source_hash, pyc)  # type: ignore[arg-type]


def _plugin_sources(hook: object) -> list[str]:
    """The files of the installed pytest plugins' distributions, whose asserts pytest rewrites as it
    does the tests' (its `mark_rewrite` at start-up: hypothesis, schemathesis, anyio, xdist,
    pytest-timeout, ~560 modules, ~360 of them imported at collection). In a fresh virtualenv under
    PYTHONDONTWRITEBYTECODE every test process rewrote those it imported, at every run: ~3 CPU-s of
    each process's collection. A name is looked up on sys.path (nothing is imported); the project's
    own files are left to the rest of `_warm_bytecode`."""
    from importlib.machinery import PathFinder
    from pathlib import Path

    files: list[str] = []
    for name in sorted(getattr(hook, "_must_rewrite", ())):
        spec = None if "." in name else PathFinder.find_spec(name)
        if spec is None or not spec.origin or not spec.origin.endswith(".py"):
            continue
        if spec.submodule_search_locations:
            for d in spec.submodule_search_locations:
                files += sorted(str(f) for f in Path(d).rglob("*.py"))
        else:
            files.append(spec.origin)
    return [f for f in files if os.sep + ".venv" + os.sep in f or not f.startswith(REPO + os.sep)]


def _warm_bytecode(config: pytest.Config) -> None:
    """On a clean clone every xdist process compiled the project's modules and rewrote the asserts of
    every test module (pytest's cached `*-pytest-*.pyc`) at once, each for itself. The controlling
    process does it once, on the CPUs, before they start; they then read the caches. Only a cache:
    if pytest's internals move, the processes compile.

    It writes the caches whatever PYTHONDONTWRITEBYTECODE says (compileall and pytest's pyc writer
    do not ask): with it set, as in this project's CI, the processes may read caches but never
    write one, so each of the four collected cold (44.5-47.7 CPU-s instead of 22.5-23.7, and every
    API, worker and agent process a test started compiled the sources again: docs/testing.md,
    Session 17). The installed pytest plugins' modules too (`_plugin_sources`)."""
    import compileall
    import re
    import sys
    from concurrent.futures import ProcessPoolExecutor
    from pathlib import Path

    repo = Path(REPO)
    jobs = os.cpu_count() or 1
    sources = [
        repo / "backend",
        repo / "worker",
        repo / "migrations",
        repo / "tests",
        repo / "agent" / "src",
        repo / "client" / "src",
    ]
    sources += sorted((repo / "libs").glob("*/src"))
    skip = re.compile(r"(/node_modules/|/test_[^/]*\.py$|/conftest\.py$)")
    for d in sources:
        if d.is_dir():
            compileall.compile_dir(d, quiet=2, rx=skip, workers=jobs)
    try:
        from _pytest.assertion import rewrite

        hook = next((h for h in sys.meta_path if isinstance(h, rewrite.AssertionRewritingHook)), None)
        if hook is None:
            return  # --assert=plain
        if config.getini("enable_assertion_pass_hook"):
            return  # the rewrite then depends on the config: the processes rewrite for themselves
        tests = [
            str(fn)
            for fn in sorted((repo / "tests").rglob("*.py"))
            if "node_modules" not in fn.parts and (fn.name.startswith("test_") or fn.name == "conftest.py")
        ]
        tests += _plugin_sources(hook)
        with ProcessPoolExecutor(max_workers=jobs) as pool:
            list(pool.map(_rewrite_test_module, tests, chunksize=8))
    except Exception:  # noqa: BLE001 - a cache only: the test processes rewrite what is missing
        return


SHARE_DIR_ENV = "IOWATT_TEST_SHARE_DIR"


def _route_fingerprint(app: FastAPI) -> str:
    """What the OpenAPI document of `app` is made from, the same in every process of one run: each
    route's path, methods, name, endpoint (by module and name, its signature), status, response
    model and schema flag, the app's title, version and description, and the size and time of
    every project module loaded (a file edited while the processes started gives another key)."""
    import hashlib
    import inspect
    import sys

    from fastapi.routing import APIRoute

    parts: list[str] = [app.title, app.version, app.description or ""]
    for r in app.routes:
        if isinstance(r, APIRoute):
            call = r.endpoint
            parts.append(
                repr(
                    (
                        r.path,
                        sorted(r.methods or ()),
                        r.name,
                        getattr(call, "__module__", ""),
                        getattr(call, "__qualname__", ""),
                        str(inspect.signature(call)) if r.include_in_schema else "",
                        r.status_code,
                        repr(r.response_model),
                        r.include_in_schema,
                    )
                )
            )
        else:
            parts.append(repr((getattr(r, "path", None), type(r).__name__)))
    for name, mod in sorted(sys.modules.items()):
        f = getattr(mod, "__file__", None)
        if f and f.startswith(REPO + os.sep) and os.sep + ".venv" + os.sep not in f:
            with contextlib.suppress(OSError):
                st = os.stat(f)
                parts.append(f"{name} {st.st_size} {st.st_mtime_ns}")
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()


def _share_openapi_between_workers(share_dir: str) -> None:
    """Every xdist process builds the OpenAPI document while collecting (test_authz_matrix's
    operations, test_fuzz's schema): ~1.7 CPU-s each. The first process to need it builds it under a
    lock and leaves it as JSON in this run's share directory (made by the controlling process, removed
    when the run ends); the others read it (~5 ms), keyed by `_route_fingerprint`. Only a cache: a
    document that does not survive JSON as it is, or any error, and the process builds its own."""
    import fcntl
    import json

    import backend.main as main

    build = main._build_schema
    if getattr(build, "iowatt_shared", False):
        return

    def shared_build(app: FastAPI) -> dict[str, object]:
        try:
            path = os.path.join(share_dir, f"openapi-{_route_fingerprint(app)[:32]}.json")
            with open(path + ".lock", "w", encoding="ascii") as lock:
                fcntl.flock(lock, fcntl.LOCK_EX)
                if os.path.exists(path):
                    with open(path, encoding="utf-8") as f:
                        return json.load(f)  # type: ignore[no-any-return]
                doc = build(app)
                text = json.dumps(doc)
                if json.loads(text) == doc:
                    with open(path + ".part", "w", encoding="utf-8") as f:
                        f.write(text)
                    os.replace(path + ".part", path)
                return doc
        except OSError:
            return build(app)

    shared_build.iowatt_shared = True  # type: ignore[attr-defined]
    main._build_schema = shared_build  # type: ignore[assignment]


@pytest.hookimpl(wrapper=True)
def pytest_collection(session: pytest.Session) -> Generator[None, object, object]:
    """No cyclic garbage collection while the process collects: importing ~390 test modules and
    making ~3,800 items keeps nearly all it allocates, and the collector walked that growing heap in
    full again and again on the way (`--collect-only` of the suite: 11 full collections, its GC
    1.74 of 7.4 CPU-s; with this 4, 1.22). On again when collection ends; what the collection left
    as garbage goes with the next collections."""
    import gc

    if not gc.isenabled():
        return (yield)
    gc.disable()
    try:
        return (yield)
    finally:
        gc.enable()


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config: pytest.Config) -> None:
    share = getattr(config, "_iowatt_share_dir", None)
    if share:
        shutil.rmtree(share, ignore_errors=True)
    # pytest's unraisable-exception plugin runs a full gc.collect() in its pytest_unconfigure
    # (before this one: trylast) and another in its cleanup, after every plugin's
    # pytest_unconfigure: the second walks the whole heap again (0.3-0.4 CPU-s in a test process
    # whose app thawed its frozen heap) for what little the cleanups leave in cycles. Its cleanup
    # still reports any unraisable exception raised meanwhile. The key is pytest's own (private, for
    # its pytester): without it, both collections run as before.
    try:
        from _pytest.unraisableexception import gc_collect_iterations_key
    except ImportError:
        return
    config.stash[gc_collect_iterations_key] = 0


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "early: mostly waiting (half a minute or more, or bound by the clock: rates, think times, a "
        "server's start), yet not slow (make test-fast runs it): started among the first single tests, "
        "beside CPU-bound ones, not left for the end, where it would leave a core idle "
        "(pytest_collection_modifyitems)",
    )
    config.pluginmanager.register(_XdistGroupIds(), "iowatt-xdist-group-ids")
    controller = bool(getattr(config.option, "numprocesses", None)) and not hasattr(config, "workerinput")
    if not controller:  # the controlling process of `pytest -n` runs no test
        # every app a test overrides a dependency of (the `client` fixture's, the security matrix's)
        _memoize_fastapi_dependants()
    if controller:
        _warm_bytecode(config)
        # a directory the test processes of this run share (made before they start, so they inherit
        # the variable; removed at the end): the OpenAPI document built once for all of them
        config._iowatt_share_dir = tempfile.mkdtemp(prefix="iowatt-pytest-share-")  # type: ignore[attr-defined]
        os.environ[SHARE_DIR_ENV] = config._iowatt_share_dir  # type: ignore[attr-defined]
    elif hasattr(config, "workerinput") and os.path.isdir(os.environ.get(SHARE_DIR_ENV, "")):
        _share_openapi_between_workers(os.environ[SHARE_DIR_ENV])


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item) -> Iterator[None]:
    """IOWATT_TEST_TIMELINE=PREFIX: each test process appends `start end worker cpu children tree
    nodeid` to PREFIX.<worker>: wall seconds, the CPU seconds (user + system) of the test process
    itself (its threads: the test's code, in-process apps), of the children reaped meanwhile (a
    program it ran and waited for; a server it started is counted where it is stopped) and of the
    whole process tree meanwhile (its own cgroup: `_timeline_cgroup`), to see which process ends
    last and what it spent (docs/testing.md § Measuring: scripts/test-timeline.py)."""
    prefix = os.environ.get("IOWATT_TEST_TIMELINE")
    if not prefix:
        yield
        return
    import resource
    import time

    def cpu(who: int) -> float:
        r = resource.getrusage(who)
        return r.ru_utime + r.ru_stime

    usage = _timeline_cgroup()
    tree0 = _cgroup_cpu(usage)
    start, own0, kids0 = time.time(), cpu(resource.RUSAGE_SELF), cpu(resource.RUSAGE_CHILDREN)
    yield
    own, kids = cpu(resource.RUSAGE_SELF) - own0, cpu(resource.RUSAGE_CHILDREN) - kids0
    tree = _cgroup_cpu(usage) - tree0
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    with open(f"{prefix}.{worker}", "a", encoding="utf-8") as f:
        f.write(f"{start:.2f} {time.time():.2f} {worker} {own:.2f} {kids:.2f} {tree:.2f} {item.nodeid}\n")


_TIMELINE_CGROUP: list[str | None] = []


def _timeline_cgroup() -> str | None:
    """The cpuacct.usage file of a cgroup (v1) of this test process's own, made once: everything
    it starts stays in it, servers that detach included, so a test's `tree` CPU is all the CPU its
    process and every process it started (a stack's API, a browser, an engine) spent meanwhile.
    None where cgroup v1's cpuacct is not writable (the timeline then writes 0)."""
    if not _TIMELINE_CGROUP:
        path = None
        try:
            with open("/proc/self/cgroup", encoding="ascii") as f:
                mine = next(ln.split(":", 2)[2].strip() for ln in f if ln.split(":", 2)[1] == "cpuacct")
            d = f"/sys/fs/cgroup/cpuacct{mine.rstrip('/')}/iowatt-tl-{os.getpid()}"
            os.makedirs(d, exist_ok=True)
            with open(f"{d}/cgroup.procs", "w", encoding="ascii") as f:
                f.write(str(os.getpid()))
            path = f"{d}/cpuacct.usage"
            atexit.register(_remove_dir_quietly, d)
        except (OSError, StopIteration, IndexError):
            path = None
        _TIMELINE_CGROUP.append(path)
    return _TIMELINE_CGROUP[0]


def _remove_dir_quietly(d: str) -> None:
    with contextlib.suppress(OSError):
        os.rmdir(d)  # a cgroup goes once its processes have; one still running keeps it


def _cgroup_cpu(usage: str | None) -> float:
    if usage is None:
        return 0.0
    with open(usage, encoding="ascii") as f:
        return int(f.read()) / 1e9
