"""Shared pydantic bases: inputs forbid unknown fields and NUL characters, outputs read from ORM
attributes."""

from typing import Any, Generic, TypeVar

from pydantic import BaseModel, ConfigDict, field_validator
from pydantic_core import PydanticCustomError

NUL = "\x00"


_CONTAINERS = (list, tuple, set, frozenset)
# a list whose items are all of these holds no string: skipped whole (a power upload's 100,000
# samples twice, ~40 ms walked item by item; docs/benchmarks.md § A million runs, session 24)
_NUMBERS = frozenset({int, float, bool})


def _has_nul(value: Any) -> bool:
    """Whether a string or a string key anywhere in the value holds a NUL: `nul_path` without the
    paths, walked with a stack (an engine document's ~6,000 values: 4 ms instead of 17)."""
    todo = [value]
    pop, more = todo.pop, todo.extend
    while todo:
        v = pop()
        t = type(v)
        if t is str:
            if NUL in v:
                return True
        elif t is dict or (t is not list and isinstance(v, dict)):
            for k in v:
                if isinstance(k, str) and NUL in k:
                    return True
            more(v.values())
        elif t is list or isinstance(v, _CONTAINERS):
            if not set(map(type, v)) <= _NUMBERS:  # the types gathered in C, not item by item here
                more(v)
        elif isinstance(v, str) and NUL in v:
            return True
    return False


def nul_path(value: Any, path: str = "") -> str | None:
    """Where a NUL character is in a JSON-like value (dotted path inside it; "" = the value
    itself), or None. PostgreSQL cannot store NUL in text or jsonb, and no iowatt string needs one.
    Nested pydantic models are skipped: their own validators check them."""
    if not isinstance(value, str) and not _has_nul(value):
        return None  # the usual answer, found without making a path for every key
    if isinstance(value, str):
        return path if NUL in value else None
    if isinstance(value, dict):
        for k, v in value.items():
            sub = f"{path}.{k}" if path else str(k)
            if isinstance(k, str) and NUL in k:
                return sub
            found = nul_path(v, sub)
            if found is not None:
                return found
        return None
    if isinstance(value, list | tuple | set | frozenset):
        for i, v in enumerate(value):
            found = nul_path(v, f"{path}.{i}" if path else str(i))
            if found is not None:
                return found
    return None


class InputSchema(BaseModel):
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)

    @field_validator("*", mode="after")
    @classmethod
    def _no_nul(cls, value: Any) -> Any:
        where = nul_path(value)
        if where is not None:
            raise PydanticCustomError(
                "nul_character",
                "must not contain a NUL character{at}",
                {"at": f" (at {where})" if where else ""},
            )
        return value


class OutputSchema(BaseModel):
    model_config = ConfigDict(from_attributes=True)


T = TypeVar("T")


class Page(OutputSchema, Generic[T]):
    items: list[T]
    total: int
