"""A server's TPC-H lease on this host: the same code as `bench --preset tpch`, run as
a child process of the agent.

Why a child, in its own process group (`runner.EngineProcess`, as the engine): cancel, the hard
timeout and a forced drain then stop the whole run with one `killpg` (SIGTERM: the child stops its
DBMS and removes the run directory, as `bench` does on Ctrl-C; SIGKILL after the grace), DuckDB's
generator and every DBMS client thread included, and the agent's own threads (heartbeat, spool)
never share a process with a multi-gigabyte load. The child is only the coordinator: the run
itself is its worker, the unprivileged TPC-H user (`isolation`, `worker`). The DBMS
server leaves the group (pg_ctl starts the postmaster in a new session; mariadbd is started in
one), so after the child ends, whatever way, the agent has every process of the TPC-H user whose
working directory is inside the run directory killed (the servers chdir to their data directory
there) and the directory removed, by a helper (`python -m iowatt_agent.tpch.isolation remove`)
that does it as the directory's owner: `TpchRun.remove_dir`, also at start-up for a killed
agent's run (`leftovers`). Root without capabilities (the systemd unit) could do neither itself.

Parent side: `prepare()` writes the checked job to `<state>/jobs/<run id>.tpch` (0600) and refuses
a host without the generator or the DBMS ("unsupported on this host: ... install it: ...")
before anything runs. Child side (`python -m iowatt_agent.tpch.lease --job=FILE --directory=RUN_DIR
--target=DIR`): the run in RUN_DIR (`<target>/iowatt-tpch-<run id>`), progress as JSON lines on
stderr (`{"event": "progress", "mode": "tpch", "phase", "percent", "elapsed_ns"}`, percent of the
whole run), and on stdout one engine-like document: `jobs[0]` (name and rw `tpch`, runtime = the
power test's plus the throughput test's time, I/O counters zero: not measured, said in
`jobs[0].iowatt.io_counters`), top-level `iowatt.mode` = "tpch" and the `tpch` object exactly as
`bench --preset tpch --json` prints it. Exit 0; 1 failed (the message on stderr's last line); 77
unsupported; 130 stopped by a signal (instance stopped, directory removed).
"""

from __future__ import annotations

import json
import logging
import math
import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from iowatt_policy import job_value
from iowatt_workload import TPCH_DEFAULT_BUFFER_POOL_BYTES, TPCH_LABEL, tpch_facts, tpch_min_streams

from ..filework import FileJobRefused, FileRun, write_text
from .options import DBMS_RUN_DIR_PREFIXES, DEFAULT_QUERY_TIMEOUT_S, RUN_DIR_PREFIX, TpchOptions

log = logging.getLogger("iowatt_agent.tpch")

# processes of a private instance (their working directory is the data directory)
DBMS_PROGRAMS = frozenset({"postgres", "postmaster", "mariadbd", "mysqld"})
REMOVE_TIMEOUT_S = 120.0
# share of the whole run per phase (start %, span %), for the run's progress bar
PHASES = {
    "generate": (0.0, 15.0),
    "start": (15.0, 5.0),
    "load": (20.0, 25.0),
    "power": (45.0, 25.0),
    "throughput": (70.0, 30.0),
}


class Unavailable(Exception):  # noqa: N818 - an outcome: the host cannot run it, nothing runs
    """This host cannot run TPC-H on a DBMS: the reason ("unsupported on this host: ...") says
    what to install. `supported_dbms` asks it of each DBMS; `prepare` refuses the lease with it."""


def run_dir_name(run_key: str) -> str:
    return f"{RUN_DIR_PREFIX}{run_key}"


def check_supported(dbms: str) -> None:
    """Unavailable unless the generator and `dbms`'s server binaries are installed, and, when the
    agent is root, the TPC-H user exists and the agent may hand the run over to it."""
    from .data import extension_path
    from .dbms import Unsupported, check_binaries
    from .isolation import IsolationError, missing_capabilities, tpch_user

    try:
        extension_path()
        check_binaries(dbms)
    except (Unsupported, ValueError) as exc:  # ValueError: a DBMS this agent does not know
        raise Unavailable(f"unsupported on this host: {exc}") from None
    try:
        tpch_user(dbms)
    except IsolationError as exc:
        raise Unavailable(f"unsupported on this host: {exc}") from None
    missing = missing_capabilities()
    if missing:
        raise Unavailable(
            f"unsupported on this host: TPC-H runs as an unprivileged user, and the agent lacks "
            f"{', '.join(missing)} to hand the run over (agent/systemd/iowatt-agent.service keeps them)"
        )


