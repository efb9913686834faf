"""`harness agents list`: the agents a run may name, their kind and options with defaults."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]


def _harness(*args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT), COLUMNS="200")
    return subprocess.run(
        ["harness", *args], env=env, cwd=ROOT, capture_output=True, text=True, timeout=120
    )


def test_agents_list_json_has_kinds_and_option_defaults() -> None:
    r = _harness("agents", "list", "--json")
    assert r.returncode == 0, r.stderr
    agents = {a["name"]: a for a in map(json.loads, r.stdout.splitlines())}
    # the built-ins' table in agents/registry.py
    assert {"openai", "anthropic", "scripted-numeric", "interpolation", "replay"} <= set(agents)
    interp = agents["interpolation"]
    assert (interp["kind"], interp["provider"]) == ("builtin", "local")
    opts = {o["name"]: o for o in interp["options"]}
    # agents/interpolation.py: FIND's 129-sample floor over [-128, 128]
    assert (opts["max_inputs"]["default"], opts["low"]["default"], opts["high"]["default"]) == (
        129,
        -128.0,
        128.0,
    )
    assert opts["max_inputs"]["type"] == "int" and not opts["max_inputs"]["required"]
    replay = {o["name"]: o for o in agents["replay"]["options"]}
    assert replay["messages"]["required"] is True
    assert agents["openai"]["provider"] == "openai"
    assert "model" in {o["name"] for o in agents["openai"]["options"]}


@pytest.mark.slow
def test_agents_list_table() -> None:
    r = _harness("agents", "list")
    assert r.returncode == 0, r.stderr
    line = next(x for x in r.stdout.splitlines() if "scripted-numeric" in x)
    assert "builtin" in line and "numeric" in line.split()
    r = _harness("agents", "list", "--options")
    assert r.returncode == 0, r.stderr
    options = r.stdout.split("scripted-numeric options (-o KEY=VALUE):")[1].split("\n\n")[0]
    assert "max_inputs_per_call: int (default 130)" in options


def test_anthropic_max_tokens_default_is_the_one_the_docs_name() -> None:
    """`agents list` showed anthropic's max_tokens default as None while docs/agents.md said 4096
    and the agent sent 4096: the default now lives in the agent's options schema."""
    from typer.testing import CliRunner

    from interp_harness.agents.anthropic_agent import AnthropicAgent
    from interp_harness.harness.cli import app

    r = CliRunner().invoke(app, ["agents", "list", "--json"])
    anthropic = next(a for a in map(json.loads, r.stdout.splitlines()) if a["name"] == "anthropic")
    default = {o["name"]: o for o in anthropic["options"]}["max_tokens"]["default"]
    assert default == AnthropicAgent.default_max_tokens == 4096
    row = next(
        x
        for x in (ROOT / "docs" / "agents.md").read_text().splitlines()
        if x.startswith("| `anthropic` |")
    )
    assert f"`max_tokens` (default {default})" in row
    # what the agent sends unasked is that default
    agent = AnthropicAgent(api_key="placeholder-not-a-key")
    assert agent.max_tokens == default


@pytest.mark.slow
def test_agents_list_says_which_agents_take_tools() -> None:
    r = _harness("agents", "list", "--json")
    tools = {a["name"]: a["tools"] for a in map(json.loads, r.stdout.splitlines())}
    # native tool calls, MCP, the scripted baselines through the text adapter; replay re-sends text
    assert tools["openai"] and tools["anthropic"] and tools["external"]
    assert tools["scripted-numeric"] and tools["scripted-ravel"]
    assert tools["replay"] is False
    assert "tools" in _harness("agents", "list").stdout


def test_agents_list_at_80_columns_keeps_descriptions_whole_and_says_lab() -> None:
    """At 80 columns the table cut every description to 11 characters and had no needs_lab
    column: now each description is whole (under the table when the row leaves it no room)
    and `lab` says which agents run in the code modes only."""
    from typer.testing import CliRunner

    from interp_harness.agents.registry import list_agents
    from interp_harness.harness.cli import app

    r = CliRunner().invoke(app, ["agents", "list"], env={"COLUMNS": "80"})
    assert r.exit_code == 0, r.output
    lines = r.stdout.splitlines()
    assert max(len(x) for x in lines) <= 80
    assert lines[0].split() == ["agent", "kind", "provider", "tools", "lab", "plays"]
    row = {x.split()[0]: x.split() for x in lines[2:] if x.split() and x.split()[0] in {
        "scripted-numeric", "scripted-numeric-code"}}  # fmt: skip
    assert row["scripted-numeric-code"][4] == "yes" and row["scripted-numeric"][4] == "-"
    flat = " ".join(r.stdout.split())
    for a in list_agents():
        assert f"{a.name}: description {' '.join(a.description.split())}" in flat, a.name
    assert "…" not in r.stdout


def test_agents_list_loads_no_model_framework() -> None:
    # every command builds the whole CLI (each family's subcommands included): one that imports
    # torch or jax at the top costs every `harness` call seconds (the circuits build once did)
    code = (
        "import sys\n"
        "from typer.testing import CliRunner\n"
        "from interp_harness.harness.cli import app\n"
        "r = CliRunner().invoke(app, ['agents', 'list', '--json'])\n"
        "assert r.exit_code == 0, r.output\n"
        "print(sorted(m for m in ('torch', 'jax', 'haiku', 'transformers') if m in sys.modules))\n"
    )
    r = subprocess.run(
        ["python3", "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "[]", r.stdout
