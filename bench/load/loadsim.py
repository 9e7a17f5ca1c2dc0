"""Load simulation (issue 11): simulated agents and users speaking the real HTTP protocol against
the real stack (the API as `make up` starts it, a Celery worker and beat, PostgreSQL, Redis).

One asyncio process holds every simulated agent and user (httpx, one connection pool):

- an agent enrols with a real enrolment token, sends its inventory (a host policy allowing one
  tmpfs directory and naming one meter), heartbeats every `heartbeat_interval_s` with its state,
  long-polls for a lease, starts the run, reports progress once a second, and uploads a result
  built from a real engine document (`engine-template.json`, produced by `iowatt-engine` on the
  quick workload) with its paths rewritten to the run's file, plus 10 Hz power samples over the
  idle-before, load and idle-after phases;
- a user queues runs (the built-in `quick` workload) on agents that are idle, lists runs, opens a
  run (the run page's four requests) and compares 2-5 finished runs.

Everything measured is kept in `Recorder`; `check_database` counts, in PostgreSQL, what every
queued run became. `bench/load/run.py` is the command line, `tests/bench/test_load_smoke.py` the
smoke test.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import functools
import json
import os
import pwd
import random
import secrets
import shutil
import ssl
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

# httpcore (1.0.9) asks `import sniffio` at every async request's lock and event to learn the event
# loop; sniffio is not installed (nothing here needs it), so each ask was a failed import searching
# sys.path: ~150 us of this simulator's CPU, ~0.85 per request (cProfile of a 300-agent run:
# 12,823 calls, the largest item of the round). A None entry makes that import fail at once, as
# absent, and anyio (which checks for sniffio once, at its import) reads it the same way.
if "sniffio" not in sys.modules:
    try:
        import sniffio  # noqa: F401
    except ImportError:
        sys.modules["sniffio"] = None  # type: ignore[assignment]

import httpx  # noqa: E402

from bench.load.topology import several_apis  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
TEMPLATE = HERE / "engine-template.json"
TEMPLATE_PATH = "/dev/shm/iowatt-load-template.dat"  # the file the template's engine run used
TARGET = "/dev/shm/iowatt-load"  # every simulated host allows this directory (tmpfs, as the template)
PG_BIN = Path("/usr/lib/postgresql/15/bin")
BIN = Path(sys.executable).parent
AGENT_VERSION = "load-sim"
HEARTBEAT_ROUTE = "POST /agents/{id}/heartbeat"

INVENTORY: dict[str, Any] = {
    "hostname": "load",
    "os": {"kernel": "6.1.0", "distro": "Debian GNU/Linux 12"},
    "cpu": {"model": "simulated", "cores": 2},
    "mem_bytes": 8 << 30,
    "virtualization": "kvm",
    "block_devices": [],
    "mounts": [{"mountpoint": "/dev/shm", "source": "tmpfs", "fstype": "tmpfs", "options": "rw,relatime"}],
    "policy": {
        "targets": [{"path": TARGET, "kind": "directory", "writable": True, "destructive": False}],
        "meters": [{"name": "wall", "driver": "hwmon", "tier": "inband"}],
        "default_meter": "wall",
    },
}


# --- the stack ------------------------------------------------------------------------------------


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _as_pg(cmd: list[str]) -> list[str]:
    return ["runuser", "-u", "postgres", "--", *cmd] if os.geteuid() == 0 else cmd


# How much nicer than this simulator the stack's processes run (API, workers, beat, Caddy,
# PostgreSQL; `bench/load/run.py --stack-nice`). The simulated agents and users stand for hosts and
# browsers elsewhere: on these two cores they share the CPU with the server, and every moment their
# event loop is late to read an answer counts in the latency measured (session 25's quiet round:
# the loop late by p95 0.29 s, max 0.82 s). With the stack nicer, the simulator is served first, and
# the server has what it leaves, as it would with its clients on other machines.
STACK_NICE = 0


def _niced(cmd: list[str]) -> list[str]:
    return ["nice", "-n", str(STACK_NICE), *cmd] if STACK_NICE else cmd


@contextlib.contextmanager
def postgres(*, fsync: bool = True) -> Iterator[int]:
    """A private PostgreSQL 15 on a free port with `make up`'s settings (durable: fsync on), unlike
    the tests' server (fsync off). Yields the port; the superuser is `postgres`, trust auth."""
    root = Path(tempfile.mkdtemp(prefix="iowatt-load-pg-"))
    root.chmod(0o755)
    data = root / "data"
    data.mkdir()
    if os.geteuid() == 0:
        pg = pwd.getpwnam("postgres")
        os.chown(data, pg.pw_uid, pg.pw_gid)
        os.chown(root, pg.pw_uid, pg.pw_gid)
    port = free_port()
    subprocess.run(
        _as_pg([str(PG_BIN / "initdb"), "-D", str(data), "-A", "trust", "-U", "postgres"]),
        check=True,
        capture_output=True,
    )
    opts = f"-p {port} -k {root} -c listen_addresses=127.0.0.1 -c max_connections=200"
    if not fsync:
        opts += " -c fsync=off"
    subprocess.run(
        _niced(
            _as_pg(
                [
                    str(PG_BIN / "pg_ctl"),
                    "-D",
                    str(data),
                    "-l",
                    str(data / "server.log"),
                    "-w",
                    "-o",
                    opts,
                    "start",
                ]
            )
        ),
        check=True,
        capture_output=True,
    )
    try:
        yield port
    finally:
        subprocess.run(
            _as_pg([str(PG_BIN / "pg_ctl"), "-D", str(data), "-m", "immediate", "stop"]), capture_output=True
        )
        shutil.rmtree(root, ignore_errors=True)


@dataclass
class Platform:
    url: str  # http://127.0.0.1:PORT
    admin_token: str
    conninfo: str  # psycopg conninfo of the application database
    env: dict[str, str]
    logs: Path
    user_tokens: list[str]
    procs: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)

    def tail(self, n: int = 3000) -> str:
        return "\n".join(
            f"--- {p.name}\n" + p.read_text(errors="replace")[-n:] for p in sorted(self.logs.glob("*.log"))
        )


# The server's code: this checkout, or another tree (`--server-tree`: an older commit's backend/,
# worker/, libs/ from `git archive`, for a side-by-side measurement with this simulator)
SERVER_TREE = REPO


def _server_env(env: dict[str, str]) -> dict[str, str]:
    """`env` with SERVER_TREE's own code ahead of the editable installs (this checkout's)."""
    if SERVER_TREE == REPO:
        return env
    dirs = [SERVER_TREE, *sorted(SERVER_TREE.glob("libs/*/src")), SERVER_TREE / "agent" / "src"]
    return {**env, "PYTHONPATH": os.pathsep.join(str(d) for d in dirs if d.is_dir())}


