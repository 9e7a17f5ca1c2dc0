"""Private PostgreSQL and Redis servers for tests, on free ports, from the system binaries.

PostgreSQL refuses to run as root, so as root it runs as the `postgres` system user with a data
directory that user owns. Nothing here touches `.iowatt/` (that is `make up`'s).
"""

import contextlib
import fcntl
import hashlib
import os
import pwd
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from tests.waiting import WaitTimeout, wait_until

PG_BIN = Path("/usr/lib/postgresql/15/bin")
REPO = Path(__file__).resolve().parent.parent


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def on_one_cpu(cmd: Sequence[str]) -> list[str]:
    """`cmd` on one CPU (`taskset`), its children too: for a program that runs flat out for a set
    time, an engine job of N seconds or a vdbench run of `elapsed` seconds, where no test reads its
    speed. Such a program takes whatever CPU it is given for its seconds: the 64 threads of a
    vdbench preset took both cores for their 3 s (~5 CPU-s) beside a suite that is CPU-bound
    (docs/testing.md: its wall time is its CPU over ~1.75); on one CPU, at most that CPU for its
    seconds. It still runs for its seconds and reports what it did (fewer operations, the same
    document). The CPU is chosen by the test process's xdist number, so that the processes'
    programs do not all wait on one CPU. The same PID (taskset execs the program)."""
    cpus = sorted(os.sched_getaffinity(0))
    worker = os.environ.get("PYTEST_XDIST_WORKER", "gw0")
    cpu = cpus[int(worker[2:]) % len(cpus)] if worker[2:].isdigit() else cpus[-1]
    return ["taskset", "-c", str(cpu), *cmd]


@contextlib.contextmanager
def children_on_one_cpu() -> Iterator[None]:
    """`on_one_cpu` for what this test process starts inside the block, for a program it starts
    through code under test (the agent's loop or CLI run in process start the engine): the calling
    thread's CPU set is that one CPU meanwhile, which the threads and programs it starts inherit,
    then it is put back."""
    before = os.sched_getaffinity(0)
    cpu = int(on_one_cpu([])[2])
    os.sched_setaffinity(0, {cpu})
    try:
        yield
    finally:
        os.sched_setaffinity(0, before)


def in_the_background(cmd: Sequence[str]) -> list[str]:
    """`on_one_cpu(cmd)` at the lowest priority (`nice -n 19`) too: it then takes what the suite's
    processes leave of that CPU. Only for a run bound by the clock (every job time-based, vdbench's
    elapsed) whose document is made once and read as data: a run that moves a set amount of data
    costs the same CPU at any priority, and at nice 19 beside a busy suite it can take minutes (a
    1.4 % share of a CPU beside one busy process). Not for a stack's agent, whose runs tests wait on."""
    return on_one_cpu(["nice", "-n", "19", *cmd])


def celery_worker_argv(*extra: str) -> list[str]:
    """`celery -A worker.app worker` as the tests and benchmarks start it: one process (solo pool),
    no broadcast chatter between workers; `extra` adds options (-B, --schedule, -Q ...)."""
    return [
        sys.executable,
        "-m",
        "celery",
        "-A",
        "worker.app",
        "worker",
        "--pool=solo",
        "--loglevel=INFO",
        "--without-mingle",
        "--without-gossip",
        *extra,
    ]


def stop(proc: "subprocess.Popen[bytes]", timeout: float = 20) -> None:
    """SIGTERM, then SIGKILL if it has not ended within `timeout` seconds; reaped either way."""
    proc.terminate()
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def _as_pg_user(cmd: list[str]) -> list[str]:
    if os.geteuid() == 0:
        return ["runuser", "-u", "postgres", "--", *cmd]
    return cmd


TEMPLATE = "iowatt_template"  # Postgres.migrated_database's source; never connected to otherwise


