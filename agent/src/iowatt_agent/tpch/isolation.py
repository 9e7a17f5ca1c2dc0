"""Who a TPC-H run runs as, and where: nothing of the run itself runs as root.

A run has two processes. The *coordinator* (the `bench` CLI, or the agent's child
`python -m iowatt_agent.tpch.lease`) keeps the agent's user and does only what needs it: it
makes the run's directory in the target through the target's descriptor (`mkdir` with
`dir_fd=`, never an existing entry, never a link), opens it `O_NOFOLLOW`, checks it by `fstat`
and hands it to the TPC-H user with `fchown` on that descriptor (CAP_CHOWN), then forks the
*worker*. The worker drops to the TPC-H user at once (`setgroups([])`, `setresgid`, `setresuid`:
CAP_SETGID, CAP_SETUID; then no_new_privs), changes into the run directory by its descriptor
(`fchdir`, so a path swapped later by another local user is never followed), closes every other
descriptor it inherited, replaces its environment by `clean_env()`, and only then generates the
data, starts the DBMS, loads and queries: the generator, the DBMS client and the DBMS server all
run as that user with an environment holding nothing of the agent's. After the worker, the
coordinator has the run's leftovers removed *as the TPC-H user* (another fork that drops first:
`clean_as`), because root without capabilities (the systemd unit) can neither signal that user's
processes nor delete its files, and then removes the empty directory itself.

The TPC-H user: `iowatt-tpch` when the host has it (a dedicated system user, recommended: it
owns nothing else), else the DBMS package's user (`postgres`, `mysql`), which the DBMS needs
anyway. When the agent is not root, everything runs as the agent's own user (no switch).
"""

from __future__ import annotations

import contextlib
import ctypes
import grp
import os
import pwd
import shutil
import signal
import stat
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import Any

from .options import DBMS_RUN_DIR_PREFIXES

TPCH_USER = "iowatt-tpch"
PACKAGE_USERS = {"postgresql": "postgres", "mariadb": "mysql"}
SAFE_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
# the host's own choice of DBMS binaries (docs/tpch.md): the only variables a worker keeps
ENV_KEPT = ("IOWATT_TPCH_PG_BINDIR", "IOWATT_TPCH_MARIADB_BINDIR")
RUN_DIR_MODE = 0o700
# The worker's working directory as a path that always leads to the directory it holds, whatever
# another user renames or links in the target meanwhile (the kernel resolves it to the process's
# own cwd). For what runs in the worker itself (DuckDB makes relative paths absolute with
# getcwd once, then opens by that path); the servers get `real_path()`, checked after they start.
HERE = Path("/proc/self/cwd")
PR_SET_NO_NEW_PRIVS = 38


class IsolationError(Exception):
    """The run's directory or user cannot be set up safely (exit 1; nothing ran)."""


@dataclass(frozen=True)
class RunAs:
    """The TPC-H user: the agent's own user, or an unprivileged one when the agent is root."""

    name: str
    uid: int
    gid: int

    @property
    def switch(self) -> bool:
        return self.uid != os.geteuid()


def tpch_user(dbms: str) -> RunAs:
    """The agent's user when not root; else `iowatt-tpch`, else the DBMS package's user."""
    if os.geteuid() != 0:
        me = pwd.getpwuid(os.geteuid())
        return RunAs(me.pw_name, me.pw_uid, me.pw_gid)
    names = (TPCH_USER, PACKAGE_USERS[dbms])
    for name in names:
        try:
            entry = pwd.getpwnam(name)
        except KeyError:
            continue
        if entry.pw_uid == 0 or entry.pw_gid == 0:
            raise IsolationError(f"user {name} has uid or gid 0: TPC-H never runs as root")
        return RunAs(entry.pw_name, entry.pw_uid, entry.pw_gid)
    raise IsolationError(
        f"running as root, and neither user {names[0]!r} nor {names[1]!r} exists to run TPC-H: "
        f"useradd --system --no-create-home --shell /usr/sbin/nologin {TPCH_USER}"
    )


