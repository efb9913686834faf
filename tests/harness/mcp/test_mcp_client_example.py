"""docs/agents.md's MCP client example is a script, run here as a user runs it (issue 40 item 8):
`docs/examples/mcp_client.py URL TOKEN` against a real `harness mcp serve` on one FIND numeric
target. Before, the example lived only in the page: its integer inputs were a tool error under the
schema (inputs are strings), and its prose named fields the current `mcp` SDK spells
`input_schema` and `is_error`. The page's excerpt must be lines of the script, in order."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
from support import HARNESS_CLI

from interp_harness.harness.store import make_engine
from interp_harness.harness.store.repo import Store

ROOT = Path(__file__).resolve().parents[3]
SCRIPT = ROOT / "docs" / "examples" / "mcp_client.py"
TARGET = "find-v1/numeric/f00001"
INPUTS = ["-2", "0", "2"]


def _doc_excerpt() -> list[str]:
    """The Python block after "With the Python SDK" in docs/agents.md, line by line."""
    page = (ROOT / "docs" / "agents.md").read_text()
    after = page.split("With the Python SDK", 1)[1]
    block = re.search(r"```python\n(.*?)```", after, re.S)
    assert block, "no Python block after 'With the Python SDK'"
    return [line.strip() for line in block.group(1).splitlines() if line.strip()]


def test_the_pages_excerpt_is_the_scripts_code_in_order() -> None:
    script = [line.strip() for line in SCRIPT.read_text().splitlines()]
    at = 0
    for line in _doc_excerpt():
        assert line in script[at:], f"docs/agents.md shows a line the script lacks: {line!r}"
        at = script.index(line, at) + 1


@pytest.mark.slow
def test_the_example_script_runs_an_episode_over_mcp(tmp_path: Path) -> None:
    db, endpoints = tmp_path / "mcp.db", tmp_path / "endpoints.json"
    env = {
        **os.environ,
        "DATABASE_URL": f"sqlite:///{db}",
        "HARNESS_SANDBOX": "inprocess",
        "HARNESS_PLUGINS": "",
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
    }
    argv = ["mcp", "serve", "-d", "find-v1", "-f", "numeric", "--id", TARGET, "--no-floor"]
    with open(tmp_path / "serve.log", "wb") as log:
        server = subprocess.Popen(
            [*HARNESS_CLI, *argv, "--mcp-endpoints", str(endpoints)],
            env=env,
            cwd=tmp_path,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    try:
        deadline = time.monotonic() + 120
        while not (endpoints.exists() and endpoints.stat().st_size):
            assert server.poll() is None, (tmp_path / "serve.log").read_text()
            assert time.monotonic() < deadline, "no endpoints file"
            time.sleep(0.2)
        [ep] = json.loads(endpoints.read_text())
        # the script as a user runs it: its own interpreter, outside the checkout
        client = subprocess.run(
            [sys.executable, str(SCRIPT), ep["url"], ep["token"]],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert client.returncode == 0, client.stdout[-2000:] + client.stderr[-3000:]
        assert server.wait(timeout=300) == 0, (tmp_path / "serve.log").read_text()[-3000:]
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()
    out = client.stdout.splitlines()
    assert any(line.startswith("tool call_function: {") for line in out), client.stdout
    replies = [line for line in out if line.startswith("is_error=")]
    assert replies[1] == "is_error=False: answer submitted; the episode has ended"
    # what the script printed is what the episode stored for its one target call
    store = Store(make_engine(f"sqlite:///{db}"))
    [run] = store.runs.latest()
    [episode] = store.episodes.of_run(run.id)
    assert (episode.target_id, episode.status, episode.end_reason) == (
        TARGET,
        "completed",
        "submit_answer",
    )
    call = store.episodes.tool_calls(episode.id)[0]
    assert (call.name, call.arguments, call.error) == ("call_function", {"inputs": INPUTS}, None)
    assert call.result.startswith("Response: Function input - output pairs: (-2, ")
    assert replies[0] == f"is_error=False: {call.result}".splitlines()[0]
    assert "[DESCRIPTION]: a placeholder" in episode.final_answer  # the script's answer, taken
