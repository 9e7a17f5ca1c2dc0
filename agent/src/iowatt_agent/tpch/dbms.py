"""Private DBMS instances for the TPC-H-derived workload: a data directory inside the run's own
directory on the target, a unix socket (no TCP listener at all), started as the DBMS's package
user (postgres, mysql) when the agent is root, because PostgreSQL refuses root and the
instance needs no privilege. `stop()` kills the server and is safe to call twice; the caller
removes the directory.

The two instances share one small surface (`Instance`): start, connect, settings, stop; the SQL
they run lives in `workload`."""

from __future__ import annotations

import contextlib
import glob
import os
import pwd
import shutil
import signal
import stat
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

# Small on purpose: the data must not fit in the DBMS's own cache, so the device is measured.
DEFAULT_BUFFER_POOL_BYTES = 16 * 1024 * 1024
SOCKET_PATH_MAX = 100  # sun_path is 108 bytes with its NUL; keep a margin
START_TIMEOUT_S = 90.0


class Unsupported(Exception):  # noqa: N818 - an outcome (exit 77), not a bug
    """This host cannot run the workload (exit 77): `install` says what would make it able to."""

    def __init__(self, message: str, install: str) -> None:
        super().__init__(f"{message}; install it: {install}")
        self.install = install


class DbmsError(Exception):
    """The DBMS failed to initialise, start or answer (exit 1)."""


class Connection(Protocol):
    def cursor(self) -> Any: ...
    def commit(self) -> None: ...
    def rollback(self) -> None: ...
    def close(self) -> None: ...


@dataclass
class RunAs:
    """Who the DBMS processes run as: the agent's own user, or an unprivileged one when root."""

    name: str
    uid: int
    gid: int

    @property
    def switch(self) -> bool:
        return self.uid != os.geteuid()

    def popen_kwargs(self) -> dict[str, Any]:
        return {"user": self.uid, "group": self.gid, "extra_groups": []} if self.switch else {}


def run_as(preferred: str) -> RunAs:
    """The agent's user, or `preferred` (the DBMS package's user), else nobody, when root."""
    if os.geteuid() != 0:
        me = pwd.getpwuid(os.geteuid())
        return RunAs(me.pw_name, me.pw_uid, me.pw_gid)
    for name in (preferred, "nobody"):
        try:
            entry = pwd.getpwnam(name)
        except KeyError:
            continue
        return RunAs(entry.pw_name, entry.pw_uid, entry.pw_gid)
    raise DbmsError(f"running as root, and neither user {preferred!r} nor 'nobody' exists to run the DBMS")


def check_reachable(path: Path, user: RunAs) -> None:
    """DbmsError unless `user` may search every directory above `path` (the DBMS must reach its
    data directory; the agent never changes the permissions of the host's directories)."""
    if not user.switch:
        return
    groups = {user.gid} | {g.gr_gid for g in _groups_of(user.name)}
    for parent in reversed(path.parents):
        st = parent.stat()
        if st.st_uid == user.uid:
            ok = bool(st.st_mode & stat.S_IXUSR)
        elif st.st_gid in groups:
            ok = bool(st.st_mode & stat.S_IXGRP)
        else:
            ok = bool(st.st_mode & stat.S_IXOTH)
        if not ok:
            raise DbmsError(
                f"the DBMS runs as user {user.name}, which cannot enter {parent} "
                f"(mode {stat.filemode(st.st_mode)}): give the target's parents search permission "
                f"(chmod o+x), or choose a target below such directories"
            )


def _groups_of(name: str) -> list[Any]:
    import grp

    return [g for g in grp.getgrall() if name in g.gr_mem]


def _socket_dir(preferred: Path, user: RunAs, name: str) -> tuple[Path, Path | None]:
    """The socket's directory: `preferred` (in the data directory) when the path fits in
    sun_path, else a private temporary directory (returned second, for removal)."""
    if len(str(preferred / name)) <= SOCKET_PATH_MAX:
        return preferred, None
    extra = Path(tempfile.mkdtemp(prefix="iowatt-tpch-sock-"))
    os.chown(extra, user.uid, user.gid)
    return extra, extra


def _chown_tree(path: Path, user: RunAs) -> None:
    if user.switch:
        os.chown(path, user.uid, user.gid)