def tpch_uids() -> set[int]:
    """Every user a TPC-H run may have run as on this host (the leftovers' owners)."""
    uids = set()
    for name in (TPCH_USER, *PACKAGE_USERS.values()):
        with contextlib.suppress(KeyError):
            uids.add(pwd.getpwnam(name).pw_uid)
    return {u for u in uids if u != 0}


# what the coordinator and the clean-up need when root (capability numbers of capability.h)
NEEDED_CAPABILITIES = {"CAP_CHOWN": 0, "CAP_SETGID": 6, "CAP_SETUID": 7}


def missing_capabilities() -> list[str]:
    """The capabilities a root agent lacks for TPC-H (none when it is not root: no switch)."""
    if os.geteuid() != 0:
        return []
    effective = 0
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("CapEff:"):
                effective = int(line.split()[1], 16)
    return [name for name, bit in NEEDED_CAPABILITIES.items() if not effective >> bit & 1]


def check_reachable(path: Path, user: RunAs) -> None:
    """IsolationError unless `user` may search every directory above `path` (the DBMS opens its
    data directory by path; the agent never changes the permissions of the host's directories)."""
    if not user.switch:
        return
    groups = {user.gid} | {g.gr_gid for g in grp.getgrall() if user.name in g.gr_mem}
    for parent in reversed(path.parents):
        st = parent.stat()
        if st.st_uid == user.uid:
            ok = bool(st.st_mode & stat.S_IXUSR)
        elif st.st_gid in groups:
            ok = bool(st.st_mode & stat.S_IXGRP)
        else:
            ok = bool(st.st_mode & stat.S_IXOTH)
        if not ok:
            raise IsolationError(
                f"TPC-H runs as user {user.name}, which cannot enter {parent} "
                f"(mode {stat.filemode(st.st_mode)}): give the target's parents search permission "
                f"(chmod o+x), or choose a target below such directories"
            )


def clean_env(home: str | None = None) -> dict[str, str]:
    """The whole environment of the worker and of every program it starts: a fixed PATH, a
    C locale, UTC, and the host's DBMS binary directories; none of the agent's variables."""
    env = {"PATH": SAFE_PATH, "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8", "TZ": "UTC"}
    if home is not None:
        env["HOME"] = home
    env.update({k: os.environ[k] for k in ENV_KEPT if os.environ.get(k)})
    return env


def real_path(path: Path) -> Path:
    """`path` under HERE as the directory's real absolute path now (for another process)."""
    return Path(os.getcwd()) / path.relative_to(HERE) if path.is_relative_to(HERE) else path


# --- the run's directory -------------------------------------------------------------------------


def open_directory(path: Path) -> int:
    """A descriptor of the directory `path` (the last component must not be a link)."""
    try:
        return os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError as exc:
        raise IsolationError(f"cannot open the target {path}: {exc.strerror}") from None


def make_run_dir(target_fd: int, name: str, user: RunAs) -> int:
    """Create `name` in the target (never an existing entry: O_EXCL semantics), open it without
    following a link, check it is the directory just made (owner, type, mode) and hand it to
    `user`. Its descriptor; the path is never used again."""
    try:
        os.mkdir(name, RUN_DIR_MODE, dir_fd=target_fd)
    except FileExistsError:
        raise IsolationError(f"{name} already exists in the target: refusing to use it") from None
    except OSError as exc:
        raise IsolationError(f"cannot create {name} in the target: {exc.strerror}") from None
    try:
        fd = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=target_fd)
    except OSError as exc:
        raise IsolationError(f"{name} was replaced right after its creation: {exc.strerror}") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.geteuid():
            raise IsolationError(f"{name} was replaced right after its creation (owner {st.st_uid})")
        os.fchmod(fd, RUN_DIR_MODE)
        if user.switch:
            try:
                os.fchown(fd, user.uid, user.gid)
            except OSError as exc:
                raise IsolationError(
                    f"cannot hand the run's directory to user {user.name}: fchown: {exc.strerror} "
                    "(the agent needs CAP_CHOWN, CAP_SETUID and CAP_SETGID for TPC-H: "
                    "agent/systemd/iowatt-agent.service)"
                ) from None
    except BaseException:
        if same_entry(target_fd, name, fd):
            with contextlib.suppress(OSError):
                os.rmdir(name, dir_fd=target_fd)
        os.close(fd)
        raise
    return fd


