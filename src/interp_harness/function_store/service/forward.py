"""Byte forwarders for the one extra endpoint a sandboxed service may reach (the LM backbone).

A bwrap sandbox has no network. For neural-module targets the orchestrator side runs a
`UnixToTcpForwarder` (a socket inside the sandbox's bind-mounted directory -> the backbone's
host:port, nothing else), and the service runs a `TcpToUnixForwarder` on its private loopback so
that an ordinary HTTP client inside can use `http://127.0.0.1:<port>/...`.
"""

from __future__ import annotations

import contextlib
import os
import socket
import threading
from abc import ABC, abstractmethod
from urllib.parse import urlsplit


def _pump(src: socket.socket, dst: socket.socket) -> None:
    with contextlib.suppress(OSError):
        while data := src.recv(65536):
            dst.sendall(data)
    with contextlib.suppress(OSError):
        dst.shutdown(socket.SHUT_WR)


def _bridge(a: socket.socket, b: socket.socket) -> None:
    t = threading.Thread(target=_pump, args=(b, a), daemon=True)
    t.start()
    _pump(a, b)
    t.join()
    a.close()
    b.close()


class _Forwarder(ABC):
    def __init__(self, listener: socket.socket) -> None:
        self._listener = listener
        self._thread = threading.Thread(target=self._accept, daemon=True)

    def start(self) -> None:
        self._thread.start()

    @abstractmethod
    def _connect(self) -> socket.socket: ...

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self._listener.accept()
            except OSError:
                return
            try:
                upstream = self._connect()
            except OSError:
                conn.close()
                continue
            threading.Thread(target=_bridge, args=(conn, upstream), daemon=True).start()

    def stop(self) -> None:
        with contextlib.suppress(OSError):
            self._listener.close()


def host_port(url: str) -> tuple[str, int]:
    u = urlsplit(url)
    if not u.hostname:
        raise ValueError(f"not an http(s) URL: {url!r}")
    return u.hostname, u.port or (443 if u.scheme == "https" else 80)


class UnixToTcpForwarder(_Forwarder):
    """Listens on `path`; every connection goes to the host:port of `url` and nowhere else."""

    connect_timeout_s = 30.0

    def __init__(self, path: str, url: str) -> None:
        self.target = host_port(url)
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.bind(path)
        os.chmod(path, 0o666)
        s.listen(64)
        super().__init__(s)

    def _connect(self) -> socket.socket:
        s = socket.create_connection(self.target, timeout=self.connect_timeout_s)
        # The limit is for connecting only: a reply may take as long as the client's own request
        # timeout allows (a busy CPU backbone takes minutes). Left on the socket, it cut every
        # reply slower than 30 s, and the client's retries queued the same work again.
        s.settimeout(None)
        return s


class TcpToUnixForwarder(_Forwarder):
    """Listens on 127.0.0.1 (a free port, see `.port`); every connection goes to `path`."""

    def __init__(self, path: str) -> None:
        self.path = path
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.bind(("127.0.0.1", 0))
        s.listen(64)
        self.port = s.getsockname()[1]
        super().__init__(s)

    def _connect(self) -> socket.socket:
        c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        c.connect(self.path)
        return c
