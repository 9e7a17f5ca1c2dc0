"""Every importer of this package, found by walking it: each module's `IMPORTERS` list.

`detect` names a file's format from its name and first 64 KiB (each importer's `sniff`), or takes
the caller's hint (an importer's `format` or one of its `aliases`); `parse` runs it. Several
formats claiming a file, or none, is an ImportFormatError naming them, so a caller either gives a
hint or learns what the file is not. An importer with `parse_file(name, fp)` reads a file object
(a large upload streams); the others get the bytes."""

from __future__ import annotations

import importlib
import io
import pkgutil
from functools import cache
from typing import Any, BinaryIO

from backend.imports import formats
from backend.imports.formats.base import Importer, ImportFormatError, ParsedFile

HEAD_BYTES = 64 * 1024


@cache
def importers() -> dict[str, Importer]:
    """format -> importer, over every module of the package (sorted by module name)."""
    found: dict[str, Importer] = {}
    for mod in sorted(pkgutil.iter_modules(formats.__path__), key=lambda m: m.name):
        if mod.name in ("base", "registry") or mod.name.startswith("_"):
            continue
        module = importlib.import_module(f"{formats.__name__}.{mod.name}")
        for imp in getattr(module, "IMPORTERS", []):
            if imp.format in found:
                raise RuntimeError(f"two importers of format {imp.format!r}: {mod.name} and another")
            found[imp.format] = imp
    return found


def names() -> list[str]:
    return sorted(importers())


def by_name(hint: str) -> Importer:
    """The importer a hint names: its format key or one of its aliases, case-insensitive."""
    h = hint.strip().lower()
    for fmt, imp in importers().items():
        if h == fmt.lower() or h in (a.lower() for a in getattr(imp, "aliases", ())):
            return imp
    raise ImportFormatError(
        "format", f"unknown format {hint[:60]!r}", expected="one of " + ", ".join(names())
    )


def candidates(name: str, head: bytes) -> list[str]:
    out = []
    for fmt, imp in importers().items():
        try:
            if imp.sniff(name, head[:HEAD_BYTES]):
                out.append(fmt)
        except Exception:  # noqa: BLE001 - a sniff that fails is a format that does not claim the file
            continue
    return out


def detect(name: str, head: bytes, hint: str | None = None) -> Importer:
    if hint:
        return by_name(hint)
    found = candidates(name, head)
    if len(found) == 1:
        return importers()[found[0]]
    if not found:
        raise ImportFormatError(
            "unknown",
            "no importer recognises this file",
            line=1,
            expected="the output of one of: " + ", ".join(names()) + " (or name the format)",
        )
    raise ImportFormatError(
        "ambiguous",
        "several formats recognise this file: " + ", ".join(found),
        expected="a format hint naming one of them",
    )


def parse(name: str, fp: BinaryIO | bytes, hint: str | None = None) -> ParsedFile:
    """Detect (or take the hint) and parse. Anything an importer raises other than an
    ImportFormatError is a bug of that importer; it is reported as the file's error all the same
    (the API never answers 500 for a file's content)."""
    if isinstance(fp, bytes | bytearray):
        fp = io.BytesIO(bytes(fp))
    start = fp.tell()
    head = fp.read(HEAD_BYTES)
    fp.seek(start)
    imp = detect(name, head, hint)
    try:
        reader: Any = getattr(imp, "parse_file", None)
        if reader is not None:
            return reader(name, fp)  # type: ignore[no-any-return]
        return imp.parse(name, fp.read())
    except ImportFormatError:
        raise
    except (ValueError, TypeError, KeyError, IndexError, AttributeError, OverflowError, RecursionError) as e:
        raise ImportFormatError(imp.format, f"unreadable ({type(e).__name__}: {str(e)[:200]})") from e
