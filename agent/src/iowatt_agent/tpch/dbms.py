"""Private DBMS instances for the TPC-H-derived workload: a data directory inside the run's own
directory on the target, a unix socket (no TCP listener at all). Everything here runs in the
TPC-H worker (`isolation`): already the unprivileged TPC-H user, its working directory the run
directory (held by descriptor), so the servers are started as that user with no switch, our
own file operations are relative to the working directory, the servers get absolute paths made
from `os.getcwd()` at the moment they start (the directory's real place, never a path another
user could have swapped a link into), and after the start the server's working directory is
checked to be our data directory. Servers and tools get `isolation.clean_env()` and no
inherited descriptor. MariaDB never enables LOCAL INFILE (the client would send any file its
process can read to whoever answers on the socket): the server loads the generated files itself
(`LOAD DATA INFILE`, `--secure-file-priv` = the generator's directory). `stop()` kills the
server and is safe to call twice; the worker removes the directory.

The two instances share one small surface (`Instance`): start, connect, settings, stop; the SQL
they run lives in `workload`."""

from __future__ import annotations

import contextlib
import glob
import os
import shutil
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from .isolation import clean_env

# The buffer pool a run names none gets: libs/workload's TPCH_DEFAULT_BUFFER_POOL_BYTES (16 MiB,
# small on purpose; libs/policy's memory bound counts the same value).
# the DBMSs a TPC-H run can use (--dbms, a lease's "dbms", capabilities.tpch_dbms)
DBMS_NAMES = ("postgresql", "mariadb")
SOCKET_PATH_MAX = 100  # sun_path is 108 bytes with its NUL; keep a margin
START_TIMEOUT_S = 90.0


class Unsupported(Exception):  # noqa: N818 - an outcome (exit 77), not a bug
    """This host cannot run the workload (exit 77): `install` says what would make it able to."""

    def __init__(self, message: str, install: str) -> None:
        super().__init__(f"{message}; install it: {install}")
        self.message = message
        self.install = install


class DbmsError(Exception):
    """The DBMS failed to initialise, start or answer (exit 1)."""


class Connection(Protocol):
    def cursor(self) -> Any: ...
    def commit(self) -> None: ...
    def rollback(self) -> None: ...
    def close(self) -> None: ...


def _socket_dir(preferred: Path, name: str) -> tuple[Path, Path | None]:
    """The socket's directory: `preferred` (in the data directory) when the path fits in
    sun_path, else a private temporary directory (mode 0700; returned second, for removal)."""
    if len(str(preferred / name)) <= SOCKET_PATH_MAX:
        return preferred, None
    extra = Path(tempfile.mkdtemp(prefix="iowatt-tpch-sock-"))
    return extra, extra


def _here() -> Path:
    """The run directory's real absolute path now (the worker's working directory)."""
    return Path(os.getcwd())


def _tool_kwargs() -> dict[str, Any]:
    """What every DBMS program is started with: the clean environment, stdin closed, no
    descriptor of ours, the run directory as its working directory."""
    return {"env": clean_env(home=os.getcwd()), "stdin": subprocess.DEVNULL, "close_fds": True}


def _works_in(pid: int, data: Path) -> bool:
    """Process `pid`'s working directory is `data` (same device and inode)."""
    try:
        theirs, ours = os.stat(f"/proc/{pid}/cwd"), os.stat(data)
    except OSError:
        return False
    return (theirs.st_dev, theirs.st_ino) == (ours.st_dev, ours.st_ino)


def check_server_dir(pid: int, data: Path) -> None:
    """DbmsError unless server `pid` works in `data` (the same directory, by device and inode):
    the absolute path it was given must have led to our data directory, not elsewhere."""
    try:
        theirs = os.stat(f"/proc/{pid}/cwd")
    except OSError as exc:
        raise DbmsError(f"cannot check the server's data directory (pid {pid}): {exc.strerror}") from None
    ours = os.stat(data)
    if (theirs.st_dev, theirs.st_ino) != (ours.st_dev, ours.st_ino):
        raise DbmsError("the server does not run in the run's data directory (its path was swapped)")


@dataclass
class Instance:
    """A private DBMS server: `directory` (inside the run's directory) holds its data and, when the
    path is short enough, its socket."""

    dbms: str
    directory: Path  # absolute, where the run started (reported); work uses LOCAL
    buffer_pool_bytes: int
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
            text = (LOCAL / "data" / self.log.name).read_text(errors="replace").strip().splitlines()
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


