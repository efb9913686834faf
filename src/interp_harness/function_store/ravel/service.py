"""The intervention service for RAVEL commands: the operator's (HARNESS_INTERVENTION_URL or
--url), else one started here as a subprocess on a free loopback port for the command's life."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator

import httpx

from interp_harness.model_services.intervention.client import (
    InterventionClient,
    InterventionError,
    serve_argv,
)

START_TIMEOUT_S = 600.0  # importing pyvene and converting the GGUF is slow on a busy CPU


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def intervention_client(model: str, url: str | None = None) -> Iterator[InterventionClient]:
    url = url or os.environ.get("HARNESS_INTERVENTION_URL")
    if url:
        with InterventionClient(url) as c:
            yield c
        return
    port = _free_port()
    env = dict(os.environ)
    cmd = serve_argv(model)
    cmd += ["--device", "cpu", "--port", str(port)]
    with tempfile.TemporaryFile() as log:
        proc = subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT)
        try:
            base = f"http://127.0.0.1:{port}"
            deadline = time.monotonic() + START_TIMEOUT_S
            while True:
                if proc.poll() is not None:
                    log.seek(0)
                    tail = log.read().decode(errors="replace")[-2000:]
                    raise InterventionError(f"the intervention service exited:\n{tail}")
                with contextlib.suppress(httpx.HTTPError):
                    if httpx.get(base + "/health", timeout=2).status_code == 200:
                        break
                if time.monotonic() > deadline:
                    raise InterventionError(
                        f"the intervention service did not start in {START_TIMEOUT_S}s"
                    )
                time.sleep(0.5)
            with InterventionClient(base) as c:
                yield c
        finally:
            proc.terminate()
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
