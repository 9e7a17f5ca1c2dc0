"""A group run and a multi-target run on the real stack across two "hosts", each an agent in a
network namespace of its own (tests/netns.py): it reaches the API only over its veth link, through
a proxy that adds the fabric's delay (DELAY_S each way), and both hosts mount one store over sshfs
from an sshd on their links (the NAS case). Both prepare, meet at the start barrier and start at
the instant the server set; each member's clock offset, its bound (the delayed round trip) and its
start skew are recorded; the first host runs on two targets at once (the store and a directory of
its own: a multi-target member), and the results are combined per member and for the group
(bytes and I/Os summed, histograms merged) with the energy of the two hosts' meters summed.
Size-bound jobs: 4 MiB of 4 KiB writes per target.

The two hosts are started once for the module's tests (an agent's start is most of a test's CPU
here) and removed after them, checked to leave nothing behind.
"""

import os
from collections.abc import Iterator
from typing import Any

import pytest

from tests import netns
from tests.faults.proxy import Conn
from tests.stack import Stack
from tests.waiting import wait_until

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("stack-a")]

MiB = 1024 * 1024
# the fabric's one-way delay: a 3 ms round trip, a campus network's (there is no netem here: the
# hosts' proxies hold each chunk this long)
DELAY_S = 0.0015


def _meter() -> tuple[str, str]:
    """Each host's meter, by the same name (the run names it): an estimate of this machine's disk
    (the targets are on tmpfs and sshfs, which the estimate meter cannot see through)."""
    devices = sorted(os.listdir("/sys/block"))
    disks = [d for d in devices if not d.startswith(("loop", "zram", "ram"))] or devices
    return "group-est", f"estimate:5,9.5?device={disks[0]}"


METER = _meter()


@pytest.fixture(scope="module")
def rig(shared_stack: Stack) -> Iterator[netns.Network]:
    """Two hosts on the stack, each with the store mounted, a directory of its own and the meter."""
    if os.geteuid() != 0:  # where root is, a missing tool fails the set-up (make deps installs them)
        pytest.skip("the hosts' network namespaces need root")
    with netns.hosts(shared_stack, 2, delay_s=DELAY_S, store=True, meter=METER) as net:
        # the state the module's tests start from (and are put back to) has the hosts' agents ...
        shared_stack.put_back_to = None
        yield net
    shared_stack.put_back_to = None  # ... and the next module's has them no more (deleted)


def _ended(api: Any, gid: str) -> Any:
    def ended() -> dict[str, Any] | None:
        g: dict[str, Any] = api.get(f"/run-groups/{gid}").json()
        done = g["status"] in ("succeeded", "failed", "cancelled")
        energy = g["combined"] is not None and g["combined"]["energy_complete"]
        return g if done and (energy or g["status"] != "succeeded") else None

    return ended