def supported_dbms() -> list[str]:
    """The DBMSs a TPC-H lease would run on here now (check_supported passes: the generator, the
    DBMS's server and, for a root agent, a TPC-H user and the capabilities to hand the run over).
    The inventory reports them as capabilities.tpch_dbms, and `tpch` among its workload kinds only
    when there is one, so the server refuses at queue time a run this host would refuse."""
    from .dbms import DBMS_NAMES

    found = []
    for dbms in DBMS_NAMES:
        try:
            check_supported(dbms)
        except Unavailable:
            continue
        found.append(dbms)
    return found


@dataclass
class TpchRun(FileRun):
    """A TPC-H lease's run directory as the agent sees it: made by the child, removed by a
    helper that does not depend on the child. What runs is the kind's (`kinds/tpch.py`)."""

    def make_dir(self) -> None:
        """The child makes it (bench's code); an earlier attempt's is removed first."""
        self.remove_dir()

    def remove_dir(self) -> None:
        remove_instance(Path(self.target), self.run_dir_name)


def prepare(engine_job: dict[str, Any], *, text_file: Path, target: str, run_key: str) -> TpchRun:
    """The run of a checked TPC-H job (the job written, 0600). FileJobRefused, its reason
    "unsupported on this host: ..." (the run fails with it, as any refused file workload), when
    this host lacks what the job's DBMS needs; nothing is written then."""
    try:
        check_supported(str(engine_job["dbms"]))
    except Unavailable as exc:
        raise FileJobRefused(str(exc)) from None
    run = TpchRun(mode="tpch", text_file=text_file, target=target, run_dir_name=run_dir_name(run_key))
    write_text(text_file, json.dumps(engine_job) + "\n")
    return run


def facts_of(engine_job: dict[str, Any]) -> dict[str, Any]:
    """The run's facts for the host's limits from libs/workload's one TPC-H bound (the server
    uses the same function), never from the server. FileJobRefused for a scale factor or streams
    the bound has no value for (libs/policy's check_run refuses those first)."""
    try:
        sf = float(job_value(engine_job, "scale_factor") or "nan")
        streams = job_value(engine_job, "streams")
        return dict(tpch_facts(sf, int(streams) if streams is not None else None))
    except ValueError as exc:
        raise FileJobRefused(f"the TPC-H run's bytes written cannot be bounded: {exc}") from None


# --- clean-up that needs no child -------------------------------------------------------------------


def processes_under(directory: Path) -> list[int]:
    """pids of DBMS server processes whose working directory is `directory` or below it."""
    prefix = os.fsencode(str(directory))
    pids = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            cwd = os.readlink(proc / "cwd")
            exe = os.path.basename(os.readlink(proc / "exe")).removesuffix(" (deleted)")
        except OSError:
            continue  # gone, or not ours to see
        raw = os.fsencode(cwd)
        if exe in DBMS_PROGRAMS and (raw == prefix or raw.startswith(prefix + b"/")):
            pids.append(int(proc.name))
    return pids


def remove_instance(target: Path, name: str) -> bool:
    """Kill a private instance still running in `<target>/<name>`, then remove the directory
    (never following a link), as its owner when that is the TPC-H user. A fresh process does it:
    it forks and drops privileges, which the agent's own threaded process must not. True when
    there was something to remove."""
    if not name.startswith(DBMS_RUN_DIR_PREFIXES) or "/" in name:
        raise ValueError(f"not a private DBMS's run directory: {name!r}")
    from .isolation import clean_env

    done = subprocess.run(
        [sys.executable, "-m", "iowatt_agent.tpch.isolation", "remove", str(target), name],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        env=clean_env(),
        timeout=REMOVE_TIMEOUT_S,
        check=False,
    )
    if done.returncode != 0:
        log.warning("rundir.cleanup_failed path=%s error=%s", target / name, done.stderr.strip()[-300:])
        return False
    return done.stdout.strip() == "removed"


# --- the child -------------------------------------------------------------------------------------


