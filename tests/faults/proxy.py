"""A small TCP proxy between the agent and the API that can cut the network, or add a fabric's delay.

`cut()` closes every open connection and closes each new one as soon as it is accepted (the
agent sees resets, as behind a failed switch or a rebooting NAT); `restore()` forwards again.
`hook(direction, chunk, conn)` is called before each chunk is forwarded ("request": agent → API,
"response": API → agent) in that connection's thread, so a hook that blocks (to kill the API at
a chosen moment) holds that chunk back; `conn.marks` is the hook's scratch space per connection.
`delay_s`: each chunk is forwarded that long after it arrived, in order, in both directions (a
link's one-way latency: every round trip gains twice it), where this kernel has no netem to delay
the packets themselves (tests/netns.py).
"""

from __future__ import annotations

import contextlib
import queue
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

Hook = Callable[[str, bytes, "Conn"], None]


@dataclass(eq=False)
class Conn:
    client: socket.socket
    upstream: socket.socket
    marks: set[str] = field(default_factory=set)

    def close(self) -> None:
        for s in (self.client, self.upstream):
            with contextlib.suppress(OSError):
                s.shutdown(socket.SHUT_RDWR)
            s.close()


class _DelayLine:
    """One direction of a connection, `delay_s` late: the chunks are sent in the order they came,
    each no sooner than `delay_s` after it arrived (a thread of its own, so a chunk that arrives
    while another waits is not held for the sum of both delays). The connection is closed once the
    last chunk is out (`close()`), a send fails or the proxy cuts the network (`cut`: what is
    still on its way is lost, as on a failed link)."""

    def __init__(self, dst: socket.socket, conn: Conn, delay_s: float, cut: threading.Event) -> None:
        self.delay_s = delay_s
        self._cut = cut
        self._chunks: queue.SimpleQueue[tuple[float, bytes] | None] = queue.SimpleQueue()
        threading.Thread(target=self._send, args=(dst, conn), daemon=True, name="proxy-delay").start()

    def put(self, arrived: float, chunk: bytes) -> None:
        self._chunks.put((arrived + self.delay_s, chunk))

    def close(self) -> None:
        self._chunks.put(None)

    def _send(self, dst: socket.socket, conn: Conn) -> None:
        try:
            while (item := self._chunks.get()) is not None:
                due, chunk = item
                wait = due - time.monotonic()
                if wait > 0:
                    time.sleep(wait)  # the delay is the behaviour: a link's latency
                if self._cut.is_set():
                    break
                dst.sendall(chunk)
        except OSError:
            pass
        finally:
            conn.close()


class Proxy:
    def __init__(
        self, upstream_port: int, hook: Hook | None = None, *, host: str = "127.0.0.1", delay_s: float = 0.0
    ) -> None:
        """`host`: the address it listens on (a veth's, for an agent in another network namespace);
        `delay_s`: the one-way delay added to every chunk (0: forwarded at once)."""
        self.upstream_port = upstream_port
        self.hook = hook
        self.host = host
        self.delay_s = delay_s
        self._cut = threading.Event()
        self._conns: set[Conn] = set()
        self._lock = threading.Lock()
        self._listener = socket.create_server((host, 0))
        self.port: int = self._listener.getsockname()[1]
        self.accepted = 0
        self.refused = 0
        threading.Thread(target=self._accept, daemon=True, name="proxy-accept").start()

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def cut(self) -> None:
        self._cut.set()
        with self._lock:
            conns, self._conns = self._conns, set()
        for c in conns:
            c.close()

    def restore(self) -> None:
        self._cut.clear()

    def close(self) -> None:
        self.cut()
        self._listener.close()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            if self._cut.is_set():
                self.refused += 1
                client.close()
                continue
            try:
                upstream = socket.create_connection(("127.0.0.1", self.upstream_port), timeout=5)
                upstream.settimeout(None)
            except OSError:  # the API is down: the agent sees its connection closed
                client.close()
                continue
            conn = Conn(client, upstream)
            self.accepted += 1
            with self._lock:
                self._conns.add(conn)
            for direction, src, dst in (("request", client, upstream), ("response", upstream, client)):
                threading.Thread(target=self._pump, args=(direction, src, dst, conn), daemon=True).start()

    def _pump(self, direction: str, src: socket.socket, dst: socket.socket, conn: Conn) -> None:
        line = _DelayLine(dst, conn, self.delay_s, self._cut) if self.delay_s > 0 else None
        try:
            while True:
                chunk = src.recv(65536)
                if not chunk:
                    break
                arrived = time.monotonic()
                if self.hook is not None:
                    self.hook(direction, chunk, conn)
                if self._cut.is_set():
                    break
                if line is None:
                    dst.sendall(chunk)
                else:
                    line.put(arrived, chunk)
        except OSError:
            pass
        finally:
            if line is None or self._cut.is_set():
                conn.close()
            if line is not None:
                line.close()  # what is in flight still arrives, then the connection closes
            with self._lock:
                self._conns.discard(conn)