def _popen(cmd: list[str], env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    out = open(log, "ab")  # noqa: SIM115 - the child keeps it
    return subprocess.Popen(
        _niced(cmd),
        cwd=SERVER_TREE,
        env=_server_env(env),
        stdout=out,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )


@contextlib.contextmanager
def platform(
    pg_port: int,
    redis_url: str,
    *,
    users: int = 20,
    worker_concurrency: int = 2,
    api_workers: int | None = None,
    api_processes: int = 0,
    workers: int = 1,
    keep: Path | None = None,
) -> Iterator[Platform]:
    """Migrations, the admin, then the processes exactly as `scripts/up.sh` starts them: the API
    through `backend.serve` (uvicorn processes without access log: `api_workers`, by default as
    make up chooses, IOWATT_API_WORKERS or the CPUs), a prefork Celery worker (`--concurrency 2`)
    and beat; IOWATT_ENV=dev with a private state directory (so nothing of `.iowatt/` is read).

    `api_processes` N > 0: the Helm chart's topology on this machine instead (issue 30): N API
    processes (`backend.serve --workers 1`), each on its own port with its own metrics directory,
    behind Caddy (deploy/caddy/several-apis.Caddyfile), whose address is the platform's URL;
    `workers` Celery workers (`-n worker-K@%h`, `--concurrency worker_concurrency` each) and one
    beat, on the one PostgreSQL and Redis.

    `keep`: the processes' logs are copied there when the stack stops (`bench/load/trace.py` reads
    the API's `http.request` lines and the worker's task lines of each run)."""

    work = Path(tempfile.mkdtemp(prefix="iowatt-load-"))
    logs = work / "logs"
    logs.mkdir()
    procs: dict[str, subprocess.Popen[bytes]] = {}
    try:
        yield from _platform(
            work,
            logs,
            procs,
            pg_port,
            redis_url,
            users=users,
            worker_concurrency=worker_concurrency,
            api_workers=api_workers,
            api_processes=api_processes,
            workers=workers,
        )
    finally:  # the directory goes whatever failed (the migrations, the bootstrap, a process's start)
        for proc in procs.values():
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, 15)
        for name, proc in procs.items():
            t_stop = time.monotonic()
            try:
                proc.wait(timeout=5)  # uvicorn takes longer (it waits for something): killed
                if os.environ.get("IOWATT_LOAD_DEBUG"):
                    print(f"{name} stopped in {time.monotonic() - t_stop:.1f} s", file=sys.stderr)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, 9)
                proc.wait()
        if keep is not None:
            shutil.copytree(logs, keep / "logs", dirs_exist_ok=True)
        shutil.rmtree(work, ignore_errors=True)


def _platform(
    work: Path,
    logs: Path,
    procs: dict[str, subprocess.Popen[bytes]],
    pg_port: int,
    redis_url: str,
    *,
    users: int,
    worker_concurrency: int,
    api_workers: int | None,
    api_processes: int,
    workers: int,
) -> Iterator[Platform]:
    """`platform`'s body: the processes it starts go into `procs` (`platform` stops them)."""
    import psycopg

    with psycopg.connect(
        f"host=127.0.0.1 port={pg_port} user=postgres dbname=postgres", autocommit=True
    ) as c:
        c.execute("DROP DATABASE IF EXISTS iowatt_load WITH (FORCE)")
        c.execute("CREATE DATABASE iowatt_load")
    db_url = f"postgresql+psycopg://postgres@127.0.0.1:{pg_port}/iowatt_load"
    env = {
        **os.environ,
        "IOWATT_ENV": "dev",
        "IOWATT_STATE_DIR": str(work / "state"),
        "IOWATT_DATABASE_URL": db_url,
        "IOWATT_REDIS_URL": redis_url,
        "IOWATT_SECRET_KEY": secrets.token_urlsafe(32),
        "PROMETHEUS_MULTIPROC_DIR": str(work / "metrics"),  # as scripts/up.sh: a directory of the run's
    }
    from alembic import command
    from alembic.config import Config as AlembicConfig

    cfg = AlembicConfig(str(REPO / "alembic.ini"))  # in this process: one interpreter start less
    cfg.set_main_option("script_location", str(REPO / "migrations"))
    cfg.attributes["database_url"] = db_url
    cfg.attributes["configure_logger"] = False
    command.upgrade(cfg, "head")
    user_tokens = _bootstrap(env, work, users)
    port = free_port()
    upstreams: list[str] = []
    if api_processes:
        ports = [free_port() for _ in range(api_processes)]
        upstreams = [f"127.0.0.1:{own}" for own in ports]
        for proc in several_apis(ports, port, env, work):  # bench/load/topology.py
            procs[proc.name] = _popen(proc.argv, proc.env, logs / f"{proc.name}.log")
    else:
        procs["api"] = _popen(
            [sys.executable, "-m", "backend.serve", "--host", "127.0.0.1", "--port", str(port)]
            + ([] if api_workers is None else ["--workers", str(api_workers)]),
            env,
            logs / "api.log",
        )
    for k in range(workers):
        name = "worker" if workers == 1 else f"worker-{k}"
        procs[name] = _popen(
            [str(BIN / "celery"), "--workdir", str(SERVER_TREE), "-A", "worker.app", "worker"]
            + ["--concurrency", str(worker_concurrency), "--loglevel", "INFO"]
            + ([] if workers == 1 else ["-n", f"{name}@%h"]),
            env,
            logs / f"{name}.log",
        )
    procs["beat"] = _popen(
        [
            str(BIN / "celery"),
            "--workdir",
            str(SERVER_TREE),
            "-A",
            "worker.app",
            "beat",
            "--loglevel",
            "INFO",
        ]
        + ["--schedule", str(work / "celerybeat-schedule")],
        env,
        logs / "beat.log",
    )
    p = Platform(
        url=f"http://127.0.0.1:{port}",
        admin_token=(work / "token").read_text().strip(),
        conninfo=f"host=127.0.0.1 port={pg_port} user=postgres dbname=iowatt_load",
        env=env,
        logs=logs,
        user_tokens=user_tokens,
        procs=procs,
    )
    deadline = time.monotonic() + 60
    # every API process answers (directly, and through the proxy)
    for url in [*(f"http://{u}" for u in upstreams), p.url]:
        while True:
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(f"{url}/api/v1/health", timeout=2, verify=_tls()).status_code == 200:
                    break
            if time.monotonic() > deadline or any(x.poll() is not None for x in procs.values()):
                raise RuntimeError("the API did not come up:\n" + p.tail())
            time.sleep(0.2)
    yield p


