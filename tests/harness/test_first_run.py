"""Issue 12, first-run stumbles: each command says what is wrong, without a traceback, and exits
with code 2 (a port taken, a database that cannot be created or reached)."""

from __future__ import annotations

import socket
from collections.abc import Iterator

import pytest


@pytest.fixture
def taken_port() -> Iterator[int]:
    with socket.socket() as s:  # a real listener holds the port
        s.bind(("127.0.0.1", 0))
        s.listen()
        yield s.getsockname()[1]


@pytest.mark.parametrize("command", [["serve"], ["backbone", "serve"], ["intervention", "serve"]])
def test_port_taken(cli, taken_port: int, command: list[str]) -> None:  # type: ignore[no-untyped-def]
    p = cli(*command, "--port", str(taken_port), timeout=120)
    assert p.returncode == 2, p.stderr[-2000:]
    assert f"port {taken_port} on 127.0.0.1 is already in use" in p.stderr
    assert "pass --port" in p.stderr and "Traceback" not in p.stderr
    assert "Loading weights" not in p.stderr  # said before any model loads


@pytest.mark.parametrize(
    "argv",
    [
        ["run", "--agent", "scripted-numeric", "--dataset", "find-gen", "--limit", "1"],
        ["runs", "list"],
        ["serve", "--port", "0"],
    ],
)
def test_database_directory_cannot_be_created(cli, argv: list[str]) -> None:  # type: ignore[no-untyped-def]
    p = cli(*argv, env={"HARNESS_HOME": "/proc/no-such-home"})
    assert p.returncode == 2, p.stderr[-2000:]
    assert "cannot create the database directory /proc/no-such-home" in p.stderr
    assert "set HARNESS_HOME to a writable directory" in p.stderr and "Traceback" not in p.stderr


def test_database_server_down(cli) -> None:  # type: ignore[no-untyped-def]
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    p = cli("runs", "list", env={"DATABASE_URL": f"postgresql://u:secret@127.0.0.1:{port}/x"})
    assert p.returncode == 2, p.stderr[-2000:]
    assert f"cannot open the database postgresql+psycopg://u:***@127.0.0.1:{port}/x" in p.stderr
    assert "Connection refused" in p.stderr and "secret" not in p.stderr
    assert "Traceback" not in p.stderr
