"""libs/workload's one TPC-H bound (issue 15): the facts the server sizes a TPC-H run with and the
agent checks a lease against, from the spec's table sizes (clause 4.2.5) by hand."""

import json
from pathlib import Path
from typing import Any

import pytest
from iowatt_workload import tpch_facts, tpch_min_streams, tpch_raw_bytes
from iowatt_workload.tpch import DATABASE_FACTOR, WRITE_FACTOR

# the minimum-streams vectors the web UI's copy passes too (DbWorkload/dbWorkload.vectors.test.ts)
STREAMS: dict[str, Any] = json.loads(
    (Path(__file__).resolve().parents[2] / "libs" / "workload" / "testdata" / "tpch_streams.json").read_text()
)


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


@pytest.mark.parametrize("case", STREAMS["cases"], ids=lambda c: f"SF {c['scale_factor']:g}")
def test_minimum_streams_vectors(case: dict[str, Any]) -> None:
    assert tpch_min_streams(case["scale_factor"]) == case["streams"]


def test_the_vectors_reach_every_row_of_the_table() -> None:
    from iowatt_workload.tpch import MIN_STREAMS, MIN_STREAMS_BELOW

    factors = {c["scale_factor"] for c in STREAMS["cases"]}
    for sf, _streams in MIN_STREAMS:  # each row at its own SF and just below it
        assert sf in factors and any(sf - 1 <= f < sf for f in factors), sf
    assert {c["streams"] for c in STREAMS["cases"]} == {s for _, s in MIN_STREAMS} | {MIN_STREAMS_BELOW}


@pytest.mark.parametrize("sf", [0, -1, 1000.5, float("nan")])
def test_a_scale_factor_out_of_range_is_refused(sf: float) -> None:
    with pytest.raises(ValueError, match="scale factor"):
        tpch_facts(sf)


def test_the_agent_the_policy_and_the_server_use_the_librarys_tpch_values(tmp_path: Path) -> None:
    """One owner: the buffer pool the agent gives a DBMS when a run names none, DuckDB's memory
    limit, the minimum streams and the label, as the agent, libs/policy's memory bound and the
    server have them."""
    import inspect

    from iowatt_agent.tpch import bench, data, lease, steps
    from iowatt_policy import memory
    from iowatt_workload import (
        TPCH_DEFAULT_BUFFER_POOL_BYTES,
        TPCH_GENERATOR_MEMORY_LIMIT_BYTES,
        TPCH_LABEL,
    )

    from backend.workload.kinds.tpch import TPCH_DEFAULT_BUFFER_POOL, TpchSpec

    assert TPCH_DEFAULT_BUFFER_POOL_BYTES == 16 << 20 and TPCH_GENERATOR_MEMORY_LIMIT_BYTES == 1 << 30
    # the policy's bound of a run without a pool is the bound of one with the agent's default
    default = memory.tpch_memory("postgresql", None, 2)
    explicit = memory.tpch_memory("postgresql", TPCH_DEFAULT_BUFFER_POOL_BYTES, 2)
    assert default == explicit and default is not None
    assert (
        memory.TPCH_GENERATOR_BYTES
        == TPCH_GENERATOR_MEMORY_LIMIT_BYTES + memory.TPCH_GENERATOR_OVERHEAD_BYTES
    )
    assert inspect.signature(data.generate).parameters["memory_limit_bytes"].default is (
        TPCH_GENERATOR_MEMORY_LIMIT_BYTES
    )
    job = {"mode": "tpch", "dbms": "postgresql", "scale_factor": "10"}
    opts = lease.options_of(job, tmp_path)
    assert opts.buffer_pool_bytes == TPCH_DEFAULT_BUFFER_POOL_BYTES and opts.streams == tpch_min_streams(10)
    assert bench.parse_options(["--dbms", "mariadb", "--scale-factor", "30"], str(tmp_path)).streams == 4
    assert steps.TPCH_LABEL is lease.TPCH_LABEL is bench.TPCH_LABEL is TPCH_LABEL
    assert TPCH_DEFAULT_BUFFER_POOL is TPCH_DEFAULT_BUFFER_POOL_BYTES
    assert TpchSpec.model_fields["buffer_pool_bytes"].default == TPCH_DEFAULT_BUFFER_POOL_BYTES


BOUNDS: dict[str, Any] = json.loads(
    (Path(__file__).resolve().parents[2] / "libs" / "workload" / "testdata" / "tpch_bounds.json").read_text()
)


