"""docs/security.md names the test that proves each mitigation: every one must exist (issue 22
Verify: "docs/security.md's claims are re-checked one by one"). A cell's references are written
`B/test_x.py::test_a`, `::test_b` (the same file as the reference before it), a bare file, or
`tests/...`; the prefixes are the page's own legend (A/ agent, B/ backend, E/ engine, S/ security,
P/ policy). A `*` in a name matches as a glob (`::test_compose_*`)."""

from __future__ import annotations

import ast
import fnmatch
import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DOC = REPO / "docs" / "security.md"
PREFIX = {"A/": "tests/agent/", "B/": "tests/backend/", "E/": "tests/engine/", "S/": "tests/security/",
          "P/": "tests/policy/"}  # fmt: skip
# `B/test_auth.py`, `tests/test_deploy.py::test_x`, `::test_y`, `tests/browser/policy.mjs`
REF = re.compile(r"`((?:[ABESP]/|tests/)[\w/.-]+)?(?:::([\w*\[\]-]+))?`")


def references(text: str) -> list[tuple[int, str, str | None]]:
    """(line, file, test name or None) for every reference in a table's last column."""
    out: list[tuple[int, str, str | None]] = []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.startswith("|") or line.startswith("|---"):
            continue
        cells = re.split(r"(?<!\\)\|", line.strip().strip("|"))
        last: str | None = None
        for m in REF.finditer(cells[-1]):
            path, name = m[1], m[2]
            if path is None and name is None:
                continue
            if path is not None:
                for short, long in PREFIX.items():
                    if path.startswith(short):
                        path = long + path[len(short) :]
                last = path
            assert last is not None, f"docs/security.md:{n}: `::{name}` with no file before it"
            out.append((n, last, name))
    return out


def _tests_in(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    return {
        node.name
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name.startswith("test")
    }


def missing(text: str) -> list[str]:
    bad: list[str] = []
    for n, file, name in references(text):
        path = REPO / file
        if not path.exists():
            bad.append(f"docs/security.md:{n}: {file} does not exist")
            continue
        if name is None:
            continue
        if path.suffix != ".py":
            bad.append(f"docs/security.md:{n}: {file}::{name}: only Python tests have names")
            continue
        base = name.split("[", 1)[0]
        if not fnmatch.filter(_tests_in(path), base):
            bad.append(f"docs/security.md:{n}: {file} has no test {base}")
    return bad


def test_every_proving_test_the_page_names_exists() -> None:
    refs = references(DOC.read_text())
    assert len(refs) > 60, f"only {len(refs)} references found: has the page's format changed?"
    assert missing(DOC.read_text()) == []


def test_the_check_sees_a_renamed_test_and_a_missing_file() -> None:
    row = (
        "| t | m | `B/test_auth.py::test_no_such_test`, "
        "`::test_tokens_are_listed_without_secrets_and_revoked`, `S/nope.py` |"
    )
    bad = missing(row)
    assert any("has no test test_no_such_test" in b for b in bad), bad
    assert any("tests/security/nope.py does not exist" in b for b in bad), bad
    assert len(bad) == 2, bad
