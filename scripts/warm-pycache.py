#!/usr/bin/env python3
"""Compile the project's Python once, before the test processes start (`make test-py`).

Without it, each of the suite's pytest worker processes (xdist, started together) rewrote the
asserts of every test module itself (pytest's assertion rewriting: an AST pass per assert) and
compiled every module of backend/, agent/ and tests/ itself, all at the same moment on a clean
clone; and where PYTHONDONTWRITEBYTECODE is set nothing was ever written, so every API, worker and
agent process a test starts compiled the sources again. Measured on a clean clone: collecting the
suite cost a worker ~45 CPU-s cold and ~18 with the caches written (docs/testing.md, Session 17).

Two caches, both only caches (a stale or missing entry is rebuilt by Python or pytest):
- the ordinary `__pycache__/*.cpython-311.pyc` of every source module (py_compile, which writes
  whatever PYTHONDONTWRITEBYTECODE says: the caller ran `make test`, which reads them);
- pytest's rewritten test modules, `__pycache__/*.cpython-311-pytest-X.pyc`, for the files pytest
  rewrites: `conftest.py` and the files matching its default `python_files` (`test_*.py`,
  `*_test.py`), written as pytest writes them (hash-checked pycs, so a later edit invalidates one).
  The assertion-pass hook (`enable_assertion_pass_hook`) changes the rewritten code: it is off in
  this project, and this script refuses to run if pyproject.toml turns it on.

    .venv/bin/python scripts/warm-pycache.py [-j N]
"""

from __future__ import annotations

import argparse
import compileall
import fnmatch
import os
import re
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
# the trees whose modules the tests and the processes they start import (the venv's own packages
# were compiled when they were installed: Makefile, deps-py)
SOURCES = ("backend", "worker", "migrations", "agent/src", "client/src", "libs", "tests", "scripts", "bench")
SKIP = ("node_modules", "__pycache__", ".venv")
TEST_PATTERNS = ("test_*.py", "*_test.py")


def _rewritten(path: Path) -> bool:
    return path.name == "conftest.py" or any(fnmatch.fnmatch(path.name, p) for p in TEST_PATTERNS)


def _rewrite(path: str) -> str | None:
    """Writes pytest's cached rewrite of one test module, as its import hook would; returns an
    error text instead of raising (a module that does not parse fails in pytest, with its error)."""
    from _pytest.assertion import rewrite

    fn = Path(path)
    pyc = rewrite.get_cache_dir(fn) / (fn.name[:-3] + rewrite.PYC_TAIL)
    if rewrite._read_pyc(fn, pyc) is not None:
        return None
    try:
        source_hash, code = rewrite._rewrite_test(fn, None)  # config None: no assertion-pass hook
    except SyntaxError as exc:
        return f"{path}: {exc}"
    pyc.parent.mkdir(exist_ok=True)
    state = type("State", (), {"trace": staticmethod(lambda *_: None)})()
    rewrite._write_pyc(state, code, source_hash, pyc)  # type: ignore[arg-type]
    return None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-j", type=int, default=os.cpu_count() or 1, help="processes (default: the CPUs)")
    args = parser.parse_args()
    if "enable_assertion_pass_hook" in (REPO / "pyproject.toml").read_text(encoding="utf-8"):
        print("warm-pycache: pyproject.toml sets enable_assertion_pass_hook; not warming", file=sys.stderr)
        return 0
    skip = "|".join(SKIP)
    ok = True
    for tree in SOURCES:
        if (REPO / tree).is_dir():
            ok &= bool(
                compileall.compile_dir(REPO / tree, quiet=1, workers=args.j, rx=re.compile(rf"/({skip})/"))
            )
    tests = [
        str(p)
        for p in sorted((REPO / "tests").rglob("*.py"))
        if _rewritten(p) and not any(part in SKIP for part in p.parts)
    ]
    with ProcessPoolExecutor(max_workers=args.j) as pool:
        errors = [e for e in pool.map(_rewrite, tests, chunksize=8) if e]
    for e in errors:
        print(f"warm-pycache: {e}", file=sys.stderr)
    # a module that does not compile is reported by pytest or the import that needs it, with context
    note = "" if ok else "; some sources did not compile"
    print(f"warm-pycache: {len(tests)} test modules rewritten or current{note}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
