"""Numbers as people read them, for what the server prints (CSV cells, the review's PDF): the
Python twin of the UI's frontend/src/lib/format.ts, so one figure reads the same on the page, in
the CSV and in the PDF. Both pass the same vectors, libs/workload/testdata/numbers.json
(tests/backend/test_numbers.py, frontend/src/lib/format.vectors.test.ts), in the locale the
server prints in (en-US: "," groups thousands, "." is the decimal point); the UI formats in the
browser's locale with Intl, which for en-US gives these strings exactly.

Rules (the same in both):
- A decimal the API sends (money, rates: exact decimal strings) keeps every digit it was sent with
  and is never written in exponent form: Decimal("2.7E-7") is "0.00000027", not "2.7E-7". Its
  precision is the review's stated one (totals to the currency's minor unit, rates to 4 places,
  the cost per GB per IOPS to 8): the server rounds once, the printers never round again.
- A float (a measured figure) becomes its shortest decimal (Python's repr, JavaScript's String)
  and is rounded half away from zero, as Intl.NumberFormat rounds: sig3 keeps three significant
  digits (at most 6 decimals), dropping trailing zeros; from 1,000 up `plain` rounds to a whole
  number with grouping.
"""

import math
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation

MISSING = "—"

Number = Decimal | int | float | str


def _decimal(value: Number) -> Decimal:
    if isinstance(value, float):
        return Decimal(repr(value))
    try:
        d = Decimal(value)
    except InvalidOperation:
        raise ValueError(f"not a decimal number: {value!r}") from None
    if not d.is_finite():
        raise ValueError(f"not a finite number: {value!r}")
    return d


def plain_decimal(value: Number) -> str:
    """For a CSV cell: fixed notation with the digits as sent, no grouping ("1190.00", "0.00000027")."""
    return format(_decimal(value), "f")


def grouped_decimal(value: Number) -> str:
    """For reading: fixed notation with the digits as sent, thousands grouped ("1,190.00")."""
    return format(_decimal(value), ",f")


def money(value: Number | None, currency: str) -> str:
    """A money figure of the API with its currency code after it: "1,190.00 EUR", "0.0005 EUR"."""
    if value is None or value == "":
        return MISSING
    return f"{grouped_decimal(value)} {currency}"


def _round(value: Decimal, decimals: int) -> Decimal:
    return value.quantize(Decimal(1).scaleb(-decimals), ROUND_HALF_UP)


def _trim(text: str) -> str:
    return text.rstrip("0").rstrip(".") if "." in text else text


def sig3(value: float | int | Decimal) -> str:
    """Three significant digits, without trailing zeros past the point ("12.3", "4", "0.0456")."""
    v = float(value)
    if v == 0:
        return "0"
    a = abs(v)
    decimals = 0 if a >= 100 else 1 if a >= 10 else 2 if a >= 1 else min(6, 2 - math.floor(math.log10(a)))
    return _trim(format(_round(_decimal(v), decimals), "f"))


def whole(value: float | int | Decimal) -> str:
    """Rounded to a whole number, thousands grouped: 1234.5 -> "1,235"."""
    return format(_round(_decimal(float(value)), 0), ",f")


def plain(value: Number | None, unit: str = "") -> str:
    """A figure as the review page writes it: grouped whole numbers from 1,000 up, else three
    significant digits; the unit after a space."""
    if value is None or value == "":
        return MISSING
    v = float(_decimal(value))
    text = whole(v) if abs(v) >= 1000 else sig3(v)
    return f"{text} {unit}" if unit else text


_DECIMAL_UNITS = ("B", "kB", "MB", "GB", "TB", "PB", "EB")


def decimal_bytes(n: int | float | None) -> str:
    """Bytes in decimal units as drive vendors write them: 600e9 -> "600 GB" (GB = 10^9 bytes)."""
    if n is None:
        return MISSING
    v, i = abs(float(n)), 0
    while v >= 1000 and i < len(_DECIMAL_UNITS) - 1:
        v /= 1000
        i += 1
    return f"{'-' if n < 0 else ''}{sig3(v)} {_DECIMAL_UNITS[i]}"


def fraction_pct(value: Number | None) -> str:
    """A fraction as a percentage: "0.25" -> "25 %"."""
    if value is None or value == "":
        return MISSING
    return f"{sig3(float(_decimal(value)) * 100)} %"


def count(n: int) -> str:
    """A whole count, grouped: 8766 -> "8,766"."""
    return f"{n:,}"
