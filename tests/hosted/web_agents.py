"""A scripted agent that takes its time, for the live-progress and running-episode tests (loaded
by dotted path, `web_agents:SlowNumericAgent`, inside the agent host: imports `agents` only)."""

from __future__ import annotations

import asyncio

from pydantic import Field

from interp_harness.agents.base import AgentReply, Message
from interp_harness.agents.scripted_numeric import ScriptedNumericAgent, ScriptedNumericOptions


class SlowOptions(ScriptedNumericOptions):
    delay: float = Field(0.0, ge=0, le=600)


class SlowNumericAgent(ScriptedNumericAgent):
    """scripted-numeric, waiting `delay` seconds before each step."""

    name = "slow-numeric"
    Options = SlowOptions

    async def step(self, conversation: list[Message]) -> AgentReply:
        await asyncio.sleep(float(self.options.get("delay", 0)))
        return await super().step(conversation)
