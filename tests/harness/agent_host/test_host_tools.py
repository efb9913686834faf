"""Protocol mode `tools` through a real sandboxed agent host: the step's tools reach the hosted
agent's `step(conversation, tools=...)` (and only then), its tool calls come back validated and
cleaned (bounded count and size, valid Unicode, no control characters in ids and names), tool
results reach it, and an agent without `supports_tools` is refused with a clear agent error. The
openai and anthropic agents round-trip tools through the host's route to a loopback server."""

from __future__ import annotations

import json

import pytest
from support.host_clients import client
from support.native_tools import TOOLS, completion, fn, messages_reply
from support.provider_stand_in import provider_server, server  # noqa: F401 - fixtures

from interp_harness.agents import AgentError, Message
from interp_harness.agents.host_protocol import MAX_TOOL_CALLS
from interp_harness.agents.toolspec import ToolCall, ToolSpec
from interp_harness.harness.agent_host.host import AgentHosts

START = [Message(role="system", content="S"), Message(role="user", content="go")]


@pytest.fixture(scope="module")
def hosts():  # type: ignore[no-untyped-def]
    h = AgentHosts(max_message_chars=4096)
    yield h
    h.close()


def say(text: str) -> list[Message]:
    return [*START[:1], Message(role="user", content=text)]


async def test_tools_reach_the_hosted_agent_and_calls_come_back(hosts) -> None:
    agent = client(hosts, "host_test_agents:ToolEchoAgent")
    assert agent.supports_tools
    reply = await agent.step(say("calls 3"), tools=TOOLS)
    assert json.loads(reply.content)["tools"] == ["call_function", "submit_answer"]
    assert reply.tool_calls == [
        ToolCall(id=f"c0-{i}", name="call_function", arguments={"inputs": ["1"]}) for i in range(3)
    ]
    # the results of those calls, one an error, then a text step on the same host
    conv = [
        *say("calls 3"),
        Message(role="assistant", content=reply.content, tool_calls=reply.tool_calls),
        Message(role="tool", content="(1, 2)", tool_call_id="c0-0"),
        Message(role="tool", content="bad inputs", tool_call_id="c0-1", is_error=True),
        Message(role="tool", content="(1, 2)", tool_call_id="c0-2"),
        Message(role="user", content="calls 1"),
    ]
    seen = json.loads((await agent.step(conv, tools=TOOLS)).content)
    assert seen["calls"] == ["c0-0", "c0-1", "c0-2"]
    assert seen["results"] == [
        ["c0-0", "(1, 2)", False],
        ["c0-1", "bad inputs", True],
        ["c0-2", "(1, 2)", False],
    ]
    text = await agent.step(say("calls 2"))  # no tools: step(conversation), calls dropped
    await agent.aclose()
    assert json.loads(text.content)["tools"] is None and text.tool_calls == []


@pytest.mark.parametrize(
    ("ask", "problem"),
    [
        (f"calls {MAX_TOOL_CALLS + 1}", "tool_calls: List should have at most 64 items"),
        ("nan", "not finite"),
        ("deep", "nested deeper than 32 levels"),
        ("big 5000", "the limit is 4,096 characters"),
    ],
)
async def test_unbounded_tool_calls_are_agent_errors(hosts, ask: str, problem: str) -> None:
    agent = client(hosts, "host_test_agents:ToolEchoAgent")
    with pytest.raises(AgentError) as err:
        await agent.step(say(ask), tools=TOOLS)
    assert err.value.category == "agent" and problem in str(err.value), str(err.value)
    ok = await agent.step(say(f"calls {MAX_TOOL_CALLS}"), tools=TOOLS)  # the host stays up
    await agent.aclose()
    assert len(ok.tool_calls) == MAX_TOOL_CALLS


async def test_tool_calls_are_cleaned(hosts) -> None:
    agent = client(hosts, "host_test_agents:ToolEchoAgent")
    bad_text = await agent.step(say("surrogate"), tools=TOOLS)
    control = await agent.step(say("control"), tools=TOOLS)
    await agent.aclose()
    assert bad_text.tool_calls[0].arguments == {"inputs": ["a\ufffdb"], "\ufffd": 1}
    (call,) = control.tool_calls
    assert (call.id, call.name) == ("c[31m0-0", "call_function")


async def test_an_agent_without_tools_support_is_refused(hosts) -> None:
    agent = client(hosts, "host_test_agents:PrintingAgent")
    assert not agent.supports_tools
    with pytest.raises(AgentError) as err:
        await agent.step(START, tools=TOOLS)
    await agent.aclose()
    assert err.value.category == "agent"
    assert "does not support protocol mode 'tools'" in str(err.value)
    assert agent.pid is None  # refused before a host was started


async def test_openai_round_trips_tools_through_the_host(hosts, server) -> None:  # noqa: F811
    server.script.actions += [
        (
            "reply",
            completion(
                None,
                [
                    fn("call_a", "call_function", '{"inputs": ["2"]}'),
                    fn("call_b", "submit_answer", '{"description": "doubles"'),  # cut off
                ],
            ),
        ),
        ("reply", completion("done", [])),
    ]
    agent = client(hosts, "openai", base_url=server.url + "/v1", api_key="sk-test", model="m1")
    assert agent.supports_tools
    reply = await agent.step(START, tools=TOOLS)
    assert [(c.id, c.name) for c in reply.tool_calls] == [
        ("call_a", "call_function"),
        ("call_b", "submit_answer"),
    ]
    assert reply.tool_calls[0].arguments == {"inputs": ["2"]}
    assert reply.tool_calls[1].arguments == {"_raw_arguments": '{"description": "doubles"'}
    conv = [
        *START,
        Message(role="assistant", content="", tool_calls=reply.tool_calls),
        Message(role="tool", content="(2, 4)", tool_call_id="call_a"),
        Message(role="tool", content="bad arguments", tool_call_id="call_b", is_error=True),
    ]
    assert (await agent.step(conv, tools=TOOLS)).content == "done"
    await agent.aclose()
    first, second = (r["body"] for r in server.script.requests)
    assert [t["function"]["name"] for t in first["tools"]] == ["call_function", "submit_answer"]
    assert second["messages"][2]["tool_calls"][1]["function"]["arguments"] == (
        '{"description": "doubles"'
    )
    assert second["messages"][3:] == [
        {"role": "tool", "content": "(2, 4)", "tool_call_id": "call_a"},
        {"role": "tool", "content": "bad arguments", "tool_call_id": "call_b"},
    ]


async def test_anthropic_round_trips_tools_through_the_host(hosts, server) -> None:  # noqa: F811
    use = {"type": "tool_use", "id": "toolu_1", "name": "call_function", "input": {"inputs": ["3"]}}
    server.script.actions.append(("reply", messages_reply([use])))
    agent = client(hosts, "anthropic", base_url=server.url, api_key="ak-test", model="claude-x")
    reply = await agent.step(START, tools=[ToolSpec.model_validate(t) for t in TOOLS])
    await agent.aclose()
    assert reply.tool_calls == [
        ToolCall(id="toolu_1", name="call_function", arguments={"inputs": ["3"]})
    ]
    body = server.script.requests[0]["body"]
    assert [t["name"] for t in body["tools"]] == ["call_function", "submit_answer"]
