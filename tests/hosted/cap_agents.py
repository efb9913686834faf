"""Agents that answer with huge messages, for the message-cap tests. Like any agent run in a
host, this module imports nothing but the `agents` package and the standard library."""

from __future__ import annotations

import gc

from interp_harness.agents.base import Agent, AgentReply, Message


class HugeAgent(Agent):
    """Answers every step with `chars` characters (default 40 MiB, as the attack of issue 27)."""

    async def step(self, conversation: list[Message]) -> AgentReply:
        return AgentReply(content="x" * int(self.options.get("chars", 40 * 2**20)))


class SubvertedHugeAgent(Agent):
    """Switches off its own host's length check (agent code runs in the host's process), then
    answers with `chars` characters: only the orchestrator's bounded read stands in the way."""

    async def step(self, conversation: list[Message]) -> AgentReply:
        for o in gc.get_objects():
            if type(o).__name__ == "_Host" and hasattr(o, "max_chars"):  # run as __main__
                o.max_chars = 1 << 40
        return AgentReply(content="\x01" * int(self.options.get("chars", 40 * 2**20)))
