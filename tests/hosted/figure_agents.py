"""An agent for the figure tests in protocol mode `code-tools` (loadable by dotted path,
`figure_agents:PlotToolsAgent`): calls `call_function` and `run_python` with a cell that plots,
then submits; keeps every conversation it was given."""

from __future__ import annotations

from collections.abc import Sequence

from interp_harness.agents.base import Agent, AgentReply, Message
from interp_harness.agents.toolspec import ToolCall, ToolSpec

PLOT = "import matplotlib.pyplot as plt\nplt.plot([0, 1], [1, 3])\n'plotted'"


class PlotToolsAgent(Agent):
    name = "plot-tools"
    supports_tools = True
    seen: list[list[Message]] = []  # class-wide, for assertions

    async def step(
        self, conversation: list[Message], tools: Sequence[ToolSpec] | None = None
    ) -> AgentReply:
        PlotToolsAgent.seen.append(list(conversation))
        if not any(m.role == "assistant" for m in conversation):
            calls = [
                ToolCall(id="c0", name="call_function", arguments={"inputs": ["1"]}),
                ToolCall(id="c1", name="run_python", arguments={"code": PLOT}),
            ]
            return AgentReply(content="", tool_calls=calls)
        answer = {"description": "affine", "domain": "all reals", "code": "def f(x):\n    return x"}
        return AgentReply(
            content="", tool_calls=[ToolCall(id="c2", name="submit_answer", arguments=answer)]
        )
