"""Validation errors in plain words: what a 422's `detail[].message` says beside the field it names.

Pydantic's messages speak of "Input" and print sizes in bytes ("Input should be less than or equal
to 268435456"); a form shows the message under the field, so it should read as advice to a person
("must be at most 256 MiB"). Validators that raise their own message (PydanticCustomError, or
ValueError, whose "Value error, " prefix is dropped here) keep it.
"""

from typing import Any

from iowatt_workload import format_size

_UNITS = ("KiB", "MiB", "GiB", "TiB", "PiB")


def human_bytes(n: float) -> str:
    """1048576 -> "1 MiB", 1536 -> "1.5 KiB", 100 -> "100 bytes"."""
    if n < 1024:
        return f"{n:g} bytes"
    value, unit = float(n), "bytes"
    for u in _UNITS:
        if value < 1024:
            break
        value, unit = value / 1024, u
    return f"{value:.3g} {unit}"


def _number(value: Any, field: str) -> str:
    if field.endswith("_bytes") and isinstance(value, int | float):
        return f"{human_bytes(value)} ({format_size(int(value))})" if value >= 1024 else human_bytes(value)
    if field.endswith("_s") and isinstance(value, int | float):
        return f"{value:g} s"
    return f"{value:g}" if isinstance(value, float) else str(value)


def plain_message(error: dict[str, Any]) -> str:
    """One pydantic error (as ValidationError.errors() gives it) as a sentence for a person."""
    kind, msg, ctx = error.get("type", ""), str(error.get("msg", "")), error.get("ctx") or {}
    loc = error.get("loc") or ()
    field = str(loc[-1]) if loc else ""
    if kind == "value_error" and msg.startswith("Value error, "):
        return msg.removeprefix("Value error, ")
    if kind == "assertion_error" and msg.startswith("Assertion failed, "):
        return msg.removeprefix("Assertion failed, ")
    bounds = {
        "greater_than": ("must be more than", "gt"),
        "greater_than_equal": ("must be at least", "ge"),
        "less_than": ("must be less than", "lt"),
        "less_than_equal": ("must be at most", "le"),
    }
    if kind in bounds:
        words, key = bounds[kind]
        return f"{words} {_number(ctx.get(key), field)}"
    plain = {
        "missing": "is required",
        "extra_forbidden": "is not a field this form knows (remove it)",
        "int_parsing": "must be a whole number",
        "int_from_float": "must be a whole number",
        "int_type": "must be a whole number",
        "float_parsing": "must be a number",
        "float_type": "must be a number",
        "finite_number": "must be a finite number",
        "bool_parsing": "must be true or false",
        "bool_type": "must be true or false",
        "string_type": "must be text",
        "uuid_parsing": "must be an id (a UUID)",
        "uuid_type": "must be an id (a UUID)",
        "list_type": "must be a list",
        "dict_type": "must be an object",
        "model_type": "must be an object",
    }
    if kind in plain:
        return plain[kind]
    if kind == "literal_error":
        return f"must be one of {ctx.get('expected', '')}".replace("'", "")
    if kind == "enum":
        return f"must be one of {ctx.get('expected', '')}".replace("'", "")
    if kind == "string_too_short":
        n = ctx.get("min_length", 1)
        return "must not be empty" if n == 1 else f"must have at least {n} characters"
    if kind == "string_too_long":
        return f"must have at most {ctx.get('max_length')} characters"
    if kind == "too_short":
        n = ctx.get("min_length", 1)
        return "needs at least one entry" if n == 1 else f"needs at least {n} entries"
    if kind == "too_long":
        return f"may have at most {ctx.get('max_length')} entries"
    return msg
