"""The views' catalogue: every named view with its builder, one module per family, in the order the
page lists them. A view's name is written once, in schemas.ViewName (the API's enum, from which the
frontend's generated client takes its type); each builder module names its views' ViewInfo beside
the function that builds them, and the catalogue refuses to start when the two disagree."""

from typing import get_args

from backend.views.builders import (
    block,
    crystaldiskmark,
    file_sets,
    heap_btree,
    innodb,
    postmark,
    qos,
    tpch,
    writeback,
)
from backend.views.builders.common import View
from backend.views.schemas import ViewName

_FAMILIES = (crystaldiskmark, block, file_sets, postmark, tpch, heap_btree, writeback, qos, innodb)

VIEWS: dict[ViewName, View] = {info.name: (info, build) for m in _FAMILIES for info, build in m.VIEWS}


def _check(names: tuple[str, ...], built: list[str]) -> None:
    """Every name in the API's enum has exactly one builder, and no builder a name outside it."""
    if sorted(built) != sorted(names) or len(set(built)) != len(built):
        missing = sorted(set(names) - set(built))
        extra = sorted(set(built) - set(names))
        twice = sorted({n for n in built if built.count(n) > 1})
        raise RuntimeError(
            f"views: ViewName and the builders disagree: missing {missing}, extra {extra}, twice {twice}"
        )


_check(get_args(ViewName), [info.name for m in _FAMILIES for info, _ in m.VIEWS])
