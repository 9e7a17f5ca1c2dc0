"""Human formatting for the CLI only; the wire always carries base units."""

from __future__ import annotations


def fmt_ns(ns: float | int | None) -> str:
    if ns is None:
        return "-"
    ns = float(ns)
    for limit, div, unit in ((1e3, 1.0, "ns"), (1e6, 1e3, "µs"), (1e9, 1e6, "ms")):
        if ns < limit:
            return f"{ns / div:.0f} {unit}" if unit == "ns" else f"{ns / div:.1f} {unit}"
    return f"{ns / 1e9:.2f} s"


def fmt_count(value: float) -> str:
    return f"{value:,.0f}" if value >= 100 else f"{value:,.1f}"


def fmt_bytes_rate(bytes_per_s: float) -> str:
    return f"{bytes_per_s / 1e6:,.1f} MB/s"


def fmt_pct(value: float | int | None) -> str:
    """CPU percent: one decimal below 10 %, whole numbers above (keeps tables narrow)."""
    v = float(value or 0.0)
    return f"{v:.1f}" if v < 10 else f"{v:.0f}"


def fmt_w(watts: float | None, mark: str = "") -> str:
    return "-" if watts is None else f"{mark}{watts:,.1f} W"


def fmt_j(joules: float | None, mark: str = "") -> str:
    if joules is None:
        return "-"
    if abs(joules) >= 1e6:
        return f"{mark}{joules / 1e6:,.2f} MJ"
    if abs(joules) >= 1e4:
        return f"{mark}{joules / 1e3:,.1f} kJ"
    return f"{mark}{joules:,.1f} J"


def fmt_num(value: float | None, mark: str = "") -> str:
    if value is None:
        return "-"
    return f"{mark}{value:,.0f}" if abs(value) >= 100 else f"{mark}{value:,.2f}"


def fmt_g(grams: float) -> str:
    if grams >= 1000:
        return f"{grams / 1000:,.2f} kg"
    return f"{grams:.3g} g" if grams < 10 else f"{grams:,.1f} g"
