"""The one network route a provider agent's host gets: its provider profile's endpoint.

The sandbox has no network. The orchestrator binds a directory holding one Unix socket into it;
behind that socket sits either a `UnixToTcpForwarder` (http endpoints: every connection goes to
the profile's host:port) or a `ConnectProxy` (https endpoints: the SDK tunnels TLS through an
HTTP CONNECT that must name exactly the profile's host:port). Inside, the host listens on its
private loopback and points the SDK there (`agents.host._route`).
"""

from __future__ import annotations

import contextlib
import os
import socket
import threading

from agents.host_protocol import Network
from function_store.service.forward import UnixToTcpForwarder, _bridge
from harness.providers import _ENV, ProviderProfile

SOCKET_NAME = "provider.sock"
_MAX_HEADER = 8192


class ConnectProxy:
    """An HTTP CONNECT proxy on a Unix socket that tunnels to one host:port and refuses the rest."""

    def __init__(self, path: str, host: str, port: int) -> None:
        self.allowed = f"{host}:{port}".lower()
        self.target = (host, port)
        self._listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._listener.bind(path)
        os.chmod(path, 0o666)
        self._listener.listen(64)

    def start(self) -> None:
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self._listener.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        head = b""
        with contextlib.suppress(OSError):
            conn.settimeout(30)
            while b"\r\n\r\n" not in head and len(head) < _MAX_HEADER:
                chunk = conn.recv(_MAX_HEADER)
                if not chunk:
                    break
                head += chunk
        words = head.split(b"\r\n", 1)[0].decode("latin-1").split()
        if len(words) != 3 or words[0] != "CONNECT" or words[1].lower() != self.allowed:
            with contextlib.suppress(OSError):
                conn.sendall(b"HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n")
            conn.close()
            return
        try:
            upstream = socket.create_connection(self.target, timeout=30)
        except OSError:
            with contextlib.suppress(OSError):
                conn.sendall(b"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n")
            conn.close()
            return
        conn.settimeout(None)
        upstream.settimeout(None)
        rest = head.split(b"\r\n\r\n", 1)[1]
        with contextlib.suppress(OSError):
            conn.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
            if rest:
                upstream.sendall(rest)
        _bridge(conn, upstream)

    def stop(self) -> None:
        with contextlib.suppress(OSError):
            self._listener.close()


def open_route(
    profile: ProviderProfile, sock_dir: str, inside_dir: str
) -> tuple[Network, UnixToTcpForwarder | ConnectProxy]:
    """Start the host-side end of the route for `profile` in `sock_dir` (bound at `inside_dir`)."""
    scheme, host, port = profile.endpoint()
    path = os.path.join(sock_dir, SOCKET_NAME)
    relay: UnixToTcpForwarder | ConnectProxy
    if scheme == "https":
        relay, mode = ConnectProxy(path, host, port), "connect"
    else:
        relay, mode = UnixToTcpForwarder(path, profile.url), "forward"
    relay.start()
    url_env = _ENV[profile.kind][1]  # the variable agent_env() puts the URL in
    net = Network(uds=f"{inside_dir}/{SOCKET_NAME}", mode=mode, url=profile.url, url_env=url_env)
    return net, relay
