"""A group run on the real stack across two "hosts": the stack's agent and a second agent process
with a state of its own, in a network namespace of its own joined to this one by a veth pair (it
reaches the API only through a proxy listening on the veth's address, as a measured host reaches
the server over its network; no port is opened on it). Both prepare, meet at the start barrier
and start at the instant the server set; each member's clock offset, its bound and its start skew
are recorded, the results combined (bytes and I/Os summed) and the energy of the two hosts'
meters summed. The two targets are one store where sshfs and openssh-server are installed (a
directory exported by sshd on a private port and mounted with sshfs in the second host's
namespace: the NAS case), else two directories. Size-bound jobs: 4 MiB of 4 KiB writes per member.

Where a namespace cannot be made (no root, no `ip`), the second agent runs in this namespace
behind the same proxy: the protocol is the same, only the network path is shorter.
"""

import contextlib
import os
import shlex
import shutil
import signal
import socket
import subprocess
import tempfile
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.faults.proxy import Conn, Hook, Proxy
from tests.services import free_port
from tests.stack import BIN, ENGINE, Stack, agent_command, enrollment_token
from tests.waiting import wait_until

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("stack-a")]

MiB = 1024 * 1024


def _meter() -> tuple[str, str]:
    """Each host's meter, by the same name (the run names it): an estimate of this machine's disk
    (the targets are on tmpfs, which the estimate meter cannot see through)."""
    devices = sorted(os.listdir("/sys/block"))
    disks = [d for d in devices if not d.startswith(("loop", "zram", "ram"))] or devices
    return "group-est", f"estimate:5,9.5?device={disks[0]}"


METER = _meter()


@contextlib.contextmanager
def network_namespace(upstream_port: int, hook: Hook | None = None) -> Iterator[tuple[str | None, Proxy]]:
    """(namespace, proxy): a namespace with a veth pair to this one and a proxy to the API on the
    veth's address here; (None, a loopback proxy) where a namespace cannot be made."""
    n = os.getpid() % 250 + 1
    ns, here, there = f"iowatt-group-{os.getpid()}", f"iwg{n}a", f"iwg{n}b"
    addr = f"10.231.{n}"
    steps = [
        ["ip", "netns", "add", ns],
        ["ip", "link", "add", here, "type", "veth", "peer", "name", there],
        ["ip", "link", "set", there, "netns", ns],
        ["ip", "addr", "add", f"{addr}.1/30", "dev", here],
        ["ip", "link", "set", here, "up"],
        ["ip", "-n", ns, "addr", "add", f"{addr}.2/30", "dev", there],
        ["ip", "-n", ns, "link", "set", there, "up"],
        ["ip", "-n", ns, "link", "set", "lo", "up"],
    ]
    made = False
    try:
        for step in steps:
            subprocess.run(step, check=True, capture_output=True)
        made = True
    except (OSError, subprocess.CalledProcessError):
        pass
    proxy = Proxy(upstream_port, hook, host=f"{addr}.1" if made else "127.0.0.1")
    try:
        yield (ns if made else None), proxy
    finally:
        proxy.close()
        subprocess.run(["ip", "netns", "del", ns], capture_output=True)
        subprocess.run(["ip", "link", "del", here], capture_output=True)  # gone with the namespace


@contextlib.contextmanager
def second_host(
    live: Stack, target: str, hook: Hook | None = None, before: Callable[[str], str] | None = None
) -> Iterator[tuple[str, Proxy]]:
    """A second agent enrolled on the stack, allowed `target` and given the meter, running in a
    network namespace of its own; its agent id and the proxy its requests go through (`hook`:
    the proxy's). `before(address)`: shell lines run in the namespace (and its mount namespace)
    before the agent starts there, given this side's veth address. Stopped (drained) and its
    state removed after."""
    state = live.workdir / f"group-b-{uuid.uuid4().hex[:6]}"
    dropin = Path(f"{state}-dropin")
    port = int(live.url.rsplit(":", 1)[1])
    with network_namespace(port, hook) as (ns, proxy):
        token = enrollment_token(live.url, live.token)
        enroll = ["enroll", "--server", proxy.url, "--token-file", "-", "--name", state.name]
        if ns is not None:  # plain http:// to the veth's address (a private link) needs the operator's say-so
            enroll.append("--insecure-http")
        agent_command(
            [*enroll, "--state-dir", str(state)],
            dropin=dropin,
            stdin=token,
        )
        agent_command(["targets", "add", target, "--state-dir", str(state)], dropin=dropin)
        agent_command(["meters", "set", *METER, "--state-dir", str(state)], dropin=dropin)
        cmd = [
            str(BIN / "iowatt-agent"),
            "run",
            "--state-dir",
            str(state),
            "--engine",
            str(ENGINE),
            "--lease-wait",
            "5",
        ]
        if before is not None:  # the lines' background jobs stay in the agent's process group
            cmd = ["sh", "-c", f"{before(proxy.host)}\nexec {shlex.join(cmd)}"]
        if ns is not None:
            cmd = ["ip", "netns", "exec", ns, *cmd]
        log = open(live.logs / f"{state.name}.log", "wb")  # noqa: SIM115 - closed below
        proc = subprocess.Popen(
            cmd, env=live.commands["agent"][1], stdout=log, stderr=subprocess.STDOUT, start_new_session=True
        )
        try:
            with live.api() as api:

                def reported() -> str | None:
                    for a in api.get("/agents").json()["items"]:
                        policy = a.get("policy") or {}
                        if (
                            a["name"] == state.name
                            and a["online"]
                            and target in {t["path"] for t in policy.get("targets", [])}
                        ):
                            return str(a["id"])
                    return None

                agent_id = wait_until(
                    reported,
                    timeout=60,
                    interval=0.3,
                    message=lambda: f"the second agent online: {live.tail()}",
                )
            yield agent_id, proxy
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
            log.close()
            shutil.rmtree(state, ignore_errors=True)
            shutil.rmtree(dropin, ignore_errors=True)


