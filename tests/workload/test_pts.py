"""libs/workload's SNIA PTS rules (iowatt_workload.pts; docs/pts.md): the steady-state rule
against hand-made round series (libs/workload/testdata/pts_steady.json: steady, drifting, noisy,
reached in round k, the limits' edges), the tests' matrices in the specification's order, the
lease job's reading, what makes a run not PTS-compliant, and the engine jobs of each phase
(workload-independent preconditioning for IOPS, Throughput and Latency only; Host Idle
Recovery's bursts and returns to baseline)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from iowatt_workload.pts import (
    HIR_WAIT_STATES,
    IOPS_BLOCK_SIZES,
    IOPS_MIXES,
    JOB_KEYS,
    MAX_ROUNDS,
    WSAT_MAX_ROUNDS,
    PtsJobError,
    baseline_job,
    burst_job,
    client_unstated,
    engine_runs_max,
    hir_idle_seconds,
    hir_seconds,
    last_rounds,
    parse_job,
    planned_jobs,
    planned_phases,
    region_bytes,
    round_job,
    run_seconds_max,
    steady_state,
    stop_rule,
    tracking_value,
    window_fit,
    wipc_job,
)

VECTORS: dict[str, Any] = json.loads(
    (Path(__file__).resolve().parents[2] / "libs" / "workload" / "testdata" / "pts_steady.json").read_text()
)


@pytest.mark.parametrize("v", VECTORS["series"], ids=lambda v: v["name"])
def test_steady_state_vectors(v: dict[str, Any]) -> None:
    verdict = steady_state(v["values"])
    assert verdict.reached is v["reached"]
    assert verdict.round == v["round"]
    assert verdict.rounds == v["rounds"]
    want = v["window"]
    if want is None:
        assert verdict.window is None
        return
    w = verdict.window
    assert w is not None
    assert (w.first_round, w.last_round) == (want["first_round"], want["last_round"])
    for key in ("average", "data_excursion", "slope", "slope_excursion"):
        assert getattr(w, key) == pytest.approx(want[key], rel=1e-9, abs=1e-9), key
    assert (w.data_ok, w.slope_ok) == (want["data_ok"], want["slope_ok"])
    assert w.steady is (w.data_ok and w.slope_ok)


def test_the_rule_is_applied_round_by_round_as_the_agent_calls_it() -> None:
    """Called after each round, the verdict turns steady in the round the whole series says, and
    never earlier: the agent stops there."""
    values = next(v for v in VECTORS["series"] if v["name"].startswith("reached in round 11"))["values"]
    first = next(k for k in range(1, len(values) + 1) if steady_state(values[:k]).reached)
    assert first == 11 == steady_state(values).round


def test_the_fit_is_least_squares_across_the_window() -> None:
    w = window_fit([10.0, 12.0, 11.0, 13.0, 14.0], first_round=7)
    assert w.slope == pytest.approx(0.9)
    assert w.fitted(9) == pytest.approx(w.average)  # the line passes through the means
    assert w.slope_excursion == pytest.approx(abs(w.fitted(11) - w.fitted(7)))
    assert w.data_limit == pytest.approx(0.2 * 12.0) and w.slope_limit == pytest.approx(0.1 * 12.0)


def _stops(test: str, written_per_round: list[int], region: int, steady_from: int | None = None, **job: Any):
    """The agent's loop over hand-made rounds: each round's bytes written, steady from a round on;
    the stop_rule's answer in the round it first stops (None: not within the rounds given)."""
    p = parse_job({"mode": "pts", "test": test, **job})
    total = 0
    for k, nbytes in enumerate(written_per_round, start=1):
        total += nbytes
        stop = stop_rule(p, rounds=k, bytes_written=total, region=region, steady=k == steady_from)
        if stop is not None:
            return stop
    return None


