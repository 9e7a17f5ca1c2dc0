"""SNIA PTS (Solid State Storage Performance Test Specification, Enterprise and Client v2.0.x)
as iowatt runs it: the steady-state rule, the tests' stimulus matrices, the engine jobs of each
phase and what makes a run *not PTS-compliant* (docs/pts.md, ADR 0046). Standard library only;
the agent (which runs the rounds and stops at steady state) and the server (which checks the
jobs against the host's rules, sizes the timeout and reports the window) use this one copy.

Where a value comes from, the specification is cited by section name. The clause numbers of
v2.0.2 could not be verified against the text here: the stored copies of v2.0.2, PTS Client
v1.0 and v1.2a and the 2.0 draft show only their first pages (docs/pts.md, "Looking for the
Client's numbers"), so no number is cited from them; the names below are the specification's
own headings ("Steady State", "Purge", "Preconditioning", the test sections "IOPS",
"Throughput", "Latency", "Write Saturation", "Host Idle Recovery"). Host Idle Recovery's clause
numbers are those of PTS Enterprise v1.1 (section 11: 11.2.3 its preconditioning, 11.2.4-11.2.8
the wait-state segments with their return to baseline) as the public implementations of the
test number them, not read in the text itself.

Which tests start with workload-independent preconditioning (WIPC, SEQ 128 KiB writes of twice
the capacity): IOPS, Throughput and Latency. Write Saturation and Host Idle Recovery do not: their
procedures go from the purge straight to the test's own stimulus (RND 4 KiB writes), since what
they observe starts at the purged, fresh-out-of-box state (Write Saturation: the transition from
FOB to steady state; Host Idle Recovery: its own RND 4 KiB preconditioning to steady state). The
sources: the tests' procedures as summarized from PTS Enterprise v1.1 (purge, then the RND 4 KiB
stimulus), SNIA's test service page ("WSAT ... PURGE, FOB, Workload Dependent Pre conditioning, to
Steady State") and CloudHarmony's PTS implementation, which skips WIPC for exactly these two
tests (docs/pts.md, ADR 0046).

When the rounds stop (`stop_rule`): at steady state or the round limit; Write Saturation, which has
no steady-state rule, when 4 x the tested region has been written or after its 24 hours (1,440
one-minute rounds), whichever comes first: the test's procedure as PTS Enterprise v1.1 is
summarized by the public sources (SNIA's PTS terms: "Duration of Test (T or GB): an optional
WSAT test time duration measured in Time or Total GiB Written"; TKperf's "while not written 4x
User Capacity or 24h ... no steady state detection is necessary"; a published review's "halted,
as specified in the SNIA SSS PTS, when 4 x the User Capacity had been written"). Its report
averages its last five rounds (`last_rounds`), never a steady-state window. One public
implementation (CloudHarmony's, as modified by Transcend) also stops WSAT at a five-round steady
state, and SNIA's test-service page says WSAT runs "to Steady State": the standard's text, not
at hand, would say whether that is an option; iowatt does not stop WSAT at steady state.

Enterprise or Client (`profile`, PROFILES): the specification (v2.0.x covers both) states some of
its parameters per profile. What the public sources at hand state, and iowatt does:
- Throughput: PTS Enterprise runs SEQ 128 KiB and 1024 KiB, PTS Client 1024 KiB only (SNIA's
  Throughput test page: "The PTS-E calls for both 128 KiB and 1024 KiB, while the PTS-C requires
  just 1024 KiB"); a Client run at 128 KiB says so in its deviations.
- The rest of what sets the Client apart the sources name but do not number: its ActiveRange and
  ActiveRange amount (SNIA's test terms define "PC AR", "AR amount" and "AR Segments", 2,048 of
  them for IOPS, Throughput and Latency, with no Client percentage or amount), its outstanding
  I/O (the same page defines "QD / TC" only), its workload-independent preconditioning (SNIA's
  IOPS test page: "depending on whether the test is PTS-E or PTS-C, this WIPC may include both
  sequential and random preconditioning", not how much), and whether Write Saturation and Host
  Idle Recovery are Client tests in this form (the test terms give WSAT's duration for "PTS
  Enterprise"; Host Idle Recovery's sources are PTS Enterprise v1.1's). iowatt does not invent
  them: a Client run uses the same region, threads, depth and preconditioning as an Enterprise
  run would, lists what is unstated (`client_unstated`) in its deviations and is never called
  Client-compliant (docs/pts.md, "Enterprise or Client").

Steady state (PTS "Key Test Process Concepts: Steady State"; the definitions "Steady State
Measurement Window", "Data Excursion", "Slope Excursion"):
- the tracking variable (one figure per round, e.g. RND 4 KiB 100 % W IOPS) is judged over a
  measurement window of WINDOW_ROUNDS (5) consecutive rounds;
- data excursion: max - min of the window's values is at most 20 % of the window's average;
- slope excursion: the least-squares line through the window's (round, value) points changes by
  at most 10 % of the average across the window (|slope| x (5 - 1));
- steady state is reached in round k when the window k-4..k is the first that meets both; at most
  MAX_ROUNDS (25) rounds are run. Not reached by then: the last five rounds are reported as the
  window, and the run says "not reached".
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal

from iowatt_workload.sizes import KiB, MiB, format_size

PTS_VERSION: Final = "SNIA SSS PTS v2.0.x"
WINDOW_ROUNDS: Final = 5
MAX_ROUNDS: Final = 25
DATA_EXCURSION_LIMIT: Final = 0.20  # of the window's average
SLOPE_EXCURSION_LIMIT: Final = 0.10  # of the window's average
# a limit is met when the excursion is at most limit x average, with this relative slack for the
# last bit of floating-point arithmetic (a window exactly at 20 % is inside, as "at most" reads)
_REL_EPS: Final = 1e-9


# --- the steady-state rule ------------------------------------------------------------------------


@dataclass(frozen=True)
class WindowFit:
    """One measurement window: its rounds (1-based, inclusive), the tracking variable's average,
    data excursion and least-squares line (value = intercept + slope x round), and whether each
    of the two limits holds."""

    first_round: int
    last_round: int
    values: tuple[float, ...]
    average: float
    data_excursion: float  # max - min
    slope: float  # per round
    intercept: float  # the line's value at round 0
    slope_excursion: float  # |slope| x (rounds in the window - 1): the line's change across it
    data_ok: bool
    slope_ok: bool

    @property
    def steady(self) -> bool:
        return self.data_ok and self.slope_ok

    @property
    def data_limit(self) -> float:
        """The largest data excursion allowed (20 % of the average)."""
        return DATA_EXCURSION_LIMIT * self.average

    @property
    def slope_limit(self) -> float:
        """The largest slope excursion allowed (10 % of the average)."""
        return SLOPE_EXCURSION_LIMIT * self.average

    def fitted(self, round_number: int) -> float:
        return self.intercept + self.slope * round_number

    def as_dict(self) -> dict[str, Any]:
        return {
            "first_round": self.first_round,
            "last_round": self.last_round,
            "values": list(self.values),
            "average": self.average,
            "data_excursion": self.data_excursion,
            "data_excursion_limit": self.data_limit,
            "slope": self.slope,
            "intercept": self.intercept,
            "slope_excursion": self.slope_excursion,
            "slope_excursion_limit": self.slope_limit,
            "data_ok": self.data_ok,
            "slope_ok": self.slope_ok,
        }


def _finite(values: Iterable[float]) -> tuple[float, ...]:
    out = tuple(float(v) for v in values)
    if any(not math.isfinite(v) or v < 0 for v in out):
        raise ValueError("a round's tracking value is a finite number of at least 0")
    return out


def window_fit(values: Sequence[float], first_round: int = 1) -> WindowFit:
    """The steady-state figures of one window of at least two rounds, the first numbered
    `first_round`. An average of 0 (nothing measured) meets neither limit."""
    ys = _finite(values)
    n = len(ys)
    if n < 2:
        raise ValueError("a window has at least two rounds")
    xs = [first_round + i for i in range(n)]
    x_mean = sum(xs) / n
    average = sum(ys) / n
    sxx = sum((x - x_mean) ** 2 for x in xs)
    sxy = sum((x - x_mean) * (y - average) for x, y in zip(xs, ys, strict=True))
    slope = sxy / sxx
    intercept = average - slope * x_mean
    data_excursion = max(ys) - min(ys)
    slope_excursion = abs(slope) * (n - 1)
    positive = average > 0
    return WindowFit(
        first_round=first_round,
        last_round=first_round + n - 1,
        values=ys,
        average=average,
        data_excursion=data_excursion,
        slope=slope,
        intercept=intercept,
        slope_excursion=slope_excursion,
        data_ok=positive and data_excursion <= DATA_EXCURSION_LIMIT * average * (1 + _REL_EPS),
        slope_ok=positive and slope_excursion <= SLOPE_EXCURSION_LIMIT * average * (1 + _REL_EPS),
    )


@dataclass(frozen=True)
class SteadyState:
    """The verdict over a run's rounds: reached (in round `round`, the window's last), or not
    (`window` is then the last five rounds judged, None with fewer than five)."""

    reached: bool
    round: int | None
    rounds: int  # rounds judged (at most max_rounds)
    window: WindowFit | None

    def as_dict(self) -> dict[str, Any]:
        return {
            "reached": self.reached,
            "round": self.round,
            "rounds": self.rounds,
            "window_rounds": WINDOW_ROUNDS,
            "max_rounds": MAX_ROUNDS,
            "window": self.window.as_dict() if self.window is not None else None,
        }


def steady_state(
    series: Sequence[float], *, window: int = WINDOW_ROUNDS, max_rounds: int = MAX_ROUNDS
) -> SteadyState:
    """The PTS steady-state verdict of a tracking variable's per-round values (round 1 first):
    the first window of `window` consecutive rounds, within the first `max_rounds`, that meets
    both limits. Called after every round, it says when to stop."""
    if window < 2 or max_rounds < window:
        raise ValueError("a window of at least two rounds, and at least one window of rounds")
    ys = _finite(series)[:max_rounds]
    last: WindowFit | None = None
    for end in range(window, len(ys) + 1):
        last = window_fit(ys[end - window : end], first_round=end - window + 1)
        if last.steady:
            return SteadyState(True, end, len(ys), last)
    return SteadyState(False, None, len(ys), last)


# --- the tests ----------------------------------------------------------------------------------

PtsTest = Literal["iops", "throughput", "latency", "wsat", "hir"]
PTS_TESTS: Final[tuple[PtsTest, ...]] = ("iops", "throughput", "latency", "wsat", "hir")
Purge = Literal["auto", "blkdiscard", "none"]
PURGES: Final[tuple[Purge, ...]] = ("auto", "blkdiscard", "none")
Profile = Literal["enterprise", "client"]
PROFILES: Final[tuple[Profile, ...]] = ("enterprise", "client")
Ioengine = Literal["libaio", "io_uring", "psync"]
IOENGINES: Final[tuple[Ioengine, ...]] = ("libaio", "io_uring", "psync")

# PTS "IOPS": random I/O, R/W mixes (read %) outer loop, block sizes inner, one round each
IOPS_BLOCK_SIZES: Final = (1024 * KiB, 128 * KiB, 64 * KiB, 32 * KiB, 16 * KiB, 8 * KiB, 4 * KiB, 512)
IOPS_MIXES: Final = (100, 95, 65, 50, 35, 5, 0)
# PTS "Throughput": sequential 100/0 and 0/100; 128 KiB and 1024 KiB are separate tests
# (Enterprise); PTS Client's is 1024 KiB only (SNIA's Throughput test page)
THROUGHPUT_BLOCK_SIZES: Final = (128 * KiB, 1024 * KiB)
CLIENT_THROUGHPUT_BLOCK_SIZES: Final = (1024 * KiB,)
THROUGHPUT_MIXES: Final = (100, 0)
# PTS "Latency": random, one thread at one outstanding I/O
LATENCY_BLOCK_SIZES: Final = (512, 4 * KiB, 8 * KiB)
LATENCY_MIXES: Final = (100, 65, 0)
LATENCY_PERCENTILES: Final = (50.0, 90.0, 99.0, 99.9, 99.99, 99.999)
# PTS "Write Saturation": RND 4 KiB 100 % W, continuously, in one-minute rounds (the test's
# per-minute figures), until 4 x the user capacity has been written or 24 hours have passed,
# whichever comes first (stop_rule); no steady-state rule decides when it stops (see below)
WSAT_BLOCK_SIZE: Final = 4 * KiB
WSAT_CAPACITY_MULTIPLE: Final = 4
WSAT_HOURS: Final = 24
# PTS "Host Idle Recovery" (PTS-E v1.1 section 11): preconditioned to steady state with RND 4 KiB
# writes (11.2.3, the rounds below), then for each wait state N in 1, 2, 3, 5, 10 a segment of
# HIR_BURSTS x (HIR_BURST_S of RND 4 KiB writes at full load, then N x HIR_BURST_S of host idle:
# 5, 10, 15, 25, 50 s) followed by its return to baseline, HIR_BURSTS x HIR_BURST_S of the same
# writes without idle (11.2.4-11.2.8); reported as IOPS per burst over time
HIR_BURST_S: Final = 5
HIR_BURST_S_MAX: Final = 60
HIR_BURSTS: Final = 360
HIR_WAIT_STATES: Final = (1, 2, 3, 5, 10)
# PTS "Preconditioning": workload-independent = 2 x the (tested) capacity of SEQ 128 KiB writes
WIPC_BLOCK_SIZE: Final = 128 * KiB
WIPC_LOOPS: Final = 2
ROUND_S: Final = 60  # PTS: one minute per element of the matrix per round
# Write Saturation's 24 hours as rounds: 1,440 one-minute rounds; a short trial's shorter rounds
# (scale) shorten it in proportion (1,440 rounds of 1 s: 24 minutes)
WSAT_MAX_ROUNDS: Final = WSAT_HOURS * 3600 // ROUND_S
ROUND_S_MAX: Final = 600
REGION_ALIGN: Final = 1 * MiB  # the tested region is whole MiB (1 MiB blocks fit)
THREADS_MAX: Final = 64
IODEPTH_MAX: Final = 256


@dataclass(frozen=True)
class Cell:
    """One element of a round: a block size and a R/W mix (read %)."""

    bs: int
    read_pct: int

    @property
    def name(self) -> str:
        return f"{format_size(self.bs)}-r{self.read_pct}"


@dataclass(frozen=True)
class TestDef:
    """A PTS test: its matrix in the specification's order, sequential or random, and its
    tracking variable (the cell and figure the steady-state rule follows)."""

    name: PtsTest
    block_sizes: tuple[int, ...]
    mixes: tuple[int, ...]
    sequential: bool
    tracking: Cell
    tracking_metric: Literal["iops", "bw_bytes", "lat_mean_ns"]
    steady_state: bool  # the rule decides when to stop (WSAT: 4 x the region or 24 h, stop_rule)
    single_io: bool = False  # one thread, one outstanding I/O (Latency)
    wipc: bool = True  # workload-independent preconditioning first (not WSAT, not HIR: see above)


TESTS: Final[dict[PtsTest, TestDef]] = {
    "iops": TestDef("iops", IOPS_BLOCK_SIZES, IOPS_MIXES, False, Cell(4 * KiB, 0), "iops", True),
    "throughput": TestDef(
        "throughput", (1024 * KiB,), THROUGHPUT_MIXES, True, Cell(1024 * KiB, 0), "bw_bytes", True
    ),
    "latency": TestDef(
        "latency", LATENCY_BLOCK_SIZES, LATENCY_MIXES, False, Cell(4 * KiB, 0), "lat_mean_ns", True, True
    ),
    "wsat": TestDef(
        "wsat", (WSAT_BLOCK_SIZE,), (0,), False, Cell(WSAT_BLOCK_SIZE, 0), "iops", False, wipc=False
    ),
    # its rounds are the preconditioning to steady state (11.2.3); the wait states follow
    "hir": TestDef("hir", (4 * KiB,), (0,), False, Cell(4 * KiB, 0), "iops", True, wipc=False),
}


def client_unstated(test: PtsTest) -> list[str]:
    """The PTS Client parameters of `test` the sources at hand name but do not state (the
    module's docstring): a Client run lists them and is never called Client-compliant."""
    out = ["its ActiveRange and ActiveRange amount"]
    if test != "latency":  # Latency: one thread at one outstanding I/O in both profiles
        out.append("its outstanding I/O (threads x queue depth)")
    if TESTS[test].wipc:
        out.append("its workload-independent preconditioning (sequential and random)")
    if test in ("wsat", "hir"):
        out.append("whether it has this test in this form (the sources describe PTS Enterprise's)")
    return out


def spec_name(profile: Profile) -> str:
    """The specification a run of `profile` follows, as its result names it."""
    return f"{PTS_VERSION} {'Client' if profile == 'client' else 'Enterprise'}"


@dataclass(frozen=True)
class PtsParams:
    """A PTS run as its lease job states it (`parse_job`). Defaults are the specification's."""

    test: PtsTest
    profile: Profile = "enterprise"
    purge: Purge = "auto"
    threads: int = 4
    iodepth: int = 32
    ioengine: Ioengine = "libaio"
    # the scale of a short trial (any value but the default makes the run not PTS-compliant)
    round_s: int = ROUND_S
    capacity_fraction: float = 1.0
    max_rounds: int = MAX_ROUNDS
    block_sizes: tuple[int, ...] | None = None  # None: the test's own (Throughput: 1024 KiB)
    mixes: tuple[int, ...] | None = None  # None: the test's own
    # Host Idle Recovery only: a burst's length, bursts per segment, the wait states (None: all)
    burst_s: int = HIR_BURST_S
    bursts: int = HIR_BURSTS
    wait_states: tuple[int, ...] | None = None

    @property
    def test_def(self) -> TestDef:
        return TESTS[self.test]

    @property
    def spec(self) -> str:
        """The specification the run follows (its profile's), as its result names it."""
        return spec_name(self.profile)

    @property
    def cells(self) -> list[Cell]:
        """The round's elements in the specification's order: mixes outer, block sizes inner."""
        t = self.test_def
        sizes = self.block_sizes or t.block_sizes
        mixes = self.mixes if self.mixes is not None else t.mixes
        return [Cell(bs, m) for m in mixes for bs in sizes]

    @property
    def tracking(self) -> Cell:
        """The tracking variable's cell (Throughput: the write of the test's block size)."""
        t = self.test_def
        if self.test == "throughput":
            return Cell((self.block_sizes or t.block_sizes)[0], 0)
        return t.tracking

    @property
    def thread_count(self) -> int:
        return 1 if self.test_def.single_io else self.threads

    @property
    def queue_depth(self) -> int:
        return 1 if self.test_def.single_io else self.iodepth

    @property
    def round_limit(self) -> int:
        return self.max_rounds if self.test != "wsat" else WSAT_MAX_ROUNDS

    @property
    def wait_state_list(self) -> tuple[int, ...]:
        """Host Idle Recovery's wait states in the specification's order (empty for other tests)."""
        if self.test != "hir":
            return ()
        return self.wait_states or HIR_WAIT_STATES

    def idle_s(self, wait_state: int) -> int:
        """The host idle after each burst of wait state N: N bursts' length (WS1 5 s ... WS10 50 s)."""
        return wait_state * self.burst_s

    def deviations(self) -> list[str]:
        """Why a run of these parameters is not PTS-compliant (empty: it follows the
        specification as far as iowatt implements it: docs/pts.md)."""
        t = self.test_def
        out = []
        if self.purge == "none":
            out.append("no purge before preconditioning")
        if self.round_s != ROUND_S:
            out.append(f"rounds of {self.round_s} s per element, not {ROUND_S} s")
        if self.capacity_fraction != 1.0:
            out.append(f"{self.capacity_fraction:g} of the capacity tested, not all of it")
        if self.max_rounds != MAX_ROUNDS and self.test != "wsat":
            out.append(f"at most {self.max_rounds} rounds, not {MAX_ROUNDS}")
        one_throughput_size = self.test == "throughput" and len(self.block_sizes or ()) == 1
        if (
            self.block_sizes is not None
            and sorted(self.block_sizes) != sorted(t.block_sizes)
            and not one_throughput_size
        ):
            out.append("a reduced block-size matrix")
        if self.mixes is not None and tuple(sorted(self.mixes)) != tuple(sorted(t.mixes)):
            out.append("a reduced R/W mix matrix")
        if self.tracking not in self.cells and t.steady_state:
            out.append("the tracking variable's element is not in the matrix")
        if self.profile == "client":
            if self.test == "throughput" and self.tracking.bs not in CLIENT_THROUGHPUT_BLOCK_SIZES:
                out.append("PTS Client's Throughput test is 1024 KiB only")
            out.append(
                "PTS Client: the sources at hand do not state "
                + "; ".join(client_unstated(self.test))
                + ": iowatt calls no Client run compliant"
            )
        if self.test == "hir":
            if self.burst_s != HIR_BURST_S:
                out.append(f"bursts of {self.burst_s} s, not {HIR_BURST_S} s")
            if self.bursts != HIR_BURSTS:
                out.append(f"{self.bursts} bursts per wait state, not {HIR_BURSTS}")
            if self.wait_states is not None and tuple(self.wait_states) != HIR_WAIT_STATES:
                out.append("a reduced set of wait states")
        return out

    def as_job(self) -> dict[str, Any]:
        """The lease job ({"mode": "pts", ...}): plain JSON values, parse_job reads it back."""
        job: dict[str, Any] = {
            "mode": "pts",
            "test": self.test,
            "profile": self.profile,
            "purge": self.purge,
            "threads": self.threads,
            "iodepth": self.iodepth,
            "ioengine": self.ioengine,
            "round_s": self.round_s,
            "capacity_fraction": self.capacity_fraction,
            "max_rounds": self.max_rounds,
        }
        if self.block_sizes is not None:
            job["block_sizes"] = list(self.block_sizes)
        if self.mixes is not None:
            job["mixes"] = list(self.mixes)
        if self.test == "hir":
            job["burst_s"] = self.burst_s
            job["bursts"] = self.bursts
            if self.wait_states is not None:
                job["wait_states"] = list(self.wait_states)
        return job


# the lease job's keys, each once (libs/policy's JobMode for "pts" lists the same)
JOB_KEYS: Final = (
    "test",
    "profile",
    "purge",
    "threads",
    "iodepth",
    "ioengine",
    "round_s",
    "capacity_fraction",
    "max_rounds",
    "block_sizes",
    "mixes",
    "burst_s",
    "bursts",
    "wait_states",
)
HIR_KEYS: Final = ("burst_s", "bursts", "wait_states")


class PtsJobError(ValueError):
    """A lease job that is not a PTS run: `key` is the job's key at fault."""

    def __init__(self, key: str, message: str) -> None:
        super().__init__(f"{key}: {message}")
        self.key, self.message = key, message


def _int(job: Mapping[str, Any], key: str, default: int, lo: int, hi: int) -> int:
    v: object = job.get(key, default)
    if isinstance(v, bool) or not isinstance(v, int) or not lo <= v <= hi:
        raise PtsJobError(key, f"a whole number from {lo} to {hi}, got {str(v)[:40]!r}")
    return v


def _choice(job: Mapping[str, Any], key: str, default: str | None, choices: tuple[str, ...]) -> str:
    v = job.get(key, default)
    if v not in choices:
        raise PtsJobError(key, f"one of {', '.join(choices)}, got {str(v)[:40]!r}")
    return str(v)


def _subset(job: Mapping[str, Any], key: str, allowed: tuple[int, ...]) -> tuple[int, ...] | None:
    v = job.get(key)
    if v is None:
        return None
    if not isinstance(v, list) or not v or len(v) > len(allowed):
        raise PtsJobError(key, f"a list of 1 to {len(allowed)} of {', '.join(map(str, allowed))}")
    if any(isinstance(x, bool) or x not in allowed for x in v) or len(set(v)) != len(v):
        raise PtsJobError(key, f"each of {', '.join(map(str, allowed))} at most once")
    return tuple(x for x in allowed if x in v)  # the specification's order, whatever was sent


def parse_job(job: Mapping[str, Any]) -> PtsParams:
    """The PTS run a lease job ({"mode": "pts", ...}) states; PtsJobError naming the key when it
    is not one (an unknown key, a value out of bounds, a matrix outside the test's)."""
    if job.get("mode") != "pts":
        raise PtsJobError("mode", "not a pts job")
    unknown = [k for k in job if k != "mode" and k not in JOB_KEYS]
    if unknown:
        raise PtsJobError(str(unknown[0])[:40], f"not part of a pts job ({', '.join(JOB_KEYS)})")
    test = _choice(job, "test", None, PTS_TESTS)
    t = TESTS[test]  # type: ignore[index]
    if test != "hir":
        stray = next((k for k in HIR_KEYS if k in job), None)
        if stray is not None:
            raise PtsJobError(stray, "only a Host Idle Recovery test (test hir) has bursts and wait states")
    fraction = job.get("capacity_fraction", 1.0)
    if (
        isinstance(fraction, bool)
        or not isinstance(fraction, int | float)
        or not math.isfinite(fraction)
        or not 0 < fraction <= 1
    ):
        raise PtsJobError("capacity_fraction", f"above 0 and at most 1, got {str(fraction)[:40]!r}")
    sizes = _subset(job, "block_sizes", THROUGHPUT_BLOCK_SIZES if test == "throughput" else t.block_sizes)
    if test == "throughput" and sizes is not None and len(sizes) != 1:
        raise PtsJobError("block_sizes", "a Throughput test runs one block size (128 KiB or 1024 KiB)")
    params = PtsParams(
        test=test,  # type: ignore[arg-type]
        profile=_choice(job, "profile", "enterprise", PROFILES),  # type: ignore[arg-type]
        purge=_choice(job, "purge", "auto", PURGES),  # type: ignore[arg-type]
        threads=_int(job, "threads", 4, 1, THREADS_MAX),
        iodepth=_int(job, "iodepth", 32, 1, IODEPTH_MAX),
        ioengine=_choice(job, "ioengine", "libaio", IOENGINES),  # type: ignore[arg-type]
        round_s=_int(job, "round_s", ROUND_S, 1, ROUND_S_MAX),
        capacity_fraction=float(fraction),
        max_rounds=_int(job, "max_rounds", MAX_ROUNDS, WINDOW_ROUNDS, MAX_ROUNDS),
        block_sizes=sizes,
        mixes=_subset(job, "mixes", t.mixes),
        burst_s=_int(job, "burst_s", HIR_BURST_S, 1, HIR_BURST_S_MAX),
        bursts=_int(job, "bursts", HIR_BURSTS, 1, HIR_BURSTS),
        wait_states=_subset(job, "wait_states", HIR_WAIT_STATES),
    )
    if params.ioengine == "psync" and params.queue_depth > 1:
        raise PtsJobError(
            "iodepth", "psync has one outstanding I/O per thread: iodepth 1, or libaio/io_uring"
        )
    return params


# --- the engine jobs ------------------------------------------------------------------------------


def region_bytes(capacity_bytes: int, fraction: float) -> int:
    """The tested region: the first `fraction` of the device, in whole MiB (ValueError when that
    is under 1 MiB)."""
    region = int(capacity_bytes * fraction) // REGION_ALIGN * REGION_ALIGN
    if region < REGION_ALIGN:
        raise ValueError(f"{fraction:g} of {capacity_bytes} bytes is under 1 MiB: nothing to test")
    return region


def _rw(cell: Cell, sequential: bool) -> dict[str, str]:
    if cell.read_pct == 100:
        return {"rw": "read" if sequential else "randread"}
    if cell.read_pct == 0:
        return {"rw": "write" if sequential else "randwrite"}
    return {"rw": "rw" if sequential else "randrw", "rwmixread": str(cell.read_pct)}


def wipc_job(p: PtsParams, region: int) -> dict[str, Any]:
    """Workload-independent preconditioning: the region written twice, SEQ 128 KiB, one thread
    at the run's queue depth (sequential writes from several threads would not be sequential)."""
    return {
        "global": {"direct": "1", "ioengine": p.ioengine, "iodepth": str(p.queue_depth)},
        "jobs": [
            {
                "name": "wipc",
                "rw": "write",
                "bs": str(WIPC_BLOCK_SIZE),
                "size": str(region),
                "loops": str(WIPC_LOOPS),
            }
        ],
    }


def _timed_global(p: PtsParams, region: int, seconds: int) -> dict[str, str]:
    """The [global] every PTS measurement shares: direct I/O at the run's engine, depth and
    threads, one report per job, `seconds` long over the region, no random map, a fresh seed."""
    return {
        "direct": "1",
        "ioengine": p.ioengine,
        "iodepth": str(p.queue_depth),
        "numjobs": str(p.thread_count),
        "group_reporting": "1",
        "time_based": "1",
        "runtime": str(seconds),
        "size": str(region),
        "norandommap": "1",
        "randrepeat": "0",
    }


def round_job(p: PtsParams, region: int) -> dict[str, Any]:
    """One round: every element of the matrix for round_s seconds, one after another (stonewall),
    each one reporting group (group_reporting over its threads)."""
    t = p.test_def
    glob = _timed_global(p, region, p.round_s)
    if t.single_io:
        glob["percentile_list"] = ":".join(f"{x:g}" for x in LATENCY_PERCENTILES)
    jobs = [{"name": c.name, "bs": str(c.bs), **_rw(c, t.sequential), "stonewall": "1"} for c in p.cells]
    return {"global": glob, "jobs": jobs}


def _stimulus_job(p: PtsParams, region: int, name: str, seconds: int) -> dict[str, Any]:
    """Host Idle Recovery's RND 4 KiB writes at the run's threads and depth for `seconds`."""
    return {
        "global": _timed_global(p, region, seconds),
        "jobs": [{"name": name, "bs": str(4 * KiB), "rw": "randwrite"}],
    }


def burst_job(p: PtsParams, region: int) -> dict[str, Any]:
    """One burst of a wait-state segment (PTS-E 11.2.4.1's "Access A"): burst_s of RND 4 KiB
    writes; the host idle ("Access B") follows, with no engine running."""
    return _stimulus_job(p, region, "burst", p.burst_s)


def baseline_job(p: PtsParams, region: int) -> dict[str, Any]:
    """A wait-state segment's return to baseline (11.2.4.2's "Access C"): bursts x burst_s of the
    same writes without idle, one engine run (its per-second series cut into bursts' lengths)."""
    return _stimulus_job(p, region, "baseline", p.bursts * p.burst_s)


def planned_phases(p: PtsParams, capacity_bytes: int) -> list[tuple[str, dict[str, Any]]]:
    """Every distinct engine job a run of `p` on a device of `capacity_bytes` runs, named by its
    phase (the host judges each as a block job): the workload-independent preconditioning (not
    WSAT, not HIR), the round, and Host Idle Recovery's burst and return to baseline."""
    region = region_bytes(capacity_bytes, p.capacity_fraction)
    out: list[tuple[str, dict[str, Any]]] = []
    if p.test_def.wipc:
        out.append(("preconditioning", wipc_job(p, region)))
    out.append(("round", round_job(p, region)))
    if p.test == "hir":
        out.append(("burst", burst_job(p, region)))
        out.append(("return to baseline", baseline_job(p, region)))
    return out


def planned_jobs(p: PtsParams, capacity_bytes: int) -> list[dict[str, Any]]:
    """The engine jobs of planned_phases, without their names."""
    return [job for _, job in planned_phases(p, capacity_bytes)]


def hir_seconds(p: PtsParams) -> int:
    """Host Idle Recovery's wait-state segments with their returns to baseline (0 for other
    tests): each wait state's bursts with their idle, then as many bursts without idle."""
    return sum(p.bursts * (2 * p.burst_s + p.idle_s(ws)) for ws in p.wait_state_list)


def hir_idle_seconds(p: PtsParams) -> int:
    """The host idle of a Host Idle Recovery run: no engine runs then (0 for other tests)."""
    return sum(p.bursts * p.idle_s(ws) for ws in p.wait_state_list)


def engine_runs_max(p: PtsParams) -> int:
    """The engine runs a run of `p` may take: the preconditioning (when the test has one), every
    round up to the limit, and Host Idle Recovery's bursts and returns to baseline."""
    hir = len(p.wait_state_list) * (p.bursts + 1)
    return (1 if p.test_def.wipc else 0) + p.round_limit + hir


def run_seconds_max(p: PtsParams) -> int:
    """The run's longest stimulus time: the round limit x the elements x round_s, and Host Idle
    Recovery's segments (hir_seconds)."""
    return p.round_limit * len(p.cells) * p.round_s + hir_seconds(p)


def tracking_value(p: PtsParams, cells: Sequence[Mapping[str, Any]]) -> float | None:
    """The tracking variable of one round from its elements' figures (`name`, `read_iops`,
    `write_iops`, `read_bw_bytes`, `write_bw_bytes`, `lat_mean_ns`), None when the element is
    missing."""
    want = p.tracking.name
    metric = p.test_def.tracking_metric
    for c in cells:
        if c.get("name") != want:
            continue
        if metric == "iops":
            return float(c.get("read_iops", 0.0)) + float(c.get("write_iops", 0.0))
        if metric == "bw_bytes":
            return float(c.get("read_bw_bytes", 0)) + float(c.get("write_bw_bytes", 0))
        v = c.get("lat_mean_ns")
        return float(v) if v is not None else None
    return None


# --- when the rounds stop -------------------------------------------------------------------------

StopRuleName = Literal["steady_state", "round_limit", "capacity", "time"]


@dataclass(frozen=True)
class Stop:
    """Why a run's rounds stopped after round `round`: steady state reached, or the round limit
    without it (IOPS, Throughput, Latency, Host Idle Recovery's preconditioning); Write
    Saturation: 4 x the tested region written (`capacity`) or its 24 hours (`time`: round_limit
    rounds of round_s, 24 h at the specification's one-minute rounds), whichever came first."""

    rule: StopRuleName
    round: int
    round_limit: int
    round_s: int
    bytes_written: int  # by the rounds
    bytes_limit: int | None  # Write Saturation: 4 x the region; None for the other tests

    def as_dict(self) -> dict[str, Any]:
        return {
            "rule": self.rule,
            "round": self.round,
            "round_limit": self.round_limit,
            "round_s": self.round_s,
            "bytes_written": self.bytes_written,
            "bytes_limit": self.bytes_limit,
        }


def stop_rule(p: PtsParams, *, rounds: int, bytes_written: int, region: int, steady: bool) -> Stop | None:
    """Whether a run stops after its round `rounds` (1-based), having written `bytes_written` in
    its rounds over a tested region of `region` bytes, `steady` the steady-state verdict so far
    (ignored by Write Saturation, which has no steady-state rule); None: run another round.
    Write Saturation's two limits met in the same round: `capacity` (it is the one the bytes
    show; the round count cannot say whether 24 hours came first within the round)."""
    if rounds < 1 or bytes_written < 0 or region < 1:
        raise ValueError("a round number of at least 1, bytes of at least 0 and a region of at least 1 byte")
    limit = p.round_limit
    if p.test == "wsat":
        cap = WSAT_CAPACITY_MULTIPLE * region
        if bytes_written >= cap:
            return Stop("capacity", rounds, limit, p.round_s, bytes_written, cap)
        if rounds >= limit:
            return Stop("time", rounds, limit, p.round_s, bytes_written, cap)
        return None
    if steady:
        return Stop("steady_state", rounds, limit, p.round_s, bytes_written, None)
    if rounds >= limit:
        return Stop("round_limit", rounds, limit, p.round_s, bytes_written, None)
    return None


def last_rounds(series: Sequence[float], n: int = WINDOW_ROUNDS) -> SteadyState:
    """Write Saturation's figures: no steady-state rule applies, so its report averages its last
    `n` rounds (fewer when fewer ran; no window under two rounds); `reached` is always False."""
    ys = _finite(series)
    k = min(n, len(ys))
    window = window_fit(ys[len(ys) - k :], first_round=len(ys) - k + 1) if k >= 2 else None
    return SteadyState(False, None, len(ys), window)
