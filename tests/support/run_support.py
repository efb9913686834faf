"""For tests that drive `harness run` in their process (CliRunner) and then read what it stored:
the environment of such a run, and the harness's real app (`interp_harness.harness.api.app.create_app`,
scheduler off) served by uvicorn on a loopback port in a thread."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from support import serve_in_process


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
    from interp_harness.harness.api.app import create_app
    from interp_harness.harness.settings import Settings

    app = create_app(Settings(), run_scheduler=False)
    with serve_in_process(app) as url:
        yield url