@dataclass
class Postgres:
    port: int
    root: Path
    template: str = ""  # set once TEMPLATE is migrated
    options: str = ""  # the server's command-line options (pg_ctl -o), which start() gives again

    def url(self, db: str) -> str:
        return f"postgresql+psycopg://postgres@127.0.0.1:{self.port}/{db}"

    def create_database(self, name: str) -> str:
        import psycopg

        with psycopg.connect(
            f"host=127.0.0.1 port={self.port} user=postgres dbname=postgres", autocommit=True
        ) as c:
            c.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
            c.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)

    def migrated_database(self, name: str) -> str:
        """A new database `name` with the schema at the migrations' head: a copy of this server's
        template database (CREATE DATABASE ... TEMPLATE copies files, a tenth of a second), which
        the migrations build once per server, instead of running every migration again."""
        import psycopg

        from tests.conftest import alembic_config

        if not self.template:
            url = self.create_database(TEMPLATE)
            from alembic import command

            command.upgrade(alembic_config(url), "head")
            self.template = TEMPLATE
        with psycopg.connect(
            f"host=127.0.0.1 port={self.port} user=postgres dbname=postgres", autocommit=True
        ) as c:
            c.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
            c.execute(f'CREATE DATABASE "{name}" TEMPLATE "{TEMPLATE}"')
        return self.url(name)

    def restart(self, mode: str = "fast") -> float:
        """`pg_ctl restart -m fast` (the options of the first start are kept): every connection is
        ended, as an operator's restart or a failover does. Returns the seconds it took."""
        return self._pg_ctl("-m", mode, "restart")

    def stop(self) -> float:
        """`pg_ctl stop -m fast`: down until `start()` (an outage, not a restart)."""
        return self._pg_ctl("-m", "fast", "stop")

    def start(self) -> float:
        """`pg_ctl start` after `stop()`, with the options of the first start (a restart reads
        them from postmaster.opts; a start does not)."""
        return self._pg_ctl("-o", self.options, "start")

    def _pg_ctl(self, *args: str) -> float:
        t0 = time.monotonic()
        data = self.root / "data"
        ctl = [str(PG_BIN / "pg_ctl"), "-D", str(data), "-l", str(data / "server.log"), "-w"]
        subprocess.run(
            _as_pg_user([*ctl, *args]),
            check=True,
            stdout=subprocess.DEVNULL,  # the server must not hold a pipe of ours open
            stderr=subprocess.DEVNULL,
            timeout=60,
        )
        return time.monotonic() - t0


INITDB_ARGS = ("-A", "trust", "-U", "postgres")


def _cluster_key() -> str:
    """What a fresh cluster depends on: the server's binaries, initdb's options, the locale it reads
    from the environment and who owns the files."""
    h = hashlib.sha256()
    for name in ("initdb", "postgres"):
        st = (PG_BIN / name).stat()
        h.update(f"{name} {st.st_size} {st.st_mtime_ns}\n".encode())
    h.update(repr(INITDB_ARGS).encode())
    h.update(
        repr(sorted((k, v) for k, v in os.environ.items() if k == "LANG" or k.startswith("LC_"))).encode()
    )
    h.update(str(os.geteuid() == 0).encode())
    return h.hexdigest()[:16]


def _ready_cluster(name: str, lock_name: str, make: Callable[[Path], None]) -> Path:
    """The cached data directory `name` under the temporary directory, made once per machine by
    `make(empty_dir)` under the lock `lock_name` (the test processes start their servers at the same
    moment; the others wait for the one making it) and renamed into place whole: a half-made
    cluster is never seen."""
    cache = Path(tempfile.gettempdir()) / "iowatt-test-pg-cluster"
    cache.mkdir(mode=0o755, exist_ok=True)
    ready = cache / name
    if not ready.is_dir():
        with open(cache / lock_name, "a+b") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if not ready.is_dir():
                work = Path(tempfile.mkdtemp(prefix="initdb-", dir=cache))
                work.chmod(0o755)
                made = work / "data"
                made.mkdir(mode=0o700)
                if os.geteuid() == 0:
                    pg = pwd.getpwnam("postgres")
                    os.chown(work, pg.pw_uid, pg.pw_gid)
                    os.chown(made, pg.pw_uid, pg.pw_gid)
                try:
                    make(made)
                    made.rename(ready)
                finally:
                    shutil.rmtree(work, ignore_errors=True)
    return ready


def _initdb(made: Path) -> None:
    subprocess.run(
        _as_pg_user([str(PG_BIN / "initdb"), "-D", str(made), *INITDB_ARGS]),
        check=True,
        capture_output=True,
    )


def _migrations_key() -> str:
    """What the migrated template database depends on besides the cluster: every file of
    migrations/ (the steps and env.py), alembic.ini, env.py's checks (backend/ops/migrate.py) and
    the versions of Alembic and SQLAlchemy, which write the DDL."""
    from importlib.metadata import version

    h = hashlib.sha256(f"{version('alembic')} {version('sqlalchemy')}\n".encode())
    files = sorted((REPO / "migrations").rglob("*.py"))
    for f in [*files, REPO / "alembic.ini", REPO / "backend" / "ops" / "migrate.py"]:
        h.update(f"{f.relative_to(REPO)}\n".encode())
        h.update(f.read_bytes())
    return h.hexdigest()[:16]


def _migrate_cluster(plain: Path) -> Callable[[Path], None]:
    """Make, in an empty directory, a copy of the cluster `plain` whose TEMPLATE database the
    migrations have built to their head: a server started on it once, the migrations run, the
    server stopped cleanly (a copy then starts without recovery)."""

    def make(made: Path) -> None:
        subprocess.run(["cp", "-a", "-T", str(plain), str(made)], check=True, capture_output=True)
        port = free_port()
        ctl = [str(PG_BIN / "pg_ctl"), "-D", str(made), "-l", str(made.parent / "server.log")]
        opts = f"-p {port} -k {made.parent} -c listen_addresses=127.0.0.1 -c autovacuum=off"
        subprocess.run(_as_pg_user([*ctl, "-w", "-o", opts, "start"]), check=True, capture_output=True)
        try:
            from alembic import command

            from tests.conftest import alembic_config

            url = Postgres(port=port, root=made.parent).create_database(TEMPLATE)
            command.upgrade(alembic_config(url), "head")
        finally:
            subprocess.run(_as_pg_user([*ctl, "-m", "fast", "-w", "stop"]), check=True, capture_output=True)

    return make


