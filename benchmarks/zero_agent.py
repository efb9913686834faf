"""The benchmark's zero-latency agents, in a module of their own: an agent host imports them
without anything of harness or function_store (see benchmarks/orchestrator.py and
benchmarks/protocols.py)."""

from __future__ import annotations

from collections.abc import Sequence

from interp_harness.agents.base import Agent, AgentReply, Message, Usage
from interp_harness.agents.tools_adapter import TextProtocolAgent
from interp_harness.agents.toolspec import ToolCall, ToolSpec

USAGE = Usage(prompt_tokens=100, completion_tokens=20)


def _inputs(n: int) -> list[str]:
    return [str(n), str(n + 1), "-3.5"]


class ZeroLatencyAgent(Agent):
    """Answers instantly with one command of three inputs; the round cap ends the episode."""

    provider = "bench"

    async def step(self, conversation: list[Message]) -> AgentReply:
        inputs = " ".join(_inputs(len(conversation)))
        return AgentReply(
            content=f"Trying more values.\nCOMMAND: PYTHON(./temp/function.py {inputs})",
            usage=USAGE,
        )


class ZeroLatencyTextTools(ZeroLatencyAgent, TextProtocolAgent):
    """The same agent in any protocol mode, as the scripted baselines are: in mode `tools` its
    text is read as the tool calls it stands for (agents/tools_adapter.py)."""

    async def text_step(self, conversation: list[Message]) -> AgentReply:
        return await ZeroLatencyAgent.step(self, conversation)

    step = TextProtocolAgent.step  # type: ignore[assignment]


class ZeroLatencyToolsAgent(Agent):
    """The same experiments as native tool calls (no text adapter): one `call_function` of the
    same three inputs per step, so it measures the episode loop's tools mode alone."""

    provider = "bench"
    supports_tools = True

    async def step(
        self, conversation: list[Message], tools: Sequence[ToolSpec] | None = None
    ) -> AgentReply:
        n = len(conversation)
        args = {"inputs": _inputs(n)}
        call = ToolCall(id=f"call_{n}", name="call_function", arguments=args)
        return AgentReply(content="", tool_calls=[call], usage=USAGE)
