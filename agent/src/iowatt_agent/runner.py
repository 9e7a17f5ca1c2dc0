"""Run iowatt-engine once: job file in, progress lines and one JSON document out.

The engine runs in its own session/process group (start_new_session), so a timeout, a cancel or a
drain deadline kills the engine and anything it spawned with one killpg, and a SIGTERM sent to the
agent by systemd never reaches the engine directly. stdout is the final JSON document; stderr
carries JSON-lines progress (`{"event": "progress", ...}`) mixed with human messages.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import signal
import stat
import subprocess
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any

from .filework import RUN_DIR_RE, remove_run_dir

log = logging.getLogger("iowatt_agent.runner")

STDERR_TAIL_LINES = 40
STDERR_TAIL_CHARS = 8000
MAX_MESSAGES = 500  # human stderr lines kept for the outcome (the newest)


@dataclass(frozen=True)
class EngineProgress:
    job_index: int
    job_name: str
    percent: float
    elapsed_ns: int
    planned_ns: int | None
    read_iops: float
    read_bw_bytes: int
    write_iops: float
    write_bw_bytes: int


def _rate(value: Any) -> float:
    return max(0.0, float(value or 0.0))


Phases = dict[str, tuple[float, float]]  # a file workload's phase -> (start %, span %) of the run
# the phase a progress event that names none is in, by its kind (kinds' Runner.progress_phase)
PhaseOf = Callable[[dict[str, Any]], str]


def parse_progress_line(
    line: str, phases: Phases | None = None, phase_of: PhaseOf | None = None
) -> EngineProgress | None:
    """A progress event from one stderr line, or None for anything else (human text).

    Block jobs: the job's line. File workloads (`"mode": "postmark" | "vdbench"`) report phases
    instead of jobs: the job name is `<mode> <phase>` (postmark creation / transactions /
    deletion, vdbench format / run) and the percent is of the whole run where `phases` weighs
    them (PostMark's percent is per phase), else the engine's. heap-btree's name is
    `heap-btree <structure> <operation> <fraction>` (its events name no phase: `phase_of`, the
    caller's runner's, reads one from the event); a TPC-H run's `tpch <phase>` (generate, start,
    load, power, throughput), its percent of the whole run."""
    line = line.strip()
    if not line.startswith("{"):
        return None
    try:
        doc = json.loads(line)
    except ValueError:
        return None
    if not isinstance(doc, dict) or doc.get("event") != "progress":
        return None
    try:
        planned = doc.get("planned_ns")
        percent = max(0.0, min(100.0, float(doc.get("percent") or 0.0)))
        name = str(doc.get("job", ""))
        mode = doc.get("mode")
        if isinstance(mode, str) and mode:
            phase = str(doc.get("phase") or "")
            if not phase and phase_of is not None:
                phase = phase_of(doc)  # heap-btree: structure, operation, fraction
            name = f"{mode} {phase}".strip()
            if phases is not None and phase in phases:
                start, span = phases[phase]
                percent = max(0.0, min(100.0, start + span * percent / 100.0))
        return EngineProgress(
            job_index=max(0, int(doc.get("job_index", 0))),
            job_name=name[:200],
            percent=percent,
            elapsed_ns=max(0, int(doc.get("elapsed_ns") or 0)),
            planned_ns=int(planned) if planned is not None else None,
            read_iops=_rate(doc.get("read_iops")),
            read_bw_bytes=round(_rate(doc.get("read_bw_bytes"))),
            write_iops=_rate(doc.get("write_iops")),
            write_bw_bytes=round(_rate(doc.get("write_bw_bytes"))),
        )
    except (TypeError, ValueError):
        return None


@dataclass
class EngineOutcome:
    exit_code: int | None  # None when the engine died from a signal
    term_signal: int | None
    result: dict[str, Any] | None
    stdout: str
    stderr_tail: str
    messages: list[str]
    started_at: datetime
    finished_at: datetime
    timed_out: bool = False
    cancelled: bool = False
    stop_reason: str | None = None
    error: str | None = None
    # a multi-target run (multi.EngineGroup): every target's document in the lease's order;
    # `result` is then the first target's
    target_results: list[dict[str, Any]] | None = None

    @property
    def ok(self) -> bool:
        return self.exit_code == 0 and self.result is not None and self.error is None


ProgressCallback = Callable[[EngineProgress], bool | None]


class EngineProcess:
    """One engine invocation. `run()` blocks until the engine is gone; `stop()` (any thread)
    kills its process group. `on_progress` is called at most every `progress_interval_s` with the
    latest progress line, from a helper thread; returning True means "cancel requested".

    A block job is written to `job_file` and given as the last argument. A file workload passes
    `mode_argv` (`--postmark=FILE --directory=... --beneath=...`): its text file, already written
    and checked (`filework`), is `job_file`, `phases` weighs its progress and `phase_of` names
    the phase of an event that names none (the kind's runner's `progress_phase`)."""

    def __init__(
        self,
        engine: Path | str,
        job: dict[str, Any],
        *,
        job_file: Path,
        timeout_s: float | None = None,
        on_progress: ProgressCallback | None = None,
        on_message: Callable[[str], None] | None = None,
        progress_interval_s: float = 1.0,
        keepalive_s: float | None = None,
        kill_grace_s: float = 5.0,
        output_format: str = "json",
        extra_args: Sequence[str] = (),
        mode_argv: Sequence[str] | None = None,
        phases: Phases | None = None,
        phase_of: PhaseOf | None = None,
    ) -> None:
        self.engine = str(engine)
        self.job = job
        self.job_file = job_file
        self.timeout_s = timeout_s
        self.on_progress = on_progress
        self.on_message = on_message
        self.progress_interval_s = progress_interval_s
        self.keepalive_s = keepalive_s
        self._t0 = time.monotonic()
        self.kill_grace_s = kill_grace_s
        self.output_format = output_format
        self.extra_args = list(extra_args)
        self.mode_argv = list(mode_argv) if mode_argv is not None else None
        self.phases = phases
        self.phase_of = phase_of

        self.proc: subprocess.Popen[bytes] | None = None
        self.pgid: int | None = None
        self.latest: EngineProgress | None = None
        self._latest_seq = 0
        self._stop_requested = threading.Event()
        self._stop_reason: str | None = None
        self._cancelled = False
        self._done = threading.Event()
        self._lock = threading.Lock()
        self._tail: deque[str] = deque(maxlen=STDERR_TAIL_LINES)
        self._messages: deque[str] = deque(maxlen=MAX_MESSAGES)
        self._stdout = b""
        self.started = threading.Event()

    # --- control -------------------------------------------------------------------------------

    def stop(self, reason: str, *, cancelled: bool = False) -> None:
        with self._lock:
            if self._stop_reason is None:
                self._stop_reason = reason
                self._cancelled = cancelled
        self._stop_requested.set()

    @property
    def running(self) -> bool:
        return self.started.is_set() and not self._done.is_set()

    def command(self) -> list[str]:
        if self.mode_argv is not None:
            return [
                self.engine,
                *self.mode_argv,
                f"--output-format={self.output_format}",
                "--progress=jsonl",
                *self.extra_args,
            ]
        return [
            self.engine,
            f"--output-format={self.output_format}",
            "--progress=jsonl",
            *self.extra_args,
            str(self.job_file),
        ]

    # --- run -----------------------------------------------------------------------------------

    def run(self) -> EngineOutcome:
        if self.mode_argv is None:
            self.job_file.parent.mkdir(parents=True, exist_ok=True)
            self.job_file.write_text(json.dumps(self.job, indent=2) + "\n")
        started_at = datetime.now(UTC)
        t0 = self._t0 = time.monotonic()
        try:
            self.proc = subprocess.Popen(
                self.command(),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                start_new_session=True,
                close_fds=True,
            )
        except OSError as exc:
            self._done.set()
            now = datetime.now(UTC)
            return EngineOutcome(
                None,
                None,
                None,
                "",
                "",
                [],
                started_at,
                now,
                error=f"cannot start {self.engine}: {exc.strerror or exc}",
            )
        self.pgid = self.proc.pid  # leader of its own session and group
        self.started.set()
        assert self.proc.stdout is not None and self.proc.stderr is not None
        readers = [
            threading.Thread(target=self._read_stdout, args=(self.proc.stdout,), daemon=True),
            threading.Thread(target=self._read_stderr, args=(self.proc.stderr,), daemon=True),
        ]
        for reader in readers:
            reader.start()
        forwarder = None
        if self.on_progress is not None:
            forwarder = threading.Thread(target=self._forward_progress, name="progress", daemon=True)
            forwarder.start()

        timed_out = False
        deadline = t0 + self.timeout_s if self.timeout_s else None
        while self.proc.poll() is None:
            if deadline is not None and time.monotonic() >= deadline:
                timed_out = True
                self.stop(f"timeout: engine still running after {self.timeout_s:g} s")
            if self._stop_requested.is_set():
                self._kill_group()
                break
            self._stop_requested.wait(0.05)
        self.proc.wait()
        # Stragglers (children that outlived the engine) go too; the group is ours alone.
        self._signal_group(signal.SIGKILL)
        for reader in readers:
            reader.join(timeout=5.0)
        self._done.set()
        if forwarder is not None:
            forwarder.join(timeout=1.0)
        finished_at = datetime.now(UTC)
        return self._outcome(started_at, finished_at, timed_out)

    def _outcome(self, started_at: datetime, finished_at: datetime, timed_out: bool) -> EngineOutcome:
        assert self.proc is not None
        rc = self.proc.returncode
        exit_code = rc if rc >= 0 else None
        term_signal = -rc if rc < 0 else None
        stdout = self._stdout.decode(errors="replace")
        tail = "\n".join(self._tail)[-STDERR_TAIL_CHARS:]
        outcome = EngineOutcome(
            exit_code=exit_code,
            term_signal=term_signal,
            result=None,
            stdout=stdout,
            stderr_tail=tail,
            messages=list(self._messages),
            started_at=started_at,
            finished_at=finished_at,
            timed_out=timed_out,
            cancelled=self._cancelled,
            stop_reason=self._stop_reason,
        )
        if self._stop_reason is not None:
            outcome.error = self._stop_reason
        elif exit_code != 0:
            last = self._messages[-1] if self._messages else None
            how = (
                f"exited with code {exit_code}"
                if exit_code is not None
                else f"killed by signal {term_signal}"
            )
            outcome.error = f"engine {how}" + (f": {last}" if last else "")
        else:
            try:
                doc = json.loads(stdout)
            except ValueError as exc:
                outcome.error = f"engine printed invalid JSON on stdout: {exc}"
            else:
                if isinstance(doc, dict):
                    outcome.result = doc
                else:
                    outcome.error = "engine JSON output is not an object"
        return outcome

    # --- helpers -------------------------------------------------------------------------------

    def _signal_group(self, sig: int) -> None:
        if self.pgid is None:
            return
        try:
            os.killpg(self.pgid, sig)
        except ProcessLookupError:
            pass
        except PermissionError:
            log.warning("cannot signal engine process group %s", self.pgid)

    def _kill_group(self) -> None:
        assert self.proc is not None
        log.info("engine.kill pgid=%s reason=%s", self.pgid, self._stop_reason)
        self._signal_group(signal.SIGTERM)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=self.kill_grace_s)
        self._signal_group(signal.SIGKILL)

    def _read_stdout(self, stream: IO[bytes]) -> None:
        chunks = []
        for chunk in iter(lambda: stream.read(65536), b""):
            chunks.append(chunk)
        self._stdout = b"".join(chunks)

    def _read_stderr(self, stream: IO[bytes]) -> None:
        for raw in iter(stream.readline, b""):
            line = raw.decode(errors="replace").rstrip("\n")
            progress = parse_progress_line(line, self.phases, self.phase_of)
            if progress is not None:
                with self._lock:
                    self.latest = progress
                    self._latest_seq += 1
                continue
            if not line.strip():
                continue
            self._tail.append(line)
            self._messages.append(line)
            if self.on_message is not None:
                try:
                    self.on_message(line)
                except Exception:  # noqa: BLE001 - a display problem must not stop the run
                    log.exception("on_message failed")

    def _forward_progress(self) -> None:
        """Forward the newest progress line once per interval; with `keepalive_s`, also when
        the engine has been silent that long (laying out a large file, say), so the server's
        lease, extended by each progress report, does not expire under a live run."""
        sent_seq = 0
        last_sent = time.monotonic()
        while not self._done.wait(self.progress_interval_s):
            if self._stop_requested.is_set():
                return  # being killed: nothing more worth reporting
            with self._lock:
                seq, latest = self._latest_seq, self.latest
            now = time.monotonic()
            if seq == sent_seq:
                if self.keepalive_s is None or now - last_sent < self.keepalive_s:
                    continue
                latest = EngineProgress(
                    job_index=latest.job_index if latest else 0,
                    job_name=latest.job_name if latest else "",
                    percent=latest.percent if latest else 0.0,
                    elapsed_ns=int((now - self._t0) * 1e9),
                    planned_ns=latest.planned_ns if latest else None,
                    read_iops=0.0,
                    read_bw_bytes=0,
                    write_iops=0.0,
                    write_bw_bytes=0,
                )
            assert latest is not None
            sent_seq, last_sent = seq, now
            try:
                cancel = self.on_progress(latest) if self.on_progress else None
            except Exception as exc:  # noqa: BLE001 - progress is best effort; the run goes on
                log.warning("progress.forward_failed error=%s", exc)
                continue
            if cancel:
                self.stop("cancelled by the server", cancelled=True)


def cleanup_target(data_file: Path | None) -> None:
    """Remove a directory target's data file if the engine left it (killed before its `unlink`).
    Only a regular file is removed: never what a symlink swapped in points at. A run directory
    (`iowatt-<run>`, a multi-file job file's: plan._plan_jobfile_run) is removed with everything in
    it through its parent's descriptor, links removed as links, never followed."""
    if data_file is None:
        return
    try:
        st = os.lstat(data_file)
        if stat.S_ISDIR(st.st_mode):
            if RUN_DIR_RE.match(data_file.name):
                remove_run_dir(data_file.parent, data_file.name)
            return
        if stat.S_ISREG(st.st_mode) or stat.S_ISLNK(st.st_mode):
            data_file.unlink()  # unlink() of a symlink removes the link, not its target
    except FileNotFoundError:
        pass
    except OSError as exc:
        log.warning("target.cleanup_failed path=%s error=%s", data_file, exc)
