"""The hosts' rig (tests/netns.py) does what the group-run tests rely on: a host reaches the server
only over its own link, with the fabric's delay on the way, mounts the shared store over the link,
and nothing of the rig is left on the machine afterwards, even when its block failed or its
process was killed."""

import fcntl
import os
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests import netns

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="network namespaces need root")

DELAY_S = 0.004


@pytest.fixture
def echo() -> Iterator[int]:
    """A server on 127.0.0.1 that answers each connection's bytes with the same bytes (the API's
    stand-in: the rig only forwards to it); its port."""
    listener = socket.create_server(("127.0.0.1", 0))

    def serve() -> None:
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            with conn:
                while data := conn.recv(4096):
                    conn.sendall(data)

    threading.Thread(target=serve, daemon=True).start()
    yield listener.getsockname()[1]
    listener.close()


class Failed(Exception):
    pass


def test_a_host_reaches_only_its_link_with_the_delay_mounts_the_store_and_leaves_nothing(echo: int) -> None:
    with pytest.raises(Failed), netns.network(1, echo, delay_s=DELAY_S, store=True) as net:
        h = net.hosts[0]
        assert net.export is not None and h.store is not None
        # a round trip through the host's proxy is two delays longer than the link's own
        with socket.create_connection((h.here, h.proxy.port), timeout=5) as c:
            t0 = time.monotonic()
            c.sendall(b"ping")
            assert c.recv(4) == b"ping"
            assert time.monotonic() - t0 >= 2 * DELAY_S
        # inside the namespace: the proxy on the link answers, the server's loopback port does not
        # exist there; the store mounts over the link, and a file written there is the store's
        probe = (
            f"set -e\n{net.mount_lines(h)}\necho written-there > {h.store}/probe\n"
            f"fusermount3 -u {h.store}\n"
            f"if (exec 3<>/dev/tcp/127.0.0.1/{echo}) 2>/dev/null; then echo loopback-reached; fi\n"
            f"(exec 3<>/dev/tcp/{h.here}/{h.proxy.port}) && echo link-reached\n"
        )
        r = subprocess.run(h.exec("bash", "-c", probe), capture_output=True, text=True, timeout=60)
        assert r.returncode == 0 and r.stdout.split() == ["link-reached"], (r.stdout, r.stderr)
        assert (net.export / "probe").read_text() == "written-there\n"
        routes = subprocess.run(["ip", "-n", h.ns, "-o", "route"], capture_output=True, text=True).stdout
        assert len(routes.splitlines()) == 1, routes  # the link's /30 and nothing beyond it
        raise Failed  # the clean-up runs as it does when a test fails
    assert netns.leftovers(os.getpid()) == []
    assert net.sshd is not None and net.sshd.poll() is not None
    assert not net.dir.exists()


def test_what_a_killed_rig_left_is_removed_by_the_next() -> None:
    """A rig's process killed outright leaves its namespace (with a process still in it), its link,
    a process naming its files and its files; the next rig's sweep removes them all."""
    # under the rigs' lock, as a rig sweeps (netns.network): another test process's rig starting
    # meanwhile swept these leftovers half made (the files before the namespace, in a clean clone)
    with open(netns.LOCK, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        gone = subprocess.Popen(["true"])
        gone.wait()  # a process that no longer runs: the killed rig's owner
        ns, link = f"iowatt-{gone.pid}-h0", f"iw{gone.pid}h0"
        files = Path(f"/dev/shm/iowatt-rig-{gone.pid}-test")
        files.mkdir()
        (files / "sshd_config").write_text("")
        left: list[subprocess.Popen[bytes]] = []
        try:
            subprocess.run(["ip", "netns", "add", ns], check=True)
            subprocess.run(
                ["ip", "link", "add", link, "type", "veth", "peer", "name", "eth0", "netns", ns], check=True
            )
            # a process in the namespace (a daemonized sshfs), one naming the rig's files (its sshd)
            left.append(subprocess.Popen(["ip", "netns", "exec", ns, "tail", "-f", "/dev/null"]))
            left.append(subprocess.Popen(["tail", "-f", str(files / "sshd_config")]))
            removed = netns.sweep()
            assert f"namespace {ns}" in removed and f"directory {files}" in removed, removed
            for p in left:
                assert p.wait(timeout=10) == -9
            assert netns.leftovers(gone.pid) == []
        finally:
            for p in left:
                p.kill()
                p.wait()
            subprocess.run(["ip", "netns", "del", ns], capture_output=True)
            subprocess.run(["ip", "link", "del", link], capture_output=True)
            subprocess.run(["rm", "-rf", str(files)])
