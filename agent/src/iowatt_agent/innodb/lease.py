"""A server's InnoDB flushing-policy lease on this host, run as the agent's child in its own
process group (as TPC-H's, `tpch.lease`: cancel, the hard timeout and a drain stop it with one
killpg; the DBMS server leaves the group and is killed by the clean-up helper, which finds it by
its working directory inside the run directory).

Parent side: `prepare()` refuses a host without MariaDB's server, sysbench, or (for a root agent)
the DBMS user and the capabilities to hand the run to it ("unsupported on this host: ... install
it: ..."), and writes the checked job to `<state>/jobs/<run id>.innodb-flush` (0600). Child side
(`python -m iowatt_agent.innodb.lease --job=FILE --directory=RUN_DIR --target=DIR`): the run in
RUN_DIR (`<target>/iowatt-innodb-<run id>`), progress as JSON lines on stderr (`{"event":
"progress", "mode": "innodb-flush", "phase", "percent", "elapsed_ns"}`), and on stdout one
engine-like document: `jobs[0]` (name and rw `innodb-flush`, runtime = the measured windows
together, I/O counters zero: the DBMS does the I/O), `iowatt.mode` = "innodb-flush" and the
`innodb_flush` object (`worker.run_matrix`). Exit 0; 1 failed (the message on stderr's last
line); 2 a job it cannot read; 77 unsupported; 130 stopped by a signal.

The job's values are read here again from the checked lease job (`options_of`): every one an
integer in its bound or the settings' "F:S" pairs, so nothing the server sent reaches sysbench's
command line or the DBMS's SET GLOBAL other than as those integers."""

from __future__ import annotations

import json
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from iowatt_policy import job_value
from iowatt_workload.innodb import (
    INNODB_BUFFER_POOL_BYTES_MAX,
    INNODB_BUFFER_POOL_BYTES_MIN,
    INNODB_DEFAULT_BUFFER_POOL_BYTES,
    INNODB_LABEL,
    INNODB_SECONDS_MAX,
    INNODB_SECONDS_MIN,
    INNODB_TABLE_SIZE_MAX,
    INNODB_TABLES_MAX,
    INNODB_THREADS_MAX,
    INNODB_WARMUP_S_MAX,
    innodb_facts,
    parse_settings,
)

from ..filework import FileJobRefused, FileRun, write_text
from ..tpch.options import DBMS_RUN_DIR_PREFIXES

RUN_DIR_PREFIX = DBMS_RUN_DIR_PREFIXES[1]  # "iowatt-innodb-"
MODE = "innodb-flush"
# the job's keys -> (bounds, default)
INT_KEYS: dict[str, tuple[int, int, int | None]] = {
    "tables": (1, INNODB_TABLES_MAX, None),
    "table_size": (1, INNODB_TABLE_SIZE_MAX, None),
    "threads": (1, INNODB_THREADS_MAX, None),
    "seconds": (INNODB_SECONDS_MIN, INNODB_SECONDS_MAX, None),
    "warmup_s": (0, INNODB_WARMUP_S_MAX, 0),
    "buffer_pool_bytes": (
        INNODB_BUFFER_POOL_BYTES_MIN,
        INNODB_BUFFER_POOL_BYTES_MAX,
        INNODB_DEFAULT_BUFFER_POOL_BYTES,
    ),
}


class Unavailable(Exception):  # noqa: N818 - an outcome: the host cannot run it
    """This host cannot run the matrix: the reason says what to install."""


def run_dir_name(run_key: str) -> str:
    return f"{RUN_DIR_PREFIX}{run_key}"


def check_supported() -> None:
    """Unavailable unless MariaDB's server and sysbench are installed and, for a root agent, the
    DBMS user exists and the agent may hand the run over to it (TPC-H's rules)."""
    from ..tpch.dbms import Unsupported, mariadb_binaries
    from ..tpch.isolation import IsolationError, missing_capabilities, tpch_user
    from .sysbench import SYSBENCH_INSTALL, sysbench_binary

    try:
        mariadb_binaries()
    except Unsupported as exc:
        raise Unavailable(f"unsupported on this host: {exc}") from None
    if sysbench_binary() is None:
        raise Unavailable(f"unsupported on this host: sysbench not found; install it: {SYSBENCH_INSTALL}")
    try:
        tpch_user("mariadb")
    except IsolationError as exc:
        raise Unavailable(f"unsupported on this host: {exc}") from None
    missing = missing_capabilities()
    if missing:
        raise Unavailable(
            f"unsupported on this host: the DBMS runs as an unprivileged user, and the agent lacks "
            f"{', '.join(missing)} to hand the run over (agent/systemd/iowatt-agent.service keeps them)"
        )


def supported() -> bool:
    try:
        check_supported()
    except Unavailable:
        return False
    return True


@dataclass
class InnodbRun(FileRun):
    """The run directory as the agent sees it: made by the child, removed by TPC-H's helper (as
    the DBMS user, whatever still runs in it killed first)."""

    def make_dir(self) -> None:
        self.remove_dir()

    def remove_dir(self) -> None:
        from ..tpch.lease import remove_instance

        remove_instance(Path(self.target), self.run_dir_name)