def _bootstrap(env: dict[str, str], work: Path, n: int) -> list[str]:
    """`iowatt-server bootstrap` (the admin, its team, its token in work/token), then n members of
    that team with a personal API token each, with the server's own service functions (the API has
    no route that creates users): in a server process of SERVER_TREE, or in this one when that is
    this checkout (`_run_here`)."""
    code = f"""
import json, secrets
from pathlib import Path
from sqlalchemy import select
from backend.auth import service
from backend.cli import bootstrap
from backend.db import unit_of_work
from backend.models import Membership, Role, Team
bootstrap(email="admin@iowatt.local", team="default", credentials_file=Path({str(work / "creds")!r}),
          token_file=Path({str(work / "token")!r}))
out = []
with unit_of_work() as s:
    team = s.scalar(select(Team).where(Team.name == "default"))
    for i in range({n}):
        u = service.create_user(s, email=f"load-user-{{i}}@iowatt.local", password=secrets.token_urlsafe(16),
                                display_name=f"load user {{i}}", email_verified=True)
        s.add(Membership(user_id=u.id, team_id=team.id, role=Role.member))
        s.flush()
        tok, _ = service.issue_token(s, user_id=u.id, name="load", kind="personal", ttl_s=None)
        out.append(tok)
print(json.dumps(out))
"""
    # test-sized Argon2 cost: these passwords are never used
    env = {**env, "IOWATT_ARGON2_MEMORY_KIB": "1024", "IOWATT_ARGON2_TIME_COST": "1"}
    if SERVER_TREE == REPO:
        return _run_here(code, env)
    r = subprocess.run(
        [sys.executable, "-c", code],
        cwd=SERVER_TREE,
        env=_server_env(env),
        check=True,
        capture_output=True,
        text=True,
    )
    tokens: list[str] = json.loads(r.stdout.strip().splitlines()[-1])
    return tokens


def _run_here(code: str, env: dict[str, str]) -> list[str]:
    """`_bootstrap`'s code run in this process when the server's code is this checkout's (a process
    of its own cost ~2 CPU-s, mostly the server's imports; tests/bench/test_load_smoke.py's case):
    the server's settings read from `env` (its IOWATT_* variables) for the call, and this process's
    own again after it, as tests/stack.py runs `iowatt-server bootstrap`."""
    import io

    from backend.agent.wake import get_redis
    from backend.config import get_settings
    from backend.db import get_engine, get_sessionmaker

    def reset() -> None:
        for cached in (get_settings, get_engine, get_sessionmaker, get_redis):
            cached.cache_clear()

    saved = {k: os.environ.get(k) for k in env if k.startswith("IOWATT_")}
    os.environ.update({k: env[k] for k in saved})
    reset()
    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out):
            exec(code, {})  # noqa: S102 - _bootstrap's own code, the same lines a server process runs
    finally:
        get_engine().dispose()  # the load database's connections are not this process's
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        reset()
    tokens: list[str] = json.loads(out.getvalue().strip().splitlines()[-1])
    return tokens


# The simulated agent's or user's own client, set in its task (tasks it starts inherit it).
_actor_client: contextvars.ContextVar[httpx.AsyncClient | None] = contextvars.ContextVar(
    "client", default=None
)


@functools.cache
def _tls() -> ssl.SSLContext:
    """One TLS context for every client of the simulator (the stack speaks plain HTTP; Caddy's
    topology too). httpx builds a default one per client otherwise, loading the CA store: ~40 ms
    of CPU each, and the agents' clients are made at once on the simulator's one event loop, so
    200 agents held it ~8 s of CPU before their first request (a minute at load 14: every agent's
    inventory and first poll late, `_until_online` timing out), 1,000 agents ~40 s."""
    return ssl.create_default_context()


def _own_client(timeout: float = 60) -> httpx.AsyncClient:
    limits = httpx.Limits(max_connections=4, max_keepalive_connections=4, keepalive_expiry=4.0)
    return httpx.AsyncClient(limits=limits, timeout=timeout, verify=_tls())


# --- measurements ---------------------------------------------------------------------------------


def pct(values: list[float], p: float) -> float:
    """Nearest-rank percentile (p in 0..100); NaN for no values."""
    if not values:
        return float("nan")
    s = sorted(values)
    k = min(len(s) - 1, max(0, round(p / 100 * (len(s) - 1))))
    return s[k]


@dataclass
class Recorder:
    route_ms: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    statuses: dict[str, dict[int, int]] = field(default_factory=lambda: defaultdict(lambda: defaultdict(int)))
    errors: list[str] = field(default_factory=list)
    posted: dict[str, float] = field(default_factory=dict)  # run id -> monotonic time POST /runs was sent
    created: dict[str, float] = field(default_factory=dict)  # run id -> POST /runs answered
    leased: dict[str, float] = field(default_factory=dict)  # run id -> first lease received
    started: dict[str, float] = field(default_factory=dict)  # run id -> POST /start answered 200
    lease_ids: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))
    stored: dict[str, int] = field(default_factory=lambda: defaultdict(int))  # 201 answers per run
    duplicates: dict[str, int] = field(default_factory=lambda: defaultdict(int))  # 200 "already stored"
    samples_sent: dict[str, int] = field(default_factory=dict)
    agent_of: dict[str, str] = field(default_factory=dict)
    # for bench/load/trace.py: the X-Request-ID of the run's POST /runs and of the long-poll that
    # brought its lease (the server logs each request, and the tasks a request queued, under it)
    post_request: dict[str, str] = field(default_factory=dict)
    lease_request: dict[str, str] = field(default_factory=dict)

    def note(self, route: str, status: int, ms: float) -> None:
        self.route_ms[route].append(ms)
        self.statuses[route][status] += 1

    def dispatch_ms(self, since: str = "posted") -> list[float]:
        t0 = self.posted if since == "posted" else self.created
        return [(self.leased[r] - t0[r]) * 1000 for r in self.leased if r in t0]

    def start_ms(self) -> list[float]:
        return [(self.started[r] - self.posted[r]) * 1000 for r in self.started if r in self.posted]

    def trace(self) -> list[dict[str, Any]]:
        """Per queued run: its ids and the simulator's moments (UTC seconds since the epoch, as the
        server's log timestamps): POST /runs sent and answered, lease received, start answered."""
        wall = time.time() - time.monotonic()

        def at(d: dict[str, float], r: str) -> float | None:
            return d[r] + wall if r in d else None

        return [
            {
                "run_id": r,
                "agent_id": self.agent_of.get(r),
                "post_request_id": self.post_request.get(r),
                "lease_request_id": self.lease_request.get(r),
                "posted": at(self.posted, r),
                "created": at(self.created, r),
                "leased": at(self.leased, r),
                "started": at(self.started, r),
            }
            for r in self.posted
        ]

    def routes(self) -> dict[str, dict[str, float]]:
        out = {}
        for route, ms in sorted(self.route_ms.items()):
            out[route] = {
                "n": len(ms),
                "p50": pct(ms, 50),
                "p95": pct(ms, 95),
                "p99": pct(ms, 99),
                "max": max(ms),
                "non_2xx": sum(n for s, n in self.statuses[route].items() if not 200 <= s < 300),
            }
        return out


