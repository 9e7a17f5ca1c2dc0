"""TPC-H against hostile neighbours (issue 22): whoever answers on the DBMS's socket, another
local user who swaps a link into the run's path, and a parent whose environment and descriptors
hold secrets. Real peers: a MySQL-protocol responder on a real unix socket speaking to PyMySQL
with the connect arguments the run uses, another uid doing the swap, the real CLI and DBMS."""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import secrets
import shutil
import socket
import stat
import struct
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from iowatt_agent.tpch.data import Generated
from iowatt_agent.tpch.dbms import MariaDB, Unsupported, pg_bindir
from iowatt_agent.tpch.workload import Workload

# real DBMS servers (PostgreSQL, MariaDB, DuckDB): make test runs them, make test-fast does not
pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
OTHER_UID = 4242  # "another local user": no account needed, only a uid
CANARY_ENV = "IOWATT_TEST_AGENT_SECRET"


def have_postgres() -> bool:
    try:
        pg_bindir()
    except Unsupported:
        return False
    return importlib.util.find_spec("duckdb") is not None


needs_postgres = pytest.mark.skipif(not have_postgres(), reason="PostgreSQL or the [tpch] extra missing")
needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="needs root (another uid, the DBMS's user)")


# --- a hostile MySQL server on the socket ----------------------------------------------------------


def packet(seq: int, payload: bytes) -> bytes:
    return struct.pack("<I", len(payload))[:3] + bytes([seq]) + payload


def read_packet(conn: socket.socket) -> tuple[int, bytes]:
    head = conn.recv(4, socket.MSG_WAITALL)
    if len(head) < 4:
        raise EOFError
    size = int.from_bytes(head[:3], "little")
    body = conn.recv(size, socket.MSG_WAITALL) if size else b""
    return head[3], body


class HostileMySQL:
    """Handshake (v10, mysql_native_password, CLIENT_LOCAL_FILES offered), accept any login,
    then answer every query with a LOCAL INFILE request for `wanted`; record every byte the
    client sends after that."""

    def __init__(self, path: Path, wanted: str) -> None:
        self.wanted = wanted
        self.after_request = bytearray()
        self.requests = 0
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.bind(str(path))
        self.sock.listen(4)
        self.thread = threading.Thread(target=self.serve, daemon=True)
        self.thread.start()

    def serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with conn, contextlib.suppress(EOFError, OSError):
                conn.settimeout(10)
                self.session(conn)

    def session(self, conn: socket.socket) -> None:
        caps = 0x0001 | 0x0008 | 0x0080 | 0x0200 | 0x2000 | 0x8000 | 0x20000 | 0x80000
        salt = b"abcdefgh" + b"ijklmnopqrst"
        hello = (
            b"\x0a" + b"10.11.6-MariaDB-hostile\0" + struct.pack("<I", 7) + salt[:8] + b"\0"
            + struct.pack("<H", caps & 0xFFFF) + b"\x2d" + struct.pack("<H", 0x0002)
            + struct.pack("<H", caps >> 16) + bytes([21]) + b"\0" * 10 + salt[8:] + b"\0"
            + b"mysql_native_password\0"
        )  # fmt: skip
        conn.sendall(packet(0, hello))
        seq, _ = read_packet(conn)  # the login
        ok = b"\x00\x00\x00" + struct.pack("<H", 0x0002) + b"\x00\x00"
        conn.sendall(packet(seq + 1, ok))
        pending = None
        while True:
            seq, body = pending or read_packet(conn)
            pending = None
            if body[:1] == b"\x01":  # COM_QUIT
                return
            if body[:1] != b"\x03" or body[1:4].upper() == b"SET":  # the session's set-up: fine
                conn.sendall(packet(seq + 1, ok))
                continue
            self.requests += 1
            conn.sendall(packet(seq + 1, b"\xfb" + self.wanted.encode()))
            while True:  # what the client sends back now: the file (seq 2, 3, ...) if it obeys
                seq, body = read_packet(conn)
                if seq == 0:  # it sent nothing and went on with a new command
                    pending = (seq, body)
                    break
                self.after_request += body
                if not body:
                    conn.sendall(packet(seq + 1, ok))
                    break

    def close(self) -> None:
        self.sock.close()


