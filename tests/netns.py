"""Agent "hosts" on this one machine, each in a network namespace of its own (issue 27, ADR 0038).

`network(n)` makes the fabric; `hosts(stack, n)` puts an enrolled `iowatt-agent run` on each
host of it. What a host is:

- **Its own network.** A namespace `iowatt-<owner pid>-h<i>` whose only link is a veth pair to this
  namespace (a /30 of 10.231.X.0/24: this side .4i+1, the host .4i+2; X is the first free one
  from the owner's pid, chosen under a lock) and no route beyond it. A host reaches nothing but
  this side's address on its own link: not the API's loopback port, not the other hosts. A star,
  not a bridge: every packet is delivered on this side, so neither IP forwarding nor a bridge is
  needed (a bridge's frames go through the machine's iptables FORWARD chain where br_netfilter is
  on, and Docker hosts drop them there).
- **The way to the server.** A TCP proxy (tests/faults/proxy.py) on this side's address forwards
  to the API; `delay_s` holds every chunk that long in each direction, the fabric's one-way delay
  (a round trip gains 2 × delay_s, and the agents' measured clock round trips show it). This
  kernel has no netem (nor the fq qdisc, whose departure times a BPF program could set), so the
  delay is added above TCP, per chunk; toxiproxy would do the same at the cost of a Go build on
  every fresh machine (the Go module proxy), where the proxy the fault rig already has needed a
  delay line of forty lines.
- **A shared store over the network** (`store=True`): a directory here exported by one sshd (a
  private port, a test key, listening on each link's address here) and mounted with sshfs inside
  each host, in the mount namespace `ip netns exec` gives the host's agent: both hosts see one
  store over their links, the NAS case of seed 000 (this kernel has no NFS or NBD).
- **Its agent**: enrolled through its proxy (plain http:// on a private link, `--insecure-http`),
  allowed its targets (the store's mount point and a directory of its own) and the meter it is
  given, started in the namespace; deleted from the server afterwards.

Clean-up is total, on success and failure alike: every agent stopped (SIGTERM, then SIGKILL), every
process left in a namespace killed (sshfs), the namespaces and links deleted, sshd stopped, the
proxies closed, the files removed, the agents deleted from the server; then it is checked, and a
rig that left anything raises. A test process killed outright cannot clean up: its sshd and
agents get a signal when it dies (`setpriv --pdeathsig`), and the next rig on the machine removes
what rigs of processes no longer running left (`sweep()`).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from tests.faults.proxy import Proxy
from tests.services import free_port
from tests.stack import BIN, ENGINE, Stack, agent_command, enrollment_token
from tests.waiting import wait_until

NS_RE = re.compile(r"^iowatt-(\d+)-h\d+$")  # a host's namespace: iowatt-<owner pid>-h<i>
LINK_RE = re.compile(r"^iw(\d+)h\d+$")  # its link's end here: iw<owner pid>h<i> (15 characters at most)
DIR_RE = re.compile(r"^iowatt-rig-(\d+)-")  # the rig's files: /dev/shm/iowatt-rig-<owner pid>-*
NET = "10.231"
LOCK = Path("/tmp/iowatt-netns.lock")
SSHD = Path("/usr/sbin/sshd")
SSH_OPTS = ("BatchMode=yes", "StrictHostKeyChecking=no", "UserKnownHostsFile=/dev/null")
AGENT_LEASE_WAIT_S = 5  # the hosts' long-poll: a drained agent is gone within it
_ACTIVE: list[Path] = []  # this process's rig (one at a time: the names are the process's)


@dataclass
class Host:
    index: int
    ns: str
    link: str  # the link's end in this namespace
    here: str  # this namespace's address on the link: where the host's proxy and the sshd listen
    address: str  # the host's own address
    proxy: Proxy
    local: Path  # a directory of the host's own (its local disk's stand-in)
    store: Path | None  # where the host mounts the shared store (None: no store)
    name: str = ""  # its agent's name (hosts())
    agent_id: str = ""
    state: Path | None = None
    log: Path | None = None
    proc: subprocess.Popen[bytes] | None = None

    @property
    def targets(self) -> list[str]:
        return [str(self.local)] + ([str(self.store)] if self.store is not None else [])

    def exec(self, *cmd: str) -> list[str]:
        """`cmd` run in the host's namespace (and a mount namespace of its own)."""
        return ["ip", "netns", "exec", self.ns, *cmd]