# the instance's directory relative to the worker's working directory (the run directory)
LOCAL = Path("dbms")


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
        return cls("postgresql", directory, buffer_pool_bytes, bindir=pg_bindir())

    def _run(self, *argv: str, timeout: float = START_TIMEOUT_S) -> None:
        res = subprocess.run(
            argv, capture_output=True, text=True, timeout=timeout, check=False, **_tool_kwargs()
        )
        if res.returncode != 0:
            detail = (res.stderr or res.stdout).strip().splitlines()
            raise DbmsError(f"{Path(argv[0]).name} failed: {' | '.join(detail[-4:])}")

    def start(self) -> None:
        os.mkdir(LOCAL, 0o700)
        data = _here() / LOCAL / "data"
        self._run(str(self.bindir / "initdb"), "-D", str(data), "-A", "trust", "-U", "postgres", "-E", "UTF8")
        self.socket_dir, self.extra_dir = _socket_dir(data, ".s.PGSQL.5432")
        self.log = data / "server.log"
        opts = [
            "-c listen_addresses=''",  # unix socket only: no TCP listener
            f"-k {self.socket_dir}",
            "-p 5432",
            f"-c shared_buffers={self.buffer_pool_bytes // 1024}kB",
            "-c fsync=on",
            "-c synchronous_commit=on",
            "-c full_page_writes=on",
            "-c max_connections=100",  # TPCH_STREAMS_MAX (64) streams at most, plus the refresh stream
            "-c jit=off",  # no JIT: the unit's MemoryDenyWriteExecute, and no compile time in Q timings
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
        pid = _pid_from(LOCAL / "data" / "postmaster.pid")
        if pid is None:
            raise DbmsError("pg_ctl started no server (no postmaster.pid)")
        check_server_dir(pid, LOCAL / "data")
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
                "jit",
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
        pid = _pid_from(LOCAL / "data" / "postmaster.pid")
        # only our server: with the DBMS package's user as the TPC-H user, a stale pid could be
        # the host's own PostgreSQL
        if pid is not None and _works_in(pid, LOCAL / "data"):
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGQUIT)  # pg_ctl -m immediate, without a path to follow
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
    files_dir: Path = Path("gen")
    database: str = "tpch"  # made at start, then every connection's (a constant, never the server's)

    @classmethod
    def create(cls, directory: Path, buffer_pool_bytes: int) -> MariaDB:
        mariadbd, install_db = mariadb_binaries()
        return cls("mariadb", directory, buffer_pool_bytes, mariadbd=mariadbd, install_db=install_db)

    def _server_options(self) -> list[str]:
        data, tmp = _here() / LOCAL / "data", _here() / LOCAL / "tmp"
        return [
            "--no-defaults",
            f"--datadir={data}",
            # the instance's own temporary directory, for the bootstrap too: a shared /tmp let
            # another process remove the bootstrap's temporary tables (mariadb-install-db aborted)
            f"--tmpdir={tmp}",
            f"--innodb-buffer-pool-size={max(self.buffer_pool_bytes, 5 * 1024 * 1024)}",
            "--innodb-log-file-size=32M",
            "--innodb-flush-method=O_DIRECT",  # the buffer pool, not the page cache, caches data
            "--innodb-flush-log-at-trx-commit=1",
            "--innodb-doublewrite=1",
        ]

    def _log_options(self) -> list[str]:
        """The binary log: off for TPC-H (the InnoDB flushing matrix turns it on)."""
        return ["--skip-log-bin"]

    def start(self) -> None:
        os.mkdir(LOCAL, 0o700)
        os.mkdir(LOCAL / "tmp", 0o700)
        here = _here()
        data, files = here / LOCAL / "data", here / self.files_dir
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
            **_tool_kwargs(),
        )
        if res.returncode != 0:
            detail = (res.stderr or res.stdout).strip().splitlines()
            raise DbmsError(f"mariadb-install-db failed: {' | '.join(detail[-4:])}")
        self.socket_dir, self.extra_dir = _socket_dir(data, "mysqld.sock")
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
                "--local-infile=0",  # the client never sends a file: the server reads the data
                f"--secure-file-priv={files}",  # ... from the generator's directory only
                *self._log_options(),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
            **_tool_kwargs(),
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
            check_server_dir(self.process.pid, LOCAL / "data")
            cur = conn.cursor()
            cur.execute("SELECT VERSION()")
            self.version = f"MariaDB {cur.fetchone()[0]}"
            cur.execute(f"CREATE DATABASE {self.database}")
        finally:
            conn.close()

    def connect(self) -> Connection:
        import pymysql  # type: ignore[import-untyped,unused-ignore]

        conn: Connection = pymysql.connect(
            unix_socket=str(self.socket_dir / "mysqld.sock") if self.socket_dir else None,
            user="root",
            password="",
            local_infile=False,  # never: whoever answers on the socket could ask for any file
            autocommit=True,
            database=self.database if self.version else None,
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
                "local_infile",
                "secure_file_priv",
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


def check_binaries(dbms: str) -> None:
    """Unsupported unless `dbms`'s server binaries are installed."""
    if dbms == "postgresql":
        pg_bindir()
    elif dbms == "mariadb":
        mariadb_binaries()
    else:
        raise ValueError(f"--dbms must be postgresql or mariadb, got {dbms!r}")


def create_instance(dbms: str, directory: Path, buffer_pool_bytes: int, files_dir: Path) -> Instance:
    """The instance for `dbms` (postgresql or mariadb) in `directory` (the worker's ./dbms);
    `files_dir` (relative to the run directory) holds the generated files MariaDB's server loads.
    Unsupported when its binaries are missing."""
    check_binaries(dbms)
    if dbms == "postgresql":
        return Postgres.create(directory, buffer_pool_bytes)
    instance = MariaDB.create(directory, buffer_pool_bytes)
    instance.files_dir = files_dir
    return instance