@dataclass
class Config:
    agents: int = 200
    users: int = 20
    seconds: float = 60.0  # users queue runs for this long; then every run is awaited
    run_s: float = 2.0  # the simulated engine's runtime
    idle_s: float = 0.5  # idle baseline before and after (RunCreate.idle_s)
    power_hz: float = 10.0
    # mean pause between a user's actions (exponential): a person reading the page an action showed
    # before the next (README § Users; 1 s is the stress round, not a person's pace)
    think_s: float = 5.0
    queue_share: float = 0.35  # of a user's actions; the rest: list, open a run, compare
    max_runs: int | None = None  # stop queueing after this many runs (the smoke test)
    lease_wait_s: float | None = None  # None: the wait the server names (25 s until it does), as the agent
    drain_timeout_s: float = 120.0
    start_spread_s: float = 3.0  # agents start within this many seconds (hosts do not start at once)
    # "steady": each agent's second heartbeat and second long-poll come at a uniformly drawn point
    # of the interval (the wait) the server named in its first answer, then at the named ones, so
    # the fleet's heartbeats and polls are spread over their intervals as in a fleet that has run
    # for a while; "start": as agents started together (every idle heartbeat in one window per
    # interval: none in a 35 s round at 1,000 agents, README § Heartbeats and polls in phase)
    phase: str = "steady"
    seed: int = 1


