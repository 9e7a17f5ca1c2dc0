"""The short-run flag's words (issue 25): a count and three names, never every job of a 110-job
run; a preset short by design says its design in those words; a shortened run does not claim it."""

from types import SimpleNamespace
from typing import Any

from backend.compare.validity import short_message


def _run(preset: str | None) -> Any:
    return SimpleNamespace(preset=preset)


def test_a_long_list_is_counted_not_spelled() -> None:
    names = [f"job-{i}" for i in range(110)]
    msg = short_message(names, 110, _run(None), None)
    assert msg.startswith("under 10 s: 110 of 110 jobs (job-0, job-1, job-2, +107 more)")
    assert "job-3" not in msg


def test_a_preset_short_by_design_says_so() -> None:
    msg = short_message(["SEQ1M_Q8T1-read.p0"], 40, _run("crystaldiskmark"), None)
    assert msg.startswith("short by design: CrystalDiskMark's own 5 s per test (1 of 40 jobs under 10 s")
    # shortened (a quick look at a tenth): not the preset's design, the plain rule
    assert short_message(["a"], 1, _run("crystaldiskmark"), 0.1).startswith("under 10 s: the job (a)")
    assert short_message(["a"], 1, _run("seq-rand-table"), None).startswith("under 10 s")
