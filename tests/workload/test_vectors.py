"""iowatt_workload against the shared vectors in libs/workload/testdata/ (the frontend's
frontend/src/lib/workload.vectors.test.ts reads the same files), plus what only Python has."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from iowatt_workload import (
    DEFAULT_IDLE_S,
    PassResult,
    best_of_passes,
    format_size,
    parse_size,
    pass_name,
    pass_of,
    workload_fingerprint,
)

TESTDATA = Path(__file__).resolve().parents[2] / "libs" / "workload" / "testdata"


def _vectors(name: str) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads((TESTDATA / name).read_text())
    return doc


SIZES = _vectors("sizes.json")
BEST_OF = _vectors("best_of.json")
IDENTITY = _vectors("identity.json")


@pytest.mark.parametrize("v", SIZES["parse"], ids=lambda v: f"{v['text']!r}/{v.get('kb_base', 1024)}")
def test_parse_size_vectors(v: dict[str, Any]) -> None:
    kb_base = v.get("kb_base", 1024)
    if v.get("error"):
        with pytest.raises(ValueError):
            parse_size(v["text"], kb_base)
    else:
        assert parse_size(v["text"], kb_base) == int(v["bytes"])


@pytest.mark.parametrize("v", SIZES["format"], ids=lambda v: v["text"])
def test_format_size_vectors_read_back(v: dict[str, Any]) -> None:
    assert format_size(int(v["bytes"])) == v["text"]
    assert parse_size(v["text"]) == int(v["bytes"])


@pytest.mark.parametrize("bad", [-1, 2**64, 1.5, True, "4k"])
def test_format_size_refuses_what_is_not_a_size(bad: Any) -> None:
    with pytest.raises(ValueError):
        format_size(bad)


def test_policy_reads_sizes_with_the_one_parser() -> None:
    import iowatt_policy
    import iowatt_policy.fio

    assert iowatt_policy.parse_size is parse_size
    assert iowatt_policy.fio.parse_size is parse_size


@pytest.mark.parametrize("case", BEST_OF["cases"], ids=lambda c: c["name"][:60])
def test_best_of_passes_vectors(case: dict[str, Any]) -> None:
    results = [PassResult(**job) for job in case["jobs"]]
    got = best_of_passes(results, passes=case["passes"], discard=case["discard"])
    want = case["expected"]
    assert [b.test for b in got] == [w["test"] for w in want]
    for b, w in zip(got, want, strict=True):
        assert b.direction == w["direction"]
        assert (b.passes, b.discarded) == (w["passes"], w["discarded"])
        assert list(b.bw_bytes) == w["bw_bytes"] and list(b.iops) == w["iops"]
        assert b.best_job == w["best_job"] and b.bw_bytes[b.best_index] == b.best_bw_bytes
        assert (b.best_bw_bytes, b.best_iops) == (w["best_bw_bytes"], w["best_iops"])
        assert (b.median_bw_bytes, b.median_iops) == (w["median_bw_bytes"], w["median_iops"])
        assert b.spread_pct == pytest.approx(w["spread_pct"])


def test_pass_names_round_trip() -> None:
    assert pass_of(pass_name("SEQ1M_Q8T1-read", 12)) == ("SEQ1M_Q8T1-read", 12)
    assert pass_of("SEQ1M_Q8T1-read") is None
    assert pass_of(".p1") is None  # a test needs a name


@pytest.mark.parametrize("case", IDENTITY["cases"], ids=lambda c: c["name"][:60])
def test_identity_vectors(case: dict[str, Any]) -> None:
    a, b = workload_fingerprint(case["a"]), workload_fingerprint(case["b"])
    assert (a == b) is case["same"]
    assert a == case["a_fingerprint"]  # identities already issued stay valid


def test_host_facts_are_part_of_the_identity_when_given() -> None:
    jobs = IDENTITY["cases"][0]["a"]
    plain = workload_fingerprint(jobs)
    on_ext4 = workload_fingerprint(jobs, {"kernel": "6.1", "fstype": "ext4"})
    assert plain != on_ext4
    assert on_ext4 != workload_fingerprint(jobs, {"kernel": "6.1", "fstype": "xfs"})


def test_default_idle_time_is_the_agents_and_the_servers() -> None:
    from iowatt_agent import power

    from backend.agent import service as agent_service

    assert power.DEFAULT_IDLE_S == DEFAULT_IDLE_S == 30.0
    assert agent_service.DEFAULT_IDLE_S == DEFAULT_IDLE_S
