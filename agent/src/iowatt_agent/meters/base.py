"""The `Meter` base: one reading thread per meter, samples on the agent's monotonic clock.

A driver implements `open()` (connect, identify; raise MeterError with a clear reason), `read()`
(one value: W for `power`/`power_avg`, J for `energy_counter` already unwrapped) and `close()`.
The base runs `read()` in its own thread at a fixed schedule (`interval_s`, default 10 Hz where
the meter allows it, else its native rate) and timestamps each reading with the midpoint of the
request in `time.monotonic_ns()` relative to a shared `Clock` (t0 plus t0's UTC), as docs/energy.md
§2.2 asks: a poll's age is uncertain by half its round trip.

Nothing is cleaned here: NaN, negative and over-range values are kept as read and counted by
`iowatt_energy.clean()` when the power object is built, so bad data is reported, never hidden.
"""

from __future__ import annotations

import contextlib
import logging
import math
import threading
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import ClassVar, Literal
from urllib.parse import parse_qs, urlsplit

from iowatt_energy import TIER_DEFAULT_ACCURACY
from iowatt_energy import Tier as EnergyTier

log = logging.getLogger("iowatt_agent.meters")

Tier = Literal["lab", "bmc", "pdu", "plug", "inband", "component", "estimate", "unknown"]
Quantity = Literal["power", "power_avg", "energy_counter"]

# SCPI "over-range / no data" sentinel (9.9E+37) and similar: anything this large is not a reading.
OVER_RANGE = 1e30


class MeterError(Exception):
    """A meter that cannot be used: bad spec, unreachable, unreadable. The message says why."""


@dataclass(frozen=True)
class Clock:
    """The shared time base of one run: samples and phases are ns since `t0_ns` (monotonic)."""

    t0_ns: int
    t0_utc: datetime

    @classmethod
    def now(cls) -> Clock:
        return cls(time.monotonic_ns(), datetime.now(UTC))

    def since(self, mono_ns: int) -> int:
        return mono_ns - self.t0_ns

    def elapsed_ns(self) -> int:
        return time.monotonic_ns() - self.t0_ns

    def utc_text(self) -> str:
        return self.t0_utc.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


@dataclass
class ParsedSpec:
    """`scheme://host:port/path?k=v` or `scheme:rest` split into parts; query values are the last given."""

    spec: str
    scheme: str
    host: str
    port: int | None
    path: str
    query: dict[str, str]
    rest: str  # after "scheme:" (file paths, command lines); without "?query" except for command

    @classmethod
    def parse(cls, spec: str) -> ParsedSpec:
        scheme, sep, rest = spec.partition(":")
        if not sep:
            return cls(spec, spec.strip().lower(), "", None, "", {}, "")
        scheme = scheme.strip().lower()
        if rest.startswith("//"):
            parts = urlsplit(spec)
            try:
                port = parts.port
            except ValueError:
                raise MeterError(f"meter spec {spec!r}: the port is not a number") from None
            url_query = {k: v[-1] for k, v in parse_qs(parts.query, keep_blank_values=True).items()}
            return cls(spec, scheme, parts.hostname or "", port, parts.path, url_query, rest)
        query: dict[str, str] = {}
        if scheme != "command" and "?" in rest:  # a command line may hold a '?' of its own
            rest, _, qs = rest.partition("?")
            query = {k: v[-1] for k, v in parse_qs(qs, keep_blank_values=True).items()}
        return cls(spec, scheme, "", None, "", query, rest)

    def need_host(self) -> str:
        if not self.host:
            raise MeterError(f"meter spec {self.spec!r}: no host (expected {self.scheme}://HOST[:PORT])")
        return self.host

    def float_opt(self, key: str, default: float | None = None) -> float | None:
        if key not in self.query:
            return default
        try:
            return float(self.query[key])
        except ValueError:
            raise MeterError(f"meter spec {self.spec!r}: {key}={self.query[key]!r} is not a number") from None


