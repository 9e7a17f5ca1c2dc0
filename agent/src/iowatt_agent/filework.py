"""File workloads on the host (issue 14): PostMark (`--postmark=FILE`) and vdbench file sets
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

from iowatt_policy import FILE_JOB_KEYS, FILE_MODES, JOB_MODES, OPTION_NOT_ALLOWED, Violation, job_value

from .config import write_private_file

log = logging.getLogger("iowatt_agent.filework")

RUN_DIR_PREFIX = "iowatt-"
RUN_DIR_RE = re.compile(r"^iowatt-[A-Za-z0-9-]{1,64}$")
PARSE_TIMEOUT_S = 60.0
TEXT_KEY = {"postmark": "commands", "vdbench": "parameters"}
# heap-btree has no text: its job (JSON) is written instead, so a killed agent's run is found
# at start-up like the others' (`leftovers`); so is a TPC-H lease's (`tpch.lease`)
SUFFIXES = tuple(f".{m}" for m in JOB_MODES)
# heap-btree's job keys -> the engine's flags (values checked by check_run: plain numbers/names)
HEAP_BTREE_FLAGS = {
    "records": "--records",
    "queries": "--queries",
    "cache_fractions": "--cache-fraction",
    "randseed": "--randseed",
    "structure": "--structure",
}


class FileJobRefused(Exception):
    """The engine refuses the workload's text (its exit 2), or its facts cannot be had; `reason`
    is the failed run's reason, `message` the engine's own words (bench prints them)."""

    def __init__(self, reason: str, message: str | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.message = message or reason


def is_file_job(engine_job: dict[str, Any]) -> bool:
    """A job with a mode: a file workload, heap-btree or TPC-H (check_run has checked which)."""
    return "mode" in engine_job


def heap_btree_options(engine_job: dict[str, Any]) -> list[str]:
    """The engine's --heap-btree flags of a checked job (every value a plain number or name)."""
    return [
        f"{flag}={value}"
        for key, flag in HEAP_BTREE_FLAGS.items()
        if (value := job_value(engine_job, key)) is not None
    ]


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


