"""A test agent whose success varies between the repeated samples (epochs) of one target.

An agent does not know its episode, so the variation comes from the process: every third
instance the process makes answers with the interpolation floor's code (right on smooth numeric
targets), the others with a constant far off (wrong). Run in process (`--agent-isolation none`),
where the counter is shared by the run's episodes; like orch_agents, it imports only `agents`.
"""

from __future__ import annotations

from typing import Any, ClassVar

from interp_harness.agents.base import AgentReply, Message
from interp_harness.agents.interpolation import InterpolationAgent
from interp_harness.agents.protocol import answer

WRONG = "import numpy as np\n\n\ndef f(x):\n    return 0.0 * np.asarray(x, dtype=float) + 1e6\n"


class EpochFlipAgent(InterpolationAgent):
    """Interpolation on every third instance; a constant 1e6 answer on the others."""

    name = "epoch-flip"
    made: ClassVar[int] = 0

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self.right = EpochFlipAgent.made % 3 == 0
        EpochFlipAgent.made += 1

    async def step(self, conversation: list[Message]) -> AgentReply:
        reply = await super().step(conversation)
        if self.right or "COMMAND:" in reply.content:
            return reply
        return AgentReply(content=answer("a constant", WRONG, "all inputs"))