@dataclass
class Network:
    hosts: list[Host]
    dir: Path
    delay_s: float
    export: Path | None = None  # the shared store's directory here (what sshd exports)
    ssh_port: int = 0
    keys: Path | None = None
    sshd: subprocess.Popen[bytes] | None = None
    problems: list[str] = field(default_factory=list)  # what the clean-up could not do

    def mount_lines(self, host: Host) -> str:
        """Shell lines that mount the store on `host` (run in its namespace, in the mount namespace
        its agent then runs in): sshfs over the host's link returns once the store is mounted and
        stays on as a daemon, killed with the namespace's processes. Empty without a store."""
        if self.export is None or self.keys is None or host.store is None:
            return ""
        opts = ",".join([f"IdentityFile={self.keys / 'user'}", *SSH_OPTS])
        return f"sshfs -p {self.ssh_port} -o {opts} root@{host.here}:{self.export} {host.store}"


def _ip(*args: str, stdin: str | None = None) -> str:
    r = subprocess.run(["ip", *args], input=stdin, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"ip {' '.join(args)}: {r.stderr.strip() or r.returncode}")
    return r.stdout


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _namespaces() -> list[str]:
    return [line.split()[0] for line in _ip("netns", "list").splitlines() if line.strip()]


def _links() -> list[str]:
    # "5: iw123h0@if2: <...>": the name up to the peer's "@"
    return [line.split(":")[1].strip().split("@")[0] for line in _ip("-o", "link", "show").splitlines()]


def _pids_in(ns: str) -> list[int]:
    r = subprocess.run(["ip", "netns", "pids", ns], capture_output=True, text=True)
    return [int(p) for p in r.stdout.split()] if r.returncode == 0 else []


def _remove_namespace(ns: str) -> None:
    """Kill what runs in `ns` (a daemonized sshfs, an agent that outlived its stop), wait until it is
    gone, delete the namespace (its veth goes with it)."""
    for pid in _pids_in(ns):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    wait_until(lambda: not _pids_in(ns), timeout=10, interval=0.05, message=f"the processes of {ns} gone")
    subprocess.run(["ip", "netns", "del", ns], capture_output=True)


def sweep() -> list[str]:
    """Remove what rigs of processes no longer running left behind (a test process killed outright
    cannot clean up): their namespaces with whatever still runs in them, their links, their sshd,
    their files. Returns what was removed, one line each."""
    removed = []
    for ns in _namespaces():
        m = NS_RE.match(ns)
        if m and not _alive(int(m.group(1))):
            _remove_namespace(ns)
            removed.append(f"namespace {ns}")
    for link in _links():
        m = LINK_RE.match(link)
        if m and not _alive(int(m.group(1))):
            subprocess.run(["ip", "link", "del", link], capture_output=True)
            removed.append(f"link {link}")
    dead = [
        d
        for d in Path("/dev/shm").iterdir()
        if (m := DIR_RE.match(d.name)) is not None and not _alive(int(m.group(1)))
    ]
    for proc in Path("/proc").iterdir():  # an sshd whose owner died before it (its files named in its argv)
        if not proc.name.isdigit():
            continue
        try:
            argv = (proc / "cmdline").read_bytes()
        except OSError:
            continue
        if any(str(d).encode() + b"/" in argv for d in dead):
            with contextlib.suppress(ProcessLookupError):
                os.kill(int(proc.name), signal.SIGKILL)
                removed.append(f"process {proc.name} ({argv.split(bytes(1))[0].decode(errors='replace')})")
    for d in dead:
        shutil.rmtree(d, ignore_errors=True)
        removed.append(f"directory {d}")
    return removed


