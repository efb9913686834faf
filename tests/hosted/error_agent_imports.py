"""An agent whose module imports a helper module that sits beside it (issue 29 §2): importable in
the orchestrator's process (the directory is on its path), not in an agent host, which binds only
the agent's own top-level module."""

from __future__ import annotations

import error_agent_helper

from interp_harness.agents.base import Agent, AgentReply, Message


class HelperAgent(Agent):
    name = "helper-importing"

    async def step(self, conversation: list[Message]) -> AgentReply:
        return AgentReply(content=error_agent_helper.ANSWER)