def test_write_saturation_stops_at_4x_the_region_or_24_hours_whichever_first() -> None:
    """PTS Write Saturation: RND 4 KiB writes in one-minute rounds until 4 x the user capacity is
    written or 24 hours pass, whichever comes first; no steady-state rule stops it."""
    region = 100 << 20
    # fresh out of the box, then the write cliff: 4 x 100 MiB reached in round 9
    fob = [80 << 20] * 3 + [30 << 20] * 10
    stop = _stops("wsat", fob, region, steady_from=5)  # a steady window does not stop it
    assert stop is not None and (stop.rule, stop.round) == ("capacity", 9)
    assert (stop.bytes_written, stop.bytes_limit) == (3 * (80 << 20) + 6 * (30 << 20), 4 * region)
    # exactly 4 x the region is enough ("until 4 x is written")
    stop = _stops("wsat", [region] * 4, region)
    assert stop is not None and (stop.rule, stop.round) == ("capacity", 4)
    # a slow device: 24 hours of one-minute rounds (1,440) come first
    assert WSAT_MAX_ROUNDS == 1440 == 24 * 60
    slow = [100 << 10] * WSAT_MAX_ROUNDS  # 100 KiB a minute: 140 MiB in 24 h
    assert _stops("wsat", slow[:-1], region) is None
    stop = _stops("wsat", slow, region)
    assert stop is not None and (stop.rule, stop.round, stop.round_limit) == ("time", 1440, 1440)
    assert stop.round_s == 60 and stop.round * stop.round_s == 24 * 3600
    # both limits in the same round: the bytes say which (the round count cannot)
    stop = _stops("wsat", [*slow[:-1], 4 * region], region)
    assert stop is not None and (stop.rule, stop.round) == ("capacity", 1440)
    # a short trial's 1-second rounds shorten the 24 hours to 1,440 s, and say it is not compliant
    p = parse_job({"mode": "pts", "test": "wsat", "round_s": 1})
    stop = _stops("wsat", slow, region, round_s=1)
    assert stop is not None and (stop.rule, stop.round * stop.round_s) == ("time", 1440)
    assert run_seconds_max(p) == 1440 and "rounds of 1 s per element, not 60 s" in p.deviations()
    assert run_seconds_max(parse_job({"mode": "pts", "test": "wsat"})) == 24 * 3600


def test_the_other_tests_stop_at_steady_state_or_their_round_limit() -> None:
    region = 100 << 20
    big = [10 * region] * 25  # bytes never stop them
    stop = _stops("iops", big, region, steady_from=7)
    assert stop is not None and (stop.rule, stop.round, stop.bytes_limit) == ("steady_state", 7, None)
    stop = _stops("latency", big, region)
    assert stop is not None and (stop.rule, stop.round, stop.round_limit) == ("round_limit", 25, MAX_ROUNDS)
    stop = _stops("hir", big[:6], region, max_rounds=6)
    assert stop is not None and (stop.rule, stop.round) == ("round_limit", 6)
    with pytest.raises(ValueError):
        stop_rule(
            parse_job({"mode": "pts", "test": "wsat"}), rounds=0, bytes_written=0, region=1, steady=False
        )


def test_write_saturations_figures_are_its_last_five_rounds_never_a_steady_state() -> None:
    """No steady-state window applies to Write Saturation: its report averages its last five
    rounds (after the write cliff), not the first flat five (fresh out of the box)."""
    fob_then_cliff = [100.0] * 5 + [40.0, 20.0, 10.0, 10.0, 11.0, 10.0, 10.0]
    assert steady_state(fob_then_cliff).window.first_round == 1  # type: ignore[union-attr]
    judged = last_rounds(fob_then_cliff)
    assert judged.reached is False and judged.round is None and judged.rounds == 12
    assert judged.window is not None and (judged.window.first_round, judged.window.last_round) == (8, 12)
    assert judged.window.average == pytest.approx(10.2)
    short = last_rounds([5.0, 6.0])
    assert short.window is not None and (short.window.first_round, short.window.last_round) == (1, 2)
    assert last_rounds([5.0]).window is None and last_rounds([]).window is None


@pytest.mark.parametrize("bad", [[float("nan")] * 5, [-1.0] * 5, [float("inf")] * 5])
def test_a_round_value_is_finite_and_not_negative(bad: list[float]) -> None:
    with pytest.raises(ValueError):
        steady_state(bad)


def test_iops_matrix_in_the_specifications_order() -> None:
    p = parse_job({"mode": "pts", "test": "iops"})
    cells = p.cells
    assert len(cells) == len(IOPS_BLOCK_SIZES) * len(IOPS_MIXES) == 56
    assert [c.read_pct for c in cells[:8]] == [100] * 8  # mixes outer, block sizes inner
    assert [c.bs for c in cells[:8]] == [1048576, 131072, 65536, 32768, 16384, 8192, 4096, 512]
    assert p.tracking.name == "4k-r0" and p.tracking in cells
    assert p.deviations() == []
    assert (p.thread_count, p.queue_depth, p.round_limit) == (4, 32, MAX_ROUNDS)


