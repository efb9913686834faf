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

from typing import Any

import httpx
from pydantic import BaseModel, ValidationError

from agents.base import Agent, AgentError, Message

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


def openai_reply(response: httpx.Response) -> tuple[str, OpenAICompletion]:
    """(text, completion) of a Chat Completions reply; MalformedReply when it has no text."""
    c: OpenAICompletion = _validated(response, OpenAICompletion, "a chat completion")
    if not c.choices:
        raise MalformedReply(f"200 reply has no choices: {_quote(response)}")
    m = c.choices[0].message
    if m.content is None:
        extra = ""
        if m.tool_calls:
            extra = f", {len(m.tool_calls)} tool call(s) the text protocol cannot use"
        if m.refusal:
            extra += f", refusal {m.refusal[:_SHOWN]!r}"
        raise MalformedReply(f"200 reply's message content is null{extra}: {_quote(response)}")
    return m.content, c


# ---- Anthropic Messages ----------------------------------------------------------------------
class _AnthropicBlock(BaseModel):
    type: str
    text: str | None = None


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


def anthropic_reply(response: httpx.Response) -> tuple[str, AnthropicMessage]:
    """(text, message) of a Messages API reply: its text blocks joined; MalformedReply when it
    has none (no content, or only blocks the text protocol cannot use) or a text block is null."""
    m: AnthropicMessage = _validated(response, AnthropicMessage, "a Messages API reply")
    texts = [b.text for b in m.content if b.type == "text"]
    if not texts:
        kinds = ", ".join(b.type for b in m.content) or "none"
        raise MalformedReply(f"200 reply has no text content (blocks: {kinds}): {_quote(response)}")
    if any(t is None for t in texts):
        raise MalformedReply(
            f"200 reply is not a Messages API reply (a text block's text is null): "
            f"{_quote(response)}"
        )
    return "".join(texts), m  # type: ignore[arg-type]


# ---- a real empty answer ---------------------------------------------------------------------
_LAST_EMPTY = "_last_reply_empty"  # kept on the agent: one agent object serves one episode


def check_empty_turn(agent: Agent, conversation: list[Message], content: str, *, what: str) -> None:
    """Raise AgentError when `content` is "" and so was the agent's previous answer.

    The previous answer is the conversation's last assistant message, or the one this agent
    object gave last: find-compat mode restarts the conversation after a message without a
    command, which removes an empty answer from it."""
    previous = next((m.content for m in reversed(conversation) if m.role == "assistant"), None)
    after_empty = previous == "" or getattr(agent, _LAST_EMPTY, False)
    setattr(agent, _LAST_EMPTY, content == "")
    if content == "" and after_empty:
        raise AgentError(
            f"{what}: the model answered with an empty message twice in a row; "
            "the episode cannot go on",
            category="agent",
        )
