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
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from tests.waiting import WaitTimeout, wait_until

PG_BIN = Path("/usr/lib/postgresql/15/bin")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


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
        t0 = time.monotonic()
        data = self.root / "data"
        subprocess.run(
            _as_pg_user(
                [
                    str(PG_BIN / "pg_ctl"),
                    "-D",
                    str(data),
                    "-l",
                    str(data / "server.log"),
                    "-m",
                    mode,
                    "-w",
                    "restart",
                ]
            ),
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


def _copy_cluster(data: Path) -> None:
    """Fill the empty directory `data` with a fresh cluster: a copy of one `initdb` made once per
    machine under a lock (the test processes start their servers at the same moment) and kept in
    the temporary directory, keyed by `_cluster_key`. An initdb is ~0.8 CPU-s, a copy ~0.1; the copy
    is the same files initdb writes (the cluster has never been started)."""
    cache = Path(tempfile.gettempdir()) / "iowatt-test-pg-cluster"
    cache.mkdir(mode=0o755, exist_ok=True)
    ready = cache / _cluster_key()
    if not ready.is_dir():
        with open(cache / "lock", "a+b") as lock:
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
                subprocess.run(
                    _as_pg_user([str(PG_BIN / "initdb"), "-D", str(made), *INITDB_ARGS]),
                    check=True,
                    capture_output=True,
                )
                made.rename(ready)  # whole or not at all: a half-made cluster is never seen
                shutil.rmtree(work, ignore_errors=True)
    # cp -a keeps the owner (the postgres user's, as root) and the modes (0700: the server checks)
    subprocess.run(["cp", "-a", "-T", str(ready), str(data)], check=True, capture_output=True)


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
    _copy_cluster(data)
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
        yield Postgres(port=port, root=root)
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
