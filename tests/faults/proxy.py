"""A small TCP proxy between the agent and the API that can cut the network.

`cut()` closes every open connection and closes each new one as soon as it is accepted (the
agent sees resets, as behind a failed switch or a rebooting NAT); `restore()` forwards again.
`hook(direction, chunk, conn)` is called before each chunk is forwarded ("request": agent → API,
"response": API → agent) in that connection's thread, so a hook that blocks (to kill the API at
a chosen moment) holds that chunk back; `conn.marks` is the hook's scratch space per connection.
"""

from __future__ import annotations

import contextlib
import socket
import threading
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


class Proxy:
    def __init__(self, upstream_port: int, hook: Hook | None = None, *, host: str = "127.0.0.1") -> None:
        """`host`: the address it listens on (a veth's, for an agent in another network namespace)."""
        self.upstream_port = upstream_port
        self.hook = hook
        self.host = host
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
        try:
            while True:
                chunk = src.recv(65536)
                if not chunk:
                    break
                if self.hook is not None:
                    self.hook(direction, chunk, conn)
                if self._cut.is_set():
                    break
                dst.sendall(chunk)
        except OSError:
            pass
        finally:
            conn.close()
            with self._lock:
                self._conns.discard(conn)