def redact(spec: str) -> str:
    """The spec without secrets (password=, community=, a URL's user:password@, a command's
    arguments), for logs, uploads and `meters show`."""
    if spec.startswith("command:"):
        program, _, args = spec[len("command:") :].strip().partition(" ")
        return f"command:{program}" + (" ***" if args.strip() else "")
    parsed = urlsplit(spec) if "://" in spec else None
    if parsed is not None and parsed.password is not None:
        spec = spec.replace(f":{parsed.password}@", ":***@", 1)
        parsed = urlsplit(spec)
    if parsed is None or not parsed.query:
        return spec
    pairs = []
    for item in parsed.query.split("&"):
        key, eq, value = item.partition("=")
        pairs.append(f"{key}=***" if key in ("password", "community", "pass") and eq else item)
    return spec.split("?", 1)[0] + "?" + "&".join(pairs)


@dataclass
class Readings:
    """What a sampling thread collected: parallel lists, plus read errors."""

    t_ns: list[int] = field(default_factory=list)
    value: list[float] = field(default_factory=list)
    errors: int = 0
    last_error: str | None = None


class Meter:
    """Base of every driver. Subclasses set the class variables and implement open/read/close."""

    scheme: ClassVar[str] = ""
    driver: ClassVar[str] = ""
    tier: ClassVar[Tier] = "inband"
    quantity: Quantity = "power"
    native_interval_s: ClassVar[float] = 0.1  # fastest sensible poll; 10 Hz unless the meter is slower
    summary: ClassVar[str] = ""  # for `meters list`
    needs: ClassVar[str] = ""  # what the scheme needs on this host or network
    example: ClassVar[str] = ""

    # consecutive read failures after which the meter is considered lost (a run keeps going)
    max_consecutive_errors: ClassVar[int] = 50

    def __init__(self, spec: ParsedSpec, *, interval_s: float | None = None) -> None:
        self.spec = spec
        self.model: str | None = None
        self.accuracy_pct: float | None = None  # declared by the meter or its datasheet
        self.accuracy_w: float = 0.0
        rate = spec.float_opt("interval")
        chosen = interval_s if interval_s is not None else rate
        if chosen is not None and not (0.01 <= chosen <= 3600 and math.isfinite(chosen)):
            raise MeterError(f"meter spec {spec.spec!r}: the sampling interval must be 0.01-3600 s")
        # An explicit interval wins, even below the meter's native rate (it then repeats values).
        self.interval_s = chosen if chosen else self.native_interval_s
        self.readings = Readings()
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._clock: Clock | None = None
        self.opened = False
        self._lost: str | None = None

    # --- driver interface ----------------------------------------------------------------------

    def open(self) -> None:
        """Connect and identify; raise MeterError when the meter cannot be used."""

    def read(self) -> float:
        """One reading now. A driver implements this or overrides read_batch()."""
        raise NotImplementedError(f"{type(self).__name__} implements neither read() nor read_batch()")

    def read_batch(self) -> list[tuple[int, float]]:
        """Readings of one poll as (age_ns, value): age 0 is the request's midpoint, older
        readings a meter hands over in bulk (PTDaemon's RL) carry their age by the meter's own
        clock. The default is one reading from read()."""
        return [(0, self.read())]

    def close(self) -> None:
        """Release the connection (called from the sampling thread's owner after it stopped)."""

    # --- metadata ------------------------------------------------------------------------------

    def describe(self) -> dict[str, object]:
        """The `power.meter` object of contract §4."""
        # docs/energy.md §3.4 defaults (iowatt_energy's table) when the meter declares nothing
        default_pct, default_w = TIER_DEFAULT_ACCURACY[EnergyTier(self.tier)]
        declared = self.accuracy_pct is not None
        return {
            "spec": redact(self.spec.spec),
            "driver": self.driver,
            "model": self.model or "",
            "tier": self.tier,
            "quantity": self.quantity,
            "accuracy_pct": self.accuracy_pct if declared else default_pct,
            "accuracy_w": self.accuracy_w if declared else default_w,
            "accuracy_declared": declared,
            "nominal_interval_s": self.interval_s,
        }

    # --- sampling ------------------------------------------------------------------------------

    def start(self, clock: Clock) -> None:
        """Open the meter (raising MeterError) and start the sampling thread."""
        self._clock = clock
        try:
            self.open()
        except BaseException:
            with contextlib.suppress(Exception):
                self.close()  # release what a half-done open() holds (sockets, event loops)
            raise
        self.opened = True
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, name=f"meter-{self.driver}", daemon=True)
        self._thread.start()

    def stop(self) -> Readings:
        """Stop sampling, close the meter, return what was read."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=max(5.0, 3 * self.interval_s))
            if self._thread.is_alive():
                log.warning("meter.stop_timeout driver=%s: a read is still hanging", self.driver)
        if self.opened:
            try:
                self.close()
            except Exception as exc:  # noqa: BLE001 - closing must not lose the samples
                log.warning("meter.close_failed driver=%s error=%s", self.driver, exc)
            self.opened = False
        return self.snapshot()

    def snapshot(self) -> Readings:
        with self._lock:
            r = self.readings
            return Readings(list(r.t_ns), list(r.value), r.errors, r.last_error)

    @property
    def lost(self) -> str | None:
        """Why the meter stopped delivering, when it did (too many consecutive errors)."""
        return self._lost

    def _record(self, t_mono_ns: int, value: float) -> None:
        assert self._clock is not None
        with self._lock:
            self.readings.t_ns.append(self._clock.since(t_mono_ns))
            self.readings.value.append(value)

    def _record_error(self, exc: Exception) -> None:
        with self._lock:
            self.readings.errors += 1
            self.readings.last_error = str(exc) or type(exc).__name__

    def _run(self) -> None:
        interval_ns = int(self.interval_s * 1e9)
        next_ns = time.monotonic_ns()
        consecutive = 0
        while not self._stop.is_set():
            before = time.monotonic_ns()
            try:
                batch = self.read_batch()
            except Exception as exc:  # noqa: BLE001 - a failed read is counted, sampling goes on
                consecutive += 1
                self._record_error(exc)
                if consecutive == 1:
                    log.warning("meter.read_failed driver=%s error=%s", self.driver, exc)
                if consecutive >= self.max_consecutive_errors:
                    self._lost = f"{consecutive} reads in a row failed, last: {exc}"
                    log.error("meter.lost driver=%s %s", self.driver, self._lost)
                    return
            else:
                consecutive = 0
                after = time.monotonic_ns()
                for age_ns, value in batch:
                    self._record((before + after) // 2 - age_ns, value)
            next_ns += interval_ns
            now = time.monotonic_ns()
            if next_ns < now:  # a slow read: skip the missed ticks instead of bursting
                next_ns = now + interval_ns - (now - next_ns) % interval_ns
            self._stop.wait((next_ns - now) / 1e9)


class CounterUnwrapper:
    """Turns a wrapping raw energy counter into monotonic joules since the first read.

    `max_raw` is the counter's range (RAPL max_energy_range_uj: the counter runs 0..max_raw and
    restarts at 0); `scale_j` converts raw units to joules. A decrease means one wrap, as in
    docs/energy.md §1.6: delta = (max_raw - last) + cur. Sampling must be fast enough that the counter
    cannot wrap twice between reads (RAPL: minutes at typical package power).
    """

    def __init__(self, max_raw: float | None, scale_j: float) -> None:
        self.max_raw = max_raw
        self.scale_j = scale_j
        self.last: float | None = None
        self.total_raw = 0.0
        self.wraps = 0

    def update(self, raw: float) -> float:
        if self.last is not None:
            if raw >= self.last:
                self.total_raw += raw - self.last
            else:
                span = self.max_raw if self.max_raw else _guess_range(self.last)
                self.total_raw += (span - self.last) + raw
                self.wraps += 1
        self.last = raw
        return self.total_raw * self.scale_j


def _guess_range(last: float) -> float:
    """A counter without a declared range wrapped: assume the smallest register width holding `last`."""
    for bits in (32, 48, 64):
        if last < 2**bits:
            return float(2**bits)
    return float(2**64)
