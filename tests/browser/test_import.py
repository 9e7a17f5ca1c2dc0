"""The Import page in Chromium at 1440x900 (issue 26): fio files previewed with their units before
anything is stored, a pasted text refused naming the format and line, a label fixed, the files
stored, and the run page and runs list labelling the runs "imported from fio"
(tests/browser/import.mjs)."""

from pathlib import Path

import pytest

from tests.browser.test_browser import _needs, _node, _shot
from tests.stack import Stack

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("stack-b")]

SAMPLES = Path(__file__).parents[1] / "imports" / "samples" / "fio"


def test_import_page_in_chromium(live: Stack, tmp_path: Path) -> None:
    _needs()
    files = [SAMPLES / "fio-3.33.json", SAMPLES / "fio-2.2.10.normal"]
    report = _node("tests/browser/import.mjs", live, tmp_path, IOWATT_IMPORT_FILES=",".join(map(str, files)))
    assert "the runs list labels imported runs" in report
    assert "a share link of the comparison labels both runs too" in report
    shots = ("I-import-empty", "I-import-preview", "I-import-error", "I-import-stored", "I-import-run")
    for shot in (*shots, "I-import-shared-390", "I-import-views"):
        _shot(report, tmp_path, shot)
