"""The benchmark's zero-latency agent, in a module of its own: an agent host imports it without
anything of harness or function_store (see benchmarks/orchestrator.py)."""

from __future__ import annotations

from agents.base import Agent, AgentReply, Message, Usage


class ZeroLatencyAgent(Agent):
    """Answers instantly with one command of three inputs; the round cap ends the episode."""

    provider = "bench"

    async def step(self, conversation: list[Message]) -> AgentReply:
        n = len(conversation)
        return AgentReply(
            content=f"Trying more values.\nCOMMAND: PYTHON(./temp/function.py {n} {n + 1} -3.5)",
            usage=Usage(prompt_tokens=100, completion_tokens=20),
        )
