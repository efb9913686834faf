"""The agent `external`: an interpreter that runs its own loop elsewhere and calls the episode's
tools over MCP (`harness mcp serve`, docs/agents.md "External agents over MCP").

It holds no secret and runs no agent code: each `step` is the external client's next tool call,
taken from the episode's channel (harness/domain/rendezvous.py). So it runs in the orchestrator's
process (`runs_in_orchestrator`), where the MCP server is, even when other agents are sandboxed.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from typing import Any, ClassVar

from pydantic import Field

from interp_harness.agents.base import (
    ANY_FAMILY,
    Agent,
    AgentError,
    AgentOptions,
    AgentReply,
    Message,
)
from interp_harness.agents.toolspec import ToolSpec
from interp_harness.harness.domain.rendezvous import RENDEZVOUS, Rendezvous, ToolMessage

NAME = "external"


class ExternalOptions(AgentOptions):
    # how long the client may stay silent (no tool call) before the episode ends with an agent
    # error; unset, the run's wall-time budget and the operator's step timeout bound it
    silence_s: float | None = Field(None, gt=0, le=7 * 24 * 3600)


# registered by its entry point (pyproject.toml, group interp_harness.agents), not on import
class ExternalAgent(Agent):
    """An external agent (Claude Code, any MCP client) calling the episode's tools over MCP."""

    name = NAME
    families = ANY_FAMILY  # its client is told the task of whichever target
    provider = "external"  # its own concurrency limit: these episodes wait on people's clients
    description = "an agent outside the harness, calling the episode's tools over MCP"
    supports_tools = True
    runs_in_orchestrator: ClassVar[bool] = True
    Options = ExternalOptions

    @classmethod
    def waits_for(cls, episode: Any, wake: Callable[[], None]) -> str | None:
        """What `episode` (a stored episode: id, idx, family) waits for before it may take an
        execution slot: its client's first request, so that a client that never comes holds
        none (the scheduler asks; `wake` is called when the client comes). None: nothing."""
        if RENDEZVOUS.awaits_client(episode.id, episode.family, wake):
            return f"an MCP client to connect to episode {episode.idx} ({episode.id})"
        return None

    def __init__(
        self, *, episode_id: str, rendezvous: Rendezvous = RENDEZVOUS, **options: Any
    ) -> None:
        super().__init__(**options)
        self.opts = ExternalOptions.model_validate(options)
        self.episode_id = episode_id
        self.channel = rendezvous.open(episode_id)

    async def step(
        self, conversation: list[Message], tools: list[ToolSpec] | None = None
    ) -> AgentReply:
        if tools is None:
            raise AgentError(
                "the agent `external` needs protocol mode `tools` or `code-tools` (its client "
                "calls tools)",
                category="agent",
            )
        silence = self.opts.silence_s
        try:
            async with asyncio.timeout(silence):
                call = await self.channel.next_call(conversation)
        except TimeoutError:
            raise AgentError(
                f"external agent silent: no tool call within {silence:g} s (option silence_s)",
                category="agent",
            ) from None
        return AgentReply(content="", tool_calls=[call])

    def episode_ended(self, reason: str, transcript: Sequence[ToolMessage]) -> None:
        """Answer the client's waiting requests from the final transcript; its token expires."""
        self.channel.close(reason, transcript)

    async def aclose(self) -> None:
        self.channel.close("the episode has ended")
