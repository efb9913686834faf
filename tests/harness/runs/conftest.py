"""Fixtures: a real PostgreSQL server (initdb into a temp dir), databases per test, and the API
server as a uvicorn subprocess on loopback."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from support.orch_helpers import Server, server_env


@pytest.fixture
def sqlite_url(tmp_path) -> str:  # type: ignore[no-untyped-def]
    return f"sqlite:///{tmp_path / 'harness.db'}"


@pytest.fixture
def start_server(tmp_path) -> Iterator:  # type: ignore[no-untyped-def]
    servers: list[Server] = []

    def start(db: str, *, cli: bool = False, **extra: str) -> Server:
        s = Server(server_env(db, **extra), tmp_path / f"server{len(servers)}.log", cli=cli)
        servers.append(s)
        return s.start()

    yield start
    for s in servers:
        s.stop()