class Sim:
    """The simulated agents and users of one stack; `round()` can be called several times."""

    def __init__(self, p: Platform, cfg: Config) -> None:
        self.p, self.cfg = p, cfg
        self.api = f"{p.url}/api/v1"
        self.rnd = random.Random(cfg.seed)
        self.template = TEMPLATE.read_text()
        self.agents: list[tuple[str, str]] = []  # (id, token)
        self.users: list[str] = []
        self.idle: set[int] = set()  # agents with no run queued or running (users pick among these)
        self.busy_run: dict[int, str | None] = {}
        self.busy_lease: dict[int, str | None] = {}
        self.boot_ids: dict[int, str] = {}  # each simulated agent process's, as the agent sends it
        self.finished: list[str] = []  # runs stored, for users to open and compare
        self.queueing = 0  # POST /runs in flight: counted against max_runs before the await
        self.rec = Recorder()
        self.stop_agents = asyncio.Event()
        self.quick_id = ""
        self.heartbeat_s = 10.0
        self.client: httpx.AsyncClient | None = None
        self.ingest_agent: tuple[str, str] = ("", "")  # driven by ingest_bench, not simulated
        self.ingest_runs: list[str] = []
        self.first_polls_left = cfg.agents  # agents whose first long-poll has not answered yet
        self.first_polls_done = asyncio.Event()

    # ---- http with per-route timing
    async def call(
        self,
        method: str,
        route: str,
        url: str,
        token: str,
        *,
        client: httpx.AsyncClient | None = None,
        request_id: str | None = None,
        **kw: Any,
    ) -> httpx.Response | None:
        """One request, timed per route. Each simulated agent and user has its own client (as real
        ones do): one shared pool of 400 connections costs httpcore O(connections) per request."""
        client = client or _actor_client.get() or self.client
        assert client is not None
        headers = {"Authorization": f"Bearer {token}", **kw.pop("headers", {})}
        if request_id is not None:
            headers["X-Request-ID"] = request_id
        t0 = time.perf_counter()
        try:
            r = await client.request(method, self.api + url, headers=headers, **kw)
        except httpx.HTTPError as e:
            self.rec.note(route, 0, (time.perf_counter() - t0) * 1000)
            if len(self.rec.errors) < 50:
                self.rec.errors.append(f"{route}: {type(e).__name__} {e!r}"[:300])
            return None
        self.rec.note(route, r.status_code, (time.perf_counter() - t0) * 1000)
        if r.status_code >= 400 and len(self.rec.errors) < 50:
            self.rec.errors.append(f"{route}: HTTP {r.status_code} {r.text[:200]}")
        return r

    # ---- set-up
    async def setup(self) -> None:
        n = self.cfg.agents
        hdr = {"Authorization": f"Bearer {self.p.admin_token}"}
        assert self.client is not None
        c = self.client
        me = (await c.get(f"{self.api}/auth/me", headers=hdr)).json()
        team_id = me["teams"][0]["id"]
        tokens = []  # an enrolment token serves at most 1,000 hosts (backend/agent/schemas.py)
        for lo in range(0, n + 1, 1000):
            r = await c.post(
                f"{self.api}/agents/enrollment-tokens",
                json={"team_id": team_id, "max_uses": min(1000, n + 1 - lo)},
                headers=hdr,
            )
            r.raise_for_status()
            tokens.append(r.json()["token"])
        sem = asyncio.Semaphore(8)

        async def one(k: int) -> tuple[str, str]:
            body = {
                "enrollment_token": tokens[k // 1000],
                "name": f"load-{k:04d}",
                "hostname": f"load-{k:04d}",
                "agent_version": AGENT_VERSION,
                "inventory": {**INVENTORY, "hostname": f"load-{k:04d}"},
            }
            async with sem:
                a = await c.post(f"{self.api}/agents/enroll", json=body)
            a.raise_for_status()
            self.heartbeat_s = float(a.json()["heartbeat_interval_s"])
            return a.json()["agent_id"], a.json()["agent_token"]

        enrolled = list(await asyncio.gather(*(one(k) for k in range(n + 1))))
        self.agents, self.ingest_agent = enrolled[:n], enrolled[n]
        wl = (await c.get(f"{self.api}/workloads", params={"limit": 200}, headers=hdr)).json()["items"]
        self.quick_id = next(w["id"] for w in wl if w["name"] == "quick")
        self.idle = set(range(n))
        self.busy_run = dict.fromkeys(range(n))
        self.busy_lease = dict.fromkeys(range(n))
        self.boot_ids = {k: str(uuid.uuid4()) for k in range(n)}

    # ---- a simulated agent
    def _result_body(
        self, run_id: str, lease_id: str, started: datetime, finished: datetime, t0: datetime
    ) -> bytes:
        cfg = self.cfg
        load_ns = int(cfg.run_s * 1e9)
        idle_ns = int(cfg.idle_s * 1e9)
        end_ns = idle_ns * 2 + load_ns
        step = int(1e9 / cfg.power_hz)
        t_ns = list(range(0, end_ns + 1, step))
        value = [
            round((95.0 if idle_ns <= t < idle_ns + load_ns else 80.0) + self.rnd.uniform(-1.5, 1.5), 2)
            for t in t_ns
        ]
        self.rec.samples_sent[run_id] = len(t_ns)
        power = _power(t0, idle_ns, load_ns, t_ns, value, cfg.power_hz)
        engine = self.template.replace(TEMPLATE_PATH, f"{TARGET}/iowatt-{run_id}.dat")
        envelope = {
            "lease_id": lease_id,
            "upload_id": str(uuid.uuid4()),
            "engine_result": "@ENGINE@",
            "engine_exit_code": 0,
            "started_at": started.isoformat(),
            "finished_at": finished.isoformat(),
            "agent_version": AGENT_VERSION,
            "power": power,
        }
        return json.dumps(envelope).replace('"@ENGINE@"', engine).encode()

    async def agent(self, k: int) -> None:
        async with _own_client() as client:
            _actor_client.set(client)
            await self._agent(k)

    async def _agent(self, k: int) -> None:
        agent_id, token = self.agents[k]
        cfg = self.cfg
        await asyncio.sleep(self.rnd.uniform(0, self.cfg.start_spread_s))
        await self.call(
            "PUT",
            "PUT /agents/{id}/inventory",
            f"/agents/{agent_id}/inventory",
            token,
            json={**INVENTORY, "hostname": f"load-{k:04d}"},
        )
        hb = asyncio.create_task(self._heartbeats(k))
        polls = 0
        named = 25.0  # the server's wait for the next poll (ADR 0053), once it names one
        try:
            while not self.stop_agents.is_set():
                polls += 1
                poll_id = f"load-poll-{k}-{polls}"
                wait_s = cfg.lease_wait_s if cfg.lease_wait_s is not None else named
                if polls == 2 and cfg.phase == "steady":  # this agent's phase in the fleet's polls
                    wait_s = round(self.rnd.uniform(1.0, wait_s), 1)
                r = await self.call(
                    "POST",
                    "POST /agents/{id}/lease (long-poll)",
                    f"/agents/{agent_id}/lease",
                    token,
                    params={"wait_s": wait_s},
                    json={"boot_id": self.boot_ids[k]},
                    timeout=wait_s + 30,
                    request_id=poll_id,
                )
                if polls == 1:  # answered or not (idle_cost waits for the whole fleet's)
                    self.first_polls_left -= 1
                    if self.first_polls_left <= 0:
                        self.first_polls_done.set()
                if r is None or r.status_code != 200:
                    await asyncio.sleep(1)
                    continue
                named = float(r.json().get("poll_wait_s") or named)
                lease = r.json()["lease"]
                if lease is None:
                    continue
                now = time.monotonic()
                run_id, lease_id = lease["run_id"], lease["lease_id"]
                self.rec.leased.setdefault(run_id, now)
                self.rec.lease_request.setdefault(run_id, poll_id)
                self.rec.lease_ids[run_id].add(lease_id)
                self.busy_run[k], self.busy_lease[k] = run_id, lease_id
                await self._run(k, run_id, lease_id, token)
                self.busy_run[k] = self.busy_lease[k] = None
        finally:
            hb.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await hb

    async def _heartbeats(self, k: int) -> None:
        agent_id, token = self.agents[k]
        await asyncio.sleep(self.rnd.uniform(0, self.heartbeat_s))
        first = True
        while True:
            run = self.busy_run.get(k)
            body = {
                "state": "busy" if run else "idle",
                "current_run_id": run,
                "current_lease_id": self.busy_lease.get(k) if run else None,
                "boot_id": self.boot_ids[k],
                "agent_version": AGENT_VERSION,
            }
            r = await self.call("POST", HEARTBEAT_ROUTE, f"/agents/{agent_id}/heartbeat", token, json=body)
            # the next one when the answer says, as the agent does (agent/src/iowatt_agent/heartbeat.py)
            every = r.json().get("heartbeat_interval_s", 0) if r is not None and r.status_code == 200 else 0
            every = every if every > 0 else self.heartbeat_s
            if first and self.cfg.phase == "steady":  # this agent's phase in the fleet's heartbeats
                every = self.rnd.uniform(0, every)
            first = False
            await asyncio.sleep(every)

    async def _run(self, k: int, run_id: str, lease_id: str, token: str) -> None:
        cfg = self.cfg
        r = await self.call(
            "POST", "POST /runs/{id}/start", f"/runs/{run_id}/start", token, json={"lease_id": lease_id}
        )
        if r is None or r.status_code != 200:
            return
        self.rec.started.setdefault(run_id, time.monotonic())
        t0 = datetime.now(UTC)
        await asyncio.sleep(cfg.idle_s)
        started = datetime.now(UTC)
        elapsed = 0.0
        while elapsed < cfg.run_s:
            step = min(1.0, cfg.run_s - elapsed)
            await asyncio.sleep(step)
            elapsed += step
            body = {
                "lease_id": lease_id,
                "job_index": 0,
                "job_name": "randread-4k",
                "percent": min(100.0, 100 * elapsed / cfg.run_s),
                "elapsed_ns": int(elapsed * 1e9),
                "read_iops": 250000.0,
                "read_bw_bytes": 1024000000,
                "write_iops": 0.0,
                "write_bw_bytes": 0,
            }
            await self.call("POST", "POST /runs/{id}/progress", f"/runs/{run_id}/progress", token, json=body)
        finished = datetime.now(UTC)
        await asyncio.sleep(cfg.idle_s)
        body_bytes = self._result_body(run_id, lease_id, started, finished, t0)
        for attempt in range(6):  # the agent's rule: retry connection errors and 5xx, same upload_id
            r = await self.call(
                "PUT",
                "PUT /runs/{id}/result",
                f"/runs/{run_id}/result",
                token,
                content=body_bytes,
                headers={"Content-Type": "application/json"},
                timeout=120,
            )
            if r is not None and r.status_code in (200, 201):
                if r.status_code == 201:
                    self.rec.stored[run_id] += 1
                else:
                    self.rec.duplicates[run_id] += 1
                self.finished.append(run_id)
                break
            if r is not None and 400 <= r.status_code < 500:
                break
            await asyncio.sleep(0.5 * 2**attempt)
        self.idle.add(k)

    # ---- a simulated user
    async def user(self, u: int, deadline: float) -> None:
        async with _own_client() as client:
            _actor_client.set(client)
            await self._user(u, deadline)

    async def _user(self, u: int, deadline: float) -> None:
        token = self.users[u]
        cfg = self.cfg
        rnd = random.Random(cfg.seed * 1000 + u)
        await asyncio.sleep(rnd.uniform(0, cfg.think_s))
        while time.monotonic() < deadline:
            if cfg.max_runs is not None and len(self.rec.posted) + self.queueing >= cfg.max_runs:
                return  # the smoke test: its runs are queued, the round only awaits them
            x = rnd.random()
            if x < cfg.queue_share:
                # the slot is taken before the POST's await: two users cannot both pass the cap
                self.queueing += 1
                try:
                    await self._queue(token, rnd)
                finally:
                    self.queueing -= 1
            elif x < cfg.queue_share + (1 - cfg.queue_share) * 0.25:
                await self.call("GET", "GET /runs", "/runs", token, params={"limit": 50})
            elif x < cfg.queue_share + (1 - cfg.queue_share) * 0.6 and self.finished:
                rid = rnd.choice(self.finished)
                for route, suffix in (
                    ("GET /runs/{id}", ""),
                    ("GET /runs/{id}/result", "/result"),
                    ("GET /runs/{id}/series", "/series"),
                    ("GET /runs/{id}/power", "/power"),
                ):
                    await self.call("GET", route, f"/runs/{rid}{suffix}", token)
            elif len(self.finished) >= 2:
                ids = rnd.sample(self.finished, min(len(self.finished), rnd.randint(2, 5)))
                await self.call("GET", "GET /compare", "/compare", token, params={"runs": ",".join(ids)})
            await asyncio.sleep(rnd.expovariate(1 / cfg.think_s))

    async def _queue(self, token: str, rnd: random.Random) -> None:
        if not self.idle:
            return
        k = rnd.choice(sorted(self.idle))
        self.idle.discard(k)
        body = {
            "agent_id": self.agents[k][0],
            "target_path": TARGET,
            "workload_id": self.quick_id,
            "idle_s": self.cfg.idle_s,
        }
        post_id = f"load-run-{uuid.uuid4().hex[:12]}"
        t0 = time.monotonic()
        r = await self.call("POST", "POST /runs", "/runs", token, json=body, request_id=post_id)
        if r is None or r.status_code != 201:
            self.idle.add(k)
            return
        run_id = r.json()["id"]
        self.rec.posted[run_id] = t0
        self.rec.created[run_id] = time.monotonic()
        self.rec.agent_of[run_id] = self.agents[k][0]
        self.rec.post_request[run_id] = post_id

    # ---- one measured round
    async def round(self) -> dict[str, Any]:
        """Users queue and browse for `seconds`, then every queued run is awaited (up to
        `drain_timeout_s`). Returns this round's measurements (the Recorder is fresh per round)."""
        self.rec = Recorder()
        t0 = time.monotonic()
        deadline = t0 + self.cfg.seconds
        lags: list[float] = []
        lagging = asyncio.create_task(_loop_lag(lags))
        cpu0 = time.process_time()
        await asyncio.gather(*(self.user(u, deadline) for u in range(len(self.users))))
        queued_for = time.monotonic() - t0
        sim_cpu = (time.process_time() - cpu0) / queued_for
        lagging.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await lagging
        end = time.monotonic() + self.cfg.drain_timeout_s
        while time.monotonic() < end and not set(self.rec.posted) <= set(self.rec.stored) | set(
            self.rec.duplicates
        ):
            await asyncio.sleep(0.2)
        rec = self.rec
        beats = rec.route_ms.get(HEARTBEAT_ROUTE, [])
        return {
            "queued_for_s": queued_for,
            # every heartbeat answered in the round (idle agents' at the fleet's pace, busy ones'
            # every heartbeat_interval_s); none: no heartbeat latency was measured (run.py says so)
            "heartbeats": {"n": len(beats), "p50_ms": pct(beats, 50), "p95_ms": pct(beats, 95)},
            "runs_queued": len(rec.posted),
            "runs_stored": len(rec.stored),
            "dispatch_ms": rec.dispatch_ms("posted"),
            "dispatch_from_created_ms": rec.dispatch_ms("created"),
            "start_ms": rec.start_ms(),
            "routes": rec.routes(),
            "errors": rec.errors[:20],
            "run_ids": list(rec.posted),
            "trace": rec.trace(),
            "samples_sent": dict(rec.samples_sent),
            "agent_stored": dict(rec.stored),
            "agent_duplicates": dict(rec.duplicates),
            "lease_ids": {r: sorted(v) for r, v in rec.lease_ids.items()},
            "load_average": os.getloadavg(),
            # this simulator's own event loop: how late a 100 ms sleep wakes (every figure measured
            # here includes it: a late loop reads a lease, an answer, late) and its CPU (s/s)
            "sim_loop_lag_ms": {"p50": pct(lags, 50), "p95": pct(lags, 95), "max": max(lags, default=0.0)},
            "sim_cpu_s_per_s": sim_cpu,
        }


async def _loop_lag(out: list[float], every_s: float = 0.1) -> None:
    """Appends how late (ms) each `every_s` sleep of this event loop wakes, until cancelled."""
    while True:
        t = time.monotonic()
        await asyncio.sleep(every_s)
        out.append((time.monotonic() - t - every_s) * 1000)


def _power(
    t0: datetime, idle_ns: int, load_ns: int, t_ns: list[int], value: list[float], hz: float
) -> dict[str, Any]:
    phases = [{"name": "load", "start_ns": idle_ns, "end_ns": idle_ns + load_ns}]
    if idle_ns:
        phases = [
            {"name": "idle_before", "start_ns": 0, "end_ns": idle_ns},
            *phases,
            {"name": "idle_after", "start_ns": idle_ns + load_ns, "end_ns": 2 * idle_ns + load_ns},
        ]
    return {
        "meter": {
            "name": "wall",
            "driver": "hwmon",
            "model": "simulated",
            "tier": "inband",
            "quantity": "power",
            "accuracy_pct": 5.0,
            "accuracy_w": 0.0,
            "accuracy_declared": False,
            "nominal_interval_s": 1 / hz,
        },
        "status": "ok",
        "reason": None,
        "t0_utc": t0.isoformat(),
        "phases": phases,
        "samples": {"t_ns": t_ns, "value": value},
        "cleaning": {},
    }


def _server_counters(p: Platform) -> tuple[float, int, int, float, float]:
    """(monotonic s, transaction ids assigned = write transactions, commits, WAL bytes, the API
    processes' CPU seconds) now."""
    import psycopg

    with psycopg.connect(p.conninfo, autocommit=True) as c:
        row = c.execute(
            "SELECT pg_snapshot_xmax(pg_current_snapshot())::text::bigint,"
            " (SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()),"
            " pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::bigint"
        ).fetchone()
    assert row is not None
    api_cpu = sum(tree_cpu_s(proc.pid) for name, proc in p.procs.items() if name.startswith("api"))
    return time.monotonic(), int(row[0]), int(row[1]), float(row[2]), api_cpu


def tree_cpu_s(pid: int) -> float:
    """CPU seconds (user + system) of a process and its living descendants (the API's processes)."""
    stats: dict[int, list[str]] = {}
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            with contextlib.suppress(OSError):
                stats[int(d.name)] = (d / "stat").read_text().rsplit(")", 1)[1].split()
    children: dict[int, list[int]] = defaultdict(list)
    for child, st in stats.items():
        children[int(st[1])].append(child)  # ppid
    total, todo = 0, [pid]
    while todo:
        p = todo.pop()
        if p in stats:
            total += int(stats[p][11]) + int(stats[p][12])  # utime + stime
        todo.extend(children.get(p, ()))
    return total / os.sysconf("SC_CLK_TCK")


async def idle_cost(sim: Sim, seconds: float) -> dict[str, float]:
    """What the agents cost the server while doing nothing but heartbeats and long-polls, before
    any user acts: write transactions (transaction ids assigned; a read-only transaction gets
    none), commits (read-only ones too), WAL bytes and the API processes' CPU, per second over
    `seconds`, once every agent polls and heartbeats. pg_stat_database's commit counter lags up
    to a second; the others are exact."""
    await asyncio.sleep(sim.cfg.start_spread_s + 2.0)
    # the fleet's first polls (25 s, before the server named a wait) end together: measured from
    # then, the window holds the fleet's steady pace (each agent's next poll is in phase), not
    # the start's wave of looks (session 26)
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(sim.first_polls_done.wait(), 60)
    t0, xid0, commits0, wal0, cpu0 = await asyncio.to_thread(_server_counters, sim.p)
    await asyncio.sleep(seconds)
    t1, xid1, commits1, wal1, cpu1 = await asyncio.to_thread(_server_counters, sim.p)
    dt = t1 - t0
    return {
        "seconds": dt,
        "write_transactions_per_s": (xid1 - xid0) / dt,  # the probes themselves write nothing
        "commits_per_s": (commits1 - commits0) / dt,
        "wal_bytes_per_s": (wal1 - wal0) / dt,
        "api_cpu_s_per_s": (cpu1 - cpu0) / dt,
    }


@contextlib.asynccontextmanager
async def running(p: Platform, cfg: Config) -> Any:
    """Enrolled agents polling, users with tokens; agents stopped at the end."""
    sim = Sim(p, cfg)
    limits = httpx.Limits(max_connections=20, max_keepalive_connections=20, keepalive_expiry=4.0)
    async with httpx.AsyncClient(limits=limits, timeout=60, verify=_tls()) as client:
        sim.client = client
        await sim.setup()
        sim.users = p.user_tokens[: cfg.users]
        tasks = [asyncio.create_task(sim.agent(k)) for k in range(cfg.agents)]
        try:
            # a thousand agents' first heartbeats take minutes on a loaded 2-core machine
            await _until_online(sim, len(sim.agents), timeout_s=max(90.0, 0.4 * len(sim.agents)))
            yield sim
        finally:
            sim.stop_agents.set()
            for t in tasks:
                t.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)


