"""Native function calling in the tests: two tools (a call and an answer) and the wire shapes of
replies with tool calls (OpenAI Chat Completions and Anthropic Messages), shared by the agents' and
the agent hosts' tests."""

from __future__ import annotations

from typing import Any

from interp_harness.agents.toolspec import ToolSpec
from support import chat_completion

FAST = {"backoff_base": 0.01, "backoff_max": 0.05, "max_retries": 1}
CALL = ToolSpec(
    name="call_function",
    description="Call the function on inputs.",
    parameters={
        "type": "object",
        "properties": {"inputs": {"type": "array", "items": {"type": "string"}}},
        "required": ["inputs"],
        "additionalProperties": False,
    },
    result="one line per input",
)
SUBMIT = ToolSpec(
    name="submit_answer",
    description="Submit your answer.",
    parameters={
        "type": "object",
        "properties": {"description": {"type": "string"}},
        "required": ["description"],
    },
    kind="answer",
)
TOOLS = [CALL, SUBMIT]


def completion(content: str | None, calls: list[dict[str, Any]]) -> dict[str, Any]:
    body = chat_completion(content, "m1", {"prompt_tokens": 3, "completion_tokens": 2})  # type: ignore[arg-type]
    if calls:
        body["choices"][0]["message"]["tool_calls"] = calls  # type: ignore[index]
    return body


def fn(call_id: str | None, name: str, arguments: Any) -> dict[str, Any]:
    call: dict[str, Any] = {"type": "function", "function": {"name": name, "arguments": arguments}}
    if call_id is not None:
        call["id"] = call_id
    return call


def messages_reply(blocks: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "id": "msg_t",
        "type": "message",
        "role": "assistant",
        "model": "claude-x",
        "content": blocks,
        "stop_reason": "tool_use",
        "stop_sequence": None,
        "usage": {"input_tokens": 4, "output_tokens": 6},
    }
