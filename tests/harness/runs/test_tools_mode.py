"""Protocol mode `tools` in the episode loop (SQLite, in-process agents): tool results are the
text protocol's replies, parallel calls, tool errors and the agent's correction, submit_answer,
budgets, resumption after a crash between a stored tool call and its result, and the same scripted
agent scoring the same in `default` and `tools` mode."""

from __future__ import annotations

import orch_plugin  # noqa: F401  (registers the orch-test targets)
import pytest
from support.orch_helpers import resume_in_process, run_in_process
from tool_agents import ScriptedToolsAgent

from interp_harness.harness.domain.catalogs import CatalogCache
from interp_harness.harness.domain.spec import RunSpec
from interp_harness.harness.episode import prompts
from interp_harness.harness.runs.admission import create_run
from interp_harness.harness.runs.selection import SelectionError
from interp_harness.harness.store import make_engine
from interp_harness.harness.store.repo import Store

F0 = "orch-test/numeric/f00000"  # f(x) = 2x + 1
AGENT = "tool_agents:ScriptedToolsAgent"


def spec(script: list, **kw) -> dict:  # type: ignore[type-arg]
    return {
        "agent": AGENT,
        "dataset": "orch-test",
        "ids": [F0],
        "agent_options": {"script": script},
        "protocol": {"mode": "tools"},
        **kw,
    }


def call(*inputs: str) -> dict:  # type: ignore[type-arg]
    return {"name": "call_function", "arguments": {"inputs": list(inputs)}}


async def test_parallel_tool_calls_and_submit(sqlite_url: str) -> None:
    store, [run] = await run_in_process(
        sqlite_url, spec([[call("0"), call("1", "2")]]), agent_isolation="none"
    )
    assert run.status == "completed"
    [ep] = store.episodes.of_run(run.id)
    msgs = store.episodes.messages(ep.id)
    assert [m.role for m in msgs] == ["system", "user", "assistant", "tool", "tool", "assistant"]
    assert msgs[0].content == prompts.TOOLS_SYSTEM_PROMPT
    assert "call_function" in msgs[1].content and "submit_answer" in msgs[1].content
    assert [c["id"] for c in msgs[2].tool_calls] == ["t0_0", "t0_1"]
    # each result is the text protocol's reply for that command, byte for byte (FIND's format)
    assert (msgs[3].tool_call_id, msgs[3].content) == (
        "t0_0",
        "Response: Function input - output pairs: (0, 1.0) \n",
    )
    assert (msgs[4].tool_call_id, msgs[4].content) == (
        "t0_1",
        "Response: Function input - output pairs: (1, 3.0) (2, 5.0) \n",
    )
    assert [(c.step, c.idx, c.inputs) for c in store.episodes.target_calls(ep.id)] == [
        (2, 0, ["0"]),
        (2, 1, ["1", "2"]),
    ]
    rows = store.episodes.tool_calls(ep.id)
    assert [(r.step, r.idx, r.call_id, r.name, r.error) for r in rows] == [
        (2, 0, "t0_0", "call_function", None),
        (2, 1, "t0_1", "call_function", None),
        (5, 0, "t1_0", "submit_answer", None),
    ]
    assert rows[1].arguments == {"inputs": ["1", "2"]}
    assert rows[1].result == msgs[4].content
    # the answer is scored from its text rendering, with FIND's tags
    assert ep.end_reason == "submit_answer"
    assert ep.final_answer.startswith("[DESCRIPTION]: affine; saw")
    assert "[DOMAIN]: all reals\n[CODE]: \n```python\ndef f(x):\n    return 2 * x + 1\n```" in (
        ep.final_answer
    )
    assert (ep.rounds, ep.target_calls, ep.inputs) == (2, 2, 3)
    scores = store.scores.of_episodes([ep.id])
    assert {s.metric: s.value for s in scores} == {"answered": 1.0, "calls": 2.0}
    assert ScriptedToolsAgent.offered[-1] == ["call_function", "submit_answer"]