async def _until_online(sim: Sim, n: int, timeout_s: float = 90) -> None:
    assert sim.client is not None
    hdr = {"Authorization": f"Bearer {sim.p.admin_token}"}
    end = time.monotonic() + timeout_s
    while True:
        try:
            r = await sim.client.get(f"{sim.api}/agents", params={"limit": 1000}, headers=hdr)
            online = sum(1 for a in r.json()["items"] if a["online"])
        except httpx.TransportError:  # a keep-alive connection the server closed as we reused it
            online = 0
        if online >= n:
            return
        if time.monotonic() > end:
            raise RuntimeError(f"only {online} of {n} agents online after {timeout_s} s")
        # the list of a thousand agents (their inventories) is heavy: not every half second
        await asyncio.sleep(0.5 if n <= 200 else 3.0)


# --- the database check ---------------------------------------------------------------------------


def check_database(conninfo: str, rounds: list[dict[str, Any]], *, settle_s: float = 60) -> dict[str, Any]:
    """What every queued run became, counted in PostgreSQL: succeeded exactly once, one result,
    the template's jobs once each, every power sample stored once, energy computed; and no run
    the users did not queue. Waits up to `settle_s` for the energy tasks."""
    import psycopg

    queued = [r for rd in rounds for r in rd["run_ids"]]
    sent = {r: n for rd in rounds for r, n in rd["samples_sent"].items()}
    jobs_per_result = len(json.loads(TEMPLATE.read_text())["jobs"])
    q = """
        SELECT r.id::text, r.status::text,
               (SELECT count(*) FROM run_results x WHERE x.run_id = r.id),
               (SELECT count(*) FROM result_jobs j WHERE j.run_id = r.id),
               (SELECT count(*) FROM power_samples s WHERE s.run_id = r.id),
               (SELECT count(*) FROM run_energy e WHERE e.run_id = r.id),
               r.attempt
        FROM runs r WHERE r.id = ANY(%s::uuid[])"""
    end = time.monotonic() + settle_s
    with psycopg.connect(conninfo, autocommit=True) as c:
        while True:
            rows = {row[0]: row for row in c.execute(q, (queued,)).fetchall()}
            pending_energy = [r for r, row in rows.items() if row[5] == 0]
            if not pending_energy or time.monotonic() > end:
                break
            time.sleep(1)
        total_runs = c.execute("SELECT count(*) FROM runs").fetchone()
    missing = [r for r in queued if r not in rows]
    not_succeeded = {r: row[1] for r, row in rows.items() if row[1] != "succeeded"}
    results_not_one = {r: row[2] for r, row in rows.items() if row[2] != 1}
    jobs_wrong = {r: row[3] for r, row in rows.items() if row[3] != jobs_per_result}
    samples_wrong = {r: (row[4], sent.get(r)) for r, row in rows.items() if row[4] != sent.get(r)}
    leased_twice = {r: ids for rd in rounds for r, ids in rd["lease_ids"].items() if len(ids) != 1}
    uploads_not_one = {
        r: rd["agent_stored"].get(r, 0)
        for rd in rounds
        for r in rd["run_ids"]
        if rd["agent_stored"].get(r, 0) != 1
    }
    lost = sorted(set(missing) | set(not_succeeded) | {r for r, n in results_not_one.items() if n == 0})
    duplicated = sorted(
        {r for r, n in results_not_one.items() if n > 1} | set(jobs_wrong) | set(samples_wrong)
    )
    return {
        "queued": len(queued),
        "runs_in_database": total_runs[0] if total_runs else 0,
        "lost": lost,
        "duplicated": duplicated,
        "not_succeeded": not_succeeded,
        "results_not_one": results_not_one,
        "jobs_wrong": jobs_wrong,
        "samples_wrong": samples_wrong,
        "leased_more_than_once": leased_twice,
        "agent_uploads_not_one": uploads_not_one,
        "energy_missing": [r for r, row in rows.items() if row[5] == 0],
        "attempts_over_one": {r: row[6] for r, row in rows.items() if row[6] != 1},
    }


