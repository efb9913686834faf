"""The byte forwarders that give a sandboxed service its one extra endpoint (interp_harness.function_store.service
.forward): a slow upstream reply still arrives whole (the connect timeout must not stay on the
socket: it cut every backbone reply slower than 30 s), through both forwarders in a chain, as a
bwrap target service uses them."""

from __future__ import annotations

import socket
import threading
import time
from pathlib import Path

from interp_harness.function_store.service.forward import TcpToUnixForwarder, UnixToTcpForwarder

DELAY_S = 1.5


def _slow_echo_server() -> tuple[socket.socket, int]:
    """A TCP server that answers each connection's first message after DELAY_S."""
    srv = socket.create_server(("127.0.0.1", 0))

    def serve() -> None:
        while True:
            try:
                conn, _ = srv.accept()
            except OSError:
                return
            with conn:
                data = conn.recv(1024)
                time.sleep(DELAY_S)
                conn.sendall(b"reply to " + data)

    threading.Thread(target=serve, daemon=True).start()
    return srv, srv.getsockname()[1]


def test_a_reply_slower_than_the_connect_timeout_arrives_through_both_forwarders(tmp_path: Path):
    srv, port = _slow_echo_server()
    path = str(tmp_path / "backbone.sock")
    outer = UnixToTcpForwarder(path, f"http://127.0.0.1:{port}/v1")
    outer.connect_timeout_s = DELAY_S / 3  # the reply takes three times the connect limit
    inner = TcpToUnixForwarder(path)
    outer.start()
    inner.start()
    try:
        with socket.create_connection(("127.0.0.1", inner.port), timeout=30) as c:
            t0 = time.monotonic()
            c.sendall(b"ping")
            got = b""
            while chunk := c.recv(1024):
                got += chunk
        assert got == b"reply to ping"
        assert time.monotonic() - t0 >= DELAY_S * 0.9  # it really waited for the slow reply
    finally:
        inner.stop()
        outer.stop()
        srv.close()


def test_an_unreachable_upstream_closes_the_connection(tmp_path: Path):
    free = socket.socket()
    free.bind(("127.0.0.1", 0))
    port = free.getsockname()[1]
    free.close()  # nothing listens there now
    path = str(tmp_path / "b.sock")
    fwd = UnixToTcpForwarder(path, f"http://127.0.0.1:{port}")
    fwd.start()
    try:
        c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        c.settimeout(10)
        c.connect(path)
        assert c.recv(16) == b""  # closed at once, not left hanging
        c.close()
    finally:
        fwd.stop()
