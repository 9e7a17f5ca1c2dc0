"""Locate the iowatt-engine binary."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

ENGINE_NAME = "iowatt-engine"
ENGINE_ENV = "IOWATT_ENGINE"


class EngineNotFound(Exception):
    pass


def _is_executable(path: Path) -> bool:
    return path.is_file() and os.access(path, os.X_OK)


def candidate_paths() -> list[tuple[str, Path]]:
    """Places searched after --engine and $IOWATT_ENGINE, in order, with a label for messages."""
    package_dir = Path(__file__).resolve().parent
    found: list[tuple[str, Path]] = [
        ("next to the package", package_dir / "bin" / ENGINE_NAME),
        ("next to the interpreter", Path(sys.prefix) / "bin" / ENGINE_NAME),
    ]
    # Source checkout: <repo>/agent/src/iowatt_agent -> <repo>/agent/engine/build/iowatt-engine
    for parent in package_dir.parents:
        candidate = parent / "engine" / "build" / ENGINE_NAME
        if (parent / "engine").is_dir():
            found.append(("source checkout", candidate))
            break
    on_path = shutil.which(ENGINE_NAME)
    if on_path:
        found.append(("PATH", Path(on_path)))
    return found


def locate_engine(explicit: str | os.PathLike[str] | None = None) -> Path:
    if explicit:
        path = Path(explicit)
        if not _is_executable(path):
            raise EngineNotFound(f"--engine {path}: not an executable file")
        return path
    env = os.environ.get(ENGINE_ENV)
    if env:
        path = Path(env)
        if not _is_executable(path):
            raise EngineNotFound(f"${ENGINE_ENV}={path}: not an executable file")
        return path
    tried = []
    for label, path in candidate_paths():
        if _is_executable(path):
            return path
        tried.append(f"{path} ({label})")
    raise EngineNotFound(
        f"{ENGINE_NAME} not found; tried: {', '.join(tried) or 'nothing'} and $PATH. "
        f"Build it with `make -C agent/engine`, or pass --engine PATH / set ${ENGINE_ENV}."
    )
