"""For tests that drive `harness run` in their process (CliRunner) and then read what it stored:
the environment of such a run, and the harness's real app (`harness.api.app.create_app`,
scheduler off) served by uvicorn on a loopback port in a thread."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import uvicorn


def cli_env(tmp_path: Path) -> dict[str, str]:
    """A `harness run` in this process: SQLite under `tmp_path`, target services in-process (the
    agent still runs in its bubblewrap agent host), no plugins, no scoring."""
    return {
        "DATABASE_URL": f"sqlite:///{tmp_path / 'harness.db'}",
        "HARNESS_SANDBOX": "inprocess",
        "HARNESS_PLUGINS": "",
        "HARNESS_SCORE_HOOK": "none",
    }


@contextmanager
def serve_app() -> Iterator[str]:
    """The app on 127.0.0.1 (settings from the environment); yields its base URL."""
    from harness.api.app import create_app
    from harness.settings import Settings

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    app = create_app(Settings(), run_scheduler=False)
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="error"))
    t = threading.Thread(target=server.run, daemon=True)
    t.start()
    try:
        deadline = time.monotonic() + 60
        while not server.started:
            if time.monotonic() > deadline or not t.is_alive():
                raise RuntimeError("the app did not start")
            time.sleep(0.05)
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        t.join(10)