def parse_only(engine: Path | str, args: list[str], *, timeout_s: float = PARSE_TIMEOUT_S) -> dict[str, Any]:
    """The engine's `--parse-only` document of a file workload (it touches nothing). Raises
    FileJobRefused with the engine's message when it refuses the text (exit 2) or fails."""
    try:
        done = subprocess.run(
            [str(engine), *args, "--parse-only"],
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


def refusal(mode: str, message: str) -> str:
    """The failed run's reason when the engine refuses the workload's text."""
    field_name = FILE_JOB_KEYS[mode][TEXT_KEY.get(mode, "records")][0]
    return Violation(
        OPTION_NOT_ALLOWED,
        field_name,
        f"the engine refuses the {mode} workload: {message}",
        f"fix the {mode} workload",
    ).reason()


def postmark_phases(doc: dict[str, Any]) -> dict[str, tuple[float, float]]:
    """Progress weights of PostMark's phases (start %, span %) from its facts: creation and
    deletion as many operations as files, the transactions as many as asked."""
    postmark = doc.get("postmark")
    params = postmark.get("parameters") if isinstance(postmark, dict) else None
    params = params if isinstance(params, dict) else {}
    bounds = doc.get("bounds")
    bounds = bounds if isinstance(bounds, dict) else {}
    files = _positive(params.get("number"), _positive(bounds.get("files"), 1.0))
    transactions = _positive(params.get("transactions"), files)
    total = 2 * files + transactions
    return {
        "creation": (0.0, 100.0 * files / total),
        "transactions": (100.0 * files / total, 100.0 * transactions / total),
        "deletion": (100.0 * (files + transactions) / total, 100.0 * files / total),
    }


def _positive(value: object, default: float) -> float:
    if isinstance(value, int | float) and not isinstance(value, bool) and value > 0:
        return float(value)
    return default


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
    the engine's facts (its --parse-only document, with `bounds`)."""

    mode: str
    text_file: Path
    target: str  # the directory target (the path the engine is confined to)
    run_dir_name: str
    scale: str | None
    elapsed: str | None
    facts: dict[str, Any] = field(default_factory=dict)
    options: list[str] = field(default_factory=list)  # heap-btree's flags

    def program(self, engine: Path | str) -> Path | str:
        """What runs: the engine (a TPC-H run overrides it)."""
        return engine

    @property
    def run_dir(self) -> Path:
        return Path(self.target) / self.run_dir_name

    def engine_args(self) -> list[str]:
        if self.mode == "heap-btree":
            return ["--heap-btree", f"--directory={self.run_dir}", f"--beneath={self.target}", *self.options]
        return mode_args(
            self.mode,
            self.text_file,
            self.run_dir,
            beneath=self.target,
            scale=self.scale,
            elapsed=self.elapsed,
        )

    def phases(self) -> dict[str, tuple[float, float]] | None:
        return postmark_phases(self.facts) if self.mode == "postmark" else None

    def make_dir(self) -> None:
        make_run_dir(self.target, self.run_dir_name)

    def remove_dir(self) -> None:
        if remove_run_dir(self.target, self.run_dir_name):
            log.info("rundir.removed path=%s", self.run_dir)

    def discard(self) -> None:
        """Forget a run that will not start: its text file and any run directory."""
        self.remove_dir()
        self.text_file.unlink(missing_ok=True)


def prepare(
    engine: Path | str,
    engine_job: dict[str, Any],
    *,
    text_file: Path,
    target: str,
    run_key: str,
) -> FileRun:
    """Write the workload's text (0600), run the engine's --parse-only on it and return the run
    with its facts. Raises FileJobRefused (the text file is removed again)."""
    mode = str(engine_job["mode"])
    text = str(engine_job[TEXT_KEY[mode]]) if mode in TEXT_KEY else json.dumps(engine_job) + "\n"
    run = FileRun(
        mode=mode,
        text_file=text_file,
        target=target,
        run_dir_name=run_dir_name(run_key),
        scale=engine_job.get("scale") if mode == "vdbench" else None,
        elapsed=engine_job.get("elapsed") if mode == "vdbench" else None,
        options=heap_btree_options(engine_job) if mode == "heap-btree" else [],
    )
    write_text(text_file, text)
    try:
        run.facts = parse_only(engine, run.engine_args())
        bounds_of(run.facts)
    except FileJobRefused as exc:
        text_file.unlink(missing_ok=True)
        raise FileJobRefused(refusal(mode, exc.reason), exc.reason) from None
    except BaseException:
        text_file.unlink(missing_ok=True)
        raise
    return run


# --- bench --scale ------------------------------------------------------------------------------------


def scaled_job(
    engine: Path | str, engine_job: dict[str, Any], scale: float, *, scratch: Path
) -> dict[str, Any]:
    """A file preset's job at `scale`, as a run's `scale` applies on the server: vdbench's scale
    multiplied; PostMark's number of files and transactions multiplied (rounded, at least 1).
    PostMark's commands are rendered again from the engine's own reading of them (its
    --parse-only `parameters`), never read here. `scratch` is a private directory for the text."""
    mode = str(engine_job.get("mode"))
    if mode == "vdbench":
        base = float(engine_job.get("scale") or 1)
        return {**engine_job, "scale": format(base * scale, ".10g")}
    if mode != "postmark":
        raise ValueError(f"unknown file workload mode {mode!r}")
    text_file = scratch / "unscaled.postmark"
    write_text(text_file, str(engine_job["commands"]))
    try:
        doc = parse_only(
            engine, mode_args(mode, text_file, scratch / "d", beneath=None, scale=None, elapsed=None)
        )
    finally:
        text_file.unlink(missing_ok=True)
    postmark = doc.get("postmark")
    params = postmark.get("parameters") if isinstance(postmark, dict) else None
    if not isinstance(params, dict):
        raise FileJobRefused("the engine's --parse-only gave no PostMark parameters to scale")
    return {"mode": "postmark", "commands": postmark_commands(params, scale)}


def postmark_commands(params: dict[str, Any], scale: float = 1.0) -> str:
    """PostMark's commands for the engine's resolved `parameters`, files and transactions scaled."""

    def num(key: str) -> int:
        value = params.get(key)
        if isinstance(value, bool) or not isinstance(value, int):
            raise FileJobRefused(f"the engine's PostMark parameters lack {key}")
        return value

    def flag(key: str) -> str:
        return "true" if params.get(key) else "false"

    lines = [
        f"set size {num('size_low_bytes')} {num('size_high_bytes')}",
        f"set number {max(1, round(num('number') * scale))}",
        f"set subdirectories {num('subdirectories')}",
        f"set read {num('read_block_bytes')}",
        f"set write {num('write_block_bytes')}",
        f"set transactions {max(1, round(num('transactions') * scale))}",
        f"set bias read {num('bias_read')}",
        f"set bias create {num('bias_create')}",
        f"set buffering {flag('buffering')}",
        f"set seed {num('seed')}",
        *(["set fsync true"] if params.get("fsync") else []),
        "run",
        "quit",
    ]
    return "\n".join(lines) + "\n"
