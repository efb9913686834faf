"""Say at once, before a model loads or a scheduler starts, that a server's port is taken."""

from __future__ import annotations

import socket


def port_problem(host: str, port: int) -> str | None:
    """None when `host:port` can be bound now (as uvicorn binds it), else what is wrong."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except OSError as e:
        return f"cannot resolve --host {host!r}: {e}"
    family, kind, proto, _, address = infos[0]
    with socket.socket(family, kind, proto) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(address)
        except OSError as e:
            if e.errno == 98:  # EADDRINUSE
                return (
                    f"port {port} on {host} is already in use (another server, or an earlier "
                    f"one still running?): stop it or pass --port"
                )
            return f"cannot listen on {host}:{port}: {e.strerror or e}"
    return None