@pytest.fixture
def canary_file(tmp_path: Path) -> Iterator[tuple[Path, bytes]]:
    """A file only root may read, like /var/lib/iowatt-agent/agent.json."""
    secret = b"agent-token-" + secrets.token_hex(16).encode()
    path = tmp_path / "agent.json"
    path.write_bytes(secret)
    path.chmod(0o600)
    yield path, secret


def mariadb_client(socket_dir: Path) -> MariaDB:
    """The run's own MariaDB client (its connect arguments), pointed at `socket_dir`."""
    instance = MariaDB("mariadb", socket_dir, 16 << 20)
    instance.socket_dir = socket_dir
    instance.version = "MariaDB hostile"  # connect to database tpch, as the load does
    return instance


def test_a_hostile_server_on_the_socket_gets_no_file_from_the_load(tmp_path, canary_file):
    canary, secret = canary_file
    fake = HostileMySQL(tmp_path / "mysqld.sock", str(canary))
    try:
        instance = mariadb_client(tmp_path)
        gen = Generated(Path("gen"), {}, {}, [], 0, 0, "", None)
        work = Workload(instance, gen, 10.0)
        conn = instance.connect()
        try:
            with pytest.raises(Exception, match="local_infile"):  # PyMySQL refuses the request
                work._bulk_load(conn, "region", Path("gen/region.tbl"))
        finally:
            conn.close()
        assert fake.requests == 1  # the server did ask
        assert secret not in bytes(fake.after_request) and bytes(fake.after_request) == b""
    finally:
        fake.close()


def test_the_harness_catches_a_client_that_sends_files(tmp_path, canary_file):
    """The same responder against the connect arguments before issue 22 (local_infile=True):
    the secret arrives, so the test above would have failed on the old code."""
    import pymysql  # type: ignore[import-untyped,unused-ignore]

    canary, secret = canary_file
    fake = HostileMySQL(tmp_path / "mysqld.sock", str(canary))
    try:
        conn = pymysql.connect(
            unix_socket=str(tmp_path / "mysqld.sock"), user="root", password="", local_infile=True,
            autocommit=True, database="tpch",
        )  # fmt: skip
        try:
            conn.cursor().execute("LOAD DATA LOCAL INFILE 'x' INTO TABLE region")
        finally:
            conn.close()
        assert secret in bytes(fake.after_request)
    finally:
        fake.close()


# --- another local user swaps a link into the run's path ---------------------------------------------


@pytest.fixture
def shared_target() -> Iterator[tuple[Path, Path]]:
    """A target every local user may write (mode 0777, not sticky) and, outside it, a directory
    anyone could write too: if the run followed a link there, its files would appear."""
    base = Path(tempfile.mkdtemp(prefix="iowatt-tpch-swap-"))
    base.chmod(0o755)
    target, outside = base / "target", base / "outside"
    target.mkdir()
    outside.mkdir()
    target.chmod(0o777)
    outside.chmod(0o777)
    yield target, outside
    shutil.rmtree(base, ignore_errors=True)


def as_other_user(*argv: str) -> None:
    subprocess.run(argv, check=True, user=OTHER_UID, group=OTHER_UID, extra_groups=[])


def untouched(outside: Path) -> None:
    st = outside.stat()
    assert list(outside.iterdir()) == []
    assert (st.st_uid, st.st_gid, stat.S_IMODE(st.st_mode)) == (0, 0, 0o777)


@needs_root
@needs_postgres
def test_a_link_planted_before_the_run_is_refused(shared_target, tmp_path):
    target, outside = shared_target
    name = "iowatt-tpch-00000000-0000-4000-8000-000000000001"
    as_other_user("ln", "-s", str(outside), str(target / name))
    job = tmp_path / "job.tpch"
    job.write_text(json.dumps({"mode": "tpch", "dbms": "postgresql", "scale_factor": "0.01"}) + "\n")
    res = subprocess.run(
        [sys.executable, "-m", "iowatt_agent.tpch.lease", f"--job={job}", f"--directory={target / name}",
         f"--target={target}"],
        capture_output=True, text=True, timeout=120, cwd=REPO,
    )  # fmt: skip
    assert res.returncode == 1, res.stderr[-2000:]
    assert "already exists" in res.stderr and "generating" not in res.stderr
    assert os.readlink(target / name) == str(outside)  # theirs, left alone
    untouched(outside)


