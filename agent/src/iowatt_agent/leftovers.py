"""What a previous agent process left behind, removed when the agent starts.

A run that was cut short by a crash or SIGKILL leaves its job file `<state>/jobs/<run_id>.json`
and, for a directory target, the data file `<target>/iowatt-<run_id>.dat` the engine created
(a run that ends normally removes both: `measured.run_measured`). At start no run is going
on, so every such job file is a leftover, and an engine still running it (in its own session,
it outlives its agent) is killed first: a process of this uid whose command line ends with the
job file's path after `--progress=jsonl`, leading its own process group
(`runner.EngineProcess`), with that group. A data file is removed only when it is named in a
leftover job file, has exactly the name the agent gives its runs' data files, and lies directly
in a directory target of the host policy: nothing else on the host is touched. A job file whose
jobs make files of their own ran in `<target>/iowatt-<run_id>` (its `directory`): that entry goes
with everything in it, links removed as links, never followed. Temp files of an
interrupted atomic write in the state directory and the spool go too. Everything removed is
logged (`leftovers.removed path=...`).

A file workload leaves its text file `<state>/jobs/<run_id>.postmark|.vdbench` and
the run directory `<target>/iowatt-<run_id>` with what the engine made in it: the engine still
running it (`--postmark=<text file>` / `--vdbench=<text file>`) is killed, then in every
directory target of the policy (a plain directory, no symbolic link in its path) the entry of
exactly that name is removed with everything in it, links removed as links, never followed.
heap-btree and TPC-H leases leave their job as `<state>/jobs/<run_id>.heap-btree` /
`.tpch`: the engine (`--directory=<target>/iowatt-<run_id>`) or the TPC-H child (`--job=<that
file>`) still running is killed, then a TPC-H run's private DBMS (postgres / mariadbd processes
working inside `<target>/iowatt-tpch-<run_id>`), then the run directory is removed. An InnoDB
flushing-policy lease (`.innodb-flush`) is the same with `<target>/iowatt-innodb-<run_id>`.
"""

from __future__ import annotations

import json
import logging
import os
import re
import signal
from pathlib import Path
from uuid import UUID

from iowatt_policy import Policy

from .config import ConfigError
from .filework import SUFFIXES, remove_run_dir, run_dir_name
from .innodb.lease import run_dir_name as innodb_run_dir_name
from .policy import load_policy
from .runner import cleanup_target
from .tpch.lease import remove_instance
from .tpch.lease import run_dir_name as tpch_run_dir_name

DBMS_RUN_DIRS = {".tpch": tpch_run_dir_name, ".innodb-flush": innodb_run_dir_name}

log = logging.getLogger("iowatt_agent.loop")

TMP_FILE_RE = re.compile(r"^\..+\.tmp-\d+$")  # config.write_private_file's temp files


