"""DuckDB's generator side of the TPC-H-derived workload (ADR 0023): the exported files, the
refresh sets in dbgen's unused keys, reference answers that the refresh sets really change, and
the answer comparison that decides `answer_ok`."""

from __future__ import annotations

import datetime as dt
import decimal
import importlib.util
from pathlib import Path

import pytest
from iowatt_agent.tpch.data import answers_match, generate, generator_threads, parse_answer
from iowatt_agent.tpch.workload import dialect_query

needs_duckdb = pytest.mark.skipif(
    importlib.util.find_spec("duckdb") is None,
    reason="the [tpch] extra is not installed (make deps installs it)",
)


def test_answers_match_numbers_to_the_cent_strings_trimmed_nulls_and_ties():
    want = parse_answer("a|b|c\nA|1.50|1995-03-05\nN|2.25|1995-03-06\n")
    got = [("A ", decimal.Decimal("1.5"), dt.date(1995, 3, 5)), ("N", 2.2500001, dt.date(1995, 3, 6))]
    assert answers_match(got, want)
    assert not answers_match([("A", 1.52, dt.date(1995, 3, 5)), got[1]], want)  # two cents off
    assert not answers_match(got[:1], want)  # a row missing
    assert not answers_match([("A", 1.5, dt.date(1995, 3, 7)), got[1]], want)  # another date
    assert answers_match(list(reversed(got)), want)  # the same rows, ties in another order
    assert answers_match([(None,)], parse_answer("avg_yearly\n\n"))  # Q17 at SF 0.01: NULL
    assert not answers_match([(0.0,)], parse_answer("avg_yearly\n\n"))


def test_mariadb_q13_has_no_derived_column_list():
    q13 = (
        "SELECT c_count FROM (SELECT c_custkey, count(o_orderkey)\n FROM customer GROUP BY c_custkey) "
        "AS c_orders (c_custkey,\n c_count)"
    )
    out = dialect_query("mariadb", 13, q13)
    assert "count(o_orderkey) AS c_count" in out and out.rstrip().endswith("AS c_orders")
    assert dialect_query("postgresql", 13, q13) == q13


@needs_duckdb
def test_generate_exports_tables_refresh_sets_and_references(tmp_path: Path):
    gen = generate(tmp_path / "it's gen", 0.01, refresh_sets=3)  # a quote in the path: still SQL
    lines = {t: len(p.read_text().splitlines()) for t, p in gen.files.items()}
    assert lines["region"] == 5 and lines["nation"] == 25 and lines["orders"] == 15000
    assert lines["customer"] == 1500 and lines["supplier"] == 100 and lines["part"] == 2000
    # 3 sets of SF x 1500 = 15 orders, keys shifted into the gap dbgen leaves (key % 32 in 8..15)
    rf_orders = [line.split("|") for line in gen.files["rf_orders"].read_text().splitlines()]
    assert len(rf_orders) == 45 and gen.refresh_orders == 15
    keys = [int(r[0]) for r in rf_orders]
    assert all(8 <= k % 32 < 16 for k in keys) and len(set(keys)) == 45
    assert sorted({int(r[-1]) for r in rf_orders}) == [0, 1, 2]
    loaded = {int(line.split("|")[0]) for line in gen.files["orders"].read_text().splitlines()}
    assert not loaded & set(keys)
    rf_lines = [line.split("|") for line in gen.files["rf_lineitem"].read_text().splitlines()]
    assert {int(r[0]) for r in rf_lines} == set(keys) and len(rf_lines) >= 45
    # references: the loaded state equals tpch_answers(), and a refresh set changes most answers
    assert gen.reference_checked is True
    assert len(gen.references) == 4 and set(gen.queries) == set(range(1, 23))
    changed = [q for q in gen.queries if not answers_match(gen.references[1][q], gen.references[0][q])]
    assert {1, 13} <= set(changed), changed  # Q1 sums every lineitem, Q13 counts orders per customer
    # only the files to load are left: DuckDB ran in memory, its spill directory is gone
    assert sorted(p.name for p in (tmp_path / "it's gen").iterdir()) == sorted(f"{t}.tbl" for t in gen.files)


def test_small_scale_factors_generate_with_one_thread_larger_ones_with_two():
    assert [generator_threads(sf) for sf in (0.0001, 0.01, 0.05, 0.099)] == [1, 1, 1, 1]
    assert [generator_threads(sf) for sf in (0.1, 1, 100)] == [2, 2, 2]


@needs_duckdb
def test_generate_refuses_more_refresh_sets_than_orders(tmp_path: Path):
    with pytest.raises(ValueError, match="refresh sets"):
        generate(tmp_path / "gen", 0.0001, refresh_sets=200)
