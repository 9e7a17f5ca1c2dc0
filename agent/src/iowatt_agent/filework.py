"""File workloads on the host: PostMark (`--postmark=FILE`) and vdbench file sets
(`--vdbench=FILE`), run in a directory target.

The text of the workload (PostMark's commands, vdbench's parameters) is written to the agent's
state directory (`jobs/<run id>.postmark|.vdbench`, mode 0600); the engine's `--parse-only` reads
that file and prints the facts of the workload with its `bounds` (threads, largest transfer,
bytes written, duration, file set): the agent judges the host's limits by those facts, never by
reading the text itself and never by facts from the server. The engine then runs in a directory
the agent makes for the run inside the target, `<target>/iowatt-<run id>` (mode 0700), confined
to the target (`--beneath=<target>`); the engine removes what it created, the agent removes the
run directory and anything left in it after the run, and at start-up what a killed agent left
(`leftovers`): only entries named `iowatt-<run id>` directly in a directory target, never
following a symbolic link.
"""

from __future__ import annotations

import json
import logging
import os
import re
import shutil
import stat
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from iowatt_policy import FILE_JOB_KEYS, FILE_MODES, JOB_MODES, OPTION_NOT_ALLOWED, Violation

from .config import write_private_file

log = logging.getLogger("iowatt_agent.filework")

RUN_DIR_PREFIX = "iowatt-"
RUN_DIR_RE = re.compile(r"^iowatt-[A-Za-z0-9-]{1,64}$")
PARSE_TIMEOUT_S = 60.0
# the text files of every mode (`<run id>.<mode>`): a killed agent's run is found at start-up
# (`leftovers`); heap-btree's and a TPC-H lease's job (JSON) is written instead of a text
SUFFIXES = tuple(f".{m}" for m in JOB_MODES)