def _copy_cluster(data: Path) -> bool:
    """Fill the empty directory `data` with a fresh cluster: a copy of one `initdb` made once per
    machine and kept in the temporary directory, keyed by `_cluster_key`, with TEMPLATE already
    built by the migrations (a second cached directory, keyed by `_migrations_key` too). An initdb
    is ~0.8 CPU-s and the migrations ~0.9 (the test process and the server), a copy ~0.1. True when
    the copy holds the migrated TEMPLATE; False when that could not be made (the plain cluster is
    copied then, and `Postgres.migrated_database` runs the migrations there, failing as it always
    did)."""
    key = _cluster_key()
    source = _ready_cluster(key, "lock", _initdb)
    migrated = True
    try:
        name = f"{key}-migrated-{_migrations_key()}"
        source = _ready_cluster(name, "lock-migrated", _migrate_cluster(source))
    except Exception:  # noqa: BLE001 - only a cache: the migrations run (and fail) where they always did
        migrated = False
    # cp -a keeps the owner (the postgres user's, as root) and the modes (0700: the server checks)
    subprocess.run(["cp", "-a", "-T", str(source), str(data)], check=True, capture_output=True)
    return migrated


@contextlib.contextmanager
def postgres() -> Iterator[Postgres]:
    if not (PG_BIN / "initdb").exists():
        raise RuntimeError("PostgreSQL 15 is not installed: run `make deps` (apt-get install postgresql-15)")
    root = Path(tempfile.mkdtemp(prefix="iowatt-test-pg-"))
    root.chmod(0o755)
    data = root / "data"
    data.mkdir()
    if os.geteuid() == 0:
        pg = pwd.getpwnam("postgres")
        os.chown(data, pg.pw_uid, pg.pw_gid)
        os.chown(root, pg.pw_uid, pg.pw_gid)
    port = free_port()
    migrated = _copy_cluster(data)
    # fsync=off: a test server's files need not survive a crash of the machine. autovacuum=off: its
    # launcher starts a worker process in each database once a minute (a test process's server
    # holds four or five): ~0.08 CPU-s a minute idle against ~0.01 without, for statistics and
    # cleanup no test reads or needs on a short-lived server. (synchronous_commit=off,
    # full_page_writes=off, wal_level=minimal, jit=off and shared_buffers=16MB saved nothing
    # measurable on top of fsync=off: not set.)
    opts = (
        f"-p {port} -k {root} -c listen_addresses=127.0.0.1 -c fsync=off -c autovacuum=off"
        " -c max_connections=200"
    )
    subprocess.run(
        _as_pg_user(
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
        ),
        check=True,
        capture_output=True,
    )
    try:
        yield Postgres(port=port, root=root, template=TEMPLATE if migrated else "", options=opts)
    finally:
        subprocess.run(
            _as_pg_user([str(PG_BIN / "pg_ctl"), "-D", str(data), "-m", "immediate", "stop"]),
            capture_output=True,
        )
        shutil.rmtree(root, ignore_errors=True)


def _listens(port: int) -> bool:
    with socket.create_connection(("127.0.0.1", port), 0.2):
        return True


@dataclass
class Redis:
    """A private redis-server that can be stopped and started again on the same port (no data is
    kept across a stop: the broker loses what it held, as a restarted cache-only Redis does)."""

    port: int
    root: Path
    proc: "subprocess.Popen[bytes] | None" = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        exe = shutil.which("redis-server")
        if exe is None:
            raise RuntimeError("redis-server is missing: run `make deps` (apt-get install redis-server)")
        args = ["--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"]
        # its timer once a second, not ten times (~0.015 CPU-s a minute idle against ~0.09): a key
        # past its TTL is still never read (every read checks it); a blocked pop's timeout and a
        # SIGTERM are noticed within a second instead of 0.1 s
        args += ["--hz", "1"]
        self.proc = subprocess.Popen(
            [exe, *args, "--dir", str(self.root)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        try:
            wait_until(lambda: _listens(self.port), timeout=10, interval=0.05, ignore=(OSError,))
        except WaitTimeout as e:
            raise RuntimeError(f"redis-server did not listen on {self.port} within 10 s") from e

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.terminate()
            self.proc.wait(timeout=10)
            self.proc = None


@contextlib.contextmanager
def redis_instance() -> Iterator[Redis]:
    server = Redis(port=free_port(), root=Path(tempfile.mkdtemp(prefix="iowatt-test-redis-")))
    server.start()
    try:
        yield server
    finally:
        server.stop()
        shutil.rmtree(server.root, ignore_errors=True)


@contextlib.contextmanager
def redis_server() -> Iterator[str]:
    with redis_instance() as server:
        yield server.url