def test_latency_is_one_thread_at_one_outstanding_io_with_five_nines() -> None:
    p = parse_job({"mode": "pts", "test": "latency", "threads": 8, "iodepth": 64})
    assert (p.thread_count, p.queue_depth) == (1, 1)
    assert [c.name for c in p.cells] == [
        "512-r100", "4k-r100", "8k-r100", "512-r65", "4k-r65", "8k-r65", "512-r0", "4k-r0", "8k-r0",
    ]  # fmt: skip
    job = round_job(p, 64 << 20)
    assert job["global"]["numjobs"] == "1" and job["global"]["iodepth"] == "1"
    assert job["global"]["percentile_list"].endswith(":99.999")
    assert p.test_def.tracking_metric == "lat_mean_ns"


def test_throughput_runs_one_block_size_sequentially() -> None:
    p = parse_job({"mode": "pts", "test": "throughput", "block_sizes": [131072]})
    assert [c.name for c in p.cells] == ["128k-r100", "128k-r0"]
    assert p.tracking.name == "128k-r0" and p.deviations() == []
    assert [j["rw"] for j in round_job(p, 64 << 20)["jobs"]] == ["read", "write"]
    with pytest.raises(PtsJobError, match="one block size"):
        parse_job({"mode": "pts", "test": "throughput", "block_sizes": [131072, 1048576]})


def test_a_client_run_follows_what_the_sources_state_and_is_never_called_compliant() -> None:
    """PTS Client (profile client): the same jobs as Enterprise's (the sources at hand do not state
    the Client's ActiveRange, outstanding I/O or preconditioning: iowatt invents none), its
    Throughput 1024 KiB only (SNIA's Throughput test page), and every Client run lists what is
    unstated, so none is compliant; the lease job carries the profile and reads back."""
    enterprise = parse_job({"mode": "pts", "test": "iops"})
    client = parse_job({"mode": "pts", "test": "iops", "profile": "client"})
    assert enterprise.profile == "enterprise" and enterprise.deviations() == []
    assert enterprise.spec == "SNIA SSS PTS v2.0.x Enterprise" and client.spec == "SNIA SSS PTS v2.0.x Client"
    assert planned_jobs(client, 64 << 20) == planned_jobs(enterprise, 64 << 20)
    (why,) = client.deviations()
    assert why.startswith("PTS Client: the sources at hand do not state its ActiveRange")
    assert "outstanding I/O" in why and "calls no Client run compliant" in why
    assert parse_job(client.as_job()) == client and client.as_job()["profile"] == "client"
    assert "outstanding I/O (threads x queue depth)" not in client_unstated("latency")  # T1/Q1 in both
    assert any("whether it has this test" in x for x in client_unstated("wsat"))
    assert not any("preconditioning" in x for x in client_unstated("hir"))  # no WIPC in HIR
    tp = {"mode": "pts", "test": "throughput", "block_sizes": [131072]}
    assert parse_job(tp).deviations() == []  # PTS Enterprise has a 128 KiB Throughput test
    assert (
        parse_job({**tp, "profile": "client"}).deviations()[0]
        == "PTS Client's Throughput test is 1024 KiB only"
    )
    with pytest.raises(PtsJobError) as exc:
        parse_job({"mode": "pts", "test": "iops", "profile": "consumer"})
    assert exc.value.key == "profile"


def test_a_short_trial_says_why_it_is_not_compliant() -> None:
    p = parse_job(
        {
            "mode": "pts",
            "test": "iops",
            "round_s": 1,
            "capacity_fraction": 0.5,
            "block_sizes": [4096, 131072],
            "mixes": [0, 100],
            "purge": "none",
        }
    )
    reasons = " | ".join(p.deviations())
    for words in ("no purge", "rounds of 1 s", "0.5 of the capacity", "block-size", "R/W mix"):
        assert words in reasons
    assert [c.name for c in p.cells] == ["128k-r100", "4k-r100", "128k-r0", "4k-r0"]  # the spec's order
    assert parse_job(p.as_job()) == p  # the lease job reads back


