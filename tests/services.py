"""Private PostgreSQL and Redis servers for tests, on free ports, from the system binaries.

PostgreSQL refuses to run as root, so as root it runs as the `postgres` system user with a data
directory that user owns. Nothing here touches `.iowatt/` (that is `make up`'s).
"""

import contextlib
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

PG_BIN = Path("/usr/lib/postgresql/15/bin")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _as_pg_user(cmd: list[str]) -> list[str]:
    if os.geteuid() == 0:
        return ["runuser", "-u", "postgres", "--", *cmd]
    return cmd


@dataclass
class Postgres:
    port: int
    root: Path

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
    subprocess.run(
        _as_pg_user([str(PG_BIN / "initdb"), "-D", str(data), "-A", "trust", "-U", "postgres"]),
        check=True,
        capture_output=True,
    )
    opts = f"-p {port} -k {root} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200"
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


@contextlib.contextmanager
def redis_server() -> Iterator[str]:
    exe = shutil.which("redis-server")
    if exe is None:
        raise RuntimeError("redis-server is not installed: run `make deps` (apt-get install redis-server)")
    root = Path(tempfile.mkdtemp(prefix="iowatt-test-redis-"))
    port = free_port()
    proc = subprocess.Popen(
        [
            exe,
            "--port",
            str(port),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "no",
            "--dir",
            str(root),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=0.2):
            break
        time.sleep(0.05)
    try:
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        proc.terminate()
        proc.wait(timeout=10)
        shutil.rmtree(root, ignore_errors=True)
