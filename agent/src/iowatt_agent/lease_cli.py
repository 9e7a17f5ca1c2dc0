"""The command line both DBMS lease children share (`python -m iowatt_agent.tpch.lease` and
`python -m iowatt_agent.innodb.lease`, each `--job=FILE --directory=RUN_DIR --target=DIR`).

What is the same for both: the arguments; the run directory must be directly in the target and
carry the kind's prefix (the agent made it; anything else is refused before any work); the checked
job read again from its file; SIGINT and SIGTERM stop the run once (a second signal must not
interrupt the clean-up); one engine-like document on stdout. The exit status: 0 done; 1 failed
(the message on stderr's last line); 2 a run directory or a job it cannot take; 77 unsupported on
this host; 130 stopped by a signal. What differs is in the kind's `read` (the job's options) and
`execute` (the run itself)."""

from __future__ import annotations

import argparse
import json
import signal
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from types import FrameType
from typing import Any, TypeVar

Options = TypeVar("Options")

# what reading a job file can raise when the file is not a job this kind can take
_UNREADABLE = (OSError, ValueError, KeyError, TypeError, AttributeError)


def lease_main(
    argv: list[str] | None,
    *,
    prog: str,
    tag: str,
    run_dir_prefix: str,
    read: Callable[[dict[str, Any], Path], Options],
    execute: Callable[[Options, Path, threading.Event], dict[str, Any]],
    document: Callable[[dict[str, Any], str], dict[str, Any]],
    failures: tuple[type[BaseException], ...],
    unsupported: tuple[type[BaseException], ...] = (),
    unsupported_text: Callable[[BaseException], str] = str,
) -> int:
    """Runs one lease as the child program `prog`: `read(job, target)` gives the options,
    `execute(options, run_dir, stop)` the run's document (`document(doc, version)` on stdout);
    `failures` end it with 1, `unsupported` with 77 (`unsupported_text(exc)` on stderr). `tag`
    starts the messages this function writes itself."""
    from . import __version__

    parser = argparse.ArgumentParser(prog=prog)
    parser.add_argument("--job", required=True, type=Path)
    parser.add_argument("--directory", required=True, type=Path)
    parser.add_argument("--target", required=True, type=Path)
    parser.add_argument("--output-format", default="json")
    parser.add_argument("--progress", default="jsonl")
    args = parser.parse_args(argv)
    if args.directory.parent != args.target or not args.directory.name.startswith(run_dir_prefix):
        sys.stderr.write(f"{tag}: {args.directory} is not a run directory directly in {args.target}\n")
        return 2
    try:
        opts = read(json.loads(args.job.read_text()), args.target)
    except _UNREADABLE as exc:
        sys.stderr.write(f"{tag}: cannot read the job {args.job}: {exc}\n")
        return 2
    stop = threading.Event()

    def on_signal(signum: int, _frame: FrameType | None) -> None:
        if not stop.is_set():  # once: a second signal must not interrupt the clean-up
            stop.set()
            raise KeyboardInterrupt

    for s in (signal.SIGINT, signal.SIGTERM):
        signal.signal(s, on_signal)
    try:
        doc = execute(opts, args.directory, stop)
    except unsupported as exc:
        sys.stderr.write(f"{unsupported_text(exc)}\n")
        return 77
    except failures as exc:
        sys.stderr.write(f"{exc}\n")
        return 1
    except KeyboardInterrupt:
        sys.stderr.write(f"{tag}: stopped; DBMS stopped, its directory removed\n")
        return 130
    sys.stdout.write(json.dumps(document(doc, __version__)) + "\n")
    sys.stdout.flush()
    return 0