def test_two_hosts_on_one_store_start_at_one_instant_and_their_results_and_energy_add_up(
    live: Stack, rig: netns.Network
) -> None:
    a, b = rig.hosts
    assert a.store is not None and b.store is not None and rig.export is not None
    job = {"name": "randwrite-4k", "rw": "randwrite", "bs_bytes": 4096, "size_bytes": 4 * MiB}
    body: dict[str, Any] = {
        "members": [  # the first host on two targets at once: the store and a directory of its own
            {
                "agent_id": a.agent_id,
                "targets": [{"target_path": str(a.store)}, {"target_path": str(a.local)}],
            },
            {"agent_id": b.agent_id, "target_path": str(b.store)},
        ],
        "workload": {"jobs": [job]},
        "name": "e2e group",
        "meter": METER[0],
        "idle_s": 0.5,
        "shared_store": f"sshfs:{rig.export}",
    }
    with live.api() as api:
        r = api.post("/run-groups", json=body)
        assert r.status_code == 201, r.text
        gid = r.json()["id"]
        group = wait_until(
            _ended(api, gid), timeout=120, interval=0.5, message=lambda: f"the group ends: {live.tail()}"
        )
        ids = {m["agent_id"]: m["run_id"] for m in group["members"]}
        multi = api.get(f"/runs/{ids[a.agent_id]}").json()
        other = api.get(f"/runs/{ids[b.agent_id]}").json()
        doc = api.get(f"/runs/{ids[a.agent_id]}/result").json()["engine_result"]
        systems = [api.get(f"/runs/{ids[h.agent_id]}/system").json() for h in (a, b)]
    assert group["status"] == "succeeded", (group["stop_reason"], [m["error"] for m in group["members"]])
    assert group["start_at"] is not None
    for m in group["members"]:
        assert m["status"] == "succeeded" and m["ready_at"] is not None
        # the clocks measured over the heartbeat through the delayed link: the bound shows the delay
        assert m["clock_round_trip_ns"] is not None and m["clock_round_trip_ns"] >= 2 * DELAY_S * 1e9, m
        assert m["start_skew_ns"] is not None  # recorded; how small it is, docs/benchmarks.md says
        bound = group["start_tolerance_ns"] + m["clock_round_trip_ns"] // 2
        assert m["missed_start"] == (abs(m["start_skew_ns"]) > bound)
    assert group["max_start_skew_ns"] == max(abs(m["start_skew_ns"]) for m in group["members"])
    # unsynchronized: a member missed the instant, or its offset is not known within the tolerance
    tol = group["start_tolerance_ns"]
    unbounded = [m["clock_round_trip_ns"] // 2 > tol for m in group["members"]]
    assert group["unsynchronized"] == any(m["missed_start"] for m in group["members"]) or any(unbounded)
    # both hosts read this machine's one clock: the skew without the measured offset is the true
    # one here, and the offset itself is the measurement's error (docs/benchmarks.md)
    print(
        "group start skew recorded (ns):",
        [m["start_skew_ns"] for m in group["members"]],
        "on the shared clock (ns):",
        [m["start_skew_ns"] - m["clock_offset_ns"] for m in group["members"]],
        "round trips (ns):",
        [m["clock_round_trip_ns"] for m in group["members"]],
    )
    # per member: the multi-target member's figure is its two targets' together
    by_agent = {m["agent_id"]: m for m in group["members"]}
    assert by_agent[a.agent_id]["jobs"][0]["write"]["total_ios"] == 2048
    assert by_agent[b.agent_id]["jobs"][0]["write"]["total_ios"] == 1024
    combined = group["combined"]
    assert combined["members"] == 2
    assert combined["jobs"][0]["write"]["total_ios"] == 3072
    assert combined["jobs"][0]["write"]["io_bytes"] == 3 * 4 * MiB
    assert combined["latency"] == "merged"  # the agents upload json+: the bins merge
    # the group's rate over its longest member's runtime (fio's aggregate): at least that member's,
    # at most the members' summed (with the whole-millisecond rounding the multi-target check below
    # explains); percentiles from the members' merged histograms lie between theirs
    sides = [by_agent[h.agent_id]["jobs"][0] for h in (a, b)]
    group_write = combined["jobs"][0]["write"]
    slowest = max(sides, key=lambda j: j["runtime_ns"])
    ms = max(1, slowest["runtime_ns"] // 1_000_000)
    summed_iops = sum(j["write"]["iops"] for j in sides)
    assert slowest["write"]["iops"] * 0.99 <= group_write["iops"] <= summed_iops * 1.01 * (ms + 1) / ms
    p99s = [j["write"]["clat_p99_ns"] for j in sides]
    assert min(p99s) <= group_write["clat_p99_ns"] <= max(p99s)
    # energy and power: each host's meter, summed over the members
    energies = [m["energy_j"] for m in group["members"]]
    assert all(e is not None and e > 0 for e in energies)
    assert combined["energy_j"] == pytest.approx(sum(energies))
    powers = [run["energy"]["load_w_mean"] for run in (multi, other)]
    assert all(w is not None and w > 0 for w in powers), powers
    assert combined["load_w_mean"] == pytest.approx(sum(powers))
    assert multi["group"]["group_id"] == group["id"] and multi["group"]["members"] == 2
    # the NAS case: one store, each host's run on it over the network
    assert group["shared_store"] == f"sshfs:{rig.export}"
    assert [sys["fstype"] for sys in systems] == ["fuse.sshfs", "fuse.sshfs"], systems

    # the multi-target member: each target's result kept, and the combined figure beside them
    assert [t["target_path"] for t in multi["targets"]] == [str(a.store), str(a.local)]
    assert multi["target_path"] == str(a.store)
    per_target = [t["jobs"][0]["write"] for t in multi["targets"]]
    assert [w["total_ios"] for w in per_target] == [1024, 1024]
    assert all(t["engine_exit_code"] == 0 for t in multi["targets"])
    both = multi["jobs"][0]["write"]
    assert both["total_ios"] == 2048 and both["io_bytes"] == 2 * 4 * MiB
    # rates over the longest target's runtime (fio's group aggregate): at most the targets' rates
    # summed, at least the rate of the target that ran longest (never the faster one's: a target
    # that ends in 1.5 ms beside one of 12 ms is faster than the two together)
    summed = sum(w["bw_bytes"] for w in per_target)
    longest = max(multi["targets"], key=lambda t: t["jobs"][0]["runtime_ns"])["jobs"][0]
    assert multi["jobs"][0]["runtime_ns"] == longest["runtime_ns"]
    # (the combined rate divides by whole milliseconds, as fio's per-direction runtime: up to one
    # millisecond short of the longest target's runtime)
    ms = max(1, longest["runtime_ns"] // 1_000_000)
    assert longest["write"]["bw_bytes"] * 0.99 <= both["bw_bytes"] <= summed * 1.01 * (ms + 1) / ms
    assert multi["combined"]["targets"] == 2 and multi["combined"]["latency"] == "merged"
    assert both["clat_p50_ns"] <= both["clat_p99_ns"] <= both["clat_max_ns"]
    assert min(w["clat_p99_ns"] for w in per_target) <= both["clat_p99_ns"]
    assert both["clat_p99_ns"] <= max(w["clat_p99_ns"] for w in per_target)
    assert doc["iowatt"]["combined"]["targets"] == 2
    assert not any(f.startswith("iowatt-") for d in (rig.export, a.local) for f in os.listdir(d))  # removed


def test_a_member_cut_off_at_the_barrier_stops_the_group_before_anything_starts(
    live: Stack, rig: netns.Network
) -> None:
    """The second host's network is cut when it reports ready (ADR 0038's fault case): the first
    member waits at the barrier until the prepare timeout, then the group stops; nothing started,
    no result, both members cancelled once the cut member is reachable again."""
    a, b = rig.hosts
    cut = {"done": False}

    def cut_at_ready(direction: str, chunk: bytes, conn: Conn) -> None:
        if direction == "request" and b"/ready" in chunk and not cut["done"]:
            cut["done"] = True  # once: after restore() the member is heard again
            b.proxy.cut()

    b.proxy.hook = cut_at_ready
    try:
        job = {"name": "randwrite-4k", "rw": "randwrite", "bs_bytes": 4096, "size_bytes": 4 * MiB}
        body = {
            "members": [
                {"agent_id": a.agent_id, "target_path": str(a.local)},
                {"agent_id": b.agent_id, "target_path": str(b.local)},
            ],
            "workload": {"jobs": [job]},
            "name": "e2e group cut",
            "idle_s": 0,
            "prepare_timeout_s": 3,
        }
        with live.api() as api:
            r = api.post("/run-groups", json=body)
            assert r.status_code == 201, r.text
            gid = r.json()["id"]

            def member_stopped() -> dict[str, Any] | None:
                # and the cut done: a second host slower than the 3 s timeout reports ready after
                # the first member stopped, and a cut after restore() would never be undone
                if not cut["done"]:
                    return None
                g: dict[str, Any] = api.get(f"/run-groups/{gid}").json()
                ours = next(m for m in g["members"] if m["agent_id"] == a.agent_id)
                return g if ours["status"] == "cancelled" else None

            wait_until(member_stopped, timeout=60, interval=0.3, message=lambda: f"a stops: {live.tail()}")
            b.proxy.restore()  # the cut member asks again and is told the group stopped

            def ended() -> dict[str, Any] | None:
                g: dict[str, Any] = api.get(f"/run-groups/{gid}").json()
                return g if all(m["status"] == "cancelled" for m in g["members"]) else None

            group = wait_until(ended, timeout=60, interval=0.3, message=lambda: f"b stops: {live.tail()}")
    finally:
        b.proxy.hook = None
        b.proxy.restore()
    assert group["status"] == "failed" and group["start_at"] is None
    member = next(m for m in group["members"] if m["agent_id"] == b.agent_id)
    assert "not ready within 3 s" in group["stop_reason"] and member["agent_name"] in group["stop_reason"]
    assert all("the group stopped" in m["error"] for m in group["members"])
    assert group["combined"] is None and all(m["jobs"] == [] for m in group["members"])
    assert not any(f.startswith("iowatt-") for d in (a.local, b.local) for f in os.listdir(d))