def prepare(engine_job: dict[str, Any], *, text_file: Path, target: str, run_key: str) -> InnodbRun:
    """The run of a checked job (written 0600). FileJobRefused ("unsupported on this host: ...")
    when this host lacks what it needs; nothing is written then."""
    try:
        check_supported()
        options_of(engine_job)
    except Unavailable as exc:
        raise FileJobRefused(str(exc)) from None
    except ValueError as exc:
        raise FileJobRefused(f"the InnoDB flushing job cannot be read: {exc}") from None
    run = InnodbRun(mode=MODE, text_file=text_file, target=target, run_dir_name=run_dir_name(run_key))
    write_text(text_file, json.dumps(engine_job) + "\n")
    return run


def _int(job: dict[str, Any], key: str) -> int:
    low, high, default = INT_KEYS[key]
    raw = job.get(key)
    if raw is not None and (isinstance(raw, bool) or not isinstance(raw, str | int | float)):
        raise ValueError(f"{key} must be an integer from {low} to {high}")
    text = job_value(job, key)
    if text is None:
        if default is None:
            raise ValueError(f"{key} is missing")
        return default
    if not (text.isascii() and text.isdigit()) or not low <= int(text) <= high:
        raise ValueError(f"{key} must be an integer from {low} to {high}, got {text[:40]!r}")
    return int(text)


def options_of(job: dict[str, Any]) -> Any:
    """The worker's Options of a lease job; ValueError naming the key for anything not plain."""
    from .worker import Options

    if job.get("mode") != MODE:
        raise ValueError(f"mode must be {MODE}")
    try:
        settings = parse_settings(job.get("settings"))
    except ValueError as exc:
        raise ValueError(f"settings: {exc}") from None
    return Options(
        settings=settings,
        **{key: _int(job, key) for key in INT_KEYS},
    )


def facts_of(engine_job: dict[str, Any]) -> dict[str, Any]:
    """The run's facts for the host's limits, from libs/workload's innodb_facts of the job (the
    server uses the same function), never from the server."""
    try:
        o = options_of(engine_job)
        return dict(
            innodb_facts(
                tables=o.tables,
                table_size=o.table_size,
                threads=o.threads,
                seconds=o.seconds,
                warmup_s=o.warmup_s,
                settings=len(o.settings),
            )
        )
    except ValueError as exc:
        raise FileJobRefused(f"the InnoDB flushing run cannot be bounded: {exc}") from None


def document(doc: dict[str, Any], version: str) -> dict[str, Any]:
    """The uploaded document: engine-like top level with jobs[0], plus the `innodb_flush` object."""
    runtime_ns = sum(int(c["duration_ns"]) for c in doc["cells"])
    zero = {"io_bytes": 0, "bw_bytes": 0, "iops": 0.0, "runtime": 0, "total_ios": 0}
    return {
        "fio version": f"iowatt-agent-{version}",
        "timestamp": int(time.time()),
        "global options": {},
        "jobs": [
            {
                "jobname": MODE,
                "groupid": 0,
                "error": 0,
                "job options": {"rw": MODE},
                "read": dict(zero),
                "write": dict(zero),
                "usr_cpu": 0.0,
                "sys_cpu": 0.0,
                "job_runtime": round(runtime_ns / 1e6),
                "iowatt": {
                    "ioengine": MODE,
                    "runtime_ns": runtime_ns,
                    "error_message": None,
                    "io_counters": "not measured by the engine: the DBMS does the I/O (innodb_flush has "
                    "the device's and the DBMS's counters per setting)",
                },
            }
        ],
        "iowatt": {"mode": MODE, "label": INNODB_LABEL, "interrupted": False, "agent_version": version},
        "innodb_flush": doc,
    }


class Progress:
    """The worker's progress texts as JSON lines of the whole run's percent (start and prepare
    10 %, then the settings in equal shares)."""

    def __init__(self, settings: int) -> None:
        self.t0 = time.monotonic()
        self.settings = settings

    def __call__(self, text: str) -> None:
        if text.startswith("setting "):
            done = int(text.split()[1].split("/")[0]) - 1
            phase, percent = "setting", 10.0 + 90.0 * done / max(1, self.settings)
        else:
            phase, percent = ("prepare", 5.0) if text.startswith("preparing") else ("start", 0.0)
        line = {
            "event": "progress",
            "mode": MODE,
            "phase": phase,
            "percent": round(percent, 2),
            "elapsed_ns": int((time.monotonic() - self.t0) * 1e9),
            "message": text[:200],
        }
        sys.stderr.write(json.dumps(line) + "\n")
        sys.stderr.flush()


def _execute(opts: Any, directory: Path, stop: threading.Event) -> dict[str, Any]:
    from ..tpch.isolation import check_reachable, tpch_user
    from .worker import coordinate

    check_supported()
    user = tpch_user("mariadb")
    check_reachable(directory, user)
    return coordinate(opts, user, directory, Progress(len(opts.settings)))


def main(argv: list[str] | None = None) -> int:
    from ..lease_cli import lease_main
    from ..tpch.isolation import IsolationError
    from .worker import WorkerFailed

    return lease_main(
        argv,
        prog="python -m iowatt_agent.innodb.lease",
        tag="innodb-flush",
        run_dir_prefix=RUN_DIR_PREFIX,
        read=lambda job, _target: options_of(job),
        execute=_execute,
        document=document,
        failures=(IsolationError, WorkerFailed),
        unsupported=(Unavailable,),
    )


if __name__ == "__main__":
    sys.exit(main())
