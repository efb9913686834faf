"""`openai`: Chat Completions through the `openai` SDK, against OpenAI or any compatible server
(vLLM, FastChat, `harness backbone serve`, ...) named by `base_url`."""

from __future__ import annotations

import os
from typing import Any

from pydantic import Field

from interp_harness.agents.base import ANY_FAMILY, AgentError, AgentReply, Message
from interp_harness.agents.options import ProviderOptions
from interp_harness.agents.replies import Turn, openai_reply, wire_arguments
from interp_harness.agents.retry import (
    ProviderAgent,
    policy_from_options,
    provider_turn,
    sdk_classifier,
)
from interp_harness.agents.toolspec import ToolSpec


class OpenAIOptions(ProviderOptions):
    extra_body: dict[str, Any] | None = Field(
        None,
        description="passed through in the request body (e.g. vLLM sampling options); the keys "
        "a provider profile governs (model, n, max_tokens, stream, tools, ...) are refused",
    )


def to_chat_messages(conversation: list[Message]) -> list[dict[str, Any]]:
    """The conversation as Chat Completions messages. Text messages are `{role, content}`; in
    protocol mode `tools` an assistant message carries its `tool_calls` (arguments as a JSON
    string) and each result is a `tool` message naming its call (the API has no error flag: the
    result's text says what went wrong).

    Images (a lab cell's figures) are `image_url` parts with a `data:image/png;base64,` URL: in
    a user message after its text; of tool results, in one user message after the run of tool
    messages, since the API takes only text in a `tool` message and wants the results right
    after the calls."""
    out: list[dict[str, Any]] = []
    pending: list[dict[str, Any]] = []  # image parts of the tool results just written
    for m in conversation:
        if pending and m.role != "tool":
            out.append({"role": "user", "content": pending})
            pending = []
        msg: dict[str, Any] = {"role": m.role, "content": m.content}
        if m.images and m.role == "user":
            msg["content"] = [{"type": "text", "text": m.content}, *_image_parts(m)]
        elif m.images and m.role == "tool":
            note = f"The figures of tool call {m.tool_call_id or '?'}:"
            pending += [{"type": "text", "text": note}, *_image_parts(m)]
        if m.tool_calls:
            msg["content"] = m.content or None  # the API's form of "no text, only calls"
            msg["tool_calls"] = [
                {
                    "id": c.id,
                    "type": "function",
                    "function": {"name": c.name, "arguments": wire_arguments(c)},
                }
                for c in m.tool_calls
            ]
        if m.role == "tool":
            msg["tool_call_id"] = m.tool_call_id or ""
        out.append(msg)
    if pending:
        out.append({"role": "user", "content": pending})
    return out


def _image_parts(m: Message) -> list[dict[str, Any]]:
    return [{"type": "image_url", "image_url": {"url": i.data_url()}} for i in m.images]


def to_chat_tools(tools: list[ToolSpec]) -> list[dict[str, Any]]:
    return [
        {
            "type": "function",
            "function": {
                "name": s.name,
                "description": s.tool_description(),
                "parameters": s.parameters,
            },
        }
        for s in tools
    ]


def _opt(options: dict[str, Any], key: str, env: str, default: Any = None) -> Any:
    value = options.get(key)
    if value is None:
        value = os.environ.get(env, default)
    return value


class OpenAIAgent(ProviderAgent):
    """Chat Completions via the openai SDK (any OpenAI-compatible `base_url`).

    Options (environment variable in brackets): model [OPENAI_MODEL], api_key [OPENAI_API_KEY],
    base_url [OPENAI_BASE_URL], temperature [OPENAI_TEMPERATURE] (unset: the server's default),
    max_tokens, timeout (s, default 120), max_retries (default 5), backoff_base (s, default 1),
    backoff_max (s, default 60), prices (USD per million tokens, see interp_harness.agents.retry.make_usage),
    extra_body (dict passed through, e.g. vLLM sampling options; not the keys a provider profile
    governs, interp_harness.agents.options.PROFILE_GOVERNED_KEYS), tool_choice (protocol mode tools: "auto",
    the default, or "required").

    In protocol mode `tools` the commands go as `tools` (function tools; parallel calls allowed,
    as the API's default) with `tool_choice`; nothing else is OpenAI-only, so a compatible server
    that serves tool calls (vLLM with `--enable-auto-tool-choice` and a tool parser) works too.
    """

    name = "openai"
    families = ANY_FAMILY
    provider = "openai"
    provider_routes = ("chat.completions",)  # what it calls: the profile must offer it
    supports_tools = True
    default_model = "gpt-4o"  # when neither the options nor the environment name one
    description = "OpenAI Chat Completions, or any OpenAI-compatible server (vLLM, ...) by base_url"
    Options = OpenAIOptions  # over the API: no base_url/api_key, a provider profile instead

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self.model: str = _opt(options, "model", "OPENAI_MODEL", self.default_model)
        self.base_url: str | None = _opt(options, "base_url", "OPENAI_BASE_URL")
        api_key = _opt(options, "api_key", "OPENAI_API_KEY")
        if api_key is None and self.base_url:
            api_key = (
                "EMPTY"  # local servers (vLLM, FastChat) accept any key, as FIND's clients assume
            )
        if api_key is None:
            raise AgentError(
                "openai agent: no API key; set OPENAI_API_KEY or pass api_key=... "
                "(or base_url=... for a local OpenAI-compatible server)",
                category="agent",
            )
        temperature = _opt(options, "temperature", "OPENAI_TEMPERATURE")
        self.temperature: float | None = float(temperature) if temperature is not None else None
        self.max_tokens: int | None = options.get("max_tokens")
        self.prices = options.get("prices")
        self.extra_body: dict[str, Any] | None = options.get("extra_body")
        self.tool_choice: str = options.get("tool_choice") or "auto"
        self.policy = policy_from_options(options)
        # The SDK's own retries are off: ours add jitter, categories and a log line per retry.
        # the SDK loads when an agent is built, not when its class is imported: listing the agents
        # (`harness agents list`, pre-flight's registry lookups) reads only the class
        import openai

        self._classify = sdk_classifier(openai)
        self.client = openai.AsyncOpenAI(
            api_key=api_key,
            base_url=self.base_url,
            timeout=float(options.get("timeout", 120.0)),
            max_retries=0,
        )

    async def step(
        self, conversation: list[Message], tools: list[ToolSpec] | None = None
    ) -> AgentReply:
        kwargs: dict[str, Any] = {"model": self.model, "messages": to_chat_messages(conversation)}
        if tools:  # the API refuses an empty list
            kwargs["tools"] = to_chat_tools(tools)
            kwargs["tool_choice"] = self.tool_choice
        if self.temperature is not None:
            kwargs["temperature"] = self.temperature
        if self.max_tokens is not None:
            kwargs["max_tokens"] = int(self.max_tokens)
        if self.extra_body:
            kwargs["extra_body"] = self.extra_body

        async def call() -> Turn:
            # The raw body is validated here: the SDK would build an object from anything.
            raw = await self.client.chat.completions.with_raw_response.create(**kwargs)
            return openai_reply(raw.http_response, tools=tools is not None)

        what = f"openai {self.model} at {self.base_url or 'api.openai.com'}"
        return await provider_turn(self, conversation, call, self._classify, what=what)

    async def aclose(self) -> None:
        await self.client.close()
