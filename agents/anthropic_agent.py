"""`anthropic`: the Messages API through the `anthropic` SDK. The system prompt travels in its own
field, and the turns are made to alternate user/assistant as the API requires."""

from __future__ import annotations

import os
from typing import Any

import anthropic

from agents.base import AgentError, AgentReply, Message
from agents.options import ProviderOptions
from agents.replies import AnthropicMessage, anthropic_reply
from agents.retry import ProviderAgent, policy_from_options, provider_turn, sdk_classifier

_classify = sdk_classifier(anthropic)


def to_messages_api(conversation: list[Message]) -> tuple[str | None, list[dict[str, str]]]:
    """(system, messages): system messages are joined into the system field; consecutive turns of
    one role are merged (the API rejects two user turns in a row); a leading assistant turn gets an
    empty user turn before it, since the API wants the first turn to be the user's."""
    system = "\n\n".join(m.content for m in conversation if m.role == "system") or None
    turns: list[dict[str, str]] = []
    for m in conversation:
        if m.role == "system":
            continue
        if turns and turns[-1]["role"] == m.role:
            turns[-1]["content"] += "\n\n" + m.content
        else:
            turns.append({"role": m.role, "content": m.content})
    if turns and turns[0]["role"] == "assistant":
        turns.insert(0, {"role": "user", "content": "(start)"})
    return system, turns


class AnthropicAgent(ProviderAgent):
    """Claude via the anthropic SDK (Messages API).

    Options (environment variable in brackets): model [ANTHROPIC_MODEL], api_key
    [ANTHROPIC_API_KEY], base_url [ANTHROPIC_BASE_URL], temperature [ANTHROPIC_TEMPERATURE],
    max_tokens (default 4096; the API requires one), timeout (s, default 120), max_retries
    (default 5), backoff_base, backoff_max, prices (see agents.retry.make_usage).
    """

    name = "anthropic"
    provider = "anthropic"
    default_model = "claude-sonnet-4-5"  # when neither the options nor the environment name one
    description = "Anthropic Messages API (Claude); system prompt sent separately"
    Options = ProviderOptions  # over the API: no base_url/api_key, a provider profile instead

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
        self.max_tokens = int(options.get("max_tokens", 4096))
        self.prices = options.get("prices")
        self.policy = policy_from_options(options)
        self.client = anthropic.AsyncAnthropic(
            api_key=api_key,
            base_url=self.base_url,
            timeout=float(options.get("timeout", 120.0)),
            max_retries=0,  # ours: jittered, categorised, logged
        )

    async def step(self, conversation: list[Message]) -> AgentReply:
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

        async def call() -> tuple[str, AnthropicMessage]:
            # The raw body is validated here: the SDK would build an object from anything.
            raw = await self.client.messages.with_raw_response.create(**kwargs)
            return anthropic_reply(raw.http_response)

        what = f"anthropic {self.model}"
        return await provider_turn(self, conversation, call, _classify, what=what)

    async def aclose(self) -> None:
        await self.client.close()