def same_entry(dir_fd: int, name: str, fd: int) -> bool:
    """`name` in `dir_fd` is (still) the file open as `fd`, not a link or another file."""
    try:
        a = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except OSError:
        return False
    b = os.fstat(fd)
    return (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino)


# --- becoming the TPC-H user --------------------------------------------------------------------


def drop_privileges(user: RunAs) -> None:
    """Become `user` for good (all three uids and gids, no supplementary groups), then set
    no_new_privs: nothing started afterwards gains a privilege through a setuid binary."""
    if user.switch:
        os.setgroups([])
        os.setresgid(user.gid, user.gid, user.gid)
        os.setresuid(user.uid, user.uid, user.uid)
        if os.getresuid() != (user.uid,) * 3 or os.getresgid() != (user.gid,) * 3 or os.getgroups():
            raise IsolationError(f"could not become user {user.name}")
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        raise IsolationError(f"prctl(PR_SET_NO_NEW_PRIVS): {os.strerror(ctypes.get_errno())}")


def close_other_fds(keep: set[int]) -> None:
    """Close every descriptor but 0, 1, 2 and `keep` (the agent's state files, its sockets,
    anything a parent leaked); stdin and stdout become /dev/null, stderr stays (messages)."""
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 0)
    os.dup2(null, 1)  # stdout is the coordinator's (the lease's document): never the worker's
    os.close(null)
    low = 3
    for fd in sorted(keep):
        if fd >= low:
            os.closerange(low, fd)
            low = fd + 1
    os.closerange(low, 1 << 20)


def enter(run_fd: int, user: RunAs) -> None:
    """fchdir into the run directory and check it is the TPC-H user's private directory."""
    os.fchdir(run_fd)
    st = os.fstat(run_fd)
    if st.st_uid != os.geteuid() or stat.S_IMODE(st.st_mode) != RUN_DIR_MODE:
        raise IsolationError(
            f"the run directory is not {user.name}'s mode-0700 directory "
            f"(owner {st.st_uid}, mode {stat.filemode(st.st_mode)})"
        )


def wipe_initial_environment() -> None:
    """Zero the environment block the process was started with (what /proc/PID/environ shows):
    a forked worker has a copy of its coordinator's, the agent's variables included. Call after
    `os.environ.clear()`: the C library's environment then lives elsewhere (setenv copies)."""
    with open("/proc/self/stat", "rb") as f:
        fields = f.read().rsplit(b")", 1)[1].split()
    # fields 50 and 51 of proc(5) (env_start, env_end); the text after ')' starts at field 3
    start, end = int(fields[50 - 3]), int(fields[51 - 3])
    if 0 < start < end:
        ctypes.memset(start, 0, end - start)


