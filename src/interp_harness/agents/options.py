"""What an API caller may set for the provider agents (openai, anthropic).

Endpoints and keys are the operator's: a caller names a provider profile (interp_harness.harness.providers.profiles) and
never sends a URL or a key. `base_url` and `api_key` stay constructor options for the operator
(CLI `-o base_url=...`) and for the orchestrator, which fills them from the chosen profile.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import Field, model_validator

from interp_harness.agents.base import AgentOptions
from interp_harness.agents.retry import Price

# Request-body keys a provider profile governs (the model, how many and how long completions are,
# and the request's shape). `extra_body` is merged over the request the SDK builds, so one of
# these there would override the run's model or the profile's limits: refused in pre-flight
# (interp_harness.harness.policy.check_extra_body) and, again, by the orchestrator's forwarder.
PROFILE_GOVERNED_KEYS = frozenset(
    {
        "model",
        "messages",
        "system",
        "prompt",
        "n",
        "best_of",
        "max_tokens",
        "max_completion_tokens",
        "max_new_tokens",
        "stream",
        "stream_options",
        "tools",
        "tool_choice",
        "functions",
        "function_call",
        "parallel_tool_calls",
    }
)

_OPERATOR_ONLY = {
    "base_url": "an endpoint",
    "api_key": "a key",
}


class ProviderOptions(AgentOptions):
    operator_only: ClassVar[frozenset[str]] = frozenset(_OPERATOR_ONLY)

    profile: str | None = Field(
        None,
        max_length=200,
        description="the operator's provider profile to use (default: the agent's provider name)",
    )
    model: str | None = Field(None, min_length=1, max_length=200)
    temperature: float | None = Field(None, ge=0, le=2)
    max_tokens: int | None = Field(None, ge=1, le=1_000_000)
    timeout: float | None = Field(None, gt=0, le=3600, description="seconds per request")
    max_retries: int | None = Field(None, ge=0, le=20)
    backoff_base: float | None = Field(None, ge=0, le=600)
    backoff_max: float | None = Field(None, ge=0, le=3600)
    prices: Price | dict[str, Price] | None = Field(
        None, description="USD per million tokens: one price, or a table by model id"
    )
    tool_choice: Literal["auto", "required"] | None = Field(
        None,
        description="protocol mode tools: 'auto' (the default) lets the model answer with text "
        "or tool calls, 'required' makes it call a tool every turn",
    )

    @model_validator(mode="before")
    @classmethod
    def _no_endpoint_or_key(cls, data: Any) -> Any:
        if isinstance(data, dict):
            for key, what in _OPERATOR_ONLY.items():
                if key in data:
                    raise ValueError(
                        f"{key} is not accepted over the API: {what} comes from the operator's "
                        "provider profiles; pick one by name with agent_options.profile, or ask "
                        "the operator to add a profile (HARNESS_PROVIDER_PROFILES)"
                    )
        return data