# --- power-sample ingest vs raw COPY --------------------------------------------------------------


async def ingest_bench(sim: Sim, *, samples: int, repeats: int, copy_format: str = "text") -> dict[str, Any]:
    """Per repeat, the same `samples` rows two ways, in alternating order: (a) raw COPY (text
    format, one prebuilt buffer, psycopg) into `power_samples` for the run, timed from the COPY to
    its COMMIT, the rows then deleted (untimed); (b) the agent's result upload with those samples
    in `power` (with the same realistic engine document), timed from send to answer. Rates are
    samples per second; the ratio is API rate / COPY rate per repeat. A dedicated agent (not one of
    the simulated ones) takes the runs, so nothing else runs meanwhile but the idle long-polls.
    `copy_format` "binary": the raw COPY in COPY's binary format, as the API's own since session 24
    (backend/power/repository.py; PostgreSQL parses no text then), instead of the text rows."""

    assert sim.client is not None
    agent_id, token = sim.ingest_agent
    user = sim.users[0]
    hb = {"state": "idle", "current_run_id": None, "agent_version": AGENT_VERSION}
    out: list[dict[str, float]] = []
    for i in range(repeats):
        await sim.call("POST", "POST /agents/{id}/heartbeat", f"/agents/{agent_id}/heartbeat", token, json=hb)
        body0 = {"agent_id": agent_id, "target_path": TARGET, "workload_id": sim.quick_id, "idle_s": 0}
        r = await sim.call("POST", "POST /runs", "/runs", user, json=body0)
        assert r is not None and r.status_code == 201, r and r.text
        run_id = r.json()["id"]
        sim.ingest_runs.append(run_id)
        lease = None
        for _ in range(10):
            r = await sim.call(
                "POST",
                "POST /agents/{id}/lease (long-poll)",
                f"/agents/{agent_id}/lease",
                token,
                params={"wait_s": 10},
                timeout=40,
            )
            assert r is not None and r.status_code == 200, r and r.text
            lease = r.json()["lease"]
            if lease is not None:
                break
        assert lease is not None and lease["run_id"] == run_id, lease
        lease_id = lease["lease_id"]
        r = await sim.call(
            "POST", "POST /runs/{id}/start", f"/runs/{run_id}/start", token, json={"lease_id": lease_id}
        )
        assert r is not None and r.status_code == 200, r and r.text
        t_ns = [j * 100_000_000 for j in range(samples)]  # 10 Hz
        value = [round(90.0 + (j % 97) * 0.05, 2) for j in range(samples)]
        t0 = datetime.now(UTC) - timedelta(seconds=samples / 10)
        body = {
            "lease_id": lease_id,
            "upload_id": str(uuid.uuid4()),
            "engine_result": "@ENGINE@",
            "engine_exit_code": 0,
            "started_at": t0.isoformat(),
            "finished_at": (t0 + timedelta(seconds=samples / 10)).isoformat(),
            "agent_version": AGENT_VERSION,
            "power": _power(t0, 0, samples * 100_000_000, t_ns, value, 10.0),
        }
        engine = sim.template.replace(TEMPLATE_PATH, f"{TARGET}/iowatt-{run_id}.dat")
        payload = json.dumps(body).replace('"@ENGINE@"', engine).encode()
        if copy_format == "binary":
            from backend.power.repository import _copy_binary

            buf = _copy_binary(uuid.UUID(run_id), t_ns, value)
        else:
            buf = "".join(f"{run_id}\t{t}\t{v!r}\n" for t, v in zip(t_ns, value, strict=True)).encode()

        async def api_once(rid: str = run_id, data: bytes = payload) -> float:
            async with httpx.AsyncClient(verify=_tls()) as fresh:  # a new connection: no keep-alive race
                t = time.perf_counter()
                r = await fresh.put(
                    f"{sim.api}/runs/{rid}/result",
                    content=data,
                    timeout=300,
                    headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
                )
                took = time.perf_counter() - t
            assert r.status_code == 201, r.text[:500]
            return took

        if i % 2 == 0:
            copy_s = await asyncio.to_thread(copy_once, sim.p.conninfo, run_id, buf, False, copy_format)
            api_s = await api_once()
        else:  # the API first: order effects (a warm cache, autovacuum) fall on both sides alike
            api_s = await api_once()
            copy_s = await asyncio.to_thread(copy_once, sim.p.conninfo, run_id, buf, True, copy_format)
        out.append(
            {
                "samples": samples,
                "copy_s": copy_s,
                "api_s": api_s,
                "copy_rows_per_s": samples / copy_s,
                "api_rows_per_s": samples / api_s,
                "ratio": copy_s / api_s,
                "payload_bytes": len(payload),
            }
        )
    return {
        "repeats": out,
        "median_copy_rows_per_s": statistics.median(x["copy_rows_per_s"] for x in out),
        "median_api_rows_per_s": statistics.median(x["api_rows_per_s"] for x in out),
        "median_ratio": statistics.median(x["ratio"] for x in out),
        "copy_format": copy_format,
    }


def copy_once(conninfo: str, run_id: str, data: bytes, stored: bool, copy_format: str = "text") -> float:
    """Raw COPY of the rows into power_samples, timed from COPY to COMMIT, then deleted. When the
    API already `stored` the same rows, they are moved aside first (untimed) and put back after,
    so the run keeps its uploaded samples."""
    import psycopg

    with psycopg.connect(conninfo) as c:
        if stored:
            c.execute("CREATE TEMP TABLE keep AS SELECT * FROM power_samples WHERE run_id = %s", (run_id,))
            c.execute("DELETE FROM power_samples WHERE run_id = %s", (run_id,))
            c.commit()
        t = time.perf_counter()
        sql = "COPY power_samples (run_id, t_ns, value) FROM STDIN"
        with c.cursor() as cur, cur.copy(sql + (" (FORMAT BINARY)" if copy_format == "binary" else "")) as cp:
            cp.write(data)
        c.commit()
        took = time.perf_counter() - t
        c.execute("DELETE FROM power_samples WHERE run_id = %s", (run_id,))
        if stored:
            c.execute("INSERT INTO power_samples SELECT * FROM keep")
        c.commit()
    return took