def fork_as(
    user: RunAs,
    run_fd: int,
    body: Callable[[], int],
    keep: set[int],
    on_error: Callable[[str], None] | None = None,
) -> int:
    """Fork a process that becomes `user`, enters the run directory (by `run_fd`), keeps only
    the descriptors in `keep`, takes `clean_env()` and returns `body()` as its exit status. The
    child's pid. A failure before or in `body` is written to stderr and given to `on_error` (in
    the child). The parent must be single-threaded (the coordinator is)."""
    pid = os.fork()
    if pid:
        return pid
    code = 1
    try:
        for s in (signal.SIGINT, signal.SIGTERM):
            signal.signal(s, signal.SIG_DFL)
        close_other_fds(keep | {run_fd})
        drop_privileges(user)
        enter(run_fd, user)
        os.close(run_fd)
        home = os.getcwd()
        os.environ.clear()
        os.environ.update(clean_env(home=home))
        wipe_initial_environment()
        code = body()
    except BaseException as exc:  # noqa: BLE001 - a forked child never returns into the caller
        text = f"{type(exc).__name__}: {exc}"
        with contextlib.suppress(Exception):
            os.write(2, f"tpch: {text}\n".encode())
            if on_error is not None:
                on_error(text)
    finally:
        os._exit(code)
    raise AssertionError("unreachable")  # pragma: no cover


def wait_status(pid: int) -> int:
    """The exit code of child `pid` (128 + n when killed by signal n)."""
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status) if os.WIFEXITED(status) else 128 + os.WTERMSIG(status)


# --- removing what a run left --------------------------------------------------------------------


def processes_in(directory: str, exclude: int) -> list[int]:
    """pids of this uid's processes whose working directory is `directory` or below it (the
    DBMS servers chdir to their data directory; a worker to the run directory)."""
    prefix = os.fsencode(directory)
    uid = os.geteuid()
    pids = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit() or int(proc.name) == exclude:
            continue
        try:
            if proc.stat().st_uid != uid:
                continue
            raw = os.fsencode(os.readlink(proc / "cwd"))
        except OSError:
            continue  # gone, or not ours to see
        if raw == prefix or raw.startswith(prefix + b"/"):
            pids.append(int(proc.name))
    return pids


def kill_in(directory: str, timeout_s: float = 10.0) -> list[int]:
    """SIGKILL this uid's processes working inside `directory` and wait until they are gone."""
    pids = processes_in(directory, os.getpid())
    for pid in pids:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline and processes_in(directory, os.getpid()):
        time.sleep(0.05)
    return pids


def empty_cwd() -> None:
    """Remove everything in the current directory (fd-based walk: links are removed, never
    followed)."""
    for name in os.listdir("."):
        st = os.stat(name, follow_symlinks=False)
        if stat.S_ISDIR(st.st_mode):
            shutil.rmtree(name, ignore_errors=True)
        else:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(name)


def clean_here() -> int:
    """In the run directory: stop what still runs there, remove everything in it."""
    kill_in(os.getcwd())
    empty_cwd()
    return 0


def clean_as(user: RunAs, run_fd: int) -> None:
    """Kill whatever of `user` still works in the run directory and empty it, as `user`."""
    if not user.switch:
        here = os.open(".", os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        try:
            os.fchdir(run_fd)
            clean_here()
        finally:
            os.fchdir(here)
            os.close(here)
        return
    wait_status(fork_as(user, run_fd, clean_here, keep=set()))


def owner_of(fd: int) -> RunAs:
    st = os.fstat(fd)
    try:
        entry = pwd.getpwuid(st.st_uid)
    except KeyError:
        return RunAs(str(st.st_uid), st.st_uid, st.st_gid)
    return RunAs(entry.pw_name, entry.pw_uid, entry.pw_gid)


def remove_run_dir(target_fd: int, name: str) -> bool:
    """Remove the run directory `name` of the target: its contents as its owner when that is a
    TPC-H user (root without capabilities may not delete them), then the entry itself. A link
    or a file of that name is removed itself, never followed. True when there was an entry."""
    try:
        st = os.stat(name, dir_fd=target_fd, follow_symlinks=False)
    except FileNotFoundError:
        return False
    if not stat.S_ISDIR(st.st_mode):
        os.unlink(name, dir_fd=target_fd)
        return True
    fd = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=target_fd)
    try:
        owner = owner_of(fd)
        if owner.uid == os.geteuid() or (os.geteuid() == 0 and owner.uid in tpch_uids()):
            clean_as(owner, fd)
        if same_entry(target_fd, name, fd):
            try:
                os.rmdir(name, dir_fd=target_fd)
            except OSError:
                shutil.rmtree(name, dir_fd=target_fd, ignore_errors=True)
    finally:
        os.close(fd)
    return True