@pytest.mark.parametrize(
    ("job", "key"),
    [
        ({"test": "fio"}, "test"),
        ({"test": "iops", "threads": 0}, "threads"),
        ({"test": "iops", "threads": True}, "threads"),
        ({"test": "iops", "round_s": 601}, "round_s"),
        ({"test": "iops", "capacity_fraction": 0}, "capacity_fraction"),
        ({"test": "iops", "capacity_fraction": float("nan")}, "capacity_fraction"),
        ({"test": "iops", "max_rounds": 26}, "max_rounds"),
        ({"test": "iops", "block_sizes": [3000]}, "block_sizes"),
        ({"test": "iops", "block_sizes": [4096, 4096]}, "block_sizes"),
        ({"test": "iops", "mixes": [70]}, "mixes"),
        ({"test": "iops", "purge": "rm -rf /"}, "purge"),
        ({"test": "iops", "ioengine": "psync"}, "iodepth"),
        ({"test": "iops", "filename": "/etc/passwd"}, "filename"),
    ],
)
def test_a_job_that_is_not_a_pts_run_is_refused_naming_its_key(job: dict[str, Any], key: str) -> None:
    with pytest.raises(PtsJobError) as exc:
        parse_job({"mode": "pts", **job})
    assert exc.value.key == key


def test_the_engine_jobs_of_each_phase() -> None:
    p = parse_job({"mode": "pts", "test": "iops", "mixes": [0], "block_sizes": [4096], "round_s": 2})
    region = region_bytes(64 << 20, 1.0)
    wipc, rnd = planned_jobs(p, 64 << 20)
    assert wipc == wipc_job(p, region) and rnd == round_job(p, region)
    assert planned_phases(p, 64 << 20) == [("preconditioning", wipc), ("round", rnd)]
    [w] = wipc["jobs"]
    assert (w["rw"], w["bs"], w["size"], w["loops"]) == ("write", "131072", str(64 << 20), "2")
    g = rnd["global"]
    assert (g["time_based"], g["runtime"], g["size"], g["direct"]) == ("1", "2", str(64 << 20), "1")
    assert [(j["name"], j["rw"], j["stonewall"]) for j in rnd["jobs"]] == [("4k-r0", "randwrite", "1")]
    assert "filename" not in g and "destructive" not in g  # the agent's options, added by the agent
    assert region_bytes(100 << 20, 0.5) == 50 << 20
    assert region_bytes((10 << 20) + 12345, 1.0) == 10 << 20  # whole MiB
    with pytest.raises(ValueError):
        region_bytes(64 << 20, 0.01)


def test_only_iops_throughput_and_latency_start_with_workload_independent_preconditioning() -> None:
    """Write Saturation observes the purged (fresh-out-of-box) device's way to steady state, and
    Host Idle Recovery preconditions with its own RND 4 KiB writes: neither runs the SEQ 128 KiB
    preconditioning of twice the region (docs/pts.md, ADR 0046)."""
    size = 64 << 20
    for test, phases in (
        ("iops", ["preconditioning", "round"]),
        ("throughput", ["preconditioning", "round"]),
        ("latency", ["preconditioning", "round"]),
        ("wsat", ["round"]),
        ("hir", ["round", "burst", "return to baseline"]),
    ):
        p = parse_job({"mode": "pts", "test": test})
        assert [name for name, _ in planned_phases(p, size)] == phases, test
        assert p.test_def.wipc is (test in ("iops", "throughput", "latency"))
        assert engine_runs_max(p) == (1 if p.test_def.wipc else 0) + p.round_limit + (
            len(HIR_WAIT_STATES) * 361 if test == "hir" else 0
        )


def test_host_idle_recovery_at_the_specifications_parameters() -> None:
    """PTS-E v1.1 section 11: RND 4 KiB writes to steady state (the rounds, judged by the rule),
    then wait states 1, 2, 3, 5, 10: 360 bursts of 5 s each followed by 5, 10, 15, 25, 50 s of
    host idle, each wait state followed by its return to baseline, 360 x 5 s without idle."""
    p = parse_job({"mode": "pts", "test": "hir"})
    assert [c.name for c in p.cells] == ["4k-r0"] and p.tracking.name == "4k-r0"
    assert p.test_def.steady_state and p.round_limit == MAX_ROUNDS and p.deviations() == []
    assert p.wait_state_list == (1, 2, 3, 5, 10)
    assert [p.idle_s(ws) for ws in p.wait_state_list] == [5, 10, 15, 25, 50]
    assert hir_idle_seconds(p) == 360 * (5 + 10 + 15 + 25 + 50)  # 10 h 30 min of host idle
    assert hir_seconds(p) == hir_idle_seconds(p) + 5 * 2 * 360 * 5  # + bursts and baselines: 15.5 h
    region = region_bytes(1 << 30, 1.0)
    burst, base = burst_job(p, region), baseline_job(p, region)
    for job, runtime in ((burst, "5"), (base, "1800")):
        g = job["global"]
        assert (g["runtime"], g["time_based"], g["numjobs"], g["iodepth"]) == (runtime, "1", "4", "32")
        assert [(j["rw"], j["bs"]) for j in job["jobs"]] == [("randwrite", "4096")]
    assert parse_job(p.as_job()) == p