def test_the_library_holds_the_bounds_vectors() -> None:
    from iowatt_workload import (
        TPCH_BUFFER_POOL_BYTES_MAX,
        TPCH_BUFFER_POOL_BYTES_MIN,
        TPCH_QUERY_TIMEOUT_S_MAX,
        TPCH_QUERY_TIMEOUT_S_MIN,
        TPCH_SCALE_FACTOR_MAX,
        TPCH_STREAMS_MAX,
    )

    assert BOUNDS["buffer_pool_bytes_max"] == TPCH_BUFFER_POOL_BYTES_MAX
    assert BOUNDS["query_timeout_s_min"] == TPCH_QUERY_TIMEOUT_S_MIN
    assert BOUNDS["query_timeout_s_max"] == TPCH_QUERY_TIMEOUT_S_MAX
    assert BOUNDS["scale_factor_max"] == TPCH_SCALE_FACTOR_MAX
    assert BOUNDS["streams_max"] == TPCH_STREAMS_MAX
    assert BOUNDS["buffer_pool_bytes_min"] == TPCH_BUFFER_POOL_BYTES_MIN
    tpch_facts(BOUNDS["scale_factor_max"])  # the bound has a value for every scale factor a run may ask


def _edges() -> list[tuple[str, str, bool]]:
    """(field, value, allowed): each bound itself and one step past it."""
    sf, streams, pool = BOUNDS["scale_factor_max"], BOUNDS["streams_max"], BOUNDS["buffer_pool_bytes_min"]
    return [
        ("scale_factor", f"{sf:g}", True),
        ("scale_factor", f"{sf + 0.5:g}", False),
        ("streams", str(streams), True),
        ("streams", str(streams + 1), False),
        ("buffer_pool_bytes", str(pool), True),
        ("buffer_pool_bytes", str(pool - 1), False),
        ("buffer_pool_bytes", str(BOUNDS["buffer_pool_bytes_max"]), True),
        ("buffer_pool_bytes", str(BOUNDS["buffer_pool_bytes_max"] + 1), False),
        ("query_timeout_s", f"{BOUNDS['query_timeout_s_min']:g}", True),
        ("query_timeout_s", "0.009", False),
        ("query_timeout_s", f"{BOUNDS['query_timeout_s_max']:g}", True),
        ("query_timeout_s", f"{BOUNDS['query_timeout_s_max'] + 1:g}", False),
    ]


@pytest.mark.parametrize(("field", "value", "allowed"), _edges())
def test_the_server_the_policy_and_the_bench_agree_on_the_tpch_bounds(
    field: str, value: str, allowed: bool, tmp_path: Path
) -> None:
    """One owner: a value the server accepts, the host's policy accepts and bench runs, and one
    past the bound all three refuse (a 422, option.not_allowed, exit 2), naming the field."""
    from iowatt_agent.tpch.bench import TpchUsage, parse_options
    from iowatt_policy import ReportedPolicy, Target, check_run
    from pydantic import ValidationError

    from backend.workload.kinds.tpch import TpchSpec

    spec = {
        "dbms": "postgresql",
        "scale_factor": 1,
        field: float(value) if field in ("scale_factor", "query_timeout_s") else int(value),
    }
    try:
        TpchSpec.model_validate(spec)
        server_ok = True
    except ValidationError as exc:
        server_ok = False
        assert [e["loc"] for e in exc.errors()] == [(field,)]
    job = {"mode": "tpch", "dbms": "postgresql", "scale_factor": "1", field: value}
    reported = ReportedPolicy(targets=(Target.directory(str(tmp_path)),), allowed_dbms=("postgresql",))
    found = check_run(
        reported, target_path=str(tmp_path), engine_job=job, meter=None, destructive=False, file_facts=None
    )
    assert all(v.field == f"workload.tpch.{field}" for v in found), found
    flag = {
        "scale_factor": "--scale-factor",
        "streams": "--streams",
        "buffer_pool_bytes": "--buffer-pool",
        "query_timeout_s": "--query-timeout",
    }[field]
    args = ["--dbms", "postgresql", "--scale-factor", "1", flag, value]
    try:
        parse_options(args, str(tmp_path))
        bench_ok = True
    except TpchUsage as exc:
        bench_ok = False
        assert flag in str(exc)
    assert (server_ok, not found, bench_ok) == (allowed, allowed, allowed)
