"""`harness run`'s progress shows the rounds and target calls of its running episodes, not only
episodes done (an LLM episode runs for minutes at 0/N)."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

from cli_store import ROOT, harness_env

# orch_agents:ProbeAgent: one target call per round, `delay` seconds per step
ORCH = ROOT / "tests" / "harness" / "runs"


def test_progress_shows_rounds_and_target_calls_of_running_episodes(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'harness.db'}"
    env = harness_env(
        url,
        HARNESS_SANDBOX="inprocess",
        PYTHONPATH=os.pathsep.join([str(ORCH), str(ROOT)]),
        # a live progress display although stderr is a pipe here (rich's own switches)
        TTY_COMPATIBLE="1",
        TTY_INTERACTIVE="1",
        COLUMNS="200",
    )
    r = subprocess.run(
        ["harness", "run", "--agent", "orch_agents:ProbeAgent", "-d", "find-gen"]
        + ["-f", "numeric", "--limit", "1", "--seed", "0", "--no-floor"]
        + ["-o", "n_calls=6", "-o", "delay=0.5"],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 0, r.stderr
    seen = [
        (int(a), int(b))
        for a, b in re.findall(r"1 running: rounds (\d+), target calls (\d+)", r.stderr)
    ]
    # the episode's counters as they grew, before it ended (6 calls, then the answer)
    assert any(rounds >= 2 and calls >= 2 for rounds, calls in seen), r.stderr[-3000:]
    assert max(c for _, c in seen) <= 6
