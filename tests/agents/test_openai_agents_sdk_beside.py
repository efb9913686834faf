"""The harness installs beside the OpenAI Agents SDK (`openai-agents`, whose import name is
`agents`), and an interpreter written with that SDK runs as a custom agent: `harness run` starts
it in its bubblewrap agent host, where `import agents` is the SDK and `interp_harness.sdk` is
ours, and its requests reach the loopback OpenAI-compatible backbone through the forwarder."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from interp_harness.harness.store import make_engine
from interp_harness.harness.store.repo import Store

pytestmark = [pytest.mark.slow, pytest.mark.model_server]

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "docs" / "examples" / "agents_sdk_interpreter.py"


def test_the_pages_recipe_is_the_example_file() -> None:
    """docs/agents.md shows the example from its first import to its end, as it is."""
    page = (ROOT / "docs" / "agents.md").read_text()
    after = page.split("<!-- agents-sdk-example:", 1)[1]
    block = re.search(r"```python\n(.*?)```", after, re.S)
    assert block, "no Python block after the agents-sdk-example marker"
    source = EXAMPLE.read_text()
    assert block.group(1) == source[source.index("import os") :]


def test_both_packages_import_side_by_side() -> None:
    code = (
        "import agents, interp_harness.sdk, json\n"
        "from agents import Runner\n"
        "print(json.dumps([agents.__name__, Runner.__module__, interp_harness.sdk.Agent.__module__]))"
    )
    r = subprocess.run([sys.executable, "-c", code], cwd="/", capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout) == ["agents", "agents.run", "interp_harness.agents.base"]


def test_an_agents_sdk_interpreter_runs_in_its_agent_host(
    tmp_path: Path, backbone_url: str, needs_bwrap: None
) -> None:
    profile = {"kind": "openai", "base_url": f"{backbone_url}/v1"}
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env.update(
        HARNESS_HOME=str(tmp_path / "home"),
        DATABASE_URL=f"sqlite:///{tmp_path / 'h.db'}",
        HARNESS_SANDBOX="bwrap",
        HARNESS_AGENT_ISOLATION="bwrap",
        HARNESS_PROVIDER_PROFILES=json.dumps({"loopback": profile}),
        PYTHONPATH=str(EXAMPLE.parent),  # as the page runs it
    )
    args = ["run", "--agent", "agents_sdk_interpreter:AgentsSDKInterpreter"]
    args += ["-o", "profile=loopback", "-o", "model=SmolLM2-135M-Instruct"]
    args += ["-d", "find-gen", "-f", "numeric", "-n", "1", "--seed", "0", "--no-floor", "--json"]
    r = subprocess.run(
        [sys.executable, "-m", "interp_harness.harness.cli", *args],
        cwd="/",  # not the checkout, whose `agents/` folder would shadow the SDK
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert r.returncode == 0, r.stderr[-3000:]
    summary = json.loads(r.stdout[r.stdout.index("{") :])
    assert summary["progress"]["by_status"] == {"completed": 1}, summary
    [ep] = Store(make_engine(env["DATABASE_URL"])).episodes.of_run(summary["id"])
    assert ep.final_answer and ep.final_answer.endswith("(agents SDK)"), ep
    assert ep.error is None