def leftovers(owner: int) -> list[str]:
    """What rigs of process `owner` still hold on this machine (empty: nothing)."""
    left = [f"namespace {ns}" for ns in _namespaces() if (m := NS_RE.match(ns)) and int(m.group(1)) == owner]
    left += [f"link {k}" for k in _links() if (m := LINK_RE.match(k)) and int(m.group(1)) == owner]
    left += [
        f"directory {d}"
        for d in Path("/dev/shm").iterdir()
        if (m := DIR_RE.match(d.name)) and int(m.group(1)) == owner
    ]
    return left


def unavailable() -> str | None:
    """Why no rig can be made here (None: it can)."""
    if os.geteuid() != 0:
        return "network namespaces, veth links and sshd need root"
    missing = [tool for tool in ("ip", "setpriv", "sshfs") if shutil.which(tool) is None]
    missing += [] if SSHD.exists() else [str(SSHD)]
    if missing:
        return (
            f"missing {', '.join(missing)} (make deps installs iproute2, util-linux, sshfs, openssh-server)"
        )
    return None


def _subnet(owner: int) -> int:
    """X of 10.231.X.0/24, the first no interface of this machine uses, from the owner's pid on
    (the caller holds LOCK until its addresses are set)."""
    used = set(re.findall(rf"inet {re.escape(NET)}\.(\d+)\.", _ip("-o", "-4", "addr", "show")))
    for k in range(250):
        x = (owner + k) % 250 + 1
        if str(x) not in used:
            return x
    raise RuntimeError(f"no free {NET}.X.0/24 on this machine")


def _listening(address: str, port: int) -> bool:
    with contextlib.suppress(OSError), socket.create_connection((address, port), timeout=0.2):
        return True
    return False


def _remove_leftovers(owner: int) -> None:
    """This process's rig names still on the machine (a clean-up that failed, a rig half made),
    removed by name."""
    for left in leftovers(owner):
        kind, name = left.split(" ", 1)
        if kind == "namespace":
            _remove_namespace(name)
        elif kind == "link":
            subprocess.run(["ip", "link", "del", name], capture_output=True)
        else:
            shutil.rmtree(name, ignore_errors=True)