async def test_tool_errors_are_answered_and_the_agent_corrects(sqlite_url: str) -> None:
    script = [
        [{"name": "run_python", "arguments": {"code": "import os"}}],  # unknown tool
        [{"name": "call_function", "arguments": {"inputs": "3"}}],  # not an array
        [{"name": "call_function", "arguments": {"inputs": ["3"], "extra": 1}}],  # extra key
        [{"name": "submit_answer", "arguments": {}}],  # required parts missing
        [call("3")],  # corrected
    ]
    store, [run] = await run_in_process(sqlite_url, spec(script), agent_isolation="none")
    [ep] = store.episodes.of_run(run.id)
    assert ep.status == "completed"
    rows = store.episodes.tool_calls(ep.id)
    errors = [r.error for r in rows]
    assert errors[0].startswith("unknown tool 'run_python'; the tools are: call_function")
    assert "inputs: '3' is not of type 'array'" in errors[1]
    assert "Additional properties are not allowed ('extra' was unexpected)" in errors[2]
    assert "'description' is a required property" in errors[3]
    assert errors[4:] == [None, None]
    msgs = [m for m in store.episodes.messages(ep.id) if m.role == "tool"]
    assert [m.is_error for m in msgs] == [True, True, True, True, False]
    assert msgs[0].content.startswith("Error: unknown tool 'run_python'")
    assert msgs[4].content == "Response: Function input - output pairs: (3, 7.0) \n"
    # errors reach no target
    assert [c.inputs for c in store.episodes.target_calls(ep.id)] == [["3"]]
    assert (ep.rounds, ep.target_calls) == (6, 1)
    events = [e.data for e in store.events.of_run(run.id) if e.kind == "step"]
    assert [e["tool_errors"] for e in events] == [1, 1, 1, 1, 0]


@pytest.mark.parametrize(
    ("budgets", "reason", "calls"),
    [({"max_target_calls": 2}, "target_calls", 2), ({"max_rounds": 2}, "rounds", 1)],
)
async def test_budgets_count_tool_calls(sqlite_url: str, budgets, reason, calls) -> None:  # type: ignore[no-untyped-def]
    script = [[call("0")], [call("1"), call("2")], [call("3")]]
    store, [run] = await run_in_process(
        sqlite_url, spec(script, budgets=budgets), agent_isolation="none"
    )
    [ep] = store.episodes.of_run(run.id)
    assert (ep.status, ep.end_reason, ep.target_calls) == ("budget_exhausted", reason, calls)


async def test_an_agent_without_tools_is_refused_at_admission(sqlite_url: str) -> None:
    """Refused when the run is created (CLI and REST alike), before any episode exists."""
    store = Store(make_engine(sqlite_url))
    s = RunSpec.model_validate(spec([]) | {"agent": "tool_agents:TextOnlyAgent"})
    with pytest.raises(SelectionError) as err:
        create_run(store, s, CatalogCache())
    assert "agent 'text-only' does not support protocol mode 'tools'" in str(err.value)
    assert store.runs.latest() == []
    text = spec([]) | {"agent": "tool_agents:TextOnlyAgent", "protocol": {"mode": "default"}}
    create_run(store, RunSpec.model_validate(text), CatalogCache())  # the text protocol: fine


async def test_text_in_tools_mode_gets_a_hint(sqlite_url: str) -> None:
    store, [run] = await run_in_process(sqlite_url, spec([[]]), agent_isolation="none")
    [ep] = store.episodes.of_run(run.id)
    msgs = store.episodes.messages(ep.id)
    assert msgs[3].role == "user" and "No tool call found in your message" in msgs[3].content
    assert ep.status == "completed"


async def test_resume_runs_a_stored_tool_call_once(sqlite_url: str) -> None:
    """The process died after the assistant message with its tool calls was stored and before
    their results were: on resume the calls run (once), and the agent is not asked again."""
    store = Store(make_engine(sqlite_url))
    s = RunSpec.model_validate(spec([[call("8")], [call("9")]]))
    run = create_run(store, s, CatalogCache())
    store.episodes.ensure(
        run.id,
        [{"idx": 0, "target_id": F0, "dataset": "orch-test", "family": "numeric", "variant": "c"}],
    )
    [ep] = store.episodes.of_run(run.id)
    store.runs.set_status(run.id, "running")
    store.episodes.update(ep.id, status="running")
    stored = [{"id": "x7", "name": "call_function", "arguments": {"inputs": ["7"]}}]
    store.episodes.add_messages(
        ep.id,
        [
            {"step": 0, "role": "system", "content": prompts.TOOLS_SYSTEM_PROMPT},
            {"step": 1, "role": "user", "content": "the task"},
            {"step": 2, "role": "assistant", "content": "", "tool_calls": stored},
        ],
    )
    run = await resume_in_process(store, run.id, agent_isolation="none")
    assert run.status == "completed"
    msgs = store.episodes.messages(ep.id)
    assert (msgs[3].role, msgs[3].tool_call_id) == ("tool", "x7")
    assert msgs[3].content == "Response: Function input - output pairs: (7, 15.0) \n"
    # the agent's next message is its script's second step: its first one was the stored one
    assert [c["arguments"] for c in msgs[4].tool_calls] == [{"inputs": ["9"]}]
    assert [c.inputs for c in store.episodes.target_calls(ep.id)] == [["7"], ["9"]]
    assert [r.call_id for r in store.episodes.tool_calls(ep.id)][:2] == ["x7", "t1_0"]