@dataclass
class Instance:
    """A private DBMS server: `directory` (inside the run's directory) holds its data and, when the
    path is short enough, its socket."""

    dbms: str
    directory: Path
    buffer_pool_bytes: int
    user: RunAs
    version: str = ""
    socket_dir: Path | None = None
    extra_dir: Path | None = None
    process: subprocess.Popen[bytes] | None = None
    log: Path | None = None
    stopped: bool = field(default=False)

    def start(self) -> None:
        raise NotImplementedError

    def connect(self) -> Connection:
        raise NotImplementedError

    def settings(self) -> dict[str, Any]:
        raise NotImplementedError

    def stop(self) -> None:
        raise NotImplementedError

    def log_tail(self, lines: int = 5) -> str:
        if self.log is None:
            return ""
        try:
            text = self.log.read_text(errors="replace").strip().splitlines()
        except OSError:
            return ""
        return " | ".join(text[-lines:])

    def _kill(self, timeout_s: float = 20.0) -> None:
        """SIGTERM the server's process, then SIGKILL after `timeout_s`."""
        proc = self.process
        if proc is None or proc.poll() is not None:
            return
        with contextlib.suppress(ProcessLookupError):
            proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout_s)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
            proc.wait(10)

    def remove_extra(self) -> None:
        if self.extra_dir is not None:
            shutil.rmtree(self.extra_dir, ignore_errors=True)
            self.extra_dir = None


# --- PostgreSQL ------------------------------------------------------------------------------------

PG_INSTALL = "apt-get install -y postgresql (Debian/Ubuntu), dnf install -y postgresql-server (Fedora/RHEL)"
PG_BINDIR_ENV = "IOWATT_TPCH_PG_BINDIR"


def pg_bindir() -> Path:
    """The directory holding initdb, pg_ctl and postgres: $IOWATT_TPCH_PG_BINDIR, the newest
    /usr/lib/postgresql/N/bin, or PATH. Unsupported when none has them."""
    wanted = ("initdb", "pg_ctl", "postgres")
    env = os.environ.get(PG_BINDIR_ENV)
    candidates = (
        [Path(env)]
        if env
        else [
            *sorted(
                (Path(p) for p in glob.glob("/usr/lib/postgresql/*/bin")),
                key=lambda p: _version_key(p.parent.name),
                reverse=True,
            ),
            *([Path(w).parent] if (w := shutil.which("initdb")) else []),
        ]
    )
    for d in candidates:
        if all(os.access(d / w, os.X_OK) for w in wanted):
            return d
    where = env or "/usr/lib/postgresql/*/bin or PATH"
    raise Unsupported(
        f"PostgreSQL server binaries (initdb, pg_ctl, postgres) not found in {where}", PG_INSTALL
    )


def _version_key(text: str) -> tuple[int, ...]:
    return tuple(int(p) for p in text.split(".") if p.isdigit())