@contextlib.contextmanager
def network(n: int, upstream_port: int, *, delay_s: float = 0.0, store: bool = False) -> Iterator[Network]:
    """`n` hosts' namespaces and links, a proxy to `upstream_port` (127.0.0.1) on each link adding
    `delay_s` each way, and with `store` the sshd that exports the shared store to them. Removed
    (and checked: a RuntimeError names what is left) when the block ends, however it ends."""
    reason = unavailable()
    if reason is not None:
        raise RuntimeError(f"no network namespaces here: {reason}")
    if _ACTIVE:
        raise RuntimeError(f"a rig of this process is up already ({_ACTIVE[0]}): one at a time")
    owner = os.getpid()
    with open(LOCK, "w") as lock:
        # the sweep under the lock, as test_netns's fake leftovers are made: a sweep beside a test
        # that is making a dead owner's namespace and files could take the files before the namespace
        fcntl.flock(lock, fcntl.LOCK_EX)
        swept = sweep()
    if swept:
        print("removed what a killed rig left: " + "; ".join(swept))
    _remove_leftovers(owner)
    root = Path(tempfile.mkdtemp(prefix=f"iowatt-rig-{owner}-", dir="/dev/shm"))
    net = Network(hosts=[], dir=root, delay_s=delay_s)
    _ACTIVE.append(root)
    try:
        with open(LOCK, "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)  # held until this rig's addresses are set
            x = _subnet(owner)
            for i in range(n):
                ns, link = f"iowatt-{owner}-h{i}", f"iw{owner}h{i}"
                here, there = f"{NET}.{x}.{4 * i + 1}", f"{NET}.{x}.{4 * i + 2}"
                _ip("netns", "add", ns)
                _ip("link", "add", link, "type", "veth", "peer", "name", "eth0", "netns", ns)
                _ip("addr", "add", f"{here}/30", "dev", link)
                _ip("link", "set", link, "up")
                _ip(
                    "-n",
                    ns,
                    "-batch",
                    "-",
                    stdin=f"addr add {there}/30 dev eth0\nlink set eth0 up\nlink set lo up\n",
                )
                local = root / f"h{i}-local"
                local.mkdir()
                mnt = root / f"h{i}-store" if store else None
                if mnt is not None:
                    mnt.mkdir()
                proxy = Proxy(upstream_port, host=here, delay_s=delay_s)
                net.hosts.append(Host(i, ns, link, here, there, proxy, local, mnt))
        if store:
            _export(net)
        yield net
    finally:
        _ACTIVE.clear()
        _remove(net)
        with contextlib.suppress(Exception):
            _remove_leftovers(owner)  # a host half made when the set-up failed
        left = leftovers(owner)
        if left or net.problems:
            raise RuntimeError(f"the rig left {left} ({'; '.join(net.problems)})")


def _export(net: Network) -> None:
    """The store's directory, exported by sshd on every link's address here (a private port, a
    host key and a user key of the rig's own)."""
    net.export = net.dir / "export"
    net.export.mkdir()
    net.keys = keys = net.dir / "ssh"
    keys.mkdir(mode=0o700)
    for k in ("host", "user"):
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(keys / k)], check=True)
    (keys / "authorized_keys").write_bytes((keys / "user.pub").read_bytes())
    net.ssh_port = free_port()
    listen = "".join(f"ListenAddress {h.here}\n" for h in net.hosts)
    (keys / "sshd_config").write_text(
        f"Port {net.ssh_port}\n{listen}HostKey {keys / 'host'}\n"
        f"AuthorizedKeysFile {keys / 'authorized_keys'}\nPermitRootLogin prohibit-password\n"
        "PasswordAuthentication no\nKbdInteractiveAuthentication no\nUsePAM no\nStrictModes no\n"
        f"PidFile {keys / 'sshd.pid'}\nSubsystem sftp internal-sftp\n"
    )
    os.makedirs("/run/sshd", exist_ok=True)  # sshd's privilege separation directory
    with open(keys / "sshd.log", "wb") as log:
        net.sshd = subprocess.Popen(
            ["setpriv", "--pdeathsig", "KILL", str(SSHD), "-D", "-e", "-f", str(keys / "sshd_config")],
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    wait_until(
        lambda: all(_listening(h.here, net.ssh_port) for h in net.hosts),
        timeout=10,
        interval=0.05,
        message=lambda: f"sshd listens: {(keys / 'sshd.log').read_text(errors='replace')}",
    )


def _remove(net: Network) -> None:
    for h in net.hosts:
        if h.proc is not None:
            _stop(h.proc)
        try:
            _remove_namespace(h.ns)
        except Exception as e:  # noqa: BLE001 - every other step still runs; the caller reports it
            net.problems.append(f"{h.ns}: {e}")
        if h.link in _links():  # gone with its peer's namespace, unless something still holds it
            subprocess.run(["ip", "link", "del", h.link], capture_output=True)
        h.proxy.close()
    if net.sshd is not None:
        net.sshd.terminate()
        try:
            net.sshd.wait(timeout=10)
        except subprocess.TimeoutExpired:
            net.sshd.kill()
            net.sshd.wait()
    shutil.rmtree(net.dir, ignore_errors=True)


def _stop(proc: subprocess.Popen[bytes]) -> None:
    """An agent drained (SIGTERM to its process group), killed when it has not stopped in 30 s."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


@contextlib.contextmanager
def hosts(
    s: Stack,
    n: int,
    *,
    delay_s: float = 0.0,
    store: bool = True,
    meter: tuple[str, str] | None = None,
) -> Iterator[Network]:
    """`n` hosts on `s`'s server, each an agent in its own namespace (`network`), enrolled, allowed
    its targets (`Host.targets`), given `meter` (name, spec), online with its policy reported.
    Their agents are deleted from the server afterwards (a stack's tests leave it as they found
    it)."""
    port = int(s.url.rsplit(":", 1)[1])
    with network(n, port, delay_s=delay_s, store=store) as net:
        try:
            tag = uuid.uuid4().hex[:6]
            for h in net.hosts:
                _start_agent(s, net, h, f"host{h.index}-{tag}", meter)
            _until_online(s, net.hosts)
            yield net
        finally:
            for h in net.hosts:
                if h.proc is not None:
                    _stop(h.proc)
                    h.proc = None
            with s.api() as api:
                for h in net.hosts:
                    if h.agent_id:
                        r = api.delete(f"/agents/{h.agent_id}")
                        if r.status_code not in (200, 204, 404):
                            net.problems.append(f"agent {h.name} not deleted: {r.status_code} {r.text}")


def _start_agent(s: Stack, net: Network, h: Host, name: str, meter: tuple[str, str] | None) -> None:
    h.name = name
    h.state = net.dir / f"h{h.index}-state"
    dropin = net.dir / f"h{h.index}-dropin"
    token = enrollment_token(s.url, s.token)
    # plain http:// to the link's address (a private link) needs the operator's say-so
    enroll = ["enroll", "--server", h.proxy.url, "--token-file", "-", "--name", name, "--insecure-http"]
    agent_command([*enroll, "--state-dir", str(h.state)], dropin=dropin, stdin=token)
    for target in h.targets:
        agent_command(["targets", "add", target, "--state-dir", str(h.state)], dropin=dropin)
    if meter is not None:
        agent_command(["meters", "set", *meter, "--state-dir", str(h.state)], dropin=dropin)
    agent = [
        str(BIN / "iowatt-agent"),
        "run",
        "--state-dir",
        str(h.state),
        "--engine",
        str(ENGINE),
        "--lease-wait",
        str(AGENT_LEASE_WAIT_S),
    ]
    script = f"set -e\n{net.mount_lines(h)}\nexec {shlex.join(agent)}"
    h.log = s.logs / f"{name}.log"  # beside the stack's: a failing test prints their tails
    with open(h.log, "wb") as log:
        # a process group of its own (drained as a group); SIGTERM when this process dies first
        h.proc = subprocess.Popen(
            ["setpriv", "--pdeathsig", "TERM", *h.exec("sh", "-c", script)],
            env=s.commands["agent"][1],
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )


def _until_online(s: Stack, hs: list[Host]) -> None:
    """Every host's agent online with its targets reported: the server asked once each agent
    logged its inventory sent, not every 0.3 s meanwhile."""

    def sent() -> bool:
        return all(h.log is not None and b"inventory.sent" in h.log.read_bytes() for h in hs)

    with s.api() as api:

        def online() -> bool:
            if not sent():
                return False
            by_name = {a["name"]: a for a in api.get("/agents").json()["items"]}
            for h in hs:
                a = by_name.get(h.name)
                policy = (a or {}).get("policy") or {}
                if (
                    a is None
                    or not a["online"]
                    or not set(h.targets) <= {t["path"] for t in policy.get("targets", [])}
                ):
                    return False
                h.agent_id = str(a["id"])
            return True

        # two agents' start-up (imports, inventory) at once, on a machine the suite keeps busy
        wait_until(online, timeout=120, interval=0.3, message=lambda: f"the hosts' agents online: {s.tail()}")