SSHD = Path("/usr/sbin/sshd")


@contextlib.contextmanager
def network_store() -> Iterator[tuple[Path, Path, Callable[[str], str] | None]]:
    """(store, the second host's path to it, the lines that mount it there): a directory of this
    host exported by sshd (a private port, a test key) and mounted with sshfs in the second host's
    namespace, so both members' targets are one store (the NAS case). Without sshfs or
    openssh-server: a directory of the second host's own and nothing to mount."""
    store = Path(tempfile.mkdtemp(prefix="iowatt-store-", dir="/dev/shm"))
    mnt = Path(tempfile.mkdtemp(prefix="iowatt-store-mnt-", dir="/dev/shm"))
    keys = Path(tempfile.mkdtemp(prefix="iowatt-sshd-"))
    daemons: list[subprocess.Popen[bytes]] = []
    port = free_port()

    def mount(address: str) -> str:
        (keys / "sshd_config").write_text(
            f"Port {port}\nListenAddress {address}\nHostKey {keys / 'host'}\n"
            f"AuthorizedKeysFile {keys / 'authorized_keys'}\nPermitRootLogin prohibit-password\n"
            "PasswordAuthentication no\nKbdInteractiveAuthentication no\nUsePAM no\nStrictModes no\n"
            f"PidFile {keys / 'sshd.pid'}\nSubsystem sftp internal-sftp\n"
        )
        daemons.append(
            subprocess.Popen(
                [str(SSHD), "-D", "-e", "-f", str(keys / "sshd_config")],
                stderr=subprocess.DEVNULL,
            )
        )
        wait_until(lambda: _listening(address, port), timeout=10, interval=0.05, message="sshd listens")
        trust = ["BatchMode=yes", "StrictHostKeyChecking=no", "UserKnownHostsFile=/dev/null"]
        opts = ",".join([f"IdentityFile={keys / 'user'}", *trust])
        return (
            f"sshfs -f -p {port} -o {opts} root@{address}:{store} {mnt} &\n"
            f"i=0; until grep -q ' {mnt} fuse.sshfs' /proc/mounts; do i=$((i+1)); "
            "[ $i -gt 100 ] && exit 3; sleep 0.1; done"
        )

    shared = SSHD.exists() and shutil.which("sshfs") is not None
    try:
        if shared:
            for k in ("host", "user"):
                subprocess.run(
                    ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(keys / k)], check=True
                )
            (keys / "authorized_keys").write_bytes((keys / "user.pub").read_bytes())
            os.makedirs("/run/sshd", exist_ok=True)  # sshd's privilege separation directory
        yield store, mnt, mount if shared else None
    finally:
        for d in daemons:
            d.terminate()
            d.wait(timeout=10)
        for p in (store, mnt, keys):
            shutil.rmtree(p, ignore_errors=True)