@dataclass
class Postgres(Instance):
    bindir: Path = Path()

    @classmethod
    def create(cls, directory: Path, buffer_pool_bytes: int) -> Postgres:
        bindir = pg_bindir()
        user = run_as("postgres")
        return cls("postgresql", directory, buffer_pool_bytes, user, bindir=bindir)

    def _run(self, *argv: str, timeout: float = START_TIMEOUT_S) -> None:
        res = subprocess.run(
            argv,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
            cwd=str(self.directory),
            **self.user.popen_kwargs(),
        )
        if res.returncode != 0:
            detail = (res.stderr or res.stdout).strip().splitlines()
            raise DbmsError(f"{Path(argv[0]).name} failed: {' | '.join(detail[-4:])}")

    def start(self) -> None:
        data = self.directory / "data"
        self.directory.mkdir(mode=0o700)
        _chown_tree(self.directory, self.user)
        check_reachable(self.directory, self.user)
        self._run(str(self.bindir / "initdb"), "-D", str(data), "-A", "trust", "-U", "postgres", "-E", "UTF8")
        self.socket_dir, self.extra_dir = _socket_dir(data, self.user, ".s.PGSQL.5432")
        self.log = data / "server.log"
        opts = [
            "-c listen_addresses=''",  # unix socket only: no TCP listener
            f"-k {self.socket_dir}",
            "-p 5432",
            f"-c shared_buffers={self.buffer_pool_bytes // 1024}kB",
            "-c fsync=on",
            "-c synchronous_commit=on",
            "-c full_page_writes=on",
            "-c max_connections=100",  # 64 streams at most, plus the refresh stream
        ]
        self.stopped = False
        self._run(
            str(self.bindir / "pg_ctl"),
            "-D",
            str(data),
            "-l",
            str(self.log),
            "-w",
            "-t",
            str(int(START_TIMEOUT_S)),
            "-o",
            " ".join(opts),
            "start",
        )
        conn = self.connect()
        try:
            cur = conn.cursor()
            cur.execute("SHOW server_version")
            self.version = f"PostgreSQL {cur.fetchone()[0]}"
        finally:
            conn.close()

    def connect(self) -> Connection:
        import psycopg

        return psycopg.connect(host=str(self.socket_dir), port=5432, user="postgres", dbname="postgres")

    def settings(self) -> dict[str, Any]:
        conn = self.connect()
        try:
            cur = conn.cursor()
            out: dict[str, Any] = {}
            for name in (
                "shared_buffers",
                "fsync",
                "synchronous_commit",
                "full_page_writes",
                "wal_level",
                "work_mem",
                "listen_addresses",
                "unix_socket_directories",
            ):
                cur.execute(f"SHOW {name}")
                out[name] = cur.fetchone()[0]
            cur.execute("SELECT setting::bigint * 8192 FROM pg_settings WHERE name = 'shared_buffers'")
            out["buffer_pool_bytes"] = int(cur.fetchone()[0])
            out["page_cache"] = "used: PostgreSQL reads and writes through the kernel's page cache"
            return out
        finally:
            conn.close()

    def stop(self) -> None:
        """Immediate shutdown (the data is thrown away), then make sure no process is left."""
        if self.stopped:
            return
        self.stopped = True
        data = self.directory / "data"
        pid = _pid_from(data / "postmaster.pid")
        if pid is not None:
            with contextlib.suppress(DbmsError, subprocess.TimeoutExpired):
                self._run(
                    str(self.bindir / "pg_ctl"), "-D", str(data), "-m", "immediate", "-w", "stop", timeout=30
                )
            _wait_gone(pid, 10.0)
        self.remove_extra()


# --- MariaDB ---------------------------------------------------------------------------------------

MARIADB_INSTALL = (
    "apt-get install -y mariadb-server (Debian/Ubuntu), dnf install -y mariadb-server (Fedora/RHEL)"
)
MARIADB_BINDIR_ENV = "IOWATT_TPCH_MARIADB_BINDIR"


def mariadb_binaries() -> tuple[Path, Path]:
    """(mariadbd, mariadb-install-db): from $IOWATT_TPCH_MARIADB_BINDIR, else /usr/sbin, /usr/bin
    and PATH. Unsupported when missing."""
    env = os.environ.get(MARIADB_BINDIR_ENV)
    dirs = [Path(env)] if env else [Path("/usr/sbin"), Path("/usr/bin"), Path("/usr/local/bin")]
    found: dict[str, Path] = {}
    for name in ("mariadbd", "mariadb-install-db"):
        for d in dirs:
            if os.access(d / name, os.X_OK):
                found[name] = d / name
                break
        else:
            w = None if env else shutil.which(name)
            if w:
                found[name] = Path(w)
    if len(found) < 2:
        where = env or "/usr/sbin, /usr/bin or PATH"
        raise Unsupported(
            f"MariaDB server binaries (mariadbd, mariadb-install-db) not found in {where}", MARIADB_INSTALL
        )
    return found["mariadbd"], found["mariadb-install-db"]


