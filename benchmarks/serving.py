"""The servers a benchmark script starts for itself: a model server (a subprocess on a loopback
port, waited for until its /health answers), a PostgreSQL server in a temp dir, and a Ray cluster
of local nodes. The scripts run as `python benchmarks/NAME.py`, so this folder is on sys.path and
they import this module by its name. A benchmark never imports the test suite's helpers
(tests/support has the suite's own PostgreSQL and Ray starters, with its fixtures around them):
what it needs is here or in the installed package."""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator, Sequence
from pathlib import Path

import httpx


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def serve(argv: Sequence[str], port: int, log: Path | None = None, timeout: float = 900):  # type: ignore[no-untyped-def]
    """`argv --port PORT` started (output to `log`, else inherited), returned once
    http://127.0.0.1:PORT/health answers 200; SystemExit with the log's tail if it exits first or
    does not answer within `timeout` seconds."""
    out = open(log, "wb") if log else None  # noqa: SIM115 - the server keeps it
    proc = subprocess.Popen(
        [*argv, "--port", str(port)], stdout=out, stderr=subprocess.STDOUT if out else None
    )
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            tail = log.read_text()[-3000:] if log else ""
            raise SystemExit(f"server exited with {proc.returncode}\n{tail}")
        try:
            if httpx.get(f"http://127.0.0.1:{port}/health", timeout=2).status_code == 200:
                return proc
        except httpx.HTTPError:
            pass
        time.sleep(0.5)
    proc.kill()
    raise SystemExit(f"server did not answer /health within {timeout:g} s")


def stop(proc: subprocess.Popen | None, grace: float = 10) -> None:
    """SIGTERM, then SIGKILL after `grace` seconds."""
    if proc is None or proc.poll() is not None:
        return
    proc.terminate()
    try:
        proc.wait(grace)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


# ---- PostgreSQL ---------------------------------------------------------------------------------
def _pg_tool(name: str) -> str:
    p = Path("/usr/lib/postgresql/15/bin") / name  # scripts/install.sh's PostgreSQL
    found = str(p) if p.exists() else shutil.which(name)
    if not found:
        raise SystemExit(f"PostgreSQL's {name} is not installed (scripts/install.sh)")
    return found


def _as_postgres(argv: list[str]) -> list[str]:
    # initdb and postgres refuse to run as root: run them as the postgres system user
    return ["runuser", "-u", "postgres", "--", *argv] if os.geteuid() == 0 else argv


@contextlib.contextmanager
def postgres(max_connections: int = 200) -> Iterator[str]:
    """A PostgreSQL server in a temp dir, stopped and removed at the end; yields its base URL
    (append /<database>, or use `create_database`)."""
    initdb, pg_ctl = _pg_tool("initdb"), _pg_tool("pg_ctl")
    base = Path(tempfile.mkdtemp(prefix="bench-pg-"))
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
    """A fresh empty database on `server` (a URL from `postgres`); its URL."""
    import psycopg

    name = "b_" + uuid.uuid4().hex[:12]
    dsn = server.replace("postgresql+psycopg://", "postgresql://") + "/postgres"
    with psycopg.connect(dsn, autocommit=True) as c:
        c.execute(f'CREATE DATABASE "{name}"')
    return f"{server}/{name}"


# ---- Ray ----------------------------------------------------------------------------------------
@contextlib.contextmanager
def ray_cluster(
    nodes: int, *, cpus_per_node: float = 1, object_store_mb: int = 100, token: str | None = None
) -> Iterator[str]:
    """`ray start --head` plus `nodes - 1` more nodes on loopback, each in a process group of its
    own (all killed at the end, also when the caller failed); yields the head's address. The
    nodes inherit this environment (HARNESS_DATA_DIR, the token) and import the installed
    package."""
    temp = tempfile.mkdtemp(prefix="bray-", dir="/tmp")  # short: Ray's socket paths live under it
    port = free_port()
    env = {
        **os.environ,
        "RAY_USAGE_STATS_ENABLED": "0",
        "RAY_AUTH_MODE": "token",
        "RAY_AUTH_TOKEN": token or secrets.token_hex(32),
        # a loaded machine must not turn a target call into a timeout in one run only
        "HARNESS_SERVICE_CALL_TIMEOUT_S": "120",
    }
    groups: list[int] = []

    def start(args: list[str]) -> None:
        log = Path(temp) / f"start{len(groups)}.log"
        argv = [sys.executable, "-m", "ray.scripts.scripts", "start", *args]
        argv += [
            "--node-ip-address=127.0.0.1",
            f"--num-cpus={cpus_per_node}",
            f"--object-store-memory={object_store_mb * 2**20}",
            f"--dashboard-agent-listen-port={free_port()}",
            f"--dashboard-agent-grpc-port={free_port()}",
            f"--metrics-export-port={free_port()}",
            f"--runtime-env-agent-port={free_port()}",
            "--disable-usage-stats",
        ]
        with open(log, "wb") as fh:
            # its daemons keep this process group, which the end kills
            proc = subprocess.Popen(
                argv, env=env, stdout=fh, stderr=subprocess.STDOUT, start_new_session=True
            )
            groups.append(proc.pid)
            if proc.wait(timeout=240) != 0:
                raise SystemExit(f"ray start failed: {log.read_text()[-2000:]}")

    try:
        start(
            [
                "--head",
                f"--port={port}",
                f"--ray-client-server-port={free_port()}",
                "--include-dashboard=false",
                f"--temp-dir={temp}",
            ]
        )
        for _ in range(nodes - 1):
            start([f"--address=127.0.0.1:{port}"])
        yield f"127.0.0.1:{port}"
    finally:
        for pgid in reversed(groups):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(pgid, signal.SIGKILL)
        time.sleep(0.5)
        shutil.rmtree(temp, ignore_errors=True)
