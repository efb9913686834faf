"""`anthropic`: the Messages API through the `anthropic` SDK. The system prompt travels in its own
field, and the turns are made to alternate user/assistant as the API requires."""

from __future__ import annotations

import os
from typing import Any

from pydantic import Field

from interp_harness.agents.base import ANY_FAMILY, AgentError, AgentReply, Message
from interp_harness.agents.options import ProviderOptions
from interp_harness.agents.replies import Turn, anthropic_reply
from interp_harness.agents.retry import (
    ProviderAgent,
    policy_from_options,
    provider_turn,
    sdk_classifier,
)
from interp_harness.agents.toolspec import ToolSpec


def to_messages_api(conversation: list[Message]) -> tuple[str | None, list[dict[str, Any]]]:
    """(system, messages): system messages are joined into the system field; consecutive turns of
    one role are merged (the API rejects two user turns in a row); a leading assistant turn gets an
    empty user turn before it, since the API wants the first turn to be the user's.

    In protocol mode `tools` an assistant message's tool calls are `tool_use` blocks after its
    text, and `tool` messages are `tool_result` blocks (with `is_error`) in the user turn that
    follows, so consecutive results share one user message, as the API requires. A lab cell's
    figures are `image` blocks (base64 PNG) after the user turn's text, or inside the
    `tool_result`'s content. Turns without any of these keep their plain-text content."""
    system = "\n\n".join(m.content for m in conversation if m.role == "system") or None
    turns: list[dict[str, Any]] = []
    for m in conversation:
        if m.role == "system":
            continue
        role, content = ("user", _result_block(m)) if m.role == "tool" else (m.role, _content(m))
        if turns and turns[-1]["role"] == role:
            turns[-1]["content"] = _merged(turns[-1]["content"], content)
        else:
            turns.append({"role": role, "content": content})
    if turns and turns[0]["role"] == "assistant":
        turns.insert(0, {"role": "user", "content": "(start)"})
    return system, turns


Content = str | list[dict[str, Any]]


def _content(m: Message) -> Content:
    if m.images:  # a user turn with a lab cell's figures: its text, then the images
        return [{"type": "text", "text": m.content or "(figures)"}, *_image_blocks(m)]
    if not m.tool_calls:
        return m.content
    text = [{"type": "text", "text": m.content}] if m.content else []  # no empty text blocks
    return text + [
        {"type": "tool_use", "id": c.id, "name": c.name, "input": c.arguments} for c in m.tool_calls
    ]


def _result_block(m: Message) -> Content:
    block: dict[str, Any] = {"type": "tool_result", "tool_use_id": m.tool_call_id or ""}
    if m.images:  # a tool result's content may hold image blocks beside its text
        text = [{"type": "text", "text": m.content}] if m.content else []
        block["content"] = text + _image_blocks(m)
    elif m.content:
        block["content"] = m.content
    block["is_error"] = m.is_error
    return [block]


def _image_blocks(m: Message) -> list[dict[str, Any]]:
    return [
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": i.b64()}}
        for i in m.images
    ]


def _merged(a: Content, b: Content) -> Content:
    if isinstance(a, str) and isinstance(b, str):
        return a + "\n\n" + b
    return _blocks(a) + _blocks(b)


def _blocks(c: Content) -> list[dict[str, Any]]:
    if isinstance(c, list):
        return c
    return [{"type": "text", "text": c}] if c else []


def to_messages_tools(tools: list[ToolSpec]) -> list[dict[str, Any]]:
    return [
        {"name": s.name, "description": s.tool_description(), "input_schema": s.parameters}
        for s in tools
    ]


_TOOL_CHOICE = {"auto": {"type": "auto"}, "required": {"type": "any"}}

# what the agent asks for when its options set no max_tokens (the Messages API requires a
# length): the one source of that default, for the agent, its options' schema and pre-flight
DEFAULT_MAX_TOKENS = 4096


