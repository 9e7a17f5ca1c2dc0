"""Line-oriented TCP for text protocols (PTDaemon, SCPI raw socket): send a line, read a line."""

from __future__ import annotations

import contextlib
import socket

from .base import MeterError


class LineSocket:
    def __init__(self, host: str, port: int, *, timeout_s: float = 3.0, eol: bytes = b"\r\n") -> None:
        self.where = f"{host}:{port}"
        self.eol = eol
        self.timeout_s = timeout_s
        try:
            self.sock = socket.create_connection((host, port), timeout=timeout_s)
        except OSError as exc:
            raise MeterError(f"cannot connect to {self.where}: {exc.strerror or exc}") from None
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._buf = b""

    def send(self, line: str) -> None:
        try:
            self.sock.sendall(line.encode("ascii") + self.eol)
        except OSError as exc:
            raise MeterError(f"{self.where}: send failed: {exc.strerror or exc}") from None

    def recv_line(self) -> str:
        while b"\n" not in self._buf:
            try:
                chunk = self.sock.recv(4096)
            except TimeoutError:
                raise MeterError(f"{self.where}: no answer within {self.timeout_s:g} s") from None
            except OSError as exc:
                raise MeterError(f"{self.where}: receive failed: {exc.strerror or exc}") from None
            if not chunk:
                raise MeterError(f"{self.where}: connection closed by the meter")
            self._buf += chunk
            if len(self._buf) > 1 << 20:
                raise MeterError(f"{self.where}: answer line longer than 1 MiB")
        line, _, self._buf = self._buf.partition(b"\n")
        return line.decode("ascii", errors="replace").rstrip("\r")

    def ask(self, line: str) -> str:
        self.send(line)
        return self.recv_line()

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.sock.close()
