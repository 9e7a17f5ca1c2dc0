"""Power analyzers over SCPI on a raw TCP socket (docs/energy.md §1.2).

    scpi+tcp://HOST:PORT?model=wt310|pw3335[&interval=S]

- `wt310` (Yokogawa WT310E/WT300E series): `*IDN?`, `:NUMeric:FORMat ASCii`,
  `:NUMeric:NORMal:NUMber 1`, `:NUMeric:NORMal:ITEM1 P,1`, `:RATE 100MS`, then
  `:NUMeric:NORMal:VALue?` per tick. Declared accuracy: WT300E basic power ±0.15 % of reading.
- `pw3335` (Hioki PW3335, LAN port 3300 by default): `*IDN?`, then `:MEASure? P` per tick; the
  answer is `P +0.1150E+3` with headers on, or the bare number with headers off. No declared
  figure is used (check the instrument's manual): the lab-tier default applies.

The analyzer averages over its update period, so the quantity is `power_avg`. Values beyond
1e30 are SCPI's over-range / no-data sentinel (9.9E+37) and are recorded as NaN, so cleaning
drops and counts them.
"""

from __future__ import annotations

import math

from ._net import LineSocket
from .base import OVER_RANGE, Meter, MeterError, ParsedSpec

MODELS = {
    # model: (default port, native update interval s, declared accuracy % of reading)
    "wt310": (10001, 0.1, 0.15),
    "pw3335": (3300, 0.2, None),
}
WT_RATES = [(0.1, "100MS"), (0.25, "250MS"), (0.5, "500MS"), (1.0, "1S"), (2.0, "2S"), (5.0, "5S")]


def parse_scpi_number(answer: str, item: str | None = None) -> float:
    """'+1.234E+02', 'P +0.1150E+3' or 'U +230.0E+0;P +0.115E+3' (item 'P') -> float."""
    text = answer.strip()
    if not text:
        raise MeterError("SCPI: empty answer")
    parts = [p.strip() for p in text.replace(",", ";").split(";") if p.strip()]
    chosen = parts[0]
    if item is not None:
        for p in parts:
            head, _, _ = p.partition(" ")
            if head.upper() == item.upper():
                chosen = p
                break
    token = chosen.split()[-1]
    try:
        value = float(token)
    except ValueError:
        raise MeterError(f"SCPI: not a number: {text[:80]!r}") from None
    return math.nan if abs(value) > OVER_RANGE else value


class ScpiMeter(Meter):
    scheme = "scpi+tcp"
    driver = "scpi"
    tier = "lab"
    quantity = "power_avg"
    native_interval_s = 0.1
    summary = "Yokogawa WT310E/WT300E or Hioki PW3335 analyzer, SCPI over a raw TCP socket"
    needs = "the analyzer's LAN interface reachable over TCP (PW3335: port 3300)"
    example = "scpi+tcp://10.0.0.5:3300?model=pw3335"

    def __init__(self, spec: ParsedSpec, *, interval_s: float | None = None) -> None:
        model = (spec.query.get("model") or "").lower()
        if model not in MODELS:
            raise MeterError(
                f"meter spec {spec.spec!r}: model={model or '(missing)'} is not supported; "
                f"use model={'|'.join(MODELS)}"
            )
        self.model_key = model
        default_port, native, declared = MODELS[model]
        self.native_interval_s = native  # type: ignore[misc]
        super().__init__(spec, interval_s=interval_s)
        self.host = spec.need_host()
        self.port = spec.port or default_port
        self.declared_pct = declared
        self.conn: LineSocket | None = None

    def open(self) -> None:
        self.conn = LineSocket(self.host, self.port, eol=b"\n")
        try:
            idn = self.conn.ask("*IDN?").strip()
            if not idn or "," not in idn:
                raise MeterError(f"{self.host}:{self.port}: *IDN? gave no identity ({idn[:80]!r})")
            fields = [f.strip() for f in idn.split(",")]
            self.model = " ".join(fields[:2])[:200]
            if self.model_key == "wt310":
                for command in (
                    ":NUMeric:FORMat ASCii",
                    ":NUMeric:NORMal:NUMber 1",
                    ":NUMeric:NORMal:ITEM1 P,1",
                    f":RATE {self._wt_rate()}",
                ):
                    self.conn.send(command)
                error = self.conn.ask(":SYSTem:ERRor?").strip()
                if error and not error.startswith(("0", "+0")):
                    raise MeterError(f"{self.host}:{self.port}: analyzer reported {error[:120]!r}")
            self.accuracy_pct = self.declared_pct
        except MeterError:
            self.conn.close()
            self.conn = None
            raise

    def _wt_rate(self) -> str:
        """The WT300E's update rates: the smallest not shorter than the sampling interval."""
        for seconds, word in WT_RATES:
            if seconds >= self.interval_s - 1e-9:
                return word
        return WT_RATES[-1][1]

    def read(self) -> float:
        assert self.conn is not None
        if self.model_key == "wt310":
            return parse_scpi_number(self.conn.ask(":NUMeric:NORMal:VALue?"))
        return parse_scpi_number(self.conn.ask(":MEASure? P"), "P")

    def close(self) -> None:
        if self.conn is not None:
            self.conn.close()
            self.conn = None