def remove_leftovers(state_dir: Path) -> list[Path]:
    """Remove the dead process's job files, their runs' data files and stray temp files.
    Returns what was removed."""
    removed: list[Path] = []
    policy: Policy | None
    try:
        policy = load_policy(state_dir)
    except ConfigError as exc:
        policy = None
        log.warning("leftovers.policy_unreadable error=%s: data files of old runs are kept for now", exc)
    jobs = state_dir / "jobs"
    for job_file in sorted(jobs.glob("*.json")) if jobs.is_dir() else []:
        run_id = _run_id(job_file.stem)
        if run_id is None or not job_file.is_file() or job_file.is_symlink():
            continue
        _kill_orphan_engine(job_file)
        data_file = _data_file(job_file, run_id)
        if data_file is not None:
            if policy is None:
                continue  # keep the job file: it names the data file to remove once the policy reads
            if _in_directory_target(data_file, policy) and _remove(data_file):
                removed.append(data_file)
        job_file.unlink(missing_ok=True)
        removed.append(job_file)
    for text_file in sorted(p for p in jobs.iterdir() if p.suffix in SUFFIXES) if jobs.is_dir() else []:
        run_id = _run_id(text_file.stem)
        if run_id is None or not text_file.is_file() or text_file.is_symlink():
            continue
        # a private DBMS's run (TPC-H's, the InnoDB flushing matrix's): its own directory name and helper
        tpch = text_file.suffix in DBMS_RUN_DIRS
        name = DBMS_RUN_DIRS[text_file.suffix](str(run_id)) if tpch else run_dir_name(str(run_id))
        _kill_orphan_engine(text_file, run_dir=name)
        if policy is None:
            continue  # kept: it names the run whose directory goes once the policy reads
        for target in policy.targets:
            if target.kind != "directory":
                continue
            gone = remove_instance(Path(target.path), name) if tpch else remove_run_dir(target.path, name)
            if gone:
                removed.append(Path(target.path) / name)
        text_file.unlink(missing_ok=True)
        removed.append(text_file)
    for directory in (state_dir, state_dir / "spool", state_dir / "spool" / "rejected"):
        for tmp in sorted(directory.iterdir()) if directory.is_dir() else []:
            if TMP_FILE_RE.match(tmp.name) and tmp.is_file() and not tmp.is_symlink():
                tmp.unlink(missing_ok=True)
                removed.append(tmp)
    for path in removed:
        log.warning("leftovers.removed path=%s: left behind by a previous agent process", path)
    return removed


def _kill_orphan_engine(job_file: Path, run_dir: str | None = None) -> None:
    """SIGKILL the process group of an engine still running `job_file` (its session leader): a
    block job's file is its last argument, a file workload's text its first (`--postmark=FILE`),
    a TPC-H child's `--job=FILE`; heap-btree's engine is known by its run directory."""
    wanted = os.fsencode(str(job_file))
    as_option = {b"--postmark=" + wanted, b"--vdbench=" + wanted}  # a file workload's text file
    in_dir = b"/" + os.fsencode(run_dir) if run_dir is not None else None
    uid = os.geteuid()
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            if proc.stat().st_uid != uid:
                continue
            argv = (proc / "cmdline").read_bytes().rstrip(b"\0").split(b"\0")
        except OSError:
            continue  # gone meanwhile, or not ours to read
        if len(argv) < 2 or b"--progress=jsonl" not in argv:
            continue
        named = argv[-1] == wanted or bool(as_option.intersection(argv[1:2])) or b"--job=" + wanted in argv
        if in_dir is not None and not named:
            named = any(a.startswith(b"--directory=") and a.endswith(in_dir) for a in argv[1:])
        if not named:
            continue
        pid = int(proc.name)
        try:
            if os.getpgid(pid) != pid:  # the agent starts its engine as a group leader
                continue
            os.killpg(pid, signal.SIGKILL)
        except OSError:
            continue
        log.warning("leftovers.engine_killed pid=%d job=%s: left running by a previous agent", pid, job_file)


def _run_id(stem: str) -> UUID | None:
    try:
        return UUID(stem)
    except ValueError:
        return None


def _data_file(job_file: Path, run_id: UUID) -> Path | None:
    """The job's filename when it is a run's own data file (`iowatt-<run_id>.dat`), or its
    directory when it is the run's own directory (`iowatt-<run_id>`: a job file whose jobs make
    files of their own), else None."""
    try:
        doc = json.loads(job_file.read_text())
        glob = doc["global"]
        filename = glob.get("filename") if "filename" in glob else glob["directory"]
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None
    if not isinstance(filename, str):
        return None
    path = Path(filename)
    return path if path.name in (f"iowatt-{run_id}.dat", f"iowatt-{run_id}") else None


def _in_directory_target(data_file: Path, policy: Policy) -> bool:
    parent = os.path.normpath(data_file.parent)
    return any(t.kind == "directory" and os.path.normpath(t.path) == parent for t in policy.targets)


def _remove(data_file: Path) -> bool:
    existed = os.path.lexists(data_file)
    cleanup_target(data_file)  # a regular file or a symlink itself, never what a link points at
    return existed and not os.path.lexists(data_file)
