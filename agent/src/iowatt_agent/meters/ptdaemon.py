"""SPEC PTDaemon over TCP (docs/energy.md §1.1): a client of a user-run, licensed PTDaemon.

    ptdaemon://HOST[:8888][?volts=V&amps=A&mark=NAME&read=rl|watts&interval=S]

Handshake `Hello` (answer must be "Hello, PTDaemon here!"), `Identify` (analyzer model), optional
fixed ranges `SR,V,<volts>` / `SR,A,<amps>` (SPEC forbids autoranging during a measurement), then
`Go,1000,0,<mark>`: PTDaemon samples the analyzer every second and logs under our mark.

Each tick (1 s) the driver sends `RL`, SPEC's preferred read-out: "Last N samples" and then the N
samples not read yet, `Time,<date> HH:MM:SS.mmm,Watts,<W>,Volts,...,Mark,<mark>`. Every analyzer
sample is thus taken exactly once; the newest is stamped at the poll and the older ones keep the
analyzer's spacing (only time-of-day differences are used, so the PTD host's date format and clock
offset do not matter). A PTDaemon that does not know `RL` (or `read=watts`) is polled with
`Watts` instead, the latest reading. Analyzer readings are 1 s true-RMS averages: quantity
`power_avg`. On close: `Stop`, then `Uncertainty`, whose percentage (PTD's estimate for the last
sample) becomes the declared accuracy when it parses.
"""

from __future__ import annotations

import re

from ._net import LineSocket
from .base import Meter, MeterError, ParsedSpec

HELLO_REPLY = "Hello, PTDaemon here!"
NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|[-+]?nan|[-+]?inf", re.IGNORECASE)


def parse_watts(reply: str) -> float:
    """'Watts,22.97' (or a bare number) -> 22.97; 'Error...' or nothing numeric -> MeterError."""
    text = reply.strip()
    if not text or text.lower().startswith("error"):
        raise MeterError(f"PTDaemon: {text or 'empty answer'}")
    fields = [f.strip() for f in text.split(",")]
    for i, f in enumerate(fields[:-1]):
        if f.lower() == "watts":
            candidate = fields[i + 1]
            break
    else:
        candidate = fields[-1]
    if not NUMBER.fullmatch(candidate):
        raise MeterError(f"PTDaemon: no watts in answer {text!r}")
    return float(candidate)


RL_HEADER = re.compile(r"Last\s+(\d+)\s+samples?", re.IGNORECASE)
TIME_OF_DAY = re.compile(r"(\d{1,2}):(\d{2}):(\d{2}(?:\.\d+)?)")
MAX_RL_SAMPLES = 100_000


def parse_rl_sample(line: str) -> tuple[float | None, float]:
    """One RL line -> (seconds of the day by the analyzer's clock or None, watts)."""
    fields = [f.strip() for f in line.split(",")]
    seconds = None
    watts = None
    for i, f in enumerate(fields[:-1]):
        key, value = f.lower(), fields[i + 1]
        if key == "time" and seconds is None:
            m = TIME_OF_DAY.search(value)
            if m:
                seconds = int(m.group(1)) * 3600 + int(m.group(2)) * 60 + float(m.group(3))
        elif key == "watts" and watts is None:
            if not NUMBER.fullmatch(value):
                raise MeterError(f"PTDaemon: no watts in sample {line[:120]!r}")
            watts = float(value)
    if watts is None:
        raise MeterError(f"PTDaemon: no watts in sample {line[:120]!r}")
    return seconds, watts


class PtDaemonMeter(Meter):
    scheme = "ptdaemon"
    driver = "ptdaemon"
    tier = "lab"
    quantity = "power_avg"
    native_interval_s = 1.0
    summary = "SPEC PTDaemon (licensed) driving a SPEC-accepted analyzer; 1 s readings"
    needs = "a PTDaemon you run, reachable over TCP (default port 8888)"
    example = "ptdaemon://ptd-host:8888?volts=300&amps=2"

    def __init__(self, spec: ParsedSpec, *, interval_s: float | None = None) -> None:
        super().__init__(spec, interval_s=interval_s)
        self.host = spec.need_host()
        self.port = spec.port or 8888
        self.volts = spec.query.get("volts")
        self.amps = spec.query.get("amps")
        self.mark = spec.query.get("mark") or "iowatt"
        if not re.fullmatch(r"[A-Za-z0-9_.\-]{1,64}", self.mark):
            raise MeterError(f"meter spec {spec.spec!r}: mark must be 1-64 letters, digits, '_', '.', '-'")
        read_mode = spec.query.get("read", "rl")
        if read_mode not in ("rl", "watts"):
            raise MeterError(f"meter spec {spec.spec!r}: read must be rl or watts")
        self.read_mode = read_mode
        self.conn: LineSocket | None = None

    def _ask(self, line: str) -> str:
        assert self.conn is not None
        return self.conn.ask(line)

    def open(self) -> None:
        self.conn = LineSocket(self.host, self.port)
        try:
            hello = self._ask("Hello")
            if hello.strip() != HELLO_REPLY:
                raise MeterError(f"{self.host}:{self.port} is not a PTDaemon (answered {hello[:80]!r})")
            self.model = self._ask("Identify").strip()[:200] or None
            for kind, value in (("V", self.volts), ("A", self.amps)):
                if value:
                    answer = self._ask(f"SR,{kind},{value}")
                    if answer.lower().startswith("error"):
                        raise MeterError(f"PTDaemon refused range SR,{kind},{value}: {answer}")
            started = self._ask(f"Go,1000,0,{self.mark}")
            if started.lower().startswith("error"):
                raise MeterError(f"PTDaemon refused Go: {started}")
        except MeterError:
            self.conn.close()
            self.conn = None
            raise

    def read(self) -> float:
        return parse_watts(self._ask("Watts"))

    def read_batch(self) -> list[tuple[int, float]]:
        if self.read_mode == "watts":
            return [(0, self.read())]
        assert self.conn is not None
        header = self._ask("RL")
        m = RL_HEADER.search(header)
        if m is None:
            if "unknown command" in header.lower() or "invalid" in header.lower():
                self.read_mode = "watts"  # an old or DC PTDaemon: fall back to the latest reading
                return [(0, self.read())]
            raise MeterError(f"PTDaemon: unexpected answer to RL: {header[:120]!r}")
        count = int(m.group(1))
        if count > MAX_RL_SAMPLES:
            raise MeterError(f"PTDaemon: RL announced {count} samples")
        samples = [parse_rl_sample(self.conn.recv_line()) for _ in range(count)]
        if not samples:
            return []
        newest = samples[-1][0]
        batch = []
        for seconds, watts in samples:
            age_s = 0.0
            if seconds is not None and newest is not None:
                age_s = (newest - seconds) % 86400  # across midnight too
            batch.append((round(age_s * 1e9), watts))
        return batch

    def close(self) -> None:
        if self.conn is None:
            return
        try:
            self._ask("Stop")
            answer = self._ask("Uncertainty")
            m = re.search(r"([0-9.]+)\s*%", answer)
            if m and not answer.lower().startswith("error"):
                self.accuracy_pct = float(m.group(1))
        except MeterError:
            pass
        finally:
            self.conn.close()
            self.conn = None
