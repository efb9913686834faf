"""Starting a server from the CLI: say at once, before a model loads or a scheduler starts, that
its port is taken; a model server that cannot start ends the command saying why."""

from __future__ import annotations

import logging
import socket
from collections.abc import Callable

import typer
from rich.console import Console


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


def exit_if_port_taken(host: str, port: int, console: Console) -> None:
    """Exit 2 (a usage error) when `host:port` cannot be bound, printing why on `console`."""
    if problem := port_problem(host, port):
        console.print(f"[red]{problem}[/red]", soft_wrap=True)
        raise typer.Exit(2)


def run_model_server(
    model: str, run: Callable[[], None], errors: tuple[type[BaseException], ...], console: Console
) -> None:
    """Run a model server (blocks until it stops); one of `errors` (the model cannot be loaded,
    the port cannot be bound) exits 1, printing why on `console`."""
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    try:
        run()
    except errors as e:
        console.print(f"[red]cannot serve {model!r}: {e}[/red]")
        raise typer.Exit(1) from e