class AnthropicOptions(ProviderOptions):
    max_tokens: int = Field(
        DEFAULT_MAX_TOKENS, ge=1, le=1_000_000, description="tokens one reply may use"
    )


class AnthropicAgent(ProviderAgent):
    """Claude via the anthropic SDK (Messages API).

    Options (environment variable in brackets): model [ANTHROPIC_MODEL], api_key
    [ANTHROPIC_API_KEY], base_url [ANTHROPIC_BASE_URL], temperature [ANTHROPIC_TEMPERATURE],
    max_tokens (default DEFAULT_MAX_TOKENS; the API requires one), timeout (s, default 120),
    max_retries (default 5), backoff_base, backoff_max, prices (see interp_harness.agents.retry.make_usage),
    tool_choice (protocol mode tools: "auto", the default, or "required", the API's "any").

    In protocol mode `tools` the commands go as `tools` (parallel tool use allowed, as the
    API's default) and the reply's `tool_use` blocks come back as tool calls.
    """

    name = "anthropic"
    families = ANY_FAMILY
    provider = "anthropic"
    provider_routes = ("messages",)  # what it calls: the profile must offer it
    default_max_tokens = DEFAULT_MAX_TOKENS  # sent when the options set none
    supports_tools = True
    default_model = "claude-sonnet-4-5"  # when neither the options nor the environment name one
    description = "Anthropic Messages API (Claude); system prompt sent separately"
    Options = AnthropicOptions  # over the API: no base_url/api_key, a provider profile instead

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self.model: str = options.get("model") or os.environ.get(
            "ANTHROPIC_MODEL", self.default_model
        )
        self.base_url: str | None = options.get("base_url") or os.environ.get("ANTHROPIC_BASE_URL")
        api_key = options.get("api_key") or os.environ.get("ANTHROPIC_API_KEY")
        if not api_key:
            raise AgentError(
                "anthropic agent: no API key; set ANTHROPIC_API_KEY or pass api_key=...",
                category="agent",
            )
        temperature = options.get("temperature", os.environ.get("ANTHROPIC_TEMPERATURE"))
        self.temperature: float | None = float(temperature) if temperature is not None else None
        self.max_tokens = int(options.get("max_tokens") or self.default_max_tokens)
        self.prices = options.get("prices")
        self.tool_choice: str = options.get("tool_choice") or "auto"
        self.policy = policy_from_options(options)
        # the SDK loads when an agent is built, not when its class is imported: listing the agents
        # (`harness agents list`, pre-flight's registry lookups) reads only the class
        import anthropic

        self._classify = sdk_classifier(anthropic)
        self.client = anthropic.AsyncAnthropic(
            api_key=api_key,
            base_url=self.base_url,
            timeout=float(options.get("timeout", 120.0)),
            max_retries=0,  # ours: jittered, categorised, logged
        )

    async def step(
        self, conversation: list[Message], tools: list[ToolSpec] | None = None
    ) -> AgentReply:
        system, turns = to_messages_api(conversation)
        if not turns:
            raise AgentError(
                "anthropic agent: the conversation has no user message", category="agent"
            )
        kwargs: dict[str, Any] = {
            "model": self.model,
            "max_tokens": self.max_tokens,
            "messages": turns,
        }
        if system:
            kwargs["system"] = system
        if self.temperature is not None:
            kwargs["temperature"] = self.temperature
        if tools:
            kwargs["tools"] = to_messages_tools(tools)
            kwargs["tool_choice"] = _TOOL_CHOICE[self.tool_choice]

        async def call() -> Turn:
            # The raw body is validated here: the SDK would build an object from anything.
            raw = await self.client.messages.with_raw_response.create(**kwargs)
            return anthropic_reply(raw.http_response, tools=tools is not None)

        what = f"anthropic {self.model}"
        return await provider_turn(self, conversation, call, self._classify, what=what)

    async def aclose(self) -> None:
        await self.client.close()
