"""Real `harness run --mode tools` runs of the openai and anthropic agents (each episode's agent in
its bubblewrap agent host, its requests through the orchestrator's forwarder) against a loopback
stand-in model speaking each API's tool-calling wire format (tests/agents/tool_model.py): parallel
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
from typer.testing import CliRunner

from function_store.catalog import Catalog
from harness.cli import app
from harness.store import make_engine
from harness.store.repo import Store
from tests.agents.tool_model import ANSWER, ToolModel

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap is not installed")

TARGET = "find-v1/numeric/f00150"


@pytest.fixture
def model() -> Iterator[ToolModel]:
    m = ToolModel()
    yield m
    m.close()


def forbidden(target_id: str) -> list[str]:
    """What of the target's hidden truth must never reach the agent: its canary, its ground-truth
    description and the return expression of its code."""
    hidden = Catalog().get(target_id).hidden
    code = [line.strip() for line in (hidden.code or "").splitlines() if "return" in line]
    out = [hidden.canary, hidden.description, *code]
    assert hidden.canary.startswith("CANARY-") and len(out) == 3 and all(out)
    return out


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
    (ep,) = store.episodes(summary["id"])
    return store, ep


def audit(store: Store, ep: Any, model: ToolModel) -> None:
    """No ground truth in the stored messages, tool calls (arguments, results, errors), nor in
    the request bodies the model got."""
    texts = [json.dumps(b) for b in model.bodies()]
    for m in store.messages(ep.id):
        texts += [m.content, json.dumps(m.tool_calls)]
    for c in store.tool_calls(ep.id):
        texts += [json.dumps(c.arguments), c.result, c.error or ""]
    bad = forbidden(TARGET)
    assert len(texts) > 20
    for text in texts:
        for f in bad:
            assert f not in text, f"ground truth {f[:40]!r} reached the agent"


def check_session(store: Store, ep: Any) -> None:
    assert (ep.status, ep.end_reason) == ("completed", "submit_answer"), ep.error
    msgs = store.messages(ep.id)
    roles = [m.role for m in msgs]
    assert roles == ["system", "user", "assistant", *["tool"] * 4, "assistant", "tool", "tool"] + [
        "assistant"
    ]
    first = msgs[2]
    assert [c["name"] for c in first.tool_calls] == ["call_function"] * 2 + [
        "call_functon",
        "call_function",
    ]
    # each result answers its call; the good ones are the text protocol's reply for them
    results = msgs[3:7]
    assert [r.tool_call_id for r in results] == [c["id"] for c in first.tool_calls]
    assert results[0].content.startswith("Response: Function input - output pairs: (1, ")
    assert "(2, " in results[0].content and results[1].content.startswith(
        "Response: Function input - output pairs: (3, "
    )
    assert [r.is_error for r in results] == [False, False, True, True]
    assert "unknown tool 'call_functon'" in results[2].content
    assert "call_function" in results[3].content  # what the arguments broke, for the model
    # the correction ran
    assert [c["arguments"] for c in msgs[7].tool_calls] == [{"inputs": ["4"]}, {"inputs": ["5"]}]
    assert [r.is_error for r in msgs[8:10]] == [False, False]
    assert [c.inputs for c in store.target_calls(ep.id)] == [["1", "2"], ["3"], ["4"], ["5"]]
    rows = store.tool_calls(ep.id)
    assert [(r.step, r.idx, r.name, r.error is not None) for r in rows] == [
        (2, 0, "call_function", False),
        (2, 1, "call_function", False),
        (2, 2, "call_functon", True),
        (2, 3, "call_function", True),
        (7, 0, "call_function", False),
        (7, 1, "call_function", False),
        (10, 0, "submit_answer", False),
    ]
    assert ANSWER in (store.get_episode(ep.id).final_answer or "")


def test_openai_tools_run(tmp_path: Path, model: ToolModel) -> None:
    store, ep = harness_run(tmp_path, "openai", model.url + "/v1")
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
    bad = store.tool_calls(ep.id)[3]
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
    assert store.messages(ep.id)[2].content == "Four experiments at once."
    audit(store, ep, model)


def test_target_call_budget_ends_a_tools_run(tmp_path: Path, model: ToolModel) -> None:
    store, ep = harness_run(tmp_path, "openai", model.url + "/v1", "--max-target-calls", "3")
    assert (ep.status, ep.end_reason) == ("budget_exhausted", "target_calls")
    # turn 1: two calls ran and two were errors (not target calls); turn 2: the first corrected
    # call was the third target call, the second one was not run
    assert [c.inputs for c in store.target_calls(ep.id)] == [["1", "2"], ["3"], ["4"]]
    assert len(model.bodies()) == 2
    audit(store, ep, model)