@dataclass
class MariaDB(Instance):
    mariadbd: Path = Path()
    install_db: Path = Path()

    @classmethod
    def create(cls, directory: Path, buffer_pool_bytes: int) -> MariaDB:
        mariadbd, install_db = mariadb_binaries()
        user = run_as("mysql")
        return cls("mariadb", directory, buffer_pool_bytes, user, mariadbd=mariadbd, install_db=install_db)

    def _server_options(self) -> list[str]:
        data = self.directory / "data"
        opts = [
            "--no-defaults",
            f"--datadir={data}",
            f"--innodb-buffer-pool-size={max(self.buffer_pool_bytes, 5 * 1024 * 1024)}",
            "--innodb-log-file-size=32M",
            "--innodb-flush-method=O_DIRECT",  # the buffer pool, not the page cache, caches data
            "--innodb-flush-log-at-trx-commit=1",
            "--innodb-doublewrite=1",
        ]
        if self.user.switch:
            opts.append(f"--user={self.user.name}")
        return opts

    def start(self) -> None:
        data = self.directory / "data"
        self.directory.mkdir(mode=0o700)
        _chown_tree(self.directory, self.user)
        check_reachable(self.directory, self.user)
        tmp = self.directory / "tmp"
        tmp.mkdir(mode=0o700)
        _chown_tree(tmp, self.user)
        res = subprocess.run(
            [
                str(self.install_db),
                *self._server_options(),
                "--auth-root-authentication-method=normal",
                "--skip-test-db",
                "--skip-name-resolve",
            ],
            capture_output=True,
            text=True,
            timeout=START_TIMEOUT_S * 2,
            check=False,
            cwd=str(self.directory),
        )
        if res.returncode != 0:
            detail = (res.stderr or res.stdout).strip().splitlines()
            raise DbmsError(f"mariadb-install-db failed: {' | '.join(detail[-4:])}")
        self.socket_dir, self.extra_dir = _socket_dir(data, self.user, "mysqld.sock")
        self.log = data / "error.log"
        self.stopped = False
        self.process = subprocess.Popen(
            [
                str(self.mariadbd),
                *self._server_options(),
                "--skip-networking",  # unix socket only: no TCP listener
                f"--socket={self.socket_dir / 'mysqld.sock'}",
                f"--pid-file={data / 'mysqld.pid'}",
                f"--log-error={self.log}",
                f"--tmpdir={tmp}",
                "--local-infile=1",
                "--skip-log-bin",
            ],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        deadline = time.monotonic() + START_TIMEOUT_S
        while True:
            if self.process.poll() is not None:
                raise DbmsError(f"mariadbd exited with {self.process.returncode}: {self.log_tail()}")
            try:
                conn = self.connect()
                break
            except Exception as exc:  # noqa: BLE001 - not up yet
                if time.monotonic() > deadline:
                    raise DbmsError(
                        f"mariadbd did not accept connections in {START_TIMEOUT_S:g} s: {exc}"
                    ) from None
                time.sleep(0.2)
        try:
            cur = conn.cursor()
            cur.execute("SELECT VERSION()")
            self.version = f"MariaDB {cur.fetchone()[0]}"
            cur.execute("CREATE DATABASE tpch")
        finally:
            conn.close()

    def connect(self) -> Connection:
        import pymysql  # type: ignore[import-untyped]

        conn: Connection = pymysql.connect(
            unix_socket=str(self.socket_dir / "mysqld.sock") if self.socket_dir else None,
            user="root",
            password="",
            local_infile=True,
            autocommit=True,
            database="tpch" if self.version else None,
        )
        return conn

    def settings(self) -> dict[str, Any]:
        conn = self.connect()
        try:
            cur = conn.cursor()
            names = (
                "innodb_buffer_pool_size",
                "innodb_flush_method",
                "innodb_flush_log_at_trx_commit",
                "innodb_doublewrite",
                "innodb_log_file_size",
                "sync_binlog",
                "log_bin",
                "skip_networking",
                "socket",
            )
            cur.execute(
                "SELECT LOWER(VARIABLE_NAME), VARIABLE_VALUE FROM information_schema.GLOBAL_VARIABLES "
                f"WHERE LOWER(VARIABLE_NAME) IN ({', '.join(repr(n) for n in names)})"
            )
            out: dict[str, Any] = dict(cur.fetchall())
            out["buffer_pool_bytes"] = int(out.get("innodb_buffer_pool_size", 0))
            out["page_cache"] = (
                "bypassed for data files where the filesystem supports O_DIRECT "
                "(innodb_flush_method=O_DIRECT; tmpfs does not)"
            )
            return out
        finally:
            conn.close()

    def stop(self) -> None:
        """SIGTERM the server (then SIGKILL): the data is thrown away."""
        if self.stopped:
            return
        self.stopped = True
        self._kill()
        self.remove_extra()


def _pid_from(pidfile: Path) -> int | None:
    try:
        return int(pidfile.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def _wait_gone(pid: int, timeout_s: float) -> None:
    """Wait for `pid` to exit; SIGKILL it (and its group) after `timeout_s`."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.05)
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)


def create_instance(dbms: str, directory: Path, buffer_pool_bytes: int) -> Instance:
    """The instance for `dbms` (postgresql or mariadb); Unsupported when its binaries are missing."""
    if dbms == "postgresql":
        return Postgres.create(directory, buffer_pool_bytes)
    if dbms == "mariadb":
        return MariaDB.create(directory, buffer_pool_bytes)
    raise ValueError(f"--dbms must be postgresql or mariadb, got {dbms!r}")
