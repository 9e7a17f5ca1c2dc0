"""libs/workload's one TPC-H bound (issue 15): the facts the server sizes a TPC-H run with and the
agent checks a lease against, from the spec's table sizes (clause 4.2.5) by hand."""

import pytest
from iowatt_workload import tpch_facts, tpch_min_streams, tpch_raw_bytes
from iowatt_workload.tpch import DATABASE_FACTOR, WRITE_FACTOR


def test_raw_bytes_are_the_spec_table_sizes() -> None:
    # SF 1: 10,000×159 + 200,000×155 + 800,000×144 + 150,000×179 + 1,500,000×104 + 6,001,215×112
    #       + 25×128 + 5×124 bytes
    by_hand = 1_590_000 + 31_000_000 + 115_200_000 + 26_850_000 + 156_000_000 + 672_136_080 + 3200 + 620
    assert tpch_raw_bytes(1) == by_hand
    # NATION and REGION do not scale
    assert tpch_raw_bytes(10) == 10 * (by_hand - 3820) + 3820


def test_facts_have_the_engines_bounds_shape() -> None:
    f = tpch_facts(1)
    assert f["mode"] == "tpch" and f["runtime_s_max"] is None
    assert f["dataset_bytes"] == int(tpch_raw_bytes(1) * DATABASE_FACTOR)
    assert f["bytes_written_max"] == int(tpch_raw_bytes(1) * WRITE_FACTOR) > f["dataset_bytes"]
    assert f["threads"] == 3  # the spec's minimum 2 streams below SF 10, plus the refresh stream
    assert tpch_facts(10)["threads"] == 4 and tpch_facts(1, 7)["threads"] == 8


@pytest.mark.parametrize(
    ("sf", "streams"), [(0.01, 2), (1, 2), (5, 2), (10, 3), (30, 4), (99.9, 4), (100, 5)]
)
def test_minimum_streams_follow_clause_5_3_4(sf: float, streams: int) -> None:
    assert tpch_min_streams(sf) == streams


@pytest.mark.parametrize("sf", [0, -1, 1000.5, float("nan")])
def test_a_scale_factor_out_of_range_is_refused(sf: float) -> None:
    with pytest.raises(ValueError, match="scale factor"):
        tpch_facts(sf)
