"""Starting a model server for a benchmark script: a subprocess on a loopback port, waited for
until its /health answers (the scripts run as `python benchmarks/NAME.py`, so this folder is on
sys.path and they import this module by its name)."""

from __future__ import annotations

import socket
import subprocess
import time
from collections.abc import Sequence
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
