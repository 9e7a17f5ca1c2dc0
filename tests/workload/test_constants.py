"""libs/workload's constants that the web UI repeats, against the vectors its tests read too
(libs/workload/testdata/constants.json; frontend/src/lib/workload.constants.test.ts), and the
server's names for them, which must be the library's, not copies."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from iowatt_workload import DEFAULT_IDLE_S, MIN_RUNTIME_S, TIMER_SLACK_S, TPCH_LABEL

CONSTANTS: dict[str, Any] = json.loads(
    (Path(__file__).resolve().parents[2] / "libs" / "workload" / "testdata" / "constants.json").read_text()
)


def test_the_library_holds_the_vectors_values() -> None:
    assert CONSTANTS["DEFAULT_IDLE_S"] == DEFAULT_IDLE_S
    assert CONSTANTS["TPCH_LABEL"] == TPCH_LABEL
    assert CONSTANTS["MIN_RUNTIME_S"] == MIN_RUNTIME_S
    assert CONSTANTS["TIMER_SLACK_S"] == TIMER_SLACK_S


def test_the_server_says_the_librarys_label() -> None:
    from backend.compare.service import TPCH_TOTALS
    from backend.result.schemas import TpchDoc
    from backend.views.builders import VIEWS
    from backend.workload.schemas import TPCH_LABEL as WORKLOAD_LABEL

    assert WORKLOAD_LABEL is TPCH_LABEL
    assert TpchDoc.model_fields["label"].default is TPCH_LABEL
    assert f"TPC-H ({TPCH_LABEL})" == TPCH_TOTALS
    assert VIEWS["tpch-qphh"][0].title.endswith(f"({TPCH_LABEL})")


def test_the_server_flags_short_runs_by_the_librarys_rule() -> None:
    from backend.compare import validity

    assert validity.MIN_RUNTIME_S is MIN_RUNTIME_S
    assert validity.TIMER_SLACK_S is TIMER_SLACK_S
