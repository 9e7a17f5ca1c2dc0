"""CSV exports that a spreadsheet cannot turn into formulas (OWASP "CSV injection").

A text cell that begins with `=`, `+`, `-`, `@`, a tab or a carriage return gets a leading `'`,
so Excel, LibreOffice and Google Sheets show it as text instead of evaluating it. Numbers stay
numbers: only strings are neutralised, so `-3.5` written as a float is still a negative number.
Every CSV the server writes goes through `writer()`.
"""

import csv
from collections.abc import Iterable
from typing import Any, Protocol

FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


class _Writable(Protocol):
    def write(self, s: str, /) -> Any: ...


def cell(value: Any) -> Any:
    """The value as it may go into a CSV cell: strings that a spreadsheet would read as a formula
    are prefixed with `'`; numbers, booleans and None pass unchanged."""
    if isinstance(value, str) and value.startswith(FORMULA_START):
        return "'" + value
    return value


class SafeWriter:
    """csv.writer whose rows are neutralised cell by cell."""

    def __init__(self, out: _Writable) -> None:
        self._w = csv.writer(out)

    def writerow(self, row: Iterable[Any]) -> None:
        self._w.writerow([cell(v) for v in row])

    def writerows(self, rows: Iterable[Iterable[Any]]) -> None:
        for row in rows:
            self.writerow(row)


def writer(out: _Writable) -> SafeWriter:
    return SafeWriter(out)