def test_a_short_host_idle_recovery_trial_and_its_keys() -> None:
    p = parse_job({"mode": "pts", "test": "hir", "burst_s": 1, "bursts": 2, "wait_states": [10, 1]})
    assert p.wait_state_list == (1, 10)  # the specification's order, whatever was sent
    assert p.deviations() == [
        "bursts of 1 s, not 5 s",
        "2 bursts per wait state, not 360",
        "a reduced set of wait states",
    ]
    assert hir_seconds(p) == 2 * (1 + 1 + 1) + 2 * (1 + 10 + 1)
    assert parse_job(p.as_job()) == p
    for job, key in (
        ({"test": "iops", "bursts": 3}, "bursts"),  # bursts and wait states are HIR's alone
        ({"test": "wsat", "wait_states": [1]}, "wait_states"),
        ({"test": "hir", "wait_states": [4]}, "wait_states"),
        ({"test": "hir", "burst_s": 0}, "burst_s"),
        ({"test": "hir", "bursts": 361}, "bursts"),
    ):
        with pytest.raises(PtsJobError) as exc:
            parse_job({"mode": "pts", **job})
        assert exc.value.key == key


def test_mixed_elements_and_the_tracking_value() -> None:
    p = parse_job({"mode": "pts", "test": "iops", "block_sizes": [4096], "mixes": [65, 0]})
    jobs = round_job(p, 1 << 20)["jobs"]
    assert jobs[0]["rw"] == "randrw" and jobs[0]["rwmixread"] == "65"
    cells = [
        {"name": "4k-r65", "read_iops": 100.0, "write_iops": 50.0},
        {"name": "4k-r0", "read_iops": 0.0, "write_iops": 80.0},
    ]
    assert tracking_value(p, cells) == 80.0
    assert tracking_value(p, cells[:1]) is None


# --- fuzzing: the lease job is outside text (a server's), read by the agent and libs/policy ----------

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)
SMALL = st.sampled_from(
    [1, 5, 25, 512, 4096, 131072, 1048576, 0, 100, 65, 0.5, 1.0, "auto", "iops", "client", "enterprise"]
)


@given(
    st.dictionaries(
        st.sampled_from([*JOB_KEYS, "filename", "destructive"]),
        JSON | SMALL | st.lists(SMALL, max_size=9),
        max_size=8,
    )
)
@settings(max_examples=100, deadline=None)
def test_any_lease_job_reads_as_a_pts_run_or_is_refused_naming_its_key(job: dict[str, Any]) -> None:
    try:
        p = parse_job({**job, "mode": "pts"})
    except PtsJobError as exc:
        assert exc.key in (*JOB_KEYS, "filename", "destructive")
        return
    assert parse_job(p.as_job()) == p
    for engine_job in planned_jobs(p, 1 << 30):  # plain strings, no path or agent-only option
        for section in (engine_job["global"], *engine_job["jobs"]):
            assert all(isinstance(v, str) for v in section.values())
            assert not {"filename", "directory", "destructive", "beneath"} & set(section)


PLAN: dict[str, Any] = json.loads(
    (Path(__file__).resolve().parents[2] / "libs" / "workload" / "testdata" / "pts_plan.json").read_text()
)


@pytest.mark.parametrize("v", PLAN["cases"], ids=lambda v: v["name"])
def test_plan_vectors_are_the_servers_reading_of_a_run(v: dict[str, Any]) -> None:
    """What the New run form shows before queueing (frontend/src/lib/pts.ts reads the same
    vectors) is what the server makes of the run: its scale applied by the kind, then libs/workload."""
    from iowatt_workload.pts import run_seconds_max

    from backend.workload.schemas import WorkloadSpec

    spec = WorkloadSpec.model_validate({"kind": "pts", "pts": v["pts"]})
    if v["scale"] is not None:
        spec = spec.scaled(v["scale"])
    assert spec.pts is not None
    p = spec.pts.params()
    try:
        region: int | None = region_bytes(v["size_bytes"], p.capacity_fraction)
    except ValueError:
        region = None
    got = {
        "round_s": p.round_s,
        "capacity_fraction": p.capacity_fraction,
        "elements": len(p.cells),
        "round_limit": p.round_limit,
        "region_bytes": region,
        "run_seconds_max": run_seconds_max(p),
        "deviations": p.deviations(),
        "wipc": p.test_def.wipc,
    }
    assert got == v["expect"]
