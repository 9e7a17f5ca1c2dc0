"""Validity flags are a closed vocabulary: every flag the server can emit is in the schema's Literal
and in the OpenAPI description, whose entry names the file that raises it; no member is stale.

The flags are found on the source with `ast` (a `{"flag": "..."}` dict or a `flag="..."` keyword),
so a new rule with a new flag fails here until the Literal and its description list it."""

import ast
from pathlib import Path
from typing import get_args

import pytest

from backend.main import create_app
from backend.power.schemas import EnergyRead
from backend.review.schemas import REVIEW_VALIDITY_FLAGS, ReviewValidityFlagName
from backend.review.service import ENERGY_FLAGS
from backend.run.schemas import RUN_VALIDITY_FLAGS, RunValidityFlagName

ROOT = Path(__file__).resolve().parents[2]
# flag values that are not string constants, each with where its values come from
PASS_THROUGH = {
    "v.flag": "a run's RunValidityFlag, copied onto a review candidate",
    "ENERGY_FLAGS[e.status]": "review/service.py's table, checked below",
    "str(e.get('flag'))": "a series run's stored exclusion, written from the run's own flags when it joined",
}


def emitted(rel: str, tree: ast.Module) -> tuple[list[str], list[str]]:
    """(string flags, other flag expressions) written as `{"flag": x}` or `flag=x`."""
    values: list[ast.expr] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Dict):
            values += [v for k, v in zip(node.keys, node.values, strict=True) if _is(k, "flag")]
        elif isinstance(node, ast.Call):
            values += [k.value for k in node.keywords if k.arg == "flag"]
    consts = [v.value for v in values if isinstance(v, ast.Constant) and isinstance(v.value, str)]
    others = [
        ast.unparse(v) for v in values if not (isinstance(v, ast.Constant) and isinstance(v.value, str))
    ]
    return consts, others


def _is(node: ast.expr | None, text: str) -> bool:
    return isinstance(node, ast.Constant) and node.value == text


def _backend() -> dict[str, tuple[list[str], list[str]]]:
    out = {}
    for path in sorted((ROOT / "backend").rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        found = emitted(rel, ast.parse(path.read_text()))
        if found != ([], []):
            out[rel] = found
    return out


def test_every_emitted_flag_is_in_the_literal_and_described_with_its_file() -> None:
    found = _backend()
    assert found, "no flag found: the scan is broken"
    run_flags, review_flags = set(get_args(RunValidityFlagName)), set(get_args(ReviewValidityFlagName))
    described: dict[str, str] = dict(REVIEW_VALIDITY_FLAGS.items())
    emitted_flags: set[str] = set()
    for rel, (consts, others) in found.items():
        assert set(others) <= set(PASS_THROUGH), (rel, others)
        for flag in consts:
            assert flag in (review_flags if rel.startswith("backend/review/") else run_flags), (rel, flag)
            short = rel.removeprefix("backend/")
            assert short in described[flag], (flag, "its description does not name", short)
            emitted_flags.add(flag)
    emitted_flags |= set(ENERGY_FLAGS.values())
    # no stale member: every flag of the Literal is emitted somewhere
    assert emitted_flags == review_flags
    # the review's own notes: a candidate without its run or result, and one whose run gives no
    # steady-state figure (not a SNIA PTS run, not a hard disk: backend/review/service.py)
    review_only = {"run_missing", "no_result", "no_steady_state", *ENERGY_FLAGS.values()}
    assert review_flags - review_only == run_flags


def test_every_energy_status_but_ok_has_a_flag() -> None:
    statuses = set(get_args(EnergyRead.model_fields["status"].annotation))
    assert set(ENERGY_FLAGS) == statuses - {"ok"}
    assert all(ENERGY_FLAGS[s] == f"energy_{s}" for s in ENERGY_FLAGS)


@pytest.mark.parametrize(
    ("schema", "flags"),
    [
        ("RunValidityFlag", RUN_VALIDITY_FLAGS),
        ("ValidityFlag", RUN_VALIDITY_FLAGS),
        ("ValidityNote", REVIEW_VALIDITY_FLAGS),
    ],
)
def test_the_openapi_lists_every_flag_and_its_source(schema: str, flags: dict[str, str]) -> None:
    prop = create_app().openapi()["components"]["schemas"][schema]["properties"]["flag"]
    assert prop["enum"] == list(flags)
    for flag, source in flags.items():
        assert f"{flag}: {source}" in prop["description"]


def test_the_scan_finds_flags_and_refuses_a_computed_one() -> None:
    src = (
        'def f(x, e):\n    out = [{"flag": "short_run", "message": ""}]\n'
        '    out.append(Note(flag="energy_" + e.status, message=""))\n    return Note(flag=v.flag)\n'
    )
    consts, others = emitted("backend/x.py", ast.parse(src))
    assert consts == ["short_run"]
    assert sorted(others) == ["'energy_' + e.status", "v.flag"]
    assert not set(others) <= set(PASS_THROUGH)
