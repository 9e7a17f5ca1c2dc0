"""The views' catalogue (backend/views/builders): a view's name is written once, in
schemas.ViewName (the API's enum, which the UI's generated client types), and every name has
exactly one builder, listed in the page's order."""

from typing import get_args

import pytest

from backend.views.builders import VIEWS, _check
from backend.views.schemas import ViewName


def test_every_view_name_has_one_builder_in_the_pages_order() -> None:
    assert list(VIEWS) == list(get_args(ViewName))
    assert all(info.name == name for name, (info, _) in VIEWS.items())


@pytest.mark.parametrize(
    ("built", "said"),
    [
        (["a"], "missing ['b']"),
        (["a", "b", "c"], "extra ['c']"),
        (["a", "b", "b"], "twice ['b']"),
    ],
)
def test_the_catalogue_refuses_a_drift(built: list[str], said: str) -> None:
    with pytest.raises(RuntimeError, match=said.replace("[", r"\[").replace("]", r"\]")):
        _check(("a", "b"), built)
    _check(("a", "b"), ["b", "a"])  # the same names in another order are fine
