"""Starting the project's intervention service for tests: a real uvicorn subprocess
(`harness intervention serve`) on a free loopback port. The session's shared servers are fixtures
of tests/support/shared_services.py; a test that must own a server (it fills its queue, starts it with
other options or another cache) calls `serve_intervention` itself and says why."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from interp_harness.model_services.intervention.client import serve_argv
from support import start_model_server, stop_process


def start_server(model: str, log: Path, *extra: str) -> tuple[subprocess.Popen, str]:
    """An intervention server of `model` on CPU with `extra` options, once /health answers."""
    return start_model_server([*serve_argv(model), "--device", "cpu", *extra], log)


def serve_intervention(model: str, factory: pytest.TempPathFactory, *extra: str) -> Iterator[str]:
    """A server of `model` with `extra` options; yields its URL, stops it afterwards."""
    proc, url = start_server(model, factory.mktemp("iv") / "server.log", *extra)
    try:
        yield url
    finally:
        stop_process(proc)