def describe(exc: BaseException) -> str:
    lines = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {lines[0] if lines else ''}"


def json_line(obj: dict[str, Any]) -> bytes:
    import json

    return (json.dumps(obj) + "\n").encode()


def serve_worker(
    events_fd: int,
    control_fd: int,
    body: Callable[[Callable[[dict[str, Any]], None], threading.Event], dict[str, Any]],
    *,
    what: str,
    failed: type[Exception],
    unsupported: type[Exception],
    unsupported_outcome: Callable[[Any], dict[str, Any]],
) -> int:
    """The worker's half of `run_worker`: its exit code. Stops once on SIGINT/SIGTERM (a second
    signal must not interrupt the clean-up) or when the coordinator closes the control pipe;
    `body(emit, stop)` is the run (its document; `emit` relays `{"progress": text}` lines; it
    stops its DBMS itself and raises `failed` with the run's message). Each ending is one outcome
    line on the events pipe: ok with the document (0), `unsupported_outcome(exc)` (77),
    interrupted (130), failed with the message (1; "`what` failed: ..." when the clean-up itself
    failed)."""
    stop = threading.Event()
    finished = threading.Event()
    out = os.fdopen(events_fd, "wb", buffering=0)

    def emit(obj: dict[str, Any]) -> None:
        with contextlib.suppress(OSError):
            out.write(json_line(obj))

    def on_signal(signum: int, _frame: FrameType | None) -> None:
        if not stop.is_set():  # once: a second signal must not interrupt the clean-up
            stop.set()
            raise KeyboardInterrupt

    def watch_control() -> None:
        with contextlib.suppress(OSError):
            os.read(control_fd, 1)  # EOF: the coordinator wants us to stop (or died)
        if not finished.is_set():
            os.kill(os.getpid(), signal.SIGTERM)

    for s in (signal.SIGINT, signal.SIGTERM):
        signal.signal(s, on_signal)
    threading.Thread(target=watch_control, daemon=True, name=f"{what}-control").start()
    try:
        doc = body(emit, stop)
        finished.set()
        emit({"outcome": "ok", "doc": doc})
        return 0
    except unsupported as exc:
        emit(unsupported_outcome(exc))
        return 77
    except KeyboardInterrupt:
        emit({"outcome": "interrupted"})
        return 130
    except failed as exc:
        emit({"outcome": "failed", "message": str(exc)})
        return 1
    except Exception as exc:  # noqa: BLE001 - the clean-up itself failed
        emit({"outcome": "failed", "message": f"{what} failed: {describe(exc)}"})
        return 1
    finally:
        finished.set()
        out.close()


def run_worker(
    user: RunAs,
    run_dir: Path,
    progress: Callable[[str], None],
    work: Callable[[int, int], int],
    *,
    what: str,
    keep: frozenset[int] = frozenset(),
) -> tuple[dict[str, Any], int | None]:
    """The coordinator's half of a DBMS run (TPC-H's, the InnoDB flushing matrix's): make
    `run_dir` in the target by descriptor and hand it to `user`, fork the worker as that user in
    it (`work(events_fd, control_fd)`, its exit code; `keep`: other descriptors it needs), relay
    its `{"progress": text}` lines, ask it to stop when the coordinator is interrupted (the control
    pipe closed: a coordinator without CAP_KILL cannot signal another user's process), then have
    the directory emptied as that user and remove it (unless another user swapped it out of the
    target: then its moved directory is emptied and left where they put it).

    Returns the worker's outcome message (`{"outcome": "ok", "doc"}`, `"failed"` with a
    message, ...; `{"outcome": "interrupted"}` when the coordinator was interrupted and the worker
    said nothing more; empty when the worker said nothing) and its exit code."""
    target_fd = open_directory(run_dir.parent)
    try:
        run_fd = make_run_dir(target_fd, run_dir.name, user)
        try:
            return _relay(user, run_fd, progress, work, what=what, keep=keep)
        finally:
            try:
                clean_as(user, run_fd)
            finally:
                if same_entry(target_fd, run_dir.name, run_fd):
                    with contextlib.suppress(OSError):
                        os.rmdir(run_dir.name, dir_fd=target_fd)
                os.close(run_fd)
    finally:
        os.close(target_fd)


