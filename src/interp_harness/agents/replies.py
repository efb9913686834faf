"""What a provider reply must hold to be a turn, for the provider agents (openai, anthropic).

A 200 reply whose body is not JSON, does not validate as the API's response (the fields the
agents read), has no choice, or has no text (null content, no text block) is `MalformedReply`: a
provider failure that is retried and then ends the episode as an error, never an empty turn
that would be scored. Category `agent`: nothing tells an agent today whether its endpoint is the
operator's own server (which would make it `infrastructure`).

A model may really answer "" (a valid reply with empty text): that stays a turn, but a second
empty answer in a row ends the episode (`check_empty_turn`), since nothing can follow it.
"""

from __future__ import annotations

import json
import uuid
from typing import Any

import httpx
from pydantic import BaseModel, ValidationError

from interp_harness.agents.base import Agent, AgentError, Message
from interp_harness.agents.toolspec import RAW_ARGUMENTS, ToolCall

_SHOWN = 200  # characters of the body quoted in an error


class MalformedReply(Exception):
    """A 200 reply that is no usable answer; the message describes its shape."""

    category = "agent"


def _quote(response: httpx.Response) -> str:
    text = response.text
    return repr(text[:_SHOWN] + ("..." if len(text) > _SHOWN else ""))


def _json(response: httpx.Response) -> Any:
    try:
        return response.json()
    except ValueError:
        ctype = response.headers.get("content-type", "no content type")
        raise MalformedReply(f"200 reply is not JSON ({ctype}): {_quote(response)}") from None


def _validated(response: httpx.Response, shape: type[BaseModel], what: str) -> Any:
    try:
        return shape.model_validate(_json(response))
    except ValidationError as e:
        first = e.errors()[0]
        where = ".".join(map(str, first["loc"])) or "body"
        raise MalformedReply(
            f"200 reply is not {what} ({where}: {first['msg']}): {_quote(response)}"
        ) from None


# ---- OpenAI Chat Completions (the fields the agent reads; other fields may be anything) ------
class _OpenAIMessage(BaseModel):
    content: str | None = None
    tool_calls: list[Any] | None = None
    refusal: str | None = None


class _OpenAIChoice(BaseModel):
    message: _OpenAIMessage
    finish_reason: str | None = None


class _OpenAIUsage(BaseModel):
    prompt_tokens: int = 0
    completion_tokens: int = 0


class OpenAICompletion(BaseModel):
    choices: list[_OpenAIChoice]
    model: str | None = None
    usage: _OpenAIUsage | None = None

    def tokens(self) -> tuple[int, int]:
        """(prompt, completion) tokens; (0, 0) when the reply reports no usage."""
        u = self.usage
        return (u.prompt_tokens, u.completion_tokens) if u else (0, 0)


def openai_reply(response: httpx.Response, *, tools: bool = False) -> Turn:
    """(text, completion, tool calls) of a Chat Completions reply; MalformedReply when it has no
    text (in tools mode: neither text nor a tool call)."""
    c: OpenAICompletion = _validated(response, OpenAICompletion, "a chat completion")
    if not c.choices:
        raise MalformedReply(f"200 reply has no choices: {_quote(response)}")
    m = c.choices[0].message
    calls = [_openai_call(x, response) for x in m.tool_calls or []] if tools else []
    if m.content is None and not calls:
        extra = ""
        if m.tool_calls and not tools:
            extra = f", {len(m.tool_calls)} tool call(s) the text protocol cannot use"
        if m.refusal:
            extra += f", refusal {m.refusal[:_SHOWN]!r}"
        raise MalformedReply(f"200 reply's message content is null{extra}: {_quote(response)}")
    return m.content or "", c, calls


# ---- tool calls (protocol mode `tools`) ------------------------------------------------------
def arguments_of(value: Any) -> dict[str, Any]:
    """A tool call's arguments as the model sent them: a JSON object (OpenAI sends it as a JSON
    string). Anything else (text that is not JSON, a JSON array, ...) is kept, as text, under
    RAW_ARGUMENTS: the call stays a call, and the harness answers it with a tool error the model
    can correct (the schema has no such property), instead of the turn failing."""
    if isinstance(value, str):
        try:
            parsed = json.loads(value) if value.strip() else {}
        except ValueError:
            return {RAW_ARGUMENTS: value}
        return parsed if isinstance(parsed, dict) else {RAW_ARGUMENTS: value}
    return value if isinstance(value, dict) else {RAW_ARGUMENTS: json.dumps(value)}


