"""Any program that prints watts (tier `inband`).

    command:PROGRAM [ARGS...]

Each stdout line is one reading: `WATTS` (an optional trailing `W`), timestamped by the agent
when the line arrives, or `UNIX_SECONDS WATTS` when the program has its own clock (a logger
tailing a meter's log, say): the agent maps that onto the run's clock through t0's UTC. Two
patterns work: a program that keeps printing (one line per reading, its own rate), and a
program that prints once and exits 0, which the agent runs again every `interval` (default
0.1 s). Lines that are not numbers are counted as read errors; NaN or negative readings are
kept and then dropped and counted by cleaning. A non-zero exit is a read error (its last stderr
line is the reason). The program runs in its own process group, killed when sampling stops.
"""

from __future__ import annotations

import contextlib
import math
import os
import queue
import shlex
import shutil
import signal
import subprocess
import threading
import time
from typing import IO

from .base import Meter, MeterError, ParsedSpec

_EOF = object()


def parse_line(line: str) -> tuple[float | None, float]:
    """'61.2', '61.2 W', '1700000000.5 61.2', '1700000000.5,61.2' -> (unix_s or None, watts)."""
    text = line.strip()
    if text[-1:] in ("W", "w") and not text.lower().endswith(("nan", "inf")):
        text = text[:-1].strip()
    fields = text.replace(",", " ").split()
    try:
        numbers = [float(f) for f in fields]
    except ValueError:
        raise MeterError(
            f"not a reading: {line.strip()[:80]!r} (expected WATTS or UNIX_SECONDS WATTS)"
        ) from None
    if len(numbers) == 1:
        return None, numbers[0]
    if len(numbers) == 2 and math.isfinite(numbers[0]):
        return numbers[0], numbers[1]
    raise MeterError(f"not a reading: {line.strip()[:80]!r} (expected WATTS or UNIX_SECONDS WATTS)")


class CommandMeter(Meter):
    scheme = "command"
    driver = "command"
    tier = "inband"
    quantity = "power"
    native_interval_s = 0.1
    summary = "any program printing watts, one line per reading (streaming, or once per run)"
    needs = "the program; it prints WATTS or UNIX_SECONDS WATTS per line"
    example = "command:/usr/local/bin/read-my-meter --port /dev/ttyUSB0"

    def __init__(self, spec: ParsedSpec, *, interval_s: float | None = None) -> None:
        super().__init__(spec, interval_s=interval_s)
        try:
            self.argv = shlex.split(spec.rest)
        except ValueError as exc:
            raise MeterError(f"command: cannot split {spec.rest!r}: {exc}") from None
        if not self.argv:
            raise MeterError("command: needs a program, e.g. command:/usr/local/bin/watts")
        self.proc: subprocess.Popen[str] | None = None
        self.lines: queue.Queue[object] = queue.Queue()
        self.stderr_tail: list[str] = []
        self.err_pump: threading.Thread | None = None
        self.first_timeout_s = max(5.0, 3 * self.interval_s)

    # --- process -------------------------------------------------------------------------------

    def _spawn(self) -> None:
        try:
            self.proc = subprocess.Popen(
                self.argv,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                bufsize=1,
                start_new_session=True,
            )
        except OSError as exc:
            raise MeterError(f"command: cannot run {self.argv[0]}: {exc.strerror or exc}") from None
        assert self.proc.stdout is not None and self.proc.stderr is not None
        threading.Thread(target=self._pump, args=(self.proc.stdout,), daemon=True).start()
        self.err_pump = threading.Thread(target=self._pump_err, args=(self.proc.stderr,), daemon=True)
        self.err_pump.start()

    def _pump(self, stream: IO[str]) -> None:
        for line in stream:
            self.lines.put((time.monotonic_ns(), line))
        self.lines.put(_EOF)

    def _pump_err(self, stream: IO[str]) -> None:
        for line in stream:
            if line.strip():
                self.stderr_tail = [*self.stderr_tail[-4:], line.strip()[:300]]

    def _kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.proc.pid, signal.SIGKILL)
        if self.proc is not None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(timeout=2.0)

    def _exit_error(self) -> MeterError:
        assert self.proc is not None
        rc = self.proc.wait()
        if self.err_pump is not None:  # the program's last words may still be in the pipe
            self.err_pump.join(timeout=2.0)
        why = self.stderr_tail[-1] if self.stderr_tail else "no message"
        return MeterError(f"command {self.argv[0]} exited {rc}: {why}")

    # --- meter ---------------------------------------------------------------------------------

    def open(self) -> None:
        program = self.argv[0]
        if os.sep not in program and shutil.which(program) is None:
            raise MeterError(f"command: {program!r} not found on PATH")
        if os.sep in program and not os.access(program, os.X_OK):
            raise MeterError(f"command: {program} is not an executable file")
        self.model = os.path.basename(program)
        self._spawn()
        deadline = time.monotonic() + self.first_timeout_s
        while True:
            try:
                item = self.lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                self._kill()
                raise MeterError(
                    f"command {program} printed no reading within {self.first_timeout_s:g} s"
                ) from None
            if item is _EOF:
                assert self.proc is not None
                if self.proc.wait() != 0:
                    raise self._exit_error()
                raise MeterError(f"command {program} exited without printing a reading")
            # recorded by the sampling thread, FIRST: more lines may have arrived meanwhile, and putting
            # this one behind them would reorder the readings (then dropped as out of order)
            with self.lines.mutex:
                self.lines.queue.appendleft(item)
                self.lines.not_empty.notify()
            return

    def _take(self, item: object) -> None:
        assert self._clock is not None and isinstance(item, tuple)
        mono_ns: int = item[0]
        line: str = item[1]
        if not line.strip():
            return
        try:
            unix_s, watts = parse_line(line)
        except MeterError as exc:
            self._record_error(exc)
            return
        if unix_s is None:
            self._record(mono_ns, watts)
        else:
            t_ns = round((unix_s - self._clock.t0_utc.timestamp()) * 1e9)
            with self._lock:
                self.readings.t_ns.append(t_ns)
                self.readings.value.append(watts)

    def _run(self) -> None:
        interval_ns = int(self.interval_s * 1e9)
        spawned_ns = time.monotonic_ns()
        consecutive = 0
        while not self._stop.is_set():
            try:
                item = self.lines.get(timeout=0.05)
            except queue.Empty:
                continue
            if item is not _EOF:
                self._take(item)
                consecutive = 0
                continue
            assert self.proc is not None
            if self.proc.wait() != 0:
                consecutive += 1
                self._record_error(self._exit_error())
                if consecutive >= self.max_consecutive_errors:
                    self._lost = f"{consecutive} runs in a row failed, last: {self.readings.last_error}"
                    return
            # printed once and exited: run it again on the next tick
            wait_ns = spawned_ns + interval_ns - time.monotonic_ns()
            if wait_ns > 0 and self._stop.wait(wait_ns / 1e9):
                return
            spawned_ns = time.monotonic_ns()
            try:
                self._spawn()
            except MeterError as exc:
                self._record_error(exc)
                self._lost = str(exc)
                return

    def read(self) -> float:  # pragma: no cover - sampling is driven by the program's output
        raise MeterError("command meters are read by their sampling thread")

    def close(self) -> None:
        self._kill()