def _relay(
    user: RunAs,
    run_fd: int,
    progress: Callable[[str], None],
    work: Callable[[int, int], int],
    *,
    what: str,
    keep: frozenset[int],
) -> tuple[dict[str, Any], int | None]:
    import json

    events_r, events_w = os.pipe()
    control_r, control_w = os.pipe()
    outcome: dict[str, Any] = {}
    pid = 0

    def handle(raw: bytes) -> None:
        try:
            msg = json.loads(raw)
        except ValueError:
            return
        if isinstance(msg, dict) and isinstance(msg.get("progress"), str):
            progress(msg["progress"])
        elif isinstance(msg, dict) and "outcome" in msg:
            outcome.update(msg)

    try:
        write_to, read_from = events_w, control_r

        def on_error(text: str) -> None:  # the worker could not even become the user
            message = f"{what} failed: the worker as user {user.name}: {text}"
            os.write(write_to, json_line({"outcome": "failed", "message": message}))

        pid = fork_as(
            user,
            run_fd,
            lambda: work(write_to, read_from),
            keep={events_w, control_r, *keep},
            on_error=on_error,
        )
        os.close(events_w)
        os.close(control_r)
        events_w = control_r = -1
        with os.fdopen(events_r, "rb") as events:
            events_r = -1
            try:
                for raw in events:
                    handle(raw)
            except KeyboardInterrupt:
                os.close(control_w)  # the worker stops, cleans up and reports
                control_w = -1
                for raw in events:
                    handle(raw)
                outcome.setdefault("outcome", "interrupted")
    finally:
        for fd in (events_r, events_w, control_r, control_w):
            if fd >= 0:
                os.close(fd)
        code = wait_status(pid) if pid else None
    return outcome, code


def main(argv: list[str] | None = None) -> int:
    """`python -m iowatt_agent.tpch.isolation remove TARGET NAME`: remove a TPC-H run directory
    (`remove_run_dir`); prints `removed` or `absent`. Exit 2 for a target that is not a plain
    directory (a link anywhere in its path) or a name that is not a run directory's."""
    import sys

    args = sys.argv[1:] if argv is None else argv
    if len(args) != 3 or args[0] != "remove":
        sys.stderr.write("usage: python -m iowatt_agent.tpch.isolation remove TARGET NAME\n")
        return 2
    target, name = args[1], args[2]
    if not name.startswith(DBMS_RUN_DIR_PREFIXES) or "/" in name or name in (".", ".."):
        sys.stderr.write(f"not a TPC-H run directory: {name!r}\n")
        return 2
    if os.path.realpath(target) != target:
        sys.stderr.write(f"{target} is not a plain directory path (a link in it): nothing removed\n")
        return 2
    try:
        fd = open_directory(Path(target))
    except IsolationError as exc:
        sys.stderr.write(f"{exc}\n")
        return 1
    try:
        gone = remove_run_dir(fd, name)
    except OSError as exc:
        sys.stderr.write(f"{target}/{name}: {exc}\n")
        return 1
    finally:
        os.close(fd)
    sys.stdout.write("removed\n" if gone else "absent\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
