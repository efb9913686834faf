"""Fixtures: a real PostgreSQL server (initdb into a temp dir), databases per test, and the API
server as a uvicorn subprocess on loopback."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from orch_helpers import Server, server_env
from pg_server import create_database, pg_missing, postgres
from support import require


@pytest.fixture(scope="session")
def pg_server() -> Iterator[str]:
    """A PostgreSQL server started for this test session; yields its base URL (no database)."""
    why = pg_missing()
    require(why is None, why or "", "HARNESS_TEST_SKIP_POSTGRES")
    with postgres() as url:
        yield url


@pytest.fixture(params=["sqlite", "postgresql"])
def db_url(request, tmp_path) -> str:  # type: ignore[no-untyped-def]
    """A fresh empty database of each kind."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'harness.db'}"
    return create_database(request.getfixturevalue("pg_server"))


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
