"""Fixtures: a real PostgreSQL server (initdb into a temp dir), databases per test, and the API
server as a uvicorn subprocess on loopback."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
PG_BIN = Path("/usr/lib/postgresql/15/bin")
sys.path.insert(0, str(HERE))  # orch_plugin, orch_helpers

from orch_helpers import Server, free_port, server_env  # noqa: E402


def _pg_tool(name: str) -> str | None:
    p = PG_BIN / name
    return str(p) if p.exists() else shutil.which(name)


def _as_postgres(argv: list[str]) -> list[str]:
    # initdb and postgres refuse to run as root: run them as the postgres system user.
    if os.geteuid() == 0:
        return ["runuser", "-u", "postgres", "--", *argv]
    return argv


@pytest.fixture(scope="session")
def pg_server() -> Iterator[str]:
    """A PostgreSQL server started for this test session; yields its base URL (no database)."""
    initdb, pg_ctl = _pg_tool("initdb"), _pg_tool("pg_ctl")
    if not initdb or not pg_ctl:
        pytest.skip("PostgreSQL binaries (initdb, pg_ctl) are not installed")
    if os.geteuid() == 0 and not shutil.which("runuser"):
        pytest.skip("running as root without runuser: cannot start PostgreSQL")
    base = Path(tempfile.mkdtemp(prefix="orch-pg-"))
    data = base / "data"
    if os.geteuid() == 0:
        shutil.chown(base, "postgres", "postgres")
    port = free_port()
    subprocess.run(
        _as_postgres([initdb, "-D", str(data), "-A", "trust", "-U", "postgres", "--no-sync"]),
        check=True,
        capture_output=True,
    )
    opts = f"-p {port} -k {base} -c listen_addresses=127.0.0.1 -c fsync=off"
    subprocess.run(
        _as_postgres([pg_ctl, "-D", str(data), "-o", opts, "-l", str(base / "log"), "-w", "start"]),
        check=True,
        capture_output=True,
    )
    try:
        yield f"postgresql+psycopg://postgres@127.0.0.1:{port}"
    finally:
        subprocess.run(
            _as_postgres([pg_ctl, "-D", str(data), "-m", "immediate", "stop"]), capture_output=True
        )
        shutil.rmtree(base, ignore_errors=True)


def _create_pg_db(server: str) -> str:
    import psycopg

    name = "t_" + uuid.uuid4().hex[:12]
    dsn = server.replace("postgresql+psycopg://", "postgresql://") + "/postgres"
    with psycopg.connect(dsn, autocommit=True) as c:
        c.execute(f'CREATE DATABASE "{name}"')
    return f"{server}/{name}"


@pytest.fixture(params=["sqlite", "postgresql"])
def db_url(request, tmp_path) -> str:  # type: ignore[no-untyped-def]
    """A fresh empty database of each kind."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'harness.db'}"
    return _create_pg_db(request.getfixturevalue("pg_server"))


@pytest.fixture
def sqlite_url(tmp_path) -> str:  # type: ignore[no-untyped-def]
    return f"sqlite:///{tmp_path / 'harness.db'}"


@pytest.fixture
def start_server(tmp_path) -> Iterator:  # type: ignore[no-untyped-def]
    servers: list[Server] = []

    def start(db: str, **extra: str) -> Server:
        s = Server(server_env(db, **extra), tmp_path / f"server{len(servers)}.log")
        servers.append(s)
        return s.start()

    yield start
    for s in servers:
        s.stop()
