"""Real `harness run --mode tools` runs of the openai and anthropic agents (each episode's agent in
its bubblewrap agent host, its requests through the orchestrator's forwarder) against a loopback
stand-in model speaking each API's tool-calling wire format (tests/support/tool_model.py): parallel
tool calls, a tool error (an unknown tool, bad arguments) and the model's correction in the next
turn, submit_answer ending the episode, the target-call budget ending it mid-message, and a leak
audit: no ground truth of the target in any stored message, tool call or result, nor in anything
the model was sent."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support.tool_model import TARGET, ToolModel, audit, check_session
from typer.testing import CliRunner

from interp_harness.harness.cli import app
from interp_harness.harness.store import make_engine
from interp_harness.harness.store.repo import Store

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap is not installed")


@pytest.fixture
def model() -> Iterator[ToolModel]:
    m = ToolModel()
    yield m
    m.close()


def harness_run(
    tmp_path: Path, agent: str, url: str, *extra: str, env: dict[str, str] | None = None
) -> tuple[Store, Any]:
    db = f"sqlite:///{tmp_path / 'harness.db'}"
    env = {"DATABASE_URL": db, "HARNESS_SANDBOX": "inprocess", "HARNESS_PLUGINS": "", **(env or {})}
    model = "m1" if agent == "openai" else "claude-x"
    args = ["run", "-a", agent, "-d", "find-v1", "--id", TARGET, "--no-floor", "--mode", "tools"]
    args += ["--json", "-o", f"base_url={url}", "-o", f"model={model}", *extra]
    result = CliRunner().invoke(app, args, env=env)
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout[result.stdout.index("{") :])
    store = Store(make_engine(db))
    (ep,) = store.episodes.of_run(summary["id"])
    return store, ep


@pytest.mark.parametrize("isolation", ["bwrap", "none"])  # none: the agent in the orchestrator
def test_openai_tools_run(tmp_path: Path, model: ToolModel, isolation: str) -> None:
    store, ep = harness_run(tmp_path, "openai", model.url + "/v1", "--agent-isolation", isolation)
    bodies = model.bodies()
    assert len(bodies) == 3
    assert all(b["tool_choice"] == "auto" for b in bodies)
    assert [t["function"]["name"] for t in bodies[0]["tools"]] == ["call_function", "submit_answer"]
    # the tool errors went back to the model as tool messages naming their calls
    tool_msgs = [m for m in bodies[1]["messages"] if m["role"] == "tool"]
    assert [m["tool_call_id"] for m in tool_msgs] == [f"call_0_{i}" for i in range(4)]
    assert [m["content"].startswith("Error:") for m in tool_msgs] == [False, False, True, True]
    # the call whose arguments were no JSON goes back as the model wrote it
    sent = bodies[1]["messages"][2]["tool_calls"][3]["function"]["arguments"]
    assert sent == '{"inputs": [5'
    check_session(store, ep)
    bad = store.episodes.tool_calls(ep.id)[3]
    assert bad.arguments == {"_raw_arguments": '{"inputs": [5'}
    assert "not a JSON object" in (bad.error or ""), bad.error
    audit(store, ep, model)


def test_anthropic_tools_run(tmp_path: Path, model: ToolModel) -> None:
    store, ep = harness_run(
        tmp_path, "anthropic", model.url, env={"ANTHROPIC_API_KEY": "ak-stand-in-key-000"}
    )
    bodies = model.bodies()
    assert len(bodies) == 3
    assert all(b["tool_choice"] == {"type": "auto"} for b in bodies)
    assert [t["name"] for t in bodies[0]["tools"]] == ["call_function", "submit_answer"]
    # all four results in the one user turn after the assistant's tool_use blocks
    user = bodies[1]["messages"][-1]
    assert user["role"] == "user"
    assert [(b["type"], b["tool_use_id"], b["is_error"]) for b in user["content"]] == [
        ("tool_result", f"toolu_0_{i}", flag) for i, flag in enumerate([False, False, True, True])
    ]
    check_session(store, ep)
    assert store.episodes.messages(ep.id)[2].content == "Four experiments at once."
    audit(store, ep, model)


def test_target_call_budget_ends_a_tools_run(tmp_path: Path, model: ToolModel) -> None:
    store, ep = harness_run(tmp_path, "openai", model.url + "/v1", "--max-target-calls", "3")
    assert (ep.status, ep.end_reason) == ("budget_exhausted", "target_calls")
    # turn 1: two calls ran and two were errors (not target calls); turn 2: the first corrected
    # call was the third target call, the second one was not run
    assert [c.inputs for c in store.episodes.target_calls(ep.id)] == [["1", "2"], ["3"], ["4"]]
    assert len(model.bodies()) == 2
    audit(store, ep, model)
