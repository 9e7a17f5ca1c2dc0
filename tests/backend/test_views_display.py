"""The views' display rule (backend/views/display.py) against the vectors the page's tests read too
(backend/views/testdata/display_units.json; frontend/src/lib/format.views.test.ts): the seed's unit
for each base unit, the factor between them and the decimals, one rule in two languages."""

import json
from pathlib import Path
from typing import Any

import pytest

from backend.views.display import DISPLAY, DISPLAY_UNITS, SHOWN_FACTOR, _digits, _shown
from backend.views.schemas import BaseUnit, ViewCell

TESTDATA = Path(__file__).resolve().parents[2] / "backend" / "views" / "testdata"
VECTORS: dict[str, Any] = json.loads((TESTDATA / "display_units.json").read_text())


def _factor(base: str, shown: str) -> float:
    """Base units per one shown unit, as the CSV finds it."""
    default, factor, _ = DISPLAY[base]
    return factor if shown == default else SHOWN_FACTOR[(base, shown)]


def test_every_unit_the_server_can_name_is_in_the_vectors_with_its_factor() -> None:
    sendable = {(b, s): f for b, (s, f, _) in DISPLAY.items() if b in DISPLAY_UNITS} | SHOWN_FACTOR
    listed = {(u["base"], u["shown"]): u["per"] for u in VECTORS["units"]}
    assert listed == sendable  # a pair the server may send that the page's tests never convert fails here


@pytest.mark.parametrize("v", VECTORS["convert"], ids=lambda v: f"{v['base']}->{v['shown']}")
def test_convert_vectors(v: dict[str, Any]) -> None:
    cell = ViewCell(value=float(v["value"]), unit=v["base"], note=None, passes=None)
    units = {**DISPLAY_UNITS, **({v["base"]: v["shown"]} if v["shown"] != v["base"] else {})}
    assert v["value"] / _factor(v["base"], v["shown"]) == pytest.approx(v["figure"])
    assert _shown(cell, units) == pytest.approx(v["figure"])


@pytest.mark.parametrize("v", VECTORS["digits"], ids=lambda v: f"{v['unit']}:{v['value']}")
def test_digit_vectors(v: dict[str, Any]) -> None:
    assert _digits(v["unit"], v["value"], DISPLAY[v["unit"]][2]) == v["digits"]


def test_every_base_unit_has_a_digits_vector() -> None:
    units: set[BaseUnit] = set(BaseUnit.__args__)  # type: ignore[attr-defined]
    assert units == set(DISPLAY) == {v["unit"] for v in VECTORS["digits"]}
