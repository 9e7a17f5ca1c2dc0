"""The TPC-H specification's facts this workload uses (clause numbers as in revisions 2.17 to 3.0):
the metrics of 5.4, the refresh set size of 2.5.2, and the stream orders. Pure functions, tested
against hand computations. The minimum number of query streams (5.3.4) and the label every
output carries are libs/workload's (`tpch_min_streams`, `TPCH_LABEL`): the server and the web UI
use the same ones."""

from __future__ import annotations

import math
import random
from collections.abc import Sequence

QUERIES = tuple(range(1, 23))


def refresh_orders(scale_factor: float) -> int:
    """2.5.2: each RF1 inserts (and each RF2 deletes) SF × 1500 orders; at least one."""
    return max(1, round(scale_factor * 1500))


def power_intervals(query_s: Sequence[float]) -> list[float]:
    """5.4.1.4: when the longest query interval of the power test is more than 1000 times the
    shortest, every interval below max/1000 counts as max/1000."""
    floor = max(query_s) / 1000.0
    return [max(q, floor) for q in query_s]


def power_at_size(scale_factor: float, query_s: Sequence[float], refresh_s: Sequence[float]) -> float:
    """5.4.1.1: Power@Size = 3600 × SF / (Π QI(i,0) × Π RI(j,0))^(1/24), the 22 query intervals
    (after 5.4.1.4's floor) and the two refresh intervals of the power test, in seconds."""
    if len(query_s) != 22 or len(refresh_s) != 2:
        raise ValueError("the power test has 22 query and 2 refresh intervals")
    intervals = [*power_intervals(query_s), *refresh_s]
    if min(intervals) <= 0:
        raise ValueError("timing intervals must be positive")
    log_mean = sum(math.log(t) for t in intervals) / len(intervals)
    return 3600.0 * scale_factor / math.exp(log_mean)


def throughput_at_size(scale_factor: float, streams: int, throughput_s: float) -> float:
    """5.4.2.1: Throughput@Size = (S × 22 × 3600 / Ts) × SF, Ts the throughput test's elapsed
    seconds (first query stream's start to the last stream's, refresh stream's included, end)."""
    if throughput_s <= 0 or streams < 1:
        raise ValueError("the throughput test needs S >= 1 and Ts > 0")
    return streams * 22 * 3600.0 / throughput_s * scale_factor


def qphh_at_size(power: float, throughput: float) -> float:
    """5.4.3.1: QphH@Size = √(Power@Size × Throughput@Size)."""
    return math.sqrt(power * throughput)


def stream_order(stream: int) -> list[int]:
    """The order of the 22 queries in a stream: Q1..Q22 in the power test (stream 0, in number
    order by choice), a permutation seeded by the stream number in throughput stream s >= 1 (the
    spec's Appendix A table is not reproduced: the same idea, different permutations)."""
    order = list(QUERIES)
    if stream > 0:
        random.Random(f"iowatt-tpch-stream-{stream}").shuffle(order)
    return order
