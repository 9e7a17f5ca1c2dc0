"""backend/kit/numbers.py against the vectors the UI's formatter passes too
(libs/workload/testdata/numbers.json; frontend/src/lib/format.vectors.test.ts): one figure reads the
same on the page, in the CSV and in the PDF."""

import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from backend.kit import numbers
from tests.conftest import REPO

VECTORS: dict[str, Any] = json.loads((Path(REPO) / "libs/workload/testdata/numbers.json").read_text())


@pytest.mark.parametrize("v", VECTORS["decimal"], ids=lambda v: v["in"])
def test_decimals_keep_their_digits_and_never_an_exponent(v: dict[str, str]) -> None:
    assert numbers.plain_decimal(v["in"]) == v["plain"]
    assert numbers.grouped_decimal(v["in"]) == v["grouped"]
    # the same from the Decimal the API holds (its str() is what the wire carries)
    assert numbers.grouped_decimal(Decimal(v["in"])) == v["grouped"]


@pytest.mark.parametrize("v", VECTORS["money"], ids=lambda v: str(v["in"]))
def test_money(v: dict[str, Any]) -> None:
    assert numbers.money(v["in"], v["currency"]) == v["out"]


@pytest.mark.parametrize("v", VECTORS["sig3"], ids=lambda v: str(v["in"]))
def test_sig3(v: dict[str, Any]) -> None:
    assert numbers.sig3(v["in"]) == v["out"]


@pytest.mark.parametrize("v", VECTORS["plain"], ids=lambda v: str(v["in"]))
def test_plain(v: dict[str, Any]) -> None:
    assert numbers.plain(v["in"], v["unit"]) == v["out"]


@pytest.mark.parametrize("v", VECTORS["decimal_bytes"], ids=lambda v: str(v["in"]))
def test_decimal_bytes(v: dict[str, Any]) -> None:
    assert numbers.decimal_bytes(v["in"]) == v["out"]


@pytest.mark.parametrize("v", VECTORS["fraction_pct"], ids=lambda v: str(v["in"]))
def test_fraction_pct(v: dict[str, Any]) -> None:
    assert numbers.fraction_pct(v["in"]) == v["out"]


def test_no_figure_is_written_in_exponent_form() -> None:
    """Every vector's output is fixed notation (the review showed "2.7E-7 EUR")."""
    outs = [v["grouped"] for v in VECTORS["decimal"]] + [v["out"] for v in VECTORS["money"]]
    assert not [o for o in outs if "E" in o.replace("EUR", "")]


def test_not_a_number_is_refused() -> None:
    with pytest.raises(ValueError):
        numbers.plain_decimal("NaN")
    with pytest.raises(ValueError):
        numbers.plain_decimal("12 EUR")
