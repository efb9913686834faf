"""Protocol mode `tools` from outside: the REST API's episode detail carries each message's tool
calls / the call a tool message answers, and the episode's tool calls with their results and
errors (what the agent sent and read: served to everyone, like the messages); the Inspect export
turns them into Inspect's tool-call messages and tool events."""

from __future__ import annotations

import httpx
import pytest
from support.tool_episode import REPLY, XSS, tools_episode


@pytest.mark.slow
async def test_episode_detail_serves_tool_calls(sqlite_url: str, start_server) -> None:  # type: ignore[no-untyped-def]
    _, ep = await tools_episode(sqlite_url)
    srv = start_server(sqlite_url)
    d = httpx.get(f"{srv.url}/episodes/{ep.id}", timeout=30).json()  # no token: agent-visible
    msgs = d["messages"]
    assert [m["role"] for m in msgs] == ["system", "user", "assistant", "tool", "tool", "assistant"]
    assert msgs[2]["tool_calls"] == [
        {"id": "t0_0", "name": "call_function", "arguments": {"inputs": ["0", "1"]}},
        {"id": "t0_1", "name": "run_python", "arguments": {"code": XSS}},
    ]
    assert [(m["tool_call_id"], m["is_error"]) for m in msgs[3:5]] == [
        ("t0_0", False),
        ("t0_1", True),
    ]
    assert msgs[3]["content"] == REPLY
    assert all(m["tool_calls"] == [] and m["tool_call_id"] is None for m in msgs[:2])

    calls = d["tool_calls"]
    assert [(c["step"], c["idx"], c["call_id"], c["name"]) for c in calls] == [
        (2, 0, "t0_0", "call_function"),
        (2, 1, "t0_1", "run_python"),
        (5, 0, "t1_0", "submit_answer"),
    ]
    ok, bad, submit = calls
    assert (ok["result"], ok["error"], ok["message_step"]) == (msgs[3]["content"], None, 3)
    assert ok["arguments"] == {"inputs": ["0", "1"]} and ok["latency_s"] >= 0
    assert bad["error"].startswith("unknown tool 'run_python'")
    assert (bad["result"], bad["message_step"]) == (msgs[4]["content"], 4)
    assert submit["message_step"] is None and submit["arguments"]["domain"] == "all reals"
    assert not any(c["result_truncated"] for c in calls)
    # the tool call that reached the target is the target call of the same (step, idx)
    assert [(c["step"], c["idx"], c["inputs"]) for c in d["calls"]] == [(2, 0, ["0", "1"])]


def test_openapi_declares_tool_calls(sqlite_url: str, start_server) -> None:  # type: ignore[no-untyped-def]
    doc = httpx.get(f"{start_server(sqlite_url).url}/openapi.json", timeout=30).json()
    schemas = doc["components"]["schemas"]
    assert {"tool_calls", "tool_call_id", "is_error"} <= set(schemas["MessageOut"]["properties"])
    assert schemas["EpisodeDetail"]["properties"]["tool_calls"]["items"] == {
        "$ref": "#/components/schemas/ToolCallOut"
    }
    assert {"name", "arguments", "result", "error", "latency_s", "message_step"} <= set(
        schemas["ToolCallOut"]["properties"]
    )


async def test_inspect_export_has_tool_calls_and_tool_events(sqlite_url: str, tmp_path) -> None:  # type: ignore[no-untyped-def]
    inspect_log = pytest.importorskip("inspect_ai.log", reason="inspect-ai is in the dev extra")
    from interp_harness.harness.inspect_tasks.export import write_inspect_log

    store, ep = await tools_episode(sqlite_url)
    path = write_inspect_log(store, store.runs.get(ep.run_id), tmp_path / "run.eval")
    [s] = inspect_log.read_eval_log(str(path)).samples
    m = s.messages
    assert [x.role for x in m] == ["system", "user", "assistant", "tool", "tool", "assistant"]
    assert [(c.id, c.function, c.arguments) for c in m[2].tool_calls] == [
        ("t0_0", "call_function", {"inputs": ["0", "1"]}),
        ("t0_1", "run_python", {"code": XSS}),
    ]
    assert (m[3].tool_call_id, m[3].function, m[3].error) == ("t0_0", "call_function", None)
    assert m[3].text == REPLY
    assert (m[4].tool_call_id, m[4].function) == ("t0_1", "run_python")
    assert m[4].error is not None and m[4].error.message.startswith("unknown tool 'run_python'")
    assert m[5].tool_calls[0].function == "submit_answer"
    tools = [ev for ev in s.events if ev.event == "tool"]
    assert [(ev.id, ev.function) for ev in tools] == [
        ("t0_0", "call_function"),
        ("t0_1", "run_python"),
        ("t1_0", "submit_answer"),
    ]
    assert tools[0].arguments == {"inputs": ["0", "1"]} and tools[0].result == m[3].text
    assert tools[0].error is None and tools[1].error is not None
    assert tools[1].error.message.startswith("unknown tool") and tools[1].result == m[4].text
    assert s.output.completion == ep.final_answer