@needs_root
@needs_postgres
def test_a_link_swapped_in_during_the_run_is_never_followed(shared_target):
    target, outside = shared_target
    proc = subprocess.Popen(
        [sys.executable, "-m", "iowatt_agent", "bench", "--preset", "tpch", "--target", str(target),
         "--dbms", "postgresql", "--scale-factor", "0.01", "--streams", "1", "--json"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO,
    )  # fmt: skip
    assert proc.stderr is not None
    seen = []
    for line in proc.stderr:
        seen.append(line)
        if "generating data" in line:
            break
    [run_dir] = [p for p in target.iterdir() if p.name.startswith("iowatt-tpch-")]
    st = run_dir.stat()
    assert st.st_uid != 0 and stat.S_IMODE(st.st_mode) == 0o700  # the TPC-H user's, private
    # the other user moves the run's directory away and puts a link to `outside` in its place
    as_other_user("mv", str(run_dir), str(target / "moved"))
    as_other_user("ln", "-s", str(outside), str(run_dir))
    out, rest = proc.communicate(timeout=600)
    assert proc.returncode == 0, "".join(seen) + rest[-3000:]
    doc = json.loads(out)["tpch"]
    assert doc["answers"]["ok"] == doc["answers"]["checked"] > 0  # the run went on, unharmed
    untouched(outside)  # nothing created, chowned or written through the link
    assert os.readlink(run_dir) == str(outside)  # their link, left alone
    assert list((target / "moved").iterdir()) == []  # our moved directory, emptied


# --- the worker and the DBMS inherit nothing of the agent's ---------------------------------------


def proc_field(pid: int, name: str) -> str:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(name + ":"):
            return line.split(":", 1)[1].strip()
    return ""


@needs_root
@needs_postgres
def test_the_worker_and_the_dbms_inherit_no_secret_environment_or_descriptor(shared_target, canary_file):
    target, _ = shared_target
    canary, secret = canary_file
    leak = os.open(canary, os.O_RDONLY)  # a descriptor the agent holds (its token file, say)
    try:
        proc = subprocess.Popen(
            [sys.executable, "-m", "iowatt_agent", "bench", "--preset", "tpch", "--target", str(target),
             "--dbms", "postgresql", "--scale-factor", "0.01", "--streams", "1", "--json"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO, pass_fds=(leak,),
            env={**os.environ, CANARY_ENV: secret.decode(), "PGPASSWORD": secret.decode()},
        )  # fmt: skip
    finally:
        os.close(leak)
    assert proc.stderr is not None
    seen = []
    for line in proc.stderr:
        seen.append(line)
        if "loading " in line:  # the private server runs (what it inherited is set at its start)
            break
    try:
        [run_dir] = [p for p in target.iterdir() if p.name.startswith("iowatt-tpch-")]
        pids = []
        for entry in Path("/proc").iterdir():
            try:
                cwd = os.readlink(entry / "cwd")
            except OSError:
                continue
            if entry.name.isdigit() and (cwd == str(run_dir) or cwd.startswith(f"{run_dir}/")):
                pids.append(int(entry.name))
        # the worker (python, in the run directory) and the server's processes (in dbms/data)
        assert len(pids) >= 2, pids
        for pid in pids:
            environ = Path(f"/proc/{pid}/environ").read_bytes()
            assert secret not in environ and CANARY_ENV.encode() not in environ, pid
            assert b"PGPASSWORD" not in environ, pid
            fds = [os.readlink(f) for f in Path(f"/proc/{pid}/fd").iterdir() if f.exists()]
            assert str(canary) not in fds, (pid, fds)
            uid = proc_field(pid, "Uid").split()
            assert "0" not in uid, (pid, uid)  # real, effective, saved, filesystem: none is root
            assert proc_field(pid, "NoNewPrivs") == "1", pid
            assert proc_field(pid, "CapEff") == "0000000000000000", pid
    finally:
        proc.terminate()
        proc.communicate(timeout=120)
    assert list(target.iterdir()) == []