def document(doc: dict[str, Any], version: str) -> dict[str, Any]:
    """The uploaded document: engine-like top level with jobs[0], plus the `tpch` object."""
    power = sum(q["seconds"] for q in doc["queries"] if q["test"] == "power")
    power += sum(r["seconds"] for r in doc["refresh"]["timings"] if r["test"] == "power")
    runtime_s = power + float(doc["throughput_s"])
    zero = {"io_bytes": 0, "bw_bytes": 0, "iops": 0.0, "runtime": 0, "total_ios": 0}
    return {
        "fio version": f"iowatt-agent-{version}",
        "timestamp": int(time.time()),
        "global options": {},
        "jobs": [
            {
                "jobname": "tpch",
                "groupid": 0,
                "error": 0,
                "job options": {"rw": "tpch"},
                "read": dict(zero),
                "write": dict(zero),
                "usr_cpu": 0.0,
                "sys_cpu": 0.0,
                "job_runtime": round(runtime_s * 1000),
                "iowatt": {
                    "ioengine": "tpch",
                    "runtime_ns": round(runtime_s * 1e9),
                    "error_message": None,
                    "io_counters": "not measured: the DBMS does the I/O (read/write are zero)",
                },
            }
        ],
        "iowatt": {"mode": "tpch", "label": TPCH_LABEL, "interrupted": False, "agent_version": version},
        "tpch": doc,
    }


def _number(job: dict[str, Any], key: str, default: float) -> float:
    text = job_value(job, key)
    return float(text) if text is not None else default


def options_of(job: dict[str, Any], target: Path) -> TpchOptions:
    sf = float(job_value(job, "scale_factor") or "nan")
    if not (math.isfinite(sf) and sf > 0):
        raise ValueError("scale_factor")
    streams = job_value(job, "streams")
    return TpchOptions(
        dbms=str(job["dbms"]),
        scale_factor=sf,
        streams=int(streams) if streams is not None else tpch_min_streams(sf),
        query_timeout_s=_number(job, "query_timeout_s", DEFAULT_QUERY_TIMEOUT_S),
        buffer_pool_bytes=int(_number(job, "buffer_pool_bytes", TPCH_DEFAULT_BUFFER_POOL_BYTES)),
        target=target,
    )


class Progress:
    """bench's progress texts as JSON lines of the whole run's percent."""

    def __init__(self, streams: int) -> None:
        self.t0 = time.monotonic()
        self.streams = streams
        self.loaded = 0

    def phase_of(self, text: str) -> tuple[str, float]:
        if text.startswith("generating"):
            return "generate", 0.0
        if text.startswith("starting"):
            return "start", 0.0
        if text.startswith("loading"):
            self.loaded += 1
            return "load", min(90.0, self.loaded * 9.0)
        if text.startswith(("building", "gathering")):
            return "load", 95.0
        if text.startswith("power test: Q"):
            return "power", 100.0 * (int(text.rsplit("Q", 1)[1]) - 1) / 22
        if text.startswith("throughput test:"):
            done, total = text.split(":", 1)[1].split()[0].split("/")
            return "throughput", 100.0 * int(done) / max(1, int(total))
        return "", 0.0

    def __call__(self, text: str) -> None:
        phase, within = self.phase_of(text)
        start, span = PHASES.get(phase, (0.0, 0.0))
        line = {
            "event": "progress",
            "mode": "tpch",
            "phase": phase or "run",
            "percent": round(start + span * within / 100.0, 2),
            "elapsed_ns": int((time.monotonic() - self.t0) * 1e9),
            "message": text[:200],
        }
        sys.stderr.write(json.dumps(line) + "\n")
        sys.stderr.flush()


def main(argv: list[str] | None = None) -> int:
    from ..lease_cli import lease_main
    from .dbms import Unsupported
    from .run import TpchFailed, run

    return lease_main(
        argv,
        prog="python -m iowatt_agent.tpch.lease",
        tag="tpch",
        run_dir_prefix=RUN_DIR_PREFIX,
        read=options_of,
        execute=lambda opts, directory, stop: run(opts, Progress(opts.streams), stop, run_dir=directory),
        document=document,
        failures=(TpchFailed,),
        unsupported=(Unsupported,),
        unsupported_text=lambda exc: f"unsupported on this host: {exc}",
    )


if __name__ == "__main__":
    sys.exit(main())