def wire_arguments(call: ToolCall) -> str:
    """The arguments as a JSON string, as the model sent them (its raw text when it was not an
    object), for a conversation sent back to the model."""
    raw = call.arguments.get(RAW_ARGUMENTS)
    if len(call.arguments) == 1 and isinstance(raw, str):
        return raw
    return json.dumps(call.arguments)


def call_id(value: Any) -> str:
    """The provider's call id; one made here when it sent none usable (some OpenAI-compatible
    servers leave it out), since a result must name the call it answers."""
    if isinstance(value, str) and 0 < len(value) <= 256:
        return value
    return f"call_{uuid.uuid4().hex[:24]}"


def _openai_call(item: Any, response: httpx.Response) -> ToolCall:
    fn = item.get("function") if isinstance(item, dict) else None
    name = fn.get("name") if isinstance(fn, dict) else None
    if not isinstance(name, str):
        raise MalformedReply(
            f"200 reply has a tool call without a function name: {_quote(response)}"
        )
    return ToolCall(
        id=call_id(item.get("id")), name=name[:256], arguments=arguments_of(fn.get("arguments"))
    )


# ---- Anthropic Messages ----------------------------------------------------------------------
class _AnthropicBlock(BaseModel):
    type: str
    text: str | None = None
    id: Any = None  # tool_use
    name: Any = None  # tool_use
    input: Any = None  # tool_use


class _AnthropicUsage(BaseModel):
    input_tokens: int = 0
    output_tokens: int = 0


class AnthropicMessage(BaseModel):
    content: list[_AnthropicBlock]
    model: str | None = None
    stop_reason: str | None = None
    usage: _AnthropicUsage | None = None

    def tokens(self) -> tuple[int, int]:
        """(input, output) tokens; (0, 0) when the reply reports no usage."""
        u = self.usage
        return (u.input_tokens, u.output_tokens) if u else (0, 0)


# one turn as a provider agent reads it: (text, the reply, its tool calls)
Turn = tuple[str, OpenAICompletion | AnthropicMessage, list[ToolCall]]


def anthropic_reply(response: httpx.Response, *, tools: bool = False) -> Turn:
    """(text, message, tool calls) of a Messages API reply: its text blocks joined, and (in tools
    mode) its tool_use blocks; MalformedReply when it has no text (in tools mode: neither text
    nor a tool call: no content, or only blocks the agent cannot use) or a text block is null."""
    m: AnthropicMessage = _validated(response, AnthropicMessage, "a Messages API reply")
    texts = [b.text for b in m.content if b.type == "text"]
    calls = (
        [_anthropic_call(b, response) for b in m.content if b.type == "tool_use"] if tools else []
    )
    if not texts and not calls:
        kinds = ", ".join(b.type for b in m.content) or "none"
        raise MalformedReply(f"200 reply has no text content (blocks: {kinds}): {_quote(response)}")
    if any(t is None for t in texts):
        raise MalformedReply(
            f"200 reply is not a Messages API reply (a text block's text is null): "
            f"{_quote(response)}"
        )
    return "".join(texts), m, calls  # type: ignore[arg-type]


def _anthropic_call(block: _AnthropicBlock, response: httpx.Response) -> ToolCall:
    if not isinstance(block.name, str):
        raise MalformedReply(f"200 reply has a tool_use block without a name: {_quote(response)}")
    args = block.input if isinstance(block.input, dict) else json.dumps(block.input)  # as JSON text
    return ToolCall(id=call_id(block.id), name=block.name[:256], arguments=arguments_of(args))


# ---- a real empty answer ---------------------------------------------------------------------
_LAST_EMPTY = "_last_reply_empty"  # kept on the agent: one agent object serves one episode


def check_empty_turn(
    agent: Agent, conversation: list[Message], content: str, *, what: str, calls: int = 0
) -> None:
    """Raise AgentError when the answer is empty ("" and no tool call) and so was the agent's
    previous answer.

    The previous answer is the conversation's last assistant message, or the one this agent
    object gave last: find-compat mode restarts the conversation after a message without a
    command, which removes an empty answer from it."""
    previous = next((m for m in reversed(conversation) if m.role == "assistant"), None)
    empty = content == "" and not calls
    after_empty = (
        previous is not None and previous.content == "" and not previous.tool_calls
    ) or getattr(agent, _LAST_EMPTY, False)
    setattr(agent, _LAST_EMPTY, empty)
    if empty and after_empty:
        raise AgentError(
            f"{what}: the model answered with an empty message twice in a row; "
            "the episode cannot go on",
            category="agent",
        )