def test_two_hosts_on_one_store_start_at_one_instant_and_their_results_and_energy_add_up(live: Stack) -> None:
    """The second host reaches the store over sshfs where it can (the group records the shared
    store; its run is on fuse.sshfs), else a directory of its own."""
    with network_store() as (store, mnt, mount):
        live.agent_cli("meters", "set", *METER)
        live.allow(str(store))
        with second_host(live, str(mnt), before=mount) as (other, _):
            job = {"name": "randwrite-4k", "rw": "randwrite", "bs_bytes": 4096, "size_bytes": 4 * MiB}
            body: dict[str, Any] = {
                "members": [
                    {"agent_id": live.agent_id, "target_path": str(store)},
                    {"agent_id": other, "target_path": str(mnt)},
                ],
                "workload": {"jobs": [job]},
                "name": "e2e group",
                "meter": METER[0],
                "idle_s": 0.5,
            }
            if mount is not None:
                body["shared_store"] = f"sshfs:{store}"
            with live.api() as api:
                r = api.post("/run-groups", json=body)
                assert r.status_code == 201, r.text
                gid = r.json()["id"]

                def ended() -> dict[str, Any] | None:
                    g: dict[str, Any] = api.get(f"/run-groups/{gid}").json()
                    done = g["status"] in ("succeeded", "failed", "cancelled")
                    energy = g["combined"] is not None and g["combined"]["energy_complete"]
                    return g if done and (energy or g["status"] != "succeeded") else None

                group = wait_until(
                    ended, timeout=120, interval=0.5, message=lambda: f"the group ends: {live.tail()}"
                )
                member_run = api.get(f"/runs/{group['members'][0]['run_id']}").json()
                remote = next(m for m in group["members"] if m["agent_id"] == other)
                system = api.get(f"/runs/{remote['run_id']}/system").json()
        assert group["status"] == "succeeded", (group["stop_reason"], [m["error"] for m in group["members"]])
        assert group["start_at"] is not None
        for m in group["members"]:
            assert m["status"] == "succeeded" and m["ready_at"] is not None
            assert m["clock_round_trip_ns"] is not None and m["clock_round_trip_ns"] >= 0
            assert m["start_skew_ns"] is not None  # recorded; how small it is, docs/benchmarks.md says
            bound = group["start_tolerance_ns"] + m["clock_round_trip_ns"] // 2
            assert m["missed_start"] == (abs(m["start_skew_ns"]) > bound)
            assert m["jobs"][0]["write"]["total_ios"] == 1024
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
        combined = group["combined"]
        assert combined["members"] == 2
        assert combined["jobs"][0]["write"]["total_ios"] == 2048
        assert combined["jobs"][0]["write"]["io_bytes"] == 2 * 4 * MiB
        assert combined["latency"] == "merged"  # the agents upload json+: the bins merge
        energies = [m["energy_j"] for m in group["members"]]
        assert all(e is not None and e > 0 for e in energies)
        assert combined["energy_j"] == pytest.approx(sum(energies))
        assert member_run["group"]["group_id"] == group["id"] and member_run["group"]["members"] == 2
        if mount is not None:  # the NAS case: one store, the second host's run over the network
            assert group["shared_store"] == f"sshfs:{store}" and system["fstype"] == "fuse.sshfs", system
        assert not any(f.startswith("iowatt-") for d in (store, mnt) for f in os.listdir(d))  # removed


def test_a_member_cut_off_at_the_barrier_stops_the_group_before_anything_starts(live: Stack) -> None:
    """The second host's network is cut when it reports ready (ADR 0038's fault case): the first
    member waits at the barrier until the prepare timeout, then the group stops; nothing started,
    no result, both members cancelled once the cut member is reachable again."""
    dirs = [tempfile.mkdtemp(prefix=f"iowatt-group-cut-{i}-", dir="/dev/shm") for i in range(2)]
    proxies: list[Proxy] = []

    def cut_at_ready(direction: str, chunk: bytes, conn: Conn) -> None:
        if direction == "request" and b"/ready" in chunk and len(proxies) == 1:
            proxies.append(proxies[0])  # once: after restore() the member is heard again
            proxies[0].cut()

    try:
        live.allow(dirs[0])
        with second_host(live, dirs[1], cut_at_ready) as (other, proxy):
            proxies.append(proxy)
            job = {"name": "randwrite-4k", "rw": "randwrite", "bs_bytes": 4096, "size_bytes": 4 * MiB}
            body = {
                "members": [
                    {"agent_id": live.agent_id, "target_path": dirs[0]},
                    {"agent_id": other, "target_path": dirs[1]},
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
                    if len(proxies) < 2:
                        return None
                    g: dict[str, Any] = api.get(f"/run-groups/{gid}").json()
                    ours = next(m for m in g["members"] if m["agent_id"] == live.agent_id)
                    return g if ours["status"] == "cancelled" else None

                wait_until(
                    member_stopped, timeout=60, interval=0.3, message=lambda: f"a stops: {live.tail()}"
                )
                proxy.restore()  # the cut member asks again and is told the group stopped

                def ended() -> dict[str, Any] | None:
                    g: dict[str, Any] = api.get(f"/run-groups/{gid}").json()
                    return g if all(m["status"] == "cancelled" for m in g["members"]) else None

                group = wait_until(ended, timeout=60, interval=0.3, message=lambda: f"b stops: {live.tail()}")
        assert group["status"] == "failed" and group["start_at"] is None
        cut = next(m for m in group["members"] if m["agent_id"] == other)
        assert "not ready within 3 s" in group["stop_reason"] and cut["agent_name"] in group["stop_reason"]
        assert all("the group stopped" in m["error"] for m in group["members"])
        assert group["combined"] is None and all(m["jobs"] == [] for m in group["members"])
        assert not any(f.startswith("iowatt-") for d in dirs for f in os.listdir(d))
    finally:
        for d in dirs:
            shutil.rmtree(d, ignore_errors=True)


def _listening(address: str, port: int) -> bool:
    with contextlib.suppress(OSError), socket.create_connection((address, port), timeout=0.2):
        return True
    return False
