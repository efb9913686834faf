"""A real PostgreSQL server in a temp dir (initdb + pg_ctl), started and stopped by the caller, and
fresh databases on it. Shared by the orchestrator and scale-out tests and benchmarks/scale_out.py.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

from support import free_port

PG_BIN = Path("/usr/lib/postgresql/15/bin")


def _pg_tool(name: str) -> str | None:
    p = PG_BIN / name
    return str(p) if p.exists() else shutil.which(name)


def _as_postgres(argv: list[str]) -> list[str]:
    # initdb and postgres refuse to run as root: run them as the postgres system user.
    return ["runuser", "-u", "postgres", "--", *argv] if os.geteuid() == 0 else argv


def pg_missing() -> str | None:
    """Why PostgreSQL cannot be started here, or None."""
    if not _pg_tool("initdb") or not _pg_tool("pg_ctl"):
        return "PostgreSQL binaries (initdb, pg_ctl) are not installed (scripts/install.sh)"
    if os.geteuid() == 0 and not shutil.which("runuser"):
        return "running as root without runuser: cannot start PostgreSQL"
    return None


@contextlib.contextmanager
def postgres(max_connections: int | None = None) -> Iterator[str]:
    """A PostgreSQL server in a temp dir; yields its base URL (append /<database>)."""
    initdb, pg_ctl = _pg_tool("initdb"), _pg_tool("pg_ctl")
    assert initdb and pg_ctl, pg_missing()
    base = Path(tempfile.mkdtemp(prefix="harness-pg-"))
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
    if max_connections:
        opts += f" -c max_connections={max_connections}"
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


def create_database(server: str) -> str:
    """A fresh empty database on `server` (a URL from `postgres`); returns its URL."""
    import psycopg

    name = "t_" + uuid.uuid4().hex[:12]
    dsn = server.replace("postgresql+psycopg://", "postgresql://") + "/postgres"
    with psycopg.connect(dsn, autocommit=True) as c:
        c.execute(f'CREATE DATABASE "{name}"')
    return f"{server}/{name}"
