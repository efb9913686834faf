"""Starting the project's intervention service for tests: a real uvicorn subprocess
(`harness intervention serve`) on a free loopback port. The session's shared servers are fixtures
of tests/shared_services.py; a test that must own a server (it fills its queue, starts it with
other options or another cache) calls `serve_intervention` itself and says why."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from interp_harness.model_services.intervention.client import serve_argv
from support import free_port, stop_process, wait_until_up

ROOT = Path(__file__).resolve().parents[3]
START_TIMEOUT_S = 600  # pyvene's import and a cold GGUF conversion are slow on a busy CPU


def start_server(model: str, log: Path, *extra: str) -> tuple[subprocess.Popen, str]:
    port = free_port()
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", "1"),  # tiny models; shared CPU
    }
    cmd = serve_argv(model)
    with open(log, "wb") as fh:
        proc = subprocess.Popen(
            [*cmd, "--device", "cpu", "--port", str(port), *extra],
            cwd=ROOT,
            env=env,
            stdout=fh,
            stderr=subprocess.STDOUT,
        )
    url = f"http://127.0.0.1:{port}"
    wait_until_up(proc, url + "/health", log.read_text, START_TIMEOUT_S, poll=0.5)
    return proc, url


def serve_intervention(model: str, factory: pytest.TempPathFactory, *extra: str) -> Iterator[str]:
    """A server of `model` with `extra` options; yields its URL, stops it afterwards."""
    proc, url = start_server(model, factory.mktemp("iv") / "server.log", *extra)
    try:
        yield url
    finally:
        stop_process(proc)
