"""The tests' in-process CLI runner (support.run_cli) gives a command the stdout a fresh process
would: a log handler another library left on the root logger in this worker (Inspect's rich
handler) wrote its lines into `harness run --json`'s output in a full run."""

from __future__ import annotations

import json
import logging
from pathlib import Path

from rich.logging import RichHandler
from support import run_cli
from support.orch_helpers import server_env

RUN = ["run", "--agent", "orch_agents:ProbeAgent", "-d", "orch-test", "-f", "numeric"]


def test_stdout_has_no_foreign_log_lines(tmp_path: Path, sqlite_url: str) -> None:
    root = logging.getLogger()
    foreign = RichHandler()
    root.addHandler(foreign)
    try:
        logging.getLogger("interp_harness.harness.target_client").warning(
            "a line for the foreign handler"
        )
        r = run_cli(
            [*RUN, "--limit", "1", "--no-floor", "--json"], server_env(sqlite_url), tmp_path
        )
    finally:
        root.removeHandler(foreign)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["status"] in ("completed", "failed")
