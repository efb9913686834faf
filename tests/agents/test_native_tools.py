"""Native function calling (protocol mode `tools`) of the openai and anthropic agents, through
the real SDKs against a loopback server speaking both wire formats: the tools as each API wants
them, parallel calls back as several ToolCalls, a conversation with tool results rendered in each
API's shape, and malformed arguments kept as a call (the harness answers it with a tool error)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from support.native_tools import CALL, FAST, SUBMIT, TOOLS, completion, fn, messages_reply

from interp_harness.agents import Message, get_agent
from interp_harness.agents.toolspec import RAW_ARGUMENTS, ToolCall

START = [Message(role="system", content="SYS"), Message(role="user", content="explore f")]
# a conversation after one turn of two parallel calls, the second answered with an error
AFTER_CALLS = [
    *START,
    Message(
        role="assistant",
        content="",
        tool_calls=[
            ToolCall(id="c1", name="call_function", arguments={"inputs": ["1", "2"]}),
            ToolCall(id="c2", name="call_functon", arguments={"inputs": ["3"]}),
        ],
    ),
    Message(role="tool", content="(1, 2), (2, 4)", tool_call_id="c1"),
    Message(role="tool", content="unknown tool 'call_functon'", tool_call_id="c2", is_error=True),
]


def _openai(server: Any, **kw: Any) -> Any:
    return get_agent(
        "openai", base_url=server.url + "/v1", api_key="sk-test", model="m1", **{**FAST, **kw}
    )


def _anthropic(server: Any, **kw: Any) -> Any:
    return get_agent(
        "anthropic", base_url=server.url, api_key="ak-test", model="claude-x", **{**FAST, **kw}
    )


async def text_step(agent: Any, server: Any, expected: str) -> dict[str, Any]:
    """A step without tools (the text protocol): the reply's text and no tool calls; the request
    had no tools. Returns the request body."""
    reply = await agent.step(START)
    await agent.aclose()
    assert reply.content == expected and reply.tool_calls == []
    body = server.script.requests[0]["body"]
    assert "tools" not in body and "tool_choice" not in body
    return body


# ---- OpenAI Chat Completions ---------------------------------------------------------------


async def test_openai_sends_tools_and_reads_parallel_calls(server) -> None:
    server.script.actions.append(
        (
            "reply",
            completion(
                None,
                [
                    fn("call_a", "call_function", '{"inputs": ["1", "2"]}'),
                    fn("call_b", "call_function", '{"inputs": ["-3"]}'),
                ],
            ),
        )
    )
    agent = _openai(server)
    reply = await agent.step(START, tools=TOOLS)
    await agent.aclose()
    assert reply.content == ""
    assert reply.tool_calls == [
        ToolCall(id="call_a", name="call_function", arguments={"inputs": ["1", "2"]}),
        ToolCall(id="call_b", name="call_function", arguments={"inputs": ["-3"]}),
    ]
    (req,) = server.script.requests
    body = req["body"]
    assert body["tool_choice"] == "auto"
    assert "parallel_tool_calls" not in body  # the API's default (allowed); vLLM needs nothing
    assert body["tools"] == [
        {
            "type": "function",
            "function": {
                "name": "call_function",
                "description": "Call the function on inputs. Returns: one line per input",
                "parameters": CALL.parameters,
            },
        },
        {
            "type": "function",
            "function": {
                "name": "submit_answer",
                "description": "Submit your answer.",
                "parameters": SUBMIT.parameters,
            },
        },
    ]
    assert body["messages"] == [
        {"role": "system", "content": "SYS"},
        {"role": "user", "content": "explore f"},
    ]


async def test_openai_renders_tool_calls_and_results(server) -> None:
    server.script.actions.append(("reply", completion("I will answer now.", [])))
    agent = _openai(server, tool_choice="required")
    reply = await agent.step(AFTER_CALLS, tools=TOOLS)
    await agent.aclose()
    assert reply.content == "I will answer now." and reply.tool_calls == []
    body = server.script.requests[0]["body"]
    assert body["tool_choice"] == "required"
    assert body["messages"][2:] == [
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "call_function", "arguments": '{"inputs": ["1", "2"]}'},
                },
                {
                    "id": "c2",
                    "type": "function",
                    "function": {"name": "call_functon", "arguments": '{"inputs": ["3"]}'},
                },
            ],
        },
        {"role": "tool", "content": "(1, 2), (2, 4)", "tool_call_id": "c1"},
        {"role": "tool", "content": "unknown tool 'call_functon'", "tool_call_id": "c2"},
    ]


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        ('{"inputs": ["1"', {RAW_ARGUMENTS: '{"inputs": ["1"'}),  # cut off
        ('["1", "2"]', {RAW_ARGUMENTS: '["1", "2"]'}),  # JSON, not an object
        ("", {}),  # a call without arguments
        ({"inputs": ["5"]}, {"inputs": ["5"]}),  # a server that sends an object
    ],
)
async def test_openai_malformed_arguments_keep_the_call(server, arguments, expected) -> None:
    server.script.actions.append(
        ("reply", completion("trying", [fn(None, "call_function", arguments)]))
    )
    agent = _openai(server)
    reply = await agent.step(START, tools=TOOLS)
    (call,) = reply.tool_calls
    assert call.name == "call_function" and call.arguments == expected
    assert call.id.startswith("call_")  # made here: the server sent none
    # sent back, the call reads as the model wrote it
    conv = [
        *START,
        Message(role="assistant", content="trying", tool_calls=[call]),
        Message(role="tool", content="bad arguments", tool_call_id=call.id, is_error=True),
    ]
    await agent.step(conv, tools=TOOLS)
    await agent.aclose()
    sent = server.script.requests[1]["body"]["messages"][2]["tool_calls"][0]["function"]
    if isinstance(arguments, str) and expected != {}:
        assert sent["arguments"] == arguments
    else:
        assert json.loads(sent["arguments"]) == expected


async def test_openai_tool_call_without_a_name_is_a_malformed_reply(server) -> None:
    from interp_harness.agents import AgentError

    bad = completion(None, [{"id": "x", "type": "function", "function": {"arguments": "{}"}}])
    server.script.actions += [("reply", bad), ("reply", bad)]
    agent = _openai(server)
    with pytest.raises(AgentError) as err:
        await agent.step(START, tools=TOOLS)
    await agent.aclose()
    assert err.value.category == "agent" and "without a function name" in str(err.value)


async def test_openai_text_mode_sends_no_tools_and_ignores_calls(server) -> None:
    server.script.actions.append(
        ("reply", completion("text", [fn("c", "call_function", '{"inputs": ["1"]}')]))
    )
    body = await text_step(_openai(server), server, "text")
    assert body["messages"] == [{"role": m.role, "content": m.content} for m in START]


async def test_calls_without_text_twice_are_not_empty_turns(server) -> None:
    only_calls = completion(None, [fn("c", "call_function", '{"inputs": ["1"]}')])
    server.script.actions += [("reply", only_calls), ("reply", only_calls)]
    agent = _openai(server)
    first = await agent.step(START, tools=TOOLS)
    conv = [
        *START,
        Message(role="assistant", content="", tool_calls=first.tool_calls),
        Message(role="tool", content="(1, 1)", tool_call_id="c"),
    ]
    second = await agent.step(conv, tools=TOOLS)
    await agent.aclose()
    assert [c.name for c in second.tool_calls] == ["call_function"]


# ---- Anthropic Messages ---------------------------------------------------------------------


async def test_anthropic_sends_tools_and_reads_parallel_tool_use(server) -> None:
    server.script.actions.append(
        (
            "reply",
            messages_reply(
                [
                    {"type": "text", "text": "Let me try two inputs."},
                    {
                        "type": "tool_use",
                        "id": "toolu_1",
                        "name": "call_function",
                        "input": {"inputs": ["0"]},
                    },
                    {
                        "type": "tool_use",
                        "id": "toolu_2",
                        "name": "call_function",
                        "input": {"inputs": ["7"]},
                    },
                ]
            ),
        )
    )
    agent = _anthropic(server)
    reply = await agent.step(START, tools=TOOLS)
    await agent.aclose()
    assert reply.content == "Let me try two inputs."
    assert reply.tool_calls == [
        ToolCall(id="toolu_1", name="call_function", arguments={"inputs": ["0"]}),
        ToolCall(id="toolu_2", name="call_function", arguments={"inputs": ["7"]}),
    ]
    body = server.script.requests[0]["body"]
    assert body["tools"] == [
        {
            "name": "call_function",
            "description": "Call the function on inputs. Returns: one line per input",
            "input_schema": CALL.parameters,
        },
        {
            "name": "submit_answer",
            "description": "Submit your answer.",
            "input_schema": SUBMIT.parameters,
        },
    ]
    assert body["tool_choice"] == {"type": "auto"}
    assert body["system"] == "SYS"
    assert body["messages"] == [{"role": "user", "content": "explore f"}]


async def test_anthropic_renders_tool_use_and_merged_results(server) -> None:
    server.script.actions.append(("reply", messages_reply([{"type": "text", "text": "ok"}])))
    conv = [
        *AFTER_CALLS,
        Message(role="user", content="2 target calls left"),
        Message(
            role="assistant",
            content="Answering.",
            tool_calls=[ToolCall(id="c3", name="submit_answer", arguments={"description": "x"})],
        ),
        Message(role="tool", content="", tool_call_id="c3"),
    ]
    agent = _anthropic(server, tool_choice="required")
    reply = await agent.step(conv, tools=TOOLS)
    await agent.aclose()
    assert reply.content == "ok" and reply.tool_calls == []
    body = server.script.requests[0]["body"]
    assert body["tool_choice"] == {"type": "any"}
    assert body["messages"] == [
        {"role": "user", "content": "explore f"},
        {
            "role": "assistant",
            "content": [  # no empty text block: the API refuses one
                {
                    "type": "tool_use",
                    "id": "c1",
                    "name": "call_function",
                    "input": {"inputs": ["1", "2"]},
                },
                {
                    "type": "tool_use",
                    "id": "c2",
                    "name": "call_functon",
                    "input": {"inputs": ["3"]},
                },
            ],
        },
        {
            "role": "user",
            "content": [  # both results in one user turn, then the harness's note
                {
                    "type": "tool_result",
                    "tool_use_id": "c1",
                    "content": "(1, 2), (2, 4)",
                    "is_error": False,
                },
                {
                    "type": "tool_result",
                    "tool_use_id": "c2",
                    "content": "unknown tool 'call_functon'",
                    "is_error": True,
                },
                {"type": "text", "text": "2 target calls left"},
            ],
        },
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Answering."},
                {
                    "type": "tool_use",
                    "id": "c3",
                    "name": "submit_answer",
                    "input": {"description": "x"},
                },
            ],
        },
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "c3", "is_error": False}],
        },
    ]


async def test_anthropic_input_that_is_not_an_object_keeps_the_call(server) -> None:
    server.script.actions.append(
        (
            "reply",
            messages_reply(
                [{"type": "tool_use", "id": "toolu_9", "name": "call_function", "input": "1 2"}]
            ),
        )
    )
    agent = _anthropic(server)
    reply = await agent.step(START, tools=TOOLS)
    await agent.aclose()
    assert reply.content == ""
    assert reply.tool_calls == [
        ToolCall(id="toolu_9", name="call_function", arguments={RAW_ARGUMENTS: '"1 2"'})
    ]


async def test_anthropic_text_mode_is_unchanged(server) -> None:
    body = await text_step(_anthropic(server), server, "part one, echo: explore f")
    assert body["messages"] == [{"role": "user", "content": "explore f"}]