class FileJobRefused(Exception):
    """The engine refuses the workload's text (its exit 2), or its facts cannot be had; `reason`
    is the failed run's reason, `message` the engine's own words (bench prints them)."""

    def __init__(self, reason: str, message: str | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.message = message or reason


def text_file_name(run_key: str, mode: str) -> str:
    return f"{run_key}.{mode}"


def run_dir_name(run_key: str) -> str:
    name = f"{RUN_DIR_PREFIX}{run_key}"
    if not RUN_DIR_RE.match(name):
        raise ValueError(f"not a run directory name: {name!r}")
    return name


def mode_args(
    mode: str,
    text_file: Path,
    directory: Path,
    *,
    beneath: str | None,
    scale: str | None,
    elapsed: str | None,
) -> list[str]:
    """The engine's arguments of a file workload (before --output-format and --progress)."""
    if mode not in FILE_MODES or mode == "heap-btree":
        raise ValueError(f"unknown file workload mode {mode!r}")
    args = [f"--{mode}={text_file}", f"--directory={directory}"]
    if beneath is not None:
        args.append(f"--beneath={beneath}")
    if scale is not None:
        args.append(f"--scale={scale}")
    if elapsed is not None:
        args.append(f"--elapsed={elapsed}")
    return args


def write_text(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    write_private_file(path, text.encode())


def engine_message(stderr: str) -> str:
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    return lines[-1][:500] if lines else "no message"


def parse_only(
    engine: Path | str,
    args: list[str],
    *,
    timeout_s: float = PARSE_TIMEOUT_S,
    file: Path | None = None,
    env: dict[str, str] | None = None,
) -> dict[str, Any]:
    """The engine's `--parse-only` document of a file workload (it touches nothing); `file`: a
    job file given last (`--parse-only FILE`), `env`: the engine's whole environment (None: the
    agent's). Raises FileJobRefused with the engine's message when it refuses the text (exit 2)
    or fails."""
    try:
        done = subprocess.run(
            [str(engine), *args, "--parse-only", *([str(file)] if file is not None else [])],
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=timeout_s,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise FileJobRefused(f"the engine's --parse-only did not answer within {timeout_s:g} s") from None
    except OSError as exc:
        raise FileJobRefused(f"cannot run {engine}: {exc.strerror or exc}") from None
    stderr = done.stderr.decode(errors="replace")
    if done.returncode == 2:
        raise FileJobRefused(engine_message(stderr))
    if done.returncode != 0:
        raise FileJobRefused(
            f"the engine's --parse-only exited with code {done.returncode}: {engine_message(stderr)}"
        )
    try:
        doc = json.loads(done.stdout)
    except ValueError as exc:
        raise FileJobRefused(f"the engine's --parse-only printed invalid JSON: {exc}") from None
    if not isinstance(doc, dict):
        raise FileJobRefused("the engine's --parse-only printed no JSON object")
    return doc


def bounds_of(doc: dict[str, Any]) -> dict[str, Any]:
    bounds = doc.get("bounds")
    if not isinstance(bounds, dict):
        raise FileJobRefused(
            "the engine's --parse-only printed no bounds, so the host's limits cannot be checked "
            "(update iowatt-engine on the host)"
        )
    return bounds


def refusal(mode: str, message: str, key: str) -> str:
    """The failed run's reason when the engine refuses the workload's text (`key`: the job's key
    libs/policy's FILE_JOB_KEYS names the field of)."""
    field_name = FILE_JOB_KEYS[mode][key][0]
    return Violation(
        OPTION_NOT_ALLOWED,
        field_name,
        f"the engine refuses the {mode} workload: {message}",
        f"fix the {mode} workload",
    ).reason()


# --- the run directory -------------------------------------------------------------------------------


def _open_target(target: str | Path) -> int | None:
    """A descriptor of the directory target, or None when it is not exactly a directory there
    (a symbolic link anywhere in its path, gone, replaced)."""
    path = os.fspath(target)
    if os.path.realpath(path) != path:
        log.warning("rundir.target_not_plain path=%s: a symbolic link in its path, nothing removed", path)
        return None
    try:
        return os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError as exc:
        log.warning("rundir.target_unusable path=%s error=%s", path, exc.strerror)
        return None


def make_run_dir(target: str | Path, name: str) -> Path:
    """Make `<target>/<name>` (mode 0700) through the target's descriptor. An entry of that name
    left by an earlier attempt of the same run is removed first."""
    if not RUN_DIR_RE.match(name):
        raise ValueError(f"not a run directory name: {name!r}")
    fd = _open_target(target)
    if fd is None:
        raise OSError(f"the directory target {target} is not a plain directory any more")
    try:
        try:
            os.mkdir(name, 0o700, dir_fd=fd)
        except FileExistsError:
            _remove_entry(fd, name)
            os.mkdir(name, 0o700, dir_fd=fd)
    finally:
        os.close(fd)
    return Path(target) / name


def remove_run_dir(target: str | Path, name: str) -> bool:
    """Remove `<target>/<name>` and everything in it, never following a symbolic link (a link
    there is removed itself), never anything but that entry of the target. True when it existed."""
    if not RUN_DIR_RE.match(name):
        raise ValueError(f"not a run directory name: {name!r}")
    fd = _open_target(target)
    if fd is None:
        return False
    try:
        return _remove_entry(fd, name)
    except OSError as exc:
        log.warning("rundir.cleanup_failed path=%s error=%s", Path(target) / name, exc)
        return False
    finally:
        os.close(fd)


def _remove_entry(dir_fd: int, name: str) -> bool:
    try:
        st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        return False
    if stat.S_ISDIR(st.st_mode):
        shutil.rmtree(name, dir_fd=dir_fd)  # the fd-based walk: links inside are unlinked, not followed
    else:
        os.unlink(name, dir_fd=dir_fd)
    return True


@dataclass
class FileRun:
    """A file workload as the agent runs it: the text file, the run directory in the target and
    the engine's facts (its --parse-only document, with `bounds`). Its kind's runner (`kinds`)
    prepares it and says what runs, with which arguments and phases."""

    mode: str
    text_file: Path
    target: str  # the directory target (the path the engine is confined to)
    run_dir_name: str
    scale: str | None = None  # vdbench's --scale and --elapsed (the other kinds have none)
    elapsed: str | None = None
    facts: dict[str, Any] = field(default_factory=dict)
    options: list[str] = field(default_factory=list)  # heap-btree's flags

    @property
    def run_dir(self) -> Path:
        return Path(self.target) / self.run_dir_name

    def make_dir(self) -> None:
        make_run_dir(self.target, self.run_dir_name)

    def remove_dir(self) -> None:
        if remove_run_dir(self.target, self.run_dir_name):
            log.info("rundir.removed path=%s", self.run_dir)

    def discard(self) -> None:
        """Forget a run that will not start: its text file and any run directory."""
        self.remove_dir()
        self.text_file.unlink(missing_ok=True)
