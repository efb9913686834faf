"""A tools-mode agent for the orchestrator tests, loadable by dotted path
(`tool_agents:ScriptedToolsAgent`); like orch_agents it imports only the `agents` package."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from interp_harness.agents.base import Agent, AgentOptions, AgentReply, Message, Usage
from interp_harness.agents.toolspec import ToolCall, ToolSpec


class ScriptOptions(AgentOptions):
    # one list of {"name", "arguments"} per assistant message; past the end it submits
    script: list[list[dict[str, Any]]] = []
    delay: float = 0.0  # seconds per step


class ScriptedToolsAgent(Agent):
    """Sends the tool calls of `script[k]` as its k-th message (ids `t<k>_<i>`), then submits an
    answer quoting the last tool result. Records the tools it was offered."""

    name = "tools-script"
    provider = "orch-local"
    supports_tools = True
    Options = ScriptOptions
    offered: list[list[str]] = []  # the tool names of every step (class-wide, for assertions)

    async def step(
        self, conversation: list[Message], tools: Sequence[ToolSpec] | None = None
    ) -> AgentReply:
        ScriptedToolsAgent.offered.append([t.name for t in tools or ()])
        if self.options.get("delay"):
            await asyncio.sleep(float(self.options["delay"]))
        k = sum(m.role == "assistant" for m in conversation)
        script = self.options.get("script", [])
        usage = Usage(prompt_tokens=10, completion_tokens=5)
        if k < len(script):
            calls = [
                ToolCall(id=f"t{k}_{i}", name=c["name"], arguments=c.get("arguments", {}))
                for i, c in enumerate(script[k])
            ]
            return AgentReply(content=f"step {k}", tool_calls=calls, usage=usage)
        last = conversation[-1].content.strip()
        code = "def f(x):\n    return 2 * x + 1"
        answer = {"description": f"affine; saw {last[-40:]}", "domain": "all reals", "code": code}
        return AgentReply(
            content="",
            tool_calls=[ToolCall(id=f"t{k}_0", name="submit_answer", arguments=answer)],
            usage=usage,
        )


class TextOnlyAgent(Agent):
    """An agent without tools support."""

    name = "text-only"
    provider = "orch-local"

    async def step(self, conversation: list[Message]) -> AgentReply:
        return AgentReply(content="[DESCRIPTION]: nothing")
